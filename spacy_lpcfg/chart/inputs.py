"""Checking and packing the arguments of the chart kernels."""

from __future__ import annotations

import numpy as np

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores

_NO_MASK = np.ones((1, 1, 1), dtype=np.bool_)  # placeholder: kernels take an array either way


def binary_parents(grammar: LPCFG) -> np.ndarray:
    """int32[k]: the symbols that have binary rules, increasing."""
    return np.flatnonzero(np.diff(grammar.binary_parent_offsets) > 0).astype(np.int32)


def lexical_arrays(grammar: LPCFG, lexical: LexicalScores) -> tuple:
    """(positions, tags, offsets, values) after checking them against the grammar."""
    lexical.check(grammar)
    return lexical.positions, lexical.tags, lexical.offsets, lexical.values


def mask_arrays(mask: np.ndarray | None, n_words: int, n_symbols: int) -> tuple[bool, np.ndarray]:
    """(has_mask, bool array (n+1, n+1, S)) for an optional pruning mask.

    mask[i, j, a] is True when item (a, i, j) (half-open span) may be used.
    """
    if mask is None:
        return False, _NO_MASK
    mask = np.asarray(mask)
    expected = (n_words + 1, n_words + 1, n_symbols)
    if mask.shape != expected or mask.dtype != np.bool_:
        raise ValueError(
            Errors.E118.format(
                detail=f"got {mask.dtype} array of shape {mask.shape}, expected bool {expected}"
            )
        )
    return True, np.ascontiguousarray(mask)
