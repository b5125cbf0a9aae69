"""Latent states merged into runs of neighbours: a pruning level between the one-state
projection and the latent grammar itself (``chart.pruning``).

A merged state x of symbol A stands for the fine states h of A in its run; its rules
are the fine rules averaged over those states with their expected counts w
(``LPCFG.expected_state_weights``) and summed over the children's runs, Petrov &
Klein 2007's projection to a coarser state set:
``T'(A_x -> B_y C_z) = sum_{h in x} w(h) / w(x) sum_{h' in y, h'' in z} T(A_h -> B_h' C_h'')``.

Split-merge numbers the two halves of state h 2h and 2h + 1 and merging keeps the
order, so neighbouring states share their recent ancestors: the runs stand for the
states of an earlier cycle, what hierarchical pruning parses with, without the model
storing that cycle's grammar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.state_links import stored_cell
from .scaled import KERNEL


@dataclass(frozen=True)
class StateMerge:
    """A latent grammar with runs of neighbouring latent states merged, and the map.

    grammar (LPCFG): the merged grammar, over the same symbols, rules and words.
    fine_n_states (np.ndarray): int64[S], the states of each symbol before merging.
    group_of (np.ndarray): int64[sum of fine_n_states]: for each fine state (numbered
        symbol by symbol), its merged state within its symbol.
    share (np.ndarray): float64[sum of fine_n_states]: w(h) / the sum of w over h's
        merged state (1 / its size when that sum is 0).
    """

    grammar: LPCFG
    fine_n_states: np.ndarray
    group_of: np.ndarray
    share: np.ndarray

    def lexical(self, fine: LexicalScores) -> LexicalScores:
        """The merged grammar's preterminal scores: each fine vector's share-weighted
        sums over the merged states.

        fine (LexicalScores): scores for the fine grammar.
        """
        entry = np.repeat(np.arange(len(fine.tags)), np.diff(fine.offsets))
        state = _starts(self.fine_n_states)[fine.tags[entry]] + (
            np.arange(len(fine.values)) - fine.offsets[entry]
        )
        sizes = self.grammar.n_states[fine.tags].astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        values = np.bincount(
            offsets[entry] + self.group_of[state],
            fine.values * self.share[state],
            minlength=int(offsets[-1]),
        )
        return LexicalScores(
            n_words=fine.n_words,
            positions=fine.positions,
            tags=fine.tags,
            offsets=offsets,
            values=values,
        )


def merge_states(grammar: LPCFG, max_states: int) -> StateMerge:
    """Merge the latent states of each symbol into at most ``max_states`` runs of
    neighbours: state h of m into run ``h * k // m``, k = min(max_states, m).

    grammar (LPCFG): a grammar with non-negative weights.
    max_states (int): >= 1.
    RETURNS (StateMerge): the merged grammar and the state map.
    """
    if not isinstance(max_states, (int, np.integer)) or max_states < 1:
        raise ValueError(Errors.E133.format(detail=f"max_states >= 1, not {max_states!r}"))
    fine = grammar.n_states.astype(np.int64)
    merged = np.minimum(fine, max_states)
    symbol_of_state = np.repeat(np.arange(grammar.n_symbols), fine)
    local = np.arange(int(fine.sum())) - _starts(fine)[symbol_of_state]
    group_of = local * merged[symbol_of_state] // fine[symbol_of_state]
    weights = np.concatenate(grammar.expected_state_weights())
    keys = _starts(merged)[symbol_of_state] + group_of
    # States no tree reaches weigh uniformly within their run (as merge_symbols does).
    totals = np.bincount(keys, weights, minlength=int(merged.sum()))[keys]
    sizes = np.bincount(keys, minlength=int(merged.sum()))[keys]
    share = np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / sizes)
    arrays: dict[str, np.ndarray] = {}
    for kind, arity in (("binary", 3), ("unary", 2), ("lexical", 1)):
        rules = getattr(grammar, f"{kind}_rules")
        symbols = np.ascontiguousarray(rules[:, :arity], dtype=np.int64)
        sizes = merged[symbols].prod(axis=1) if len(rules) else np.zeros(0, np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        stored = grammar.binary_sparse if kind == "binary" else None
        merged_weights = np.zeros(int(offsets[-1]))
        _merge_blocks(
            symbols,
            getattr(grammar, f"{kind}_offsets"),
            stored is None,
            np.zeros(0, np.int64) if stored is None else stored.positions.astype(np.int64),
            getattr(grammar, f"{kind}_weights") if stored is None else stored.values,
            fine,
            merged,
            _starts(fine),
            group_of,
            share,
            offsets,
            merged_weights,
        )
        arrays[f"{kind}_rules"] = rules
        arrays[f"{kind}_offsets"] = offsets
        arrays[f"{kind}_weights"] = merged_weights
    coarse = LPCFG(grammar.symbols, merged.astype(np.int32), words=grammar.words, **arrays)
    return StateMerge(coarse, fine, group_of, share)


def _starts(n_states: np.ndarray) -> np.ndarray:
    """int64[S]: the first global state of each symbol."""
    return np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)


@njit(**KERNEL)
def _merge_blocks(symbols, offsets, dense, positions, values, fine_n, merged_n, fine_starts,
                  group_of, share, merged_offsets, out):  # fmt: skip
    """Add every stored weight of a kind's blocks (C order, the first symbol's states
    slowest) to its merged cell of ``out``, times its parent state's share. ``dense``:
    ``values`` is every weight; else the weights at ``positions`` (sorted)."""
    rule = 0
    n = values.shape[0] if dense else positions.shape[0]
    for k in range(n):
        rule, index = stored_cell(k, dense, positions, offsets, rule)
        key = 0
        stride = 1
        weight = values[k]
        for axis in range(symbols.shape[1] - 1, -1, -1):
            symbol = symbols[rule, axis]
            state = fine_starts[symbol] + index % fine_n[symbol]
            index //= fine_n[symbol]
            key += group_of[state] * stride
            stride *= merged_n[symbol]
            if axis == 0:
                weight *= share[state]
        out[merged_offsets[rule] + key] += weight
