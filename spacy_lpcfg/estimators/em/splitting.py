"""Splitting latent states in two: every symbol's (Petrov et al. 2006), or only the
symbols whose sibling states have diverged most ("clone some", Dreyer & Eisner 2006).

Split states are numbered so that state h becomes 2h and 2h + 1: the pairs of
sibling states that merging and "clone some" look at are (2k, 2k + 1).
"""

from __future__ import annotations

import numpy as np

from .grammar import EMGrammar, block_offsets, block_shape
from .maximisation import m_step
from .treebank import KINDS, EMTreebank

# Split noise is drawn and applied this many weights at a time: the draws are the same
# as one call's, without temporaries the size of the split grammar.
NOISE_CHUNK = 1 << 20


def split_grammar(
    treebank: EMTreebank,
    grammar: EMGrammar,
    noise: float,
    random_state: np.random.Generator,
    symbols: np.ndarray | None = None,
) -> EMGrammar:
    """Every state of every symbol but TOP in two: state h becomes 2h and 2h + 1.

    Each new cell copies its parent cell's weight divided by the number of child
    cells it was split into (``kernels.split_blocks``), times ``1 + noise * u``
    with u uniform in [-1, 1]; each parent state is renormalised.

    symbols (np.ndarray | None): bool[n_symbols], the symbols to split (TOP never
        is); None: all.
    """
    from .kernels import split_blocks

    split = np.ones(len(grammar.n_states), dtype=bool) if symbols is None else symbols.copy()
    split[treebank.counts.symbols.root] = False
    n_states = np.where(split, 2 * grammar.n_states, grammar.n_states)
    expanded = {}
    for kind in KINDS:
        symbols = treebank.state_symbols(kind)
        old_shape, new_shape = (
            block_shape(symbols, grammar.n_states),
            block_shape(symbols, n_states),
        )
        weights = split_blocks(
            old_shape,
            block_offsets(old_shape),
            new_shape,
            block_offsets(new_shape),
            grammar.weights[kind],
        )
        for lo in range(0, len(weights), NOISE_CHUNK):
            part = weights[lo : lo + NOISE_CHUNK]
            part *= 1.0 + noise * random_state.uniform(-1.0, 1.0, size=len(part))
        expanded[kind] = weights
    return m_step(treebank, n_states, expanded, overwrite=True)


def pair_divergences(treebank: EMTreebank, grammar: EMGrammar) -> np.ndarray:
    """float64[sum(n_states)]: at the first state of each pair of sibling states (2k,
    2k + 1) of a symbol, the Jensen-Shannon divergence (nats) of their rewrite
    distributions (rules and child states; emissions for tags); 0 elsewhere."""
    divergence = np.zeros(int(grammar.n_states.sum()))
    state_start = grammar.state_start
    for kind in KINDS:
        symbols = treebank.state_symbols(kind)
        shape = block_shape(symbols, grammar.n_states)
        offsets = block_offsets(shape)
        weights = grammar.weights[kind]
        rule = np.repeat(np.arange(len(shape)), shape.prod(axis=1))
        row = shape[rule, 1] * shape[rule, 2]  # cells per parent state
        state = (np.arange(len(weights)) - offsets[rule]) // row
        first = np.flatnonzero((state % 2 == 0) & (state + 1 < shape[rule, 0]))
        p, q = weights[first], weights[first + row[first]]
        np.add.at(
            divergence,
            state_start[symbols[rule[first], 0]] + state[first],
            _js_terms(p, q) + _js_terms(q, p),
        )
    return divergence


def _js_terms(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """½ x log(x / m) with m = (x + y) / 2, 0 where x is 0; in logs, as (x + y) / 2
    can underflow to 0 for subnormal weights."""
    out = np.zeros_like(x)
    positive = x > 0
    xs = x[positive]
    out[positive] = 0.5 * xs * (np.log(2.0 * xs) - np.log(xs + y[positive]))
    return out


def clone_some(treebank: EMTreebank, grammar: EMGrammar) -> np.ndarray:
    """bool[n_symbols]: the symbols to split next under "clone some" annealing (Dreyer &
    Eisner 2006, section 5): those whose sibling states' rewrite distributions
    diverge more than the average over symbols (the mean Jensen-Shannon divergence
    of their pairs, ``pair_divergences``); symbols with one state are all split."""
    n_states = grammar.n_states
    divergence = pair_divergences(treebank, grammar)
    symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
    local = np.arange(len(divergence)) - grammar.state_start[symbol_of_state]
    is_pair = (local % 2 == 0) & (local + 1 < n_states[symbol_of_state])
    pairs = np.bincount(symbol_of_state, is_pair, minlength=len(n_states))
    totals = np.bincount(symbol_of_state, np.where(is_pair, divergence, 0.0), len(n_states))
    split = pairs == 0
    measured = pairs > 0
    if measured.any():
        mean = totals[measured] / pairs[measured]
        split[measured] = mean > mean.mean()
    return split
