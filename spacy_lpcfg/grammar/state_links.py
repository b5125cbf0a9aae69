"""Numba kernel: the parent-to-child state links of a grammar's rules, which
``LPCFG.expected_state_weights`` solves for expected state counts.

A parent state's expected number of children in a child state is the sum of its
rules' weights over the other child's states; this sums each rule block once,
without a temporary as large as the weights (the grammars of large treebanks hold
tens of millions).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import kernel_cache

kernel_cache.install()  # numba caches the kernels by their place in the package


def state_links(
    rules: np.ndarray,
    offsets: np.ndarray,
    positions: np.ndarray | None,
    values: np.ndarray,
    n_states: np.ndarray,
    state_offsets: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(child state, parent state, weight) int64/int64/float64 arrays, one entry per
    (rule, parent state, child state) and child position: the block's sum over the
    other child's states (binary rules) or the block itself (unary rules).

    rules (np.ndarray): int32[R, 2 or 3] (parent, children).
    offsets (np.ndarray): int64[R + 1], the blocks' offsets in the flat weights.
    positions (np.ndarray | None): the positions of ``values`` in the flat weights
        (sorted), or None when ``values`` is every weight.
    """
    rules64 = np.ascontiguousarray(rules, dtype=np.int64)
    m = n_states.astype(np.int64)[rules64]
    size = int((m[:, 0] * m[:, 1:].sum(axis=1)).sum()) if len(rules) else 0
    rows, cols, sums = np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size)
    dense = positions is None
    stored = np.zeros(0, np.int64) if positions is None else positions.astype(np.int64)
    _link_sums(
        rules64, np.asarray(offsets, np.int64), dense, stored,
        values, n_states.astype(np.int64), np.asarray(state_offsets, np.int64),
        rows, cols, sums,
    )  # fmt: skip
    return rows, cols, sums


@njit(cache=True, nogil=True)
def _link_sums(rules, offsets, dense, positions, values, n_states, state_offsets, rows,
               cols, sums):  # fmt: skip
    """Fill rows/cols/sums: per rule, its (m_parent x m_left) links, then (binary rules)
    its (m_parent x m_right) ones."""
    n_rules = rules.shape[0]
    binary = rules.shape[1] == 3
    out = 0
    starts = np.empty(n_rules + 1, np.int64)  # each rule's first entry in the outputs
    for r in range(n_rules):
        starts[r] = out
        a = rules[r, 0]
        ma, mb = n_states[a], n_states[rules[r, 1]]
        mc = n_states[rules[r, 2]] if binary else 1
        for h1 in range(ma):
            for h2 in range(mb):
                rows[out] = state_offsets[rules[r, 1]] + h2
                cols[out] = state_offsets[a] + h1
                out += 1
            if binary:
                for h3 in range(mc):
                    rows[out] = state_offsets[rules[r, 2]] + h3
                    cols[out] = state_offsets[a] + h1
                    out += 1
    starts[n_rules] = out
    rule = 0
    n = values.shape[0] if dense else positions.shape[0]
    for k in range(n):
        rule, index = stored_cell(k, dense, positions, offsets, rule)
        mb = n_states[rules[rule, 1]]
        mc = n_states[rules[rule, 2]] if binary else 1
        h3 = index % mc
        h2 = index // mc % mb
        h1 = index // (mb * mc)
        row = starts[rule] + h1 * (mb + (mc if binary else 0))
        sums[row + h2] += values[k]
        if binary:
            sums[row + mb + h3] += values[k]


@njit(cache=True, nogil=True, inline="always")
def stored_cell(k, dense, positions, offsets, rule):
    """(rule, index in its block) of stored weight k: every weight when ``dense``, else
    the one at ``positions[k]``. Positions increase, so the rule is found by moving on
    from the previous weight's."""
    position = k if dense else positions[k]
    while offsets[rule + 1] <= position:
        rule += 1
    return rule, position - offsets[rule]
