"""Grammar-free span CKY: the best binary bracketing for labelled span scores.

The building block of the sum-based decoders (MBR on marginals, max-rule,
products of grammars, dual decomposition): they turn posteriors into an
(n+1, n+1, L) score array and ask for the binary tree whose spans, each with
its best label, have the largest total score (max-sum).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import Errors
from .scaled import KERNEL


@dataclass(frozen=True)
class SpanTree:
    """A binary bracketing of n words: 2n - 1 labelled spans in pre-order.

    score (float): the total score; -inf when the constraints allow no tree.
    starts, ends (np.ndarray): int32[2n - 1], half-open spans; (0, n) first, words included.
    labels (np.ndarray): int32[2n - 1], the best label of each span (index into L).
    """

    score: float
    starts: np.ndarray
    ends: np.ndarray
    labels: np.ndarray

    @property
    def has_tree(self) -> bool:
        return len(self.starts) > 0


def span_cky(
    scores: np.ndarray,
    *,
    forbidden: np.ndarray | None = None,
    forced: np.ndarray | None = None,
) -> SpanTree:
    """The binary tree maximising the sum over its spans of max_label scores[i, j, label].

    Every tree has the same number of spans (2n - 1, including the words and the
    whole sentence), so give "no bracket" its own label (a column of zeros, say) when
    a span may be left unlabelled.

    scores (np.ndarray): float (n+1, n+1, L), scores[i, j, l] for span [i, j) with label l;
        entries with j <= i are ignored.
    forbidden (np.ndarray | None): bool (n+1, n+1), spans the tree must not contain.
    forced (np.ndarray | None): bool (n+1, n+1), spans it must contain (so spans crossing
        them are forbidden); forced spans must not cross each other.
    RETURNS (SpanTree): the best tree, or one with no spans if the constraints allow none.
    """
    scores = np.asarray(scores)
    if (
        scores.ndim != 3
        or scores.shape[0] != scores.shape[1]
        or scores.shape[0] < 2
        or scores.shape[2] < 1
        or scores.dtype.kind != "f"
    ):
        raise ValueError(Errors.E203.format(shape=f"{scores.dtype} {scores.shape}"))
    n = scores.shape[0] - 1
    labels = scores.argmax(axis=2).astype(np.int32)
    span_scores = scores.max(axis=2).astype(np.float64)
    allowed = np.ones((n + 1, n + 1), dtype=bool)
    if forbidden is not None:
        allowed &= ~np.asarray(forbidden, dtype=bool)
    if forced is not None:
        allowed &= ~_crossing(np.asarray(forced, dtype=bool), n)
    span_scores = np.where(allowed, span_scores, -np.inf)
    score, starts, ends = _cky(span_scores)
    return SpanTree(float(score), starts, ends, labels[starts, ends])


def _crossing(forced: np.ndarray, n: int) -> np.ndarray:
    """bool (n+1, n+1): the spans that cross some forced span."""
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    crossing = np.zeros((n + 1, n + 1), dtype=bool)
    spans = [(int(a), int(b)) for a, b in zip(*np.nonzero(forced)) if a < b]
    for a, b in spans:
        crossing |= ((i < a) & (a < j) & (j < b)) | ((a < i) & (i < b) & (b < j))
    for a, b in spans:
        for c, d in spans:
            if a < c < b < d:
                raise ValueError(Errors.E204.format(first=(a, b), second=(c, d)))
    return crossing


@njit(**KERNEL)
def _cky(span_scores):
    """Max-sum CKY over span scores (n+1, n+1); RETURNS (score, starts, ends) in pre-order."""
    n = span_scores.shape[0] - 1
    best = np.full((n + 1, n + 1), -np.inf)
    split = np.zeros((n + 1, n + 1), np.int32)
    for i in range(n):
        best[i, i + 1] = span_scores[i, i + 1]
    for width in range(2, n + 1):
        for i in range(n - width + 1):
            j = i + width
            if span_scores[i, j] == -np.inf:
                continue
            top = -np.inf
            for k in range(i + 1, j):
                value = best[i, k] + best[k, j]
                if value > top:
                    top = value
                    split[i, j] = k
            best[i, j] = span_scores[i, j] + top
    if best[0, n] == -np.inf:
        empty = np.zeros(0, np.int32)
        return -np.inf, empty, empty
    starts = np.empty(2 * n - 1, np.int32)
    ends = np.empty(2 * n - 1, np.int32)
    stack = np.empty((2 * n, 2), np.int32)
    stack[0, 0], stack[0, 1] = 0, n
    depth = 1
    count = 0
    while depth > 0:
        depth -= 1
        i, j = stack[depth, 0], stack[depth, 1]
        starts[count], ends[count] = i, j
        count += 1
        if j - i > 1:
            k = split[i, j]
            stack[depth, 0], stack[depth, 1] = k, j
            stack[depth + 1, 0], stack[depth + 1, 1] = i, k
            depth += 2
    return best[0, n], starts, ends
