"""Spectral unsupervised bracketing (Parikh, Cohen & Xing 2014; docs/design/architecture.md, section 9).

``fit`` reads tagged sentences only (no trees) and learns, for every (left tag,
right tag, distance) key, the spectrum of the kernel-smoothed cross-covariance
of the words' vectors (``metric``); the vectors are the caller's (e.g. a spaCy
pipeline's) or learned from the same text (``embeddings``). ``predict`` maps a
sentence's tag sequence to its word distance matrix, then to the projective
binary tree of minimum total edge length (``tree_metric``), directed by the top
bracket of the paper's heuristic (``top_bracket``) or the least-cost one.

Departures from the paper: the covariances are centred per tag (``center``);
the vectors default to OSCCA-style context embeddings learned here (the
paper's best English vectors were pretrained neural embeddings, its other
languages Brown clusters); the kernel's formula is reconstructed (see
``metric``); the universal tags are approximated outside the Penn tag set
(``tagsets``); ``m`` defaults to 3, not 7 (tuned as the paper
did, on <= 10-word English sentences, here ptb_sample's); the decoder is the
CKY form of the search, not Eisner-Satta's; pairs further apart than
``max_distance`` are not collected; sentences longer than ``max_length``
content words (rare in evaluation; the search is ``O(n^4)``) are given a
right-branching tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np

from ..interrupts import kernel_calls
from .base import Bracketer
from .embeddings import context_embeddings
from .metric import log_spectra, sentence_distances
from .sentences import Sentence
from .tagsets import coarse_tag
from .top_bracket import top_split
from .tree_metric import minimum_evolution_tree

TOP_BRACKETS = ("heuristic", "cost", "oracle")


class SpectralBracketer(Bracketer):
    """The spectral learner of Parikh, Cohen & Xing (2014): additive tree metrics from kernel-smoothed covariances.

    rank (int): m, the number of singular values in the metric. The paper's 7 was
        tuned on the full WSJ; tuned the same way (ptb_sample, <= 10 words), 3 is
        best here: it beats 7 and 4 there, and 2, slightly higher there, loses
        at <= 40 words and on Floresta (fewer sentences, noisier small singular
        values; rank 3's scores: BENCHMARKS.md "Unsupervised bracketing: spectral,
        CCM and branching baselines").
    bandwidth (float): the kernel's γ (paper: 0.4).
    embedding_dim (int): the size of the learned word vectors (without ``vectors``).
    n_contexts (int): distinct neighbour words in the embeddings' context counts.
    vectors (Mapping[str, np.ndarray] | None): word vectors to use instead of
        learned ones (looked up as given, then lowercased; others get the mean).
    max_distance (int): the longest word distance whose pairs are collected.
    center (bool): subtract from each word vector the mean vector of its key tag,
        so that the covariances measure how words vary together given their
        tags. The paper's are uncentred; centred ones score higher everywhere
        we measured (BENCHMARKS.md "Unsupervised bracketing: spectral, CCM and
        branching baselines").
    coarse_tags (bool): key the covariances by word class (``tagsets.coarse_tag``:
        universal tags for the Penn tags, as the paper does) instead of the tags.
    top_bracket (str): "heuristic" (the paper's section 4.1), "cost" (the top
        split of least total edge length) or "oracle" (the gold tree's top
        bracket, for sentences given as Trees; the heuristic for others: the
        paper's "-O" experiments).
    max_length (int): longest sentence (content words) decoded by the search.
    random_state (int): seeds the embeddings' SVD.

    Fitted attributes: ``tag_index_`` (tag -> id), ``log_cross_`` (n_tags,
    n_tags, max_distance + 1), ``log_self_`` (n_tags,), ``tagger_``,
    ``n_sentences_``.
    """

    name = "spectral_unsup"
    uses_tags = True

    rank: int
    bandwidth: float
    embedding_dim: int
    n_contexts: int
    vectors: Mapping[str, np.ndarray] | None
    max_distance: int
    center: bool
    coarse_tags: bool
    top_bracket: str
    max_length: int
    random_state: int

    def __init__(
        self,
        *,
        rank: int = 3,
        bandwidth: float = 0.4,
        embedding_dim: int = 30,
        n_contexts: int = 2000,
        vectors: Mapping[str, np.ndarray] | None = None,
        max_distance: int = 60,
        center: bool = True,
        coarse_tags: bool = True,
        top_bracket: str = "heuristic",
        max_length: int = 80,
        random_state: int = 0,
    ):
        self._store_params(locals())

    def _check_params(self) -> None:
        self.check_number("rank", "an int >= 1", low=1, integer=True)
        self.check_number("bandwidth", "a number > 0", low=1e-12)
        self.check_number("embedding_dim", "an int >= 1", low=1, integer=True)
        self.check_number("n_contexts", "an int >= 1", low=1, integer=True)
        self.check_number("max_distance", "an int >= 1", low=1, integer=True)
        self.check_number("max_length", "an int >= 3", low=3, integer=True)
        self.check_choice("top_bracket", TOP_BRACKETS)

    def _fit(self, sentences: list[Sentence]) -> None:
        self._check_params()
        words = [s.content_words for s in sentences]
        tags = [self._key_tags(s) for s in sentences]
        self.tag_index_ = {tag: i for i, tag in enumerate(sorted({t for ts in tags for t in ts}))}
        table = self._vector_table(words)
        flat_words = [word for sentence in words for word in sentence]
        vectors = np.stack([table(word) for word in flat_words]) if flat_words else np.zeros((0, 1))
        tag_ids = np.array([self.tag_index_[t] for ts in tags for t in ts], dtype=np.int64)
        if self.center:
            vectors = _centred_by_tag(vectors, tag_ids, len(self.tag_index_))
        offsets = np.cumsum([0] + [len(sentence) for sentence in words])
        with kernel_calls():  # Ctrl-C after the kernel, never inside it
            self.log_cross_, self.log_self_ = log_spectra(
                vectors,
                tag_ids,
                offsets,
                max(len(self.tag_index_), 1),
                max_distance=self.max_distance,
                bandwidth=self.bandwidth,
                rank=self.rank,
            )

    def _vector_table(self, words: list[list[str]]):
        """word -> vector, from ``vectors`` or from embeddings learned on ``words``."""
        if self.vectors is None:
            learned = context_embeddings(
                words,
                self.embedding_dim,
                n_contexts=self.n_contexts,
                random_state=self.random_state,
            )
            return lambda word: learned[word.lower()]
        given = self.vectors
        mean = np.mean([np.asarray(v, dtype=np.float64) for v in given.values()], axis=0)

        def lookup(word: str) -> np.ndarray:
            vector = given.get(word)
            if vector is None:
                vector = given.get(word.lower(), mean)
            return np.asarray(vector, dtype=np.float64)

        return lookup

    def _key_tags(self, sentence: Sentence) -> list[str]:
        tags = cast("list[str]", sentence.content_tags)  # tagged (given or predicted)
        return [coarse_tag(t) for t in tags] if self.coarse_tags else tags

    def distances(self, sentence: Sentence) -> np.ndarray:
        """The (n, n) distance matrix of a sentence's content words (``metric``)."""
        tag_ids = np.array([self.tag_index_.get(t, -1) for t in self._key_tags(sentence)])
        return sentence_distances(tag_ids, self.log_cross_, self.log_self_)

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        n = len(sentence.content)
        if n > self.max_length:
            return [(i, n) for i in range(n - 1)]
        if self.top_bracket == "cost":
            split = None
        elif self.top_bracket == "oracle" and sentence.gold_split is not None:
            split = sentence.gold_split
        else:
            split = top_split(sentence)
        _, brackets = minimum_evolution_tree(self.distances(sentence), top_split=split)
        return brackets


def _centred_by_tag(vectors: np.ndarray, tag_ids: np.ndarray, n_tags: int) -> np.ndarray:
    """``vectors`` minus the mean vector of each row's tag."""
    sums = np.zeros((n_tags, vectors.shape[1]))
    np.add.at(sums, tag_ids, vectors)
    counts = np.bincount(tag_ids, minlength=n_tags)
    return vectors - (sums / np.maximum(counts, 1)[:, None])[tag_ids]
