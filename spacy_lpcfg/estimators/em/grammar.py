"""A latent grammar being trained (``EMGrammar``) and the layout of its weights.

The weights of each kind of rule are one float64 array of dense blocks, rule by
rule, laid out as in ``grammar.lpcfg`` (lexical rules over training entries): a
rule's block spans the states of its parent and children in C order. A block's
shape has three columns (parent, left, right), 1 for the columns a rule does
not have, so the kernels read every kind the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .treebank import EMTreebank


@dataclass(frozen=True)
class EMGrammar:
    """A latent grammar being trained.

    n_states (np.ndarray): int64[n_symbols], latent states per symbol (TOP has 1).
    weights (dict[str, np.ndarray]): kind -> float64 blocks, rule by rule in C order
        over the states of ``EMTreebank.state_symbols(kind)``.
    """

    n_states: np.ndarray
    weights: dict[str, np.ndarray]

    @property
    def state_start(self) -> np.ndarray:
        """int64[n_symbols]: each symbol's first global state id."""
        return state_starts(self.n_states)

    def offsets(self, treebank: EMTreebank, kind: str) -> np.ndarray:
        """int64[R + 1]: where each rule's block starts in ``weights[kind]``."""
        return block_offsets(block_shape(treebank.state_symbols(kind), self.n_states))


def state_starts(n_states: np.ndarray) -> np.ndarray:
    """int64[n_symbols]: each symbol's first global state id."""
    return np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)


def block_shape(symbols: np.ndarray, n_states: np.ndarray) -> np.ndarray:
    """int64[R, 3]: the states of each rule's columns, 1 for the columns it does not have."""
    shape = np.ones((len(symbols), 3), dtype=np.int64)
    shape[:, : symbols.shape[1]] = n_states[symbols]
    return shape


def block_start(symbols: np.ndarray, n_states: np.ndarray) -> np.ndarray:
    """int64[R, 3]: the first global state of each column's symbol; sum(n_states) (one
    past the last state) for the columns a rule does not have."""
    start = np.full((len(symbols), 3), int(n_states.sum()), dtype=np.int64)
    start[:, : symbols.shape[1]] = state_starts(n_states)[symbols]
    return start


def block_offsets(shape: np.ndarray) -> np.ndarray:
    """int64[R + 1]: where each block of ``shape`` (``block_shape``) starts, then the total."""
    return np.concatenate([[0], np.cumsum(shape.prod(axis=1))]).astype(np.int64)
