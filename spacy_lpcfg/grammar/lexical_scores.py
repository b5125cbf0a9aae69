"""Per-sentence lexical scores: the chart's only view of the words.

The chart kernels never look words up. A lexicon (known words, unknown-word
signatures, smoothing, given tags) turns a sentence into ``LexicalScores``:
for each position, the preterminals allowed there and their score vectors
over latent states. ``from_word_ids`` is the plain version that reads the
grammar's lexical rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import Errors
from .lpcfg import LPCFG
from .symbols import PRETERMINAL


@dataclass(frozen=True)
class LexicalScores:
    """Preterminal score vectors for the positions of one sentence.

    n_words (int): sentence length n >= 1.
    positions (np.ndarray): int32[K], the word position of each entry, non-decreasing.
    tags (np.ndarray): int32[K], the preterminal of each entry, increasing within a position.
    offsets (np.ndarray): int64[K + 1]; entry e's vector, of length n_states[tags[e]],
        is values[offsets[e]:offsets[e + 1]].
    values (np.ndarray): float64[offsets[-1]], signed scores per latent state.

    A position without entries has no preterminal, so the sentence has no parse.
    """

    n_words: int
    positions: np.ndarray
    tags: np.ndarray
    offsets: np.ndarray
    values: np.ndarray

    @classmethod
    def from_word_ids(cls, grammar: LPCFG, word_ids: Sequence[int]) -> LexicalScores:
        """The grammar's lexical rules for each word; id -1 (unknown) gives no entries."""
        order, word_offsets = grammar.lexical_word_index
        rule_parts, positions = [], []
        for position, word in enumerate(word_ids):
            if word < 0:
                continue
            if word >= len(grammar.words):
                raise ValueError(Errors.E117.format(detail=f"word id {word} is not in the grammar"))
            found = order[word_offsets[word] : word_offsets[word + 1]]
            rule_parts.append(found)
            positions.append(np.full(len(found), position, dtype=np.int32))
        rules = np.concatenate(rule_parts) if rule_parts else np.zeros(0, dtype=np.int32)
        starts = grammar.lexical_offsets[rules]
        sizes = grammar.lexical_offsets[rules + 1] - starts
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        take = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        return cls(
            n_words=len(word_ids),
            positions=np.concatenate(positions) if positions else np.zeros(0, dtype=np.int32),
            tags=grammar.lexical_rules[rules, 0].astype(np.int32),
            offsets=offsets,
            values=grammar.lexical_weights[take].astype(np.float64),
        )

    @classmethod
    def from_entries(
        cls, n_words: int, entries: Iterable[tuple[int, int, Sequence[float]]]
    ) -> LexicalScores:
        """Build from (position, preterminal id, vector) triples, in any order."""
        entries = sorted(entries, key=lambda entry: (entry[0], entry[1]))
        vectors = [np.asarray(vector, dtype=np.float64).ravel() for _, _, vector in entries]
        return cls(
            n_words=n_words,
            positions=np.array([entry[0] for entry in entries], dtype=np.int32),
            tags=np.array([entry[1] for entry in entries], dtype=np.int32),
            offsets=np.concatenate([[0], np.cumsum([len(v) for v in vectors])]).astype(np.int64),
            values=np.concatenate(vectors) if vectors else np.zeros(0),
        )

    def check(self, grammar: LPCFG) -> None:
        """Raise ValueError unless the arrays are well formed for `grammar`."""
        k = len(self.positions)
        problems = []
        if self.n_words < 1:
            problems.append(f"n_words is {self.n_words}, sentences need at least one word")
        if not (
            self.positions.dtype == np.int32
            and self.tags.dtype == np.int32
            and self.offsets.dtype == np.int64
            and self.values.dtype == np.float64
        ):
            problems.append("dtypes must be int32, int32, int64, float64")
        elif self.tags.shape != (k,) or self.offsets.shape != (k + 1,) or self.values.ndim != 1:
            problems.append("positions, tags and offsets must have K, K and K + 1 entries")
        elif k and (self.positions.min() < 0 or self.positions.max() >= self.n_words):
            problems.append("a position is outside the sentence")
        elif k and (
            self.tags.min() < 0
            or self.tags.max() >= grammar.n_symbols
            or (grammar.symbols.kind_codes[self.tags] != PRETERMINAL).any()
        ):
            problems.append("a tag is not a preterminal of the grammar")
        elif (
            k
            and not (
                np.diff(self.positions.astype(np.int64) * grammar.n_symbols + self.tags) > 0
            ).all()
        ):
            problems.append("entries must be sorted by (position, tag) without duplicates")
        elif (
            self.offsets[0] != 0
            or self.offsets[-1] != len(self.values)
            or (np.diff(self.offsets) != grammar.n_states[self.tags]).any()
        ):
            problems.append("offsets do not match n_states of the tags")
        elif not np.isfinite(self.values).all():
            problems.append("values must be finite")
        if problems:
            raise ValueError(Errors.E117.format(detail="; ".join(problems)))

    def project(self, grammar: LPCFG, state_weights: Sequence[np.ndarray]) -> LexicalScores:
        """The scores for the one-state grammar ``grammar.project(state_weights)``:
        each vector is averaged over states with its tag's normalised weights."""
        weights = grammar.check_state_weights(state_weights)
        projected = [
            weights[tag] @ self.values[start:end]
            for tag, start, end in zip(self.tags, self.offsets[:-1], self.offsets[1:])
        ]
        return LexicalScores(
            n_words=self.n_words,
            positions=self.positions,
            tags=self.tags,
            offsets=np.arange(len(self.tags) + 1, dtype=np.int64),
            values=np.array(projected, dtype=np.float64),
        )
