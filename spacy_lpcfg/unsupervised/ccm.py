"""The constituent-context model (Klein & Manning 2002), trained by EM.

Every span ``[i, j)`` of a sentence (single words and the whole sentence
included) is a constituent (c) or a distituent (d), and generates its yield
``α`` (its tag sequence) and its context ``β`` (the tags just before and after,
the sentence boundary being a tag): four multinomials ``P(α|c)``, ``P(α|d)``,
``P(β|c)``, ``P(β|d)``. Bracketings are binary trees, uniformly likely, so
``P(B, S) ∝ Π_spans P(α|d) P(β|d) Π_constituents φ`` with
``φ = P(α|c) P(β|c) / (P(α|d) P(β|d))``: the first product does not depend on
``B``, and span posteriors come from an ``O(n^3)`` inside-outside over binary
bracketings with span factors ``φ`` (``ccm_kernels``).

Initialisation: the first M step reads span posteriors. Klein & Manning's
(``init="split_uniform"``) are those of trees grown by uniform random splits;
the default (``init="spectral"``) gives weight ``init_weight`` to the trees of
the spectral learner (``spectral``, fitted on all the given sentences) and the
rest to the split-uniform posteriors. EM then climbs from a consistent
estimate instead of a uniform one, a remedy for the local optima Parikh, Cohen & Xing (2014)
finds in CCM. On ptb_sample it matches or slightly beats the better of its parents
at <= 10 words and beats it clearly at <= 40; on Spanish and Icelandic the spectral
learner alone scores higher (BENCHMARKS.md "Unsupervised bracketing: spectral, CCM
and branching baselines"). Smoothing: each multinomial gets
``smoothing`` extra counts per type, constituent and distituent ones separately
(the paper's "extra constituent / distituent counts"; 2 and 8 after paper
002); an unseen yield or context at parse time is a type with the extra counts
alone. Parsing is the Viterbi bracketing. Tags are the treebank's tags (paper
002 found them the best for CCM).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ..interrupts import kernel_calls
from ..progress import progress
from .base import Bracketer
from .ccm_kernels import (
    expected_counts,
    span_keys,
    split_uniform_posteriors,
    viterbi_brackets,
)
from .sentences import Sentence
from .spectral import SpectralBracketer

INITS = ("spectral", "split_uniform")


class _Keys:
    """Yield and context ids of a set of sentences, against a fitted vocabulary."""

    def __init__(self, tag_lists, tag_index):
        n_tags = len(tag_index)
        tags = np.array([tag_index.get(t, n_tags + 1) for ts in tag_lists for t in ts], np.int64)
        offsets = np.cumsum([0] + [len(ts) for ts in tag_lists]).astype(np.int64)
        # ids: the tags, then n_tags + 1 for unknown tags, n_tags + 2 for the boundary
        self.hashes, self.contexts, self.span_offsets = span_keys(tags, offsets, n_tags + 2)


class CCM(Bracketer):
    """Klein & Manning's (2002) constituent-context model, trained by EM.

    n_iter (int): EM iterations after the initial M step.
    constituent_smoothing (float): extra counts per yield / context type, constituents.
    distituent_smoothing (float): the same for distituents.
    max_length (int | None): train on sentences of at most this many content words
        (Parikh, Cohen & Xing 2014 train CCM on the lengths it evaluates); None: all.
    init (str): the first posteriors: "spectral" (the spectral learner's trees,
        mixed with the split-uniform posteriors) or "split_uniform" (Klein &
        Manning's initialiser alone).
    init_weight (float): the spectral trees' share of the first posteriors
        (``init="spectral"``): 0.5, the best on ptb_sample's <= 10-word sentences
        among 0.2, 0.5 and 1 (BENCHMARKS.md "Unsupervised bracketing: spectral, CCM
        and branching baselines" scores it).
    tol (float): stop when the mean log-likelihood per sentence gains less.

    Fitted attributes: ``tag_index_``, ``yield_hashes_`` (sorted), ``phi_yield_``
    and ``phi_context_`` (log ratios, the last entry for unseen types),
    ``log_likelihoods_`` (per iteration, up to a constant), ``n_iter_``.
    """

    name = "ccm"
    uses_tags = True

    n_iter: int
    constituent_smoothing: float
    distituent_smoothing: float
    max_length: int | None
    init: str
    init_weight: float
    tol: float

    def __init__(
        self,
        *,
        n_iter: int = 40,
        constituent_smoothing: float = 2.0,
        distituent_smoothing: float = 8.0,
        max_length: int | None = None,
        init: str = "spectral",
        init_weight: float = 0.5,
        tol: float = 1e-4,
    ):
        self._store_params(locals())

    def _fit(self, sentences: list[Sentence]) -> None:
        self.check_number("n_iter", "an int >= 0", low=0, integer=True)
        self.check_number("constituent_smoothing", "a number > 0", low=1e-12)
        self.check_number("distituent_smoothing", "a number > 0", low=1e-12)
        self.check_number("tol", "a number >= 0", low=0)
        self.check_choice("init", INITS)
        self.check_number("init_weight", "a number in [0, 1]", low=0, high=np.nextafter(1, 2))
        if self.max_length is not None:
            self.check_number("max_length", "an int >= 1 or None", low=1, integer=True)
        kept = [
            s
            for s in sentences
            if s.content and (self.max_length is None or len(s.content) <= self.max_length)
        ]
        tag_lists = cast("list[list[str]]", [s.content_tags for s in kept])  # all tagged
        self.tag_index_ = {t: i for i, t in enumerate(sorted({t for ts in tag_lists for t in ts}))}
        keys = _Keys(tag_lists, self.tag_index_)
        self.yield_hashes_, yields = np.unique(keys.hashes, return_inverse=True)
        self.n_contexts_ = (len(self.tag_index_) + 3) ** 2  # tags, unknown, boundary
        yields = yields.astype(np.int64)
        n_yields = len(self.yield_hashes_)
        span_yields = np.bincount(yields, minlength=n_yields).astype(np.float64)
        span_contexts = np.bincount(keys.contexts, minlength=self.n_contexts_).astype(np.float64)
        initial = self._initial_posteriors(sentences, kept)
        yield_c = np.bincount(yields, weights=initial, minlength=n_yields)
        context_c = np.bincount(keys.contexts, weights=initial, minlength=self.n_contexts_)
        self.log_likelihoods_: list[float] = []
        self.n_iter_ = 0
        for iteration in progress(range(self.n_iter + 1), desc="CCM EM", unit="iteration"):
            log_d_yield, self.phi_yield_ = self._log_ratios(yield_c, span_yields - yield_c)
            log_d_context, self.phi_context_ = self._log_ratios(
                context_c, span_contexts - context_c
            )
            if iteration == self.n_iter or (
                len(self.log_likelihoods_) >= 2
                and self.log_likelihoods_[-1] - self.log_likelihoods_[-2] < self.tol
            ):
                break
            with kernel_calls():  # Ctrl-C between iterations, never inside the kernel
                yield_c, context_c, log_z = expected_counts(
                    self.phi_yield_, self.phi_context_, yields, keys.contexts,
                    keys.span_offsets, n_yields, self.n_contexts_,
                )  # fmt: skip
            # log P(S) up to the constant log-prior of the uniform trees
            distituent = span_yields @ log_d_yield[:-1] + span_contexts @ log_d_context[:-1]
            self.log_likelihoods_.append((log_z + distituent) / max(len(tag_lists), 1))
            self.n_iter_ = iteration + 1

    def _initial_posteriors(self, sentences: list[Sentence], kept: list[Sentence]) -> np.ndarray:
        """The first M step's span posteriors of the ``kept`` sentences, concatenated."""
        by_length = {n: split_uniform_posteriors(n) for n in {len(s.content) for s in kept}}
        initial = [by_length[len(s.content)] for s in kept]
        if self.init == "spectral" and self.init_weight > 0 and kept:
            spectral = SpectralBracketer()
            spectral._fit(
                sentences
            )  # all lengths: it gains from every sentence (Parikh, Cohen & Xing 2014)
            trees = progress(kept, desc="spectral trees", unit="sentence")
            initial = [
                self.init_weight * _tree_posteriors(len(s.content), spectral._brackets_of(s))
                + (1 - self.init_weight) * uniform
                for s, uniform in zip(trees, initial)
            ]
        return np.concatenate(initial or [np.zeros(0)])

    def _log_ratios(
        self, constituent: np.ndarray, distituent: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``log P(.|d)`` and ``log P(.|c) - log P(.|d)`` per type, smoothed (M step).

        RETURNS: both with one more entry, for unseen types.
        """
        sc, sd = self.constituent_smoothing, self.distituent_smoothing
        n_types = len(constituent) + 1
        log_c = np.log(np.append(constituent, 0.0) + sc) - np.log(constituent.sum() + sc * n_types)
        log_d = np.log(np.append(np.maximum(distituent, 0.0), 0.0) + sd) - np.log(
            np.maximum(distituent, 0.0).sum() + sd * n_types
        )
        return log_d, log_c - log_d

    def span_log_ratios(self, tags: list[str]) -> np.ndarray:
        """``log φ`` of every span of a tag sequence, in ``ccm_kernels`` triangular order."""
        keys = _Keys([tags], self.tag_index_)
        position = np.searchsorted(self.yield_hashes_, keys.hashes)
        position = np.minimum(position, len(self.yield_hashes_) - 1)
        unseen = len(self.phi_yield_) - 1
        found = self.yield_hashes_[position] == keys.hashes
        yield_ids = np.where(found, position, unseen)
        contexts = np.where(
            keys.contexts < self.n_contexts_, keys.contexts, len(self.phi_context_) - 1
        )
        return self.phi_yield_[yield_ids] + self.phi_context_[contexts]

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        tags = cast("list[str]", sentence.content_tags)  # tagged (given or predicted)
        spans = viterbi_brackets(self.span_log_ratios(tags), len(tags))
        return [(int(i), int(j)) for i, j in spans]


def _tree_posteriors(n: int, brackets: list[tuple[int, int]]) -> np.ndarray:
    """0/1 span posteriors, in triangular order, of the binary tree with ``brackets``
    (its words and whole span are constituents whatever the list holds)."""
    words = np.arange(n)
    starts = np.concatenate([words, [0], [i for i, _ in brackets]]).astype(np.int64)
    ends = np.concatenate([words + 1, [n], [j for _, j in brackets]]).astype(np.int64)
    posteriors = np.zeros(n * (n + 1) // 2)
    posteriors[ends * (ends - 1) // 2 + starts] = 1.0  # ccm_kernels.span_index, vectorised
    return posteriors
