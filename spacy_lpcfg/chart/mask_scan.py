"""Numba: the symbols a pruning mask allows over one cell, read off its non-zero words.

The mask is ``inputs.mask_arrays``'s: bool (n+1, n+1, K') padded to a multiple of 8
columns, so that ``mask_words`` (its uint64 view) holds 8 columns a word and a cell
with nothing allowed costs K'/8 reads, not one per symbol.
"""

from __future__ import annotations

from numba import njit

from .scaled import HELPER


@njit(**HELPER)
def masked_members(i, j, mask, mask_words, column_offsets, column_members, out):
    """Fill ``out`` with the members (CSR ``column_offsets``, ``column_members``) of the
    columns allowed over (i, j), column by column; RETURNS how many."""
    n_out = 0
    n_columns = column_offsets.shape[0] - 1
    for word in range(mask_words.shape[2]):
        if mask_words[i, j, word] == 0:
            continue
        for column in range(8 * word, min(8 * word + 8, n_columns)):
            if mask[i, j, column]:
                for m in range(column_offsets[column], column_offsets[column + 1]):
                    out[n_out] = column_members[m]
                    n_out += 1
    return n_out
