"""The bracketer contract: ``fit(sentences)`` from text alone, ``predict(sentences)`` trees.

A bracketer is a scikit-learn-style estimator (``params.Params``, the rules of
``estimators.base``: hyperparameters in ``__init__``, fitted attributes ending
in ``_``) that learns from sentences without trees and returns, per sentence,
an unlabelled binary bracketing of its content words as a ``Tree``
(``sentences.bracketed_tree``).
Subclasses implement ``_fit(sentences)`` and ``_bracket(sentence)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from ..errors import Errors
from ..interrupts import kernel_calls
from ..trees.tree import Tree
from .params import Params
from .sentences import Sentence, as_sentence, as_sentences, bracketed_tree
from .tagger import MostFrequentTagger


class Bracketer(Params):
    """Base class of the unsupervised bracketers."""

    name = "bracketer"
    uses_tags = False  # whether _bracket reads the content tags

    def fit(self, sentences: Iterable[Tree | Sequence]) -> Bracketer:
        """Learn from sentences (Trees: only words and tags are read; words; (word, tag) pairs).

        RETURNS (Bracketer): self.
        """
        parsed = as_sentences(sentences)
        if self.uses_tags:
            tagged = [
                (s.content_words, cast("list[str]", s.content_tags))  # tags is not None
                for s in parsed
                if s.tags is not None
            ]
            if not tagged:
                raise ValueError(Errors.E504.format(name=type(self).__name__))
            self.tagger_ = MostFrequentTagger(tagged)
            parsed = [s for s in parsed if s.tags is not None]
            if not any(s.content for s in parsed):
                excerpt = " ".join(parsed[0].words)[:60] if parsed else ""
                raise ValueError(
                    Errors.E505.format(
                        name=type(self).__name__, count=len(parsed), excerpt=repr(excerpt)
                    )
                )
        self.n_sentences_ = len(parsed)
        self._fit(parsed)
        return self

    def predict(self, sentences: Iterable[Tree | Sequence]) -> list[Tree]:
        """One unlabelled tree per sentence, over all its tokens (punctuation included).

        RETURNS (list[Tree]): ``(TOP (X ...))`` trees; brackets span content words.
        """
        self.check_is_fitted("n_sentences_")
        out = []
        for sentence in as_sentences(sentences):
            if self.uses_tags and sentence.tags is None:
                sentence = self._with_predicted_tags(sentence)
            out.append(bracketed_tree(sentence, self._brackets_of(sentence)))
        return out

    def brackets(self, sentence: Tree | Sequence) -> list[tuple[int, int]]:
        """The induced brackets of one sentence: spans of >= 2 content words, sorted.

        The whole sentence is one of them (for at least two content words).
        """
        self.check_is_fitted("n_sentences_")
        parsed = as_sentence(sentence)
        if self.uses_tags and parsed.tags is None:
            parsed = self._with_predicted_tags(parsed)
        n = len(parsed.content)
        return sorted(set(self._brackets_of(parsed)) | ({(0, n)} if n >= 2 else set()))

    def _brackets_of(self, sentence: Sentence) -> list[tuple[int, int]]:
        if len(sentence.content) < 3:
            return []
        with kernel_calls():  # Ctrl-C between sentences, never inside a kernel
            return self._bracket(sentence)

    def _with_predicted_tags(self, sentence: Sentence) -> Sentence:
        # Punctuation stays where it was found (by its characters); only content words are tagged.
        # fitted on tagged sentences, the tagger has tags: no None
        tags = list(cast("list[str]", self.tagger_.tag(sentence.words)))
        for i in range(len(tags)):
            if i not in sentence.content:
                tags[i] = sentence.words[i]
        return Sentence(sentence.words, tuple(tags), sentence.content, sentence.gold_split)

    def _fit(self, sentences: list[Sentence]) -> None:
        """Learn from the parsed sentences (with tags when ``uses_tags``)."""

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        """Brackets over the content words of a sentence with at least three of them."""
        raise NotImplementedError
