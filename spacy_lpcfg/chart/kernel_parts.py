"""Numba: the steps every chart kernel takes whatever its numbers, written once.

The one-state, latent and Viterbi kernels build the same chart skeleton: a word's
cell is seeded from its lexical entries, a wider cell gets the parents of binary
rules the mask allows, a rule's splits are where both of its children exist, and
each cell ends with the unary closure in topological order. Only the arithmetic
differs (a scaled sum, sums of scaled vectors, a log-space max), so the kernels
keep that and take the structural steps from here.

A helper that takes arrays, called in a kernel's inner loop, makes numba count
references there even when inlined: these are called once per cell (or, for
``rule_splits``, once per rule over plain array views), not per split. As with
``chart.scaled``, numba's on-disk cache does not notice edits here: delete the chart
package's caches after changing a helper.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .mask_scan import masked_members
from .scaled import HELPER


@njit(**HELPER)
def lexical_first(lex_positions, n):
    """int64[n+1]: entry ``first[p]`` is the first lexical entry at position p or later
    (positions increase), so the entries seeding word i's cell are
    ``first[i]:first[i + 1]``. A loop: np.searchsorted would compile seven functions of
    numba's own."""
    first = np.empty(n + 1, np.int64)
    entry = 0
    for p in range(n + 1):
        while entry < lex_positions.shape[0] and lex_positions[entry] < p:
            entry += 1
        first[p] = entry
    return first


@njit(**HELPER)
def parents_sorted(i, j, binary_parents, has_mask, mask, mask_words, column_offsets,
                   column_members, parents):  # fmt: skip
    """Fill ``parents`` with the symbols with binary rules that the mask allows over
    (i, j), increasing (the order of an unmasked pass); RETURNS how many."""
    if not has_mask:
        for t in range(binary_parents.shape[0]):  # not a slice copy (chart.scaled)
            parents[t] = binary_parents[t]
        return binary_parents.shape[0]
    n_parents = masked_members(i, j, mask, mask_words, column_offsets, column_members, parents)
    for t in range(1, n_parents):  # insertion sort: merged columns interleave symbols
        a = parents[t]
        position = t
        while position > 0 and parents[position - 1] > a:
            parents[position] = parents[position - 1]
            position -= 1
        parents[position] = a
    return n_parents


@njit(**HELPER)
def parents_in_context(i, j, binary_parents, has_mask, mask, mask_words, column_offsets,
                       column_members, context, parents):  # fmt: skip
    """Fill parents with the symbols that have binary rules (column_members lists only
    those), are allowed over (i, j) (read off the mask's columns) and have their
    context (``context[j, a]``, the one-state kernels'); in mask order, not sorted.
    RETURNS how many."""
    n_parents = 0
    if not has_mask:
        for a in binary_parents:
            if context[j, a]:
                parents[n_parents] = a
                n_parents += 1
        return n_parents
    n_allowed = masked_members(i, j, mask, mask_words, column_offsets, column_members, parents)
    for t in range(n_allowed):  # compacted in place: those with their context
        a = parents[t]
        if context[j, a]:
            parents[n_parents] = a
            n_parents += 1
    return n_parents


@njit(cache=True, nogil=True, inline="always")
def pop_split(word, w):
    """(the lowest split of bit word `word`, number w, and the word without it)."""
    return 64 * w + np.int64(trailing_zeros(word)), word & (word - np.uint64(1))


@njit(cache=True, nogil=True, inline="always")
def rule_splits(left_starts, right_ends, splits):
    """Write to ``splits`` the splits k, increasing, where both children of a rule
    exist: the bits set in both the left child's ``starts[i]`` and the right child's
    ``ends[j]`` words. RETURNS how many."""
    n_splits = 0
    for w in range(left_starts.shape[0]):
        word = left_starts[w] & right_ends[w]
        while word:
            k, word = pop_split(word, w)
            splits[n_splits] = k
            n_splits += 1
    return n_splits


@njit(**HELPER)
def unary_walk(i, j, unary_rules, unary_by_parent, unary_parent_order, has_mask, mask,
               columns, in_context, cell_live, touched, n_touched, steps):  # fmt: skip
    """The structure of the unary closure of cell (i, j): the unary parents in
    topological order (children first, so chains are followed to their end), those the
    mask allows and ``in_context[p]`` keeps (the one-state kernels' context row; True
    elsewhere). Writes to ``steps`` the rules whose child is in the cell, in the order
    the closure applies them, and adds their parents to the cell (``cell_live``,
    ``touched``); the caller then combines the numbers in that order. Which items exist
    never depends on their values, so the two can be split. RETURNS (n_touched,
    n_steps)."""
    n_steps = 0
    for p in unary_parent_order:
        if has_mask and not mask[i, j, columns[p]]:
            continue
        if not in_context[p]:
            continue
        for r in range(unary_by_parent[p], unary_by_parent[p + 1]):
            if not cell_live[unary_rules[r, 1]]:
                continue
            if not cell_live[p]:
                cell_live[p] = True
                touched[n_touched] = p
                n_touched += 1
            steps[n_steps] = r
            n_steps += 1
    return n_touched, n_steps
