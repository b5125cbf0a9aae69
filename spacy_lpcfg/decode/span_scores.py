"""Extra scores of labelled spans: the hook through which a decoder's objective is changed.

Dual decomposition (Le Roux et al. 2013, Algorithm 1) steers each parser
towards agreement by adding a penalty to every bracket (span, natural label)
its tree contains; a constraint can force or forbid a bracket the same way.
Every decoder that takes ``span_scores`` maximises its own objective plus the
sum of ``scores[i, j, l]`` over the brackets [i, j) labelled ``labels[l]`` of
its tree. Labels are natural labels as ``span_marginals`` names them
(annotations stripped, a collapsed chain ``S::VP`` one label): a symbol gets
the score of its stripped name, intermediate binarisation symbols and TOP
none, and a label the grammar does not have is never scored.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..errors import Errors
from ..grammar import LPCFG, SymbolTable
from ..grammar.symbols import PHRASAL
from .anchored import AnchoredScores
from .span_marginals import grouped_names


@dataclass(frozen=True, eq=False)
class SpanScores:
    """labels (tuple[str, ...]): the L natural labels scored.
    scores (np.ndarray): float64 (n+1, n+1, L); scores[i, j, l] is added to the objective
        of a tree with the bracket labels[l] over [i, j).
    RAISES ValueError: shapes that do not fit, or non-finite scores.
    """

    labels: tuple[str, ...]
    scores: np.ndarray

    def __post_init__(self):
        scores = np.asarray(self.scores, dtype=np.float64)
        if (
            scores.ndim != 3
            or scores.shape[0] != scores.shape[1]
            or scores.shape[0] < 2
            or scores.shape[2] != len(self.labels)
            or not np.isfinite(scores).all()
        ):
            detail = f"{scores.shape} for {len(self.labels)} labels"
            raise ValueError(Errors.E309.format(detail=detail))
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "scores", scores)

    @property
    def n_words(self) -> int:
        return self.scores.shape[0] - 1

    def for_labels(self, labels: tuple[str, ...]) -> np.ndarray:
        """float64 (n+1, n+1, len(labels)): the scores in the order of ``labels`` (zero
        for labels not scored)."""
        index = {label: i for i, label in enumerate(self.labels)}
        out = np.zeros((*self.scores.shape[:2], len(labels)))
        for position, label in enumerate(labels):
            if label in index:
                out[:, :, position] = self.scores[:, :, index[label]]
        return out

    def symbol_columns(self, symbols: SymbolTable) -> np.ndarray:
        """int64[n_symbols]: each symbol's column in ``scores``; -1 for symbols that are
        no bracket (TOP, tags, intermediates) or whose label is not scored."""
        return _symbol_columns(self.labels, symbols)

    def check_length(self, n_words: int) -> None:
        if self.n_words != n_words:
            detail = f"scores for {self.n_words} words, the sentence has {n_words}"
            raise ValueError(Errors.E309.format(detail=detail))


@functools.lru_cache(maxsize=256)
def _symbol_columns(labels: tuple[str, ...], symbols: SymbolTable) -> np.ndarray:
    """SpanScores.symbol_columns, cached: dual decomposition asks again every iteration."""
    names, column = grouped_names(symbols, PHRASAL)
    index = {label: i for i, label in enumerate(labels)}
    by_name = np.array([index.get(name, -1) for name in names] + [-1], dtype=np.int64)
    columns = by_name[column]  # column -1 (not phrasal) picks the trailing -1
    columns.flags.writeable = False
    return columns


def add_to_rules(grammar: LPCFG, anchored: AnchoredScores, extra: SpanScores) -> AnchoredScores:
    """``anchored`` with each rule's score raised by the span score of its parent item:
    every phrase node of a tree is the parent of exactly one rule, so a tree's total
    gains the scores of its brackets once each."""
    extra.check_length(anchored.n_words)
    columns = extra.symbol_columns(grammar.symbols)

    def raised(rules, rule_rows, starts, ends, scores):
        column = columns[rule_rows[rules, 0]]
        scored = column >= 0
        out = scores.astype(np.float64, copy=True)
        out[scored] += extra.scores[starts[scored], ends[scored], column[scored]]
        return out

    return dataclasses.replace(
        anchored,
        binary_scores=raised(
            anchored.binary_rules,
            grammar.binary_rules,
            anchored.binary_starts,
            anchored.binary_ends,
            anchored.binary_scores,
        ),
        unary_scores=raised(
            anchored.unary_rules,
            grammar.unary_rules,
            anchored.unary_starts,
            anchored.unary_ends,
            anchored.unary_scores,
        ),
    )
