"""Merging pairs of sibling states back (Petrov et al. 2006): the pairs whose merging
loses least likelihood, by Petrov's approximation at each node
(``kernels.merge_losses``, summed over the shards by ``ShardedTreebank.merge_losses``).

Merging sums the expected counts of the merged states, which is the M-step of the
merged grammar (Petrov's merged weights are the sub-states' weights averaged by
their expected counts).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .grammar import EMGrammar, block_offsets, block_shape, block_start, state_starts
from .maximisation import m_step
from .treebank import KINDS, EMTreebank


def choose_merges(n_states: np.ndarray, losses: np.ndarray, fraction: float) -> np.ndarray:
    """bool[sum(n_states)]: True at the first state of the pairs to merge, the
    ``fraction`` of all pairs of the split symbols whose merging loses least.

    losses (np.ndarray): ``ShardedTreebank.merge_losses``, changes of log-likelihood.
    """
    state_start = np.concatenate([[0], np.cumsum(n_states)[:-1]])
    symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
    local = np.arange(len(losses)) - state_start[symbol_of_state]
    candidates = np.flatnonzero((n_states[symbol_of_state] % 2 == 0) & (local % 2 == 0))
    chosen = candidates[np.argsort(-losses[candidates], kind="stable")]
    merged = np.zeros(len(losses), dtype=bool)
    merged[chosen[: int(round(fraction * len(candidates)))]] = True
    return merged


def merge_grammar(
    treebank: EMTreebank,
    n_states: np.ndarray,
    counts: Mapping[str, np.ndarray],
    merged: np.ndarray,
    smoothing: float,
    lexical_smoothing: float,
) -> EMGrammar:
    """The M-step of the grammar whose pairs of states ``merged`` are one state.

    n_states (np.ndarray): the states before merging (every pair is (2k, 2k + 1)).
    counts (Mapping[str, np.ndarray]): expected counts of the grammar before merging.
    merged (np.ndarray): bool[sum(n_states)], True at the first state of each pair merged.
    """
    from .kernels import merge_blocks

    state_start = state_starts(n_states)
    # a state starts a new merged state unless it is the second of a merged pair
    starts = np.ones(int(n_states.sum()), dtype=bool)
    starts[1:] &= ~merged[:-1]
    starts[state_start] = True
    new_global = np.cumsum(starts) - 1
    symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
    new_local = new_global - new_global[state_start][symbol_of_state]
    new_local = np.append(new_local, 0)  # the absent columns of unary and lexical rules
    new_n_states = np.bincount(symbol_of_state, starts, minlength=len(n_states)).astype(np.int64)
    merged_counts = {}
    for kind in KINDS:
        symbols = treebank.state_symbols(kind)
        old_shape, new_shape = block_shape(symbols, n_states), block_shape(symbols, new_n_states)
        merged_counts[kind] = merge_blocks(
            old_shape,
            block_offsets(old_shape),
            new_shape,
            block_offsets(new_shape),
            block_start(symbols, n_states),
            new_local,
            np.asarray(counts[kind], dtype=np.float64),
        )
    return m_step(
        treebank, new_n_states, merged_counts, smoothing, lexical_smoothing, overwrite=True
    )
