"""Mostly-zero flat weight arrays kept as their non-zero values and positions.

Clustering grammars put ~2% non-zero weights in their binary rule blocks (one
cluster pair per child pair, at most), so the dense array of a 16-state grammar
is almost all zeros, and an ensemble of such grammars holds several times the
memory it needs. Stored as values and positions (16 bytes per non-zero weight),
a grammar takes a small fraction of its dense size (BENCHMARKS.md "Memory and
disk of models"); the chart kernels read the non-zero cells directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Weights with at most this fraction of non-zero values are kept (in memory and in
# files) as values and positions: 16 bytes per non-zero value instead of 8 per weight.
SPARSE_FRACTION = 0.5


@dataclass(frozen=True, eq=False)
class SparseWeights:
    """A flat float64 array of `length` weights that are zero except at `positions`.

    positions (np.ndarray): int[k], strictly increasing, in [0, length); int32 (half the
        bytes) when ``position_dtype(length)`` allows.
    values (np.ndarray): float64[k], the weights there (non-zero when built by
        ``from_dense``).
    length (int): the length of the dense array.

    Use ``check`` on untrusted arrays before ``to_dense`` allocates.
    """

    positions: np.ndarray
    values: np.ndarray
    length: int

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> SparseWeights:
        """The non-zero weights of a flat array."""
        positions = np.flatnonzero(dense)
        dtype = position_dtype(len(dense))
        return cls(_read_only(positions.astype(dtype)), _read_only(dense[positions]), len(dense))

    @staticmethod
    def worth_it(dense: np.ndarray) -> bool:
        """Whether `dense` has few enough non-zero values (``SPARSE_FRACTION``) to keep sparse."""
        return len(dense) > 0 and bool(np.count_nonzero(dense) <= SPARSE_FRACTION * len(dense))

    def check(self) -> str | None:
        """What is wrong with the arrays (a short sentence), or None."""
        if self.positions.ndim != 1 or self.positions.shape != self.values.shape:
            return f"{self.positions.shape} positions for {self.values.shape} values"
        if len(self.positions) and (
            self.positions.min() < 0 or self.positions.max() >= self.length
        ):
            return f"positions must lie in [0, {self.length})"
        if (np.diff(self.positions) <= 0).any():
            return "positions must increase"
        return None

    def to_dense(self) -> np.ndarray:
        """float64[length], a new writable array."""
        dense = np.zeros(self.length)
        dense[self.positions] = self.values
        return dense

    def dense_range(self, start: int, end: int) -> np.ndarray:
        """float64[end - start]: the dense weights start:end, a new array."""
        first, last = np.searchsorted(self.positions, (start, end))
        part = np.zeros(end - start)
        part[self.positions[first:last] - start] = self.values[first:last]
        return part

    @property
    def nbytes(self) -> int:
        return self.positions.nbytes + self.values.nbytes

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SparseWeights):
            return NotImplemented
        return (
            self.length == other.length
            and np.array_equal(self.positions, other.positions)
            and np.array_equal(self.values, other.values)
        )

    __hash__ = None  # type: ignore[assignment]


def position_dtype(length: int) -> type:
    """int32 for arrays shorter than 2**31 (every grammar we train), else int64."""
    return np.int32 if length <= np.iinfo(np.int32).max else np.int64


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
