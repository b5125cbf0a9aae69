"""The minimum-evolution binary tree of a sentence under a word distance matrix.

Parikh, Cohen & Xing (2014, section 3.3) recover, for each sentence, the
projective undirected binary latent tree whose edges have the least total length
(Eq. 6, "minimum evolution"), the length of each edge being computed from the
word-word distances alone through path additivity:

* a leaf edge ``(w, u)``, with ``G`` and ``H`` the leaves on the sides of the two
  other neighbours of ``u``: ``d(w, u) = ½ (d(w, G) + d(w, H) - d(G, H))`` (Eq. 3);
* an internal edge ``(u, v)``, with ``A``, ``B`` beyond ``u`` and ``G``, ``H``
  beyond ``v``:
  ``d(u, v) = ¼ (d(A,G) + d(A,H) + d(B,G) + d(B,H)) - ½ (d(A,B) + d(G,H))`` (Eq. 4),

where ``d(X, Y)`` is the mean distance between the leaves of ``X`` and ``Y`` (the
paper's "averaging over all valid choices", after Desper & Gascuel 2005).

The undirected tree comes from a bracketing whose root node is removed and whose
two top constituents are joined by the "root edge". For a constituent ``u =
[i, j)`` with children ``[i, k)``, ``[k, j)`` and parent ``[p, q)`` (not the
whole sentence), ``G`` is the sibling of ``u`` and ``H`` everything outside the
parent, so the length of the edge to the parent depends only on ``(i, j, k)``
and the parent's span: the total is minimised by a dynamic program over
(constituent, parent) pairs, ``O(n^4)`` in time and ``O(n^3)`` in space. The
paper's Eisner-Satta formulation is the same search (the same decomposition
into parts); this CKY-style form is what docs/design/architecture.md, section 9 states.
"""

from __future__ import annotations

import numba
import numpy as np

from .. import kernel_cache

kernel_cache.install()  # numba caches the kernels by their place in the package

_INF = np.inf


@numba.njit(cache=True)
def _block(prefix, a0, a1, b0, b1):
    """Sum of D[a0:a1, b0:b1] from the 2-D prefix sums."""
    return prefix[a1, b1] - prefix[a0, b1] - prefix[a1, b0] + prefix[a0, b0]


@numba.njit(cache=True)
def _mean(prefix, a0, a1, b0, b1):
    """Mean distance between the spans [a0, a1) and [b0, b1)."""
    return _block(prefix, a0, a1, b0, b1) / ((a1 - a0) * (b1 - b0))


@numba.njit(cache=True)
def _mean_outside(prefix, a0, a1, p, q, n):
    """Mean distance between the span [a0, a1) and the words outside [p, q)."""
    total = _block(prefix, a0, a1, 0, p) + _block(prefix, a0, a1, q, n)
    return total / ((a1 - a0) * (n - (q - p)))


@numba.njit(cache=True)
def _edge(prefix, i, k, j, g0, g1, p, q, n):
    """Length of the edge from [i, j) (split at k; k < 0 for a word) to its parent [p, q).

    The sibling is [g0, g1) and H the words outside the parent.
    """
    g_h = _mean_outside(prefix, g0, g1, p, q, n)
    if k < 0:  # Eq. 3
        return 0.5 * (_mean(prefix, i, j, g0, g1) + _mean_outside(prefix, i, j, p, q, n) - g_h)
    cross = (
        _mean(prefix, i, k, g0, g1)
        + _mean_outside(prefix, i, k, p, q, n)
        + _mean(prefix, k, j, g0, g1)
        + _mean_outside(prefix, k, j, p, q, n)
    )
    return 0.25 * cross - 0.5 * (_mean(prefix, i, k, k, j) + g_h)


@numba.njit(cache=True)
def _root_edge(prefix, s, k_left, k_right, n):
    """Length of the edge joining the top constituents [0, s) and [s, n).

    k_left / k_right: their split points, -1 for a single word.
    """
    if k_left < 0 and k_right < 0:
        return _mean(prefix, 0, 1, 1, 2)
    if k_left < 0:  # word 0 against the children of [1, n)
        return 0.5 * (
            _mean(prefix, 0, 1, s, k_right)
            + _mean(prefix, 0, 1, k_right, n)
            - _mean(prefix, s, k_right, k_right, n)
        )
    if k_right < 0:  # word n-1 against the children of [0, n-1)
        return 0.5 * (
            _mean(prefix, s, n, 0, k_left)
            + _mean(prefix, s, n, k_left, s)
            - _mean(prefix, 0, k_left, k_left, s)
        )
    cross = (
        _mean(prefix, 0, k_left, s, k_right)
        + _mean(prefix, 0, k_left, k_right, n)
        + _mean(prefix, k_left, s, s, k_right)
        + _mean(prefix, k_left, s, k_right, n)
    )
    return 0.25 * cross - 0.5 * (
        _mean(prefix, 0, k_left, k_left, s) + _mean(prefix, s, k_right, k_right, n)
    )


@numba.njit(cache=True)
def _subtree_tables(prefix, n):
    """Best cost of each constituent's subtree plus its edge to each possible parent.

    as_left[i, j, q]: [i, j) as the left child of [i, q); as_right[i, j, p]: [i, j)
    as the right child of [p, j); split_left / split_right hold the best split
    point (-1 for a word). Parents are never the whole sentence.
    """
    as_left = np.full((n + 1, n + 1, n + 1), _INF)
    as_right = np.full((n + 1, n + 1, n + 1), _INF)
    split_left = np.full((n + 1, n + 1, n + 1), -1, dtype=np.int64)
    split_right = np.full((n + 1, n + 1, n + 1), -1, dtype=np.int64)
    inner = np.empty(n + 1)
    for length in range(1, n):
        for i in range(0, n - length + 1):
            j = i + length
            for k in range(i + 1, j):
                inner[k] = as_left[i, k, j] + as_right[k, j, i]
            for q in range(j + 1, n + 1):
                if i == 0 and q == n:
                    continue
                if length == 1:
                    as_left[i, j, q] = _edge(prefix, i, -1, j, j, q, i, q, n)
                    continue
                for k in range(i + 1, j):
                    cost = _edge(prefix, i, k, j, j, q, i, q, n) + inner[k]
                    if cost < as_left[i, j, q]:
                        as_left[i, j, q] = cost
                        split_left[i, j, q] = k
            for p in range(0, i):
                if p == 0 and j == n:
                    continue
                if length == 1:
                    as_right[i, j, p] = _edge(prefix, i, -1, j, p, i, p, j, n)
                    continue
                for k in range(i + 1, j):
                    cost = _edge(prefix, i, k, j, p, i, p, j, n) + inner[k]
                    if cost < as_right[i, j, p]:
                        as_right[i, j, p] = cost
                        split_right[i, j, p] = k
    return as_left, as_right, split_left, split_right


@numba.njit(cache=True)
def _best_root(prefix, n, as_left, as_right, s):
    """Best (cost, left split, right split) with the top split at s."""
    best, best_l, best_r = _INF, -1, -1
    l_range = np.arange(1, s) if s >= 2 else np.array([-1])
    r_range = np.arange(s + 1, n) if n - s >= 2 else np.array([-1])
    for kl in l_range:
        inner_l = 0.0 if kl < 0 else as_left[0, kl, s] + as_right[kl, s, 0]
        for kr in r_range:
            inner_r = 0.0 if kr < 0 else as_left[s, kr, n] + as_right[kr, n, s]
            cost = _root_edge(prefix, s, kl, kr, n) + inner_l + inner_r
            if cost < best:
                best, best_l, best_r = cost, kl, kr
    return best, best_l, best_r


def minimum_evolution_tree(
    distances: np.ndarray, top_split: int | None = None
) -> tuple[float, list[tuple[int, int]]]:
    """The projective binary tree of least total edge length.

    distances (np.ndarray): (n, n) symmetric word distances.
    top_split (int | None): where the second top constituent starts (1 <= s < n),
        or None to choose it by least cost too.
    RETURNS (tuple[float, list[tuple[int, int]]]): the total edge length and the
        brackets (half-open spans of at least two words, the sentence included).
    """
    n = distances.shape[0]
    if n <= 2:
        return (float(distances[0, 1]) if n == 2 else 0.0), ([(0, n)] if n == 2 else [])
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = np.cumsum(np.cumsum(np.asarray(distances, dtype=np.float64), 0), 1)
    as_left, as_right, split_left, split_right = _subtree_tables(prefix, n)
    candidates = range(1, n) if top_split is None else [top_split]
    best = (_INF, -1, -1, -1)
    for s in candidates:
        cost, kl, kr = _best_root(prefix, n, as_left, as_right, s)
        if cost < best[0]:
            best = (cost, s, kl, kr)
    cost, s, kl, kr = best
    brackets = [(0, n)]
    # (start, end, split) of the constituents still to expand
    todo = [(0, s, kl), (s, n, kr)]
    while todo:
        i, j, k = todo.pop()
        if k < 0:
            continue
        brackets.append((i, j))
        todo.append((i, k, int(split_left[i, k, j])))
        todo.append((k, j, int(split_right[k, j, i])))
    return float(cost), sorted(brackets)
