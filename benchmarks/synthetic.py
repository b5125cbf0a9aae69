"""Synthetic latent grammars for parser benchmarks: a one-state grammar split into m states.

``split_grammar(grammar, m, seed)`` gives every symbol but TOP m latent states.
Each rule's weight is spread over the states of its children, each entry
perturbed by a factor in [1 - noise, 1 + noise]; then every parent state's
rules are rescaled to the parent's original total, and every preterminal
state's lexical weights to the tag's original total. The projection of the
result (``LPCFG.project``) is therefore close to the source grammar, and a
model built from it parses like the source model at the cost of an m-state
chart: the speed of a PCFG-LA of that size, without training one.
"""

from __future__ import annotations

import numpy as np

from spacy_lpcfg.grammar import LPCFG, ParsingModel


def split_grammar(grammar: LPCFG, m: int, seed: int = 0, noise: float = 0.1) -> LPCFG:
    """grammar (LPCFG): a one-state grammar. RETURNS (LPCFG): m states per symbol, TOP 1."""
    if grammar.max_states != 1:
        raise ValueError("split_grammar needs a one-state grammar")
    rng = np.random.default_rng(seed)
    n_states = np.full(grammar.n_symbols, m, dtype=np.int32)
    n_states[grammar.root] = 1
    parent_rows = []  # per rule kind: (parents, states of each parent, block sizes)
    blocks = {}
    for kind in ("binary", "unary"):
        rules = getattr(grammar, f"{kind}_rules")
        sizes = np.prod(n_states[rules].astype(np.int64), axis=1)
        children = sizes // n_states[rules[:, 0]]
        weights = np.repeat(getattr(grammar, f"{kind}_weights") / children, sizes)
        blocks[kind] = (rules, sizes, _perturb(weights, rng, noise))
        parent_rows.append((rules[:, 0], n_states[rules[:, 0]], children))
    # Rescale each parent state's binary + unary rows to the parent's one-state total.
    state_offsets = np.concatenate([[0], np.cumsum(n_states, dtype=np.int64)])
    totals = np.zeros(grammar.n_symbols)
    np.add.at(totals, grammar.binary_rules[:, 0], grammar.binary_weights)
    np.add.at(totals, grammar.unary_rules[:, 0], grammar.unary_weights)
    row_sums = np.zeros(state_offsets[-1])
    row_states = {}
    for (kind, (_, _, weights)), (parents, m_parent, children) in zip(blocks.items(), parent_rows):
        states = _row_states(parents, m_parent, state_offsets)
        lengths = np.repeat(children, m_parent)
        np.add.at(row_sums, states, _row_sums(weights, lengths))
        row_states[kind] = (states, lengths)
    scale = np.divide(
        np.repeat(totals, n_states), row_sums, out=np.zeros_like(row_sums), where=row_sums > 0
    )
    arrays = {}
    for kind, (rules, sizes, weights) in blocks.items():
        states, lengths = row_states[kind]
        arrays[f"{kind}_rules"] = rules
        arrays[f"{kind}_offsets"] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        arrays[f"{kind}_weights"] = weights * np.repeat(scale[states], lengths)
    # Lexical: per (tag, state), the perturbed weights rescaled to the tag's total.
    lexical = grammar.lexical_rules
    m_tag = n_states[lexical[:, 0]].astype(np.int64)
    weights = _perturb(np.repeat(grammar.lexical_weights, m_tag), rng, noise)
    states = _row_states(lexical[:, 0], m_tag, state_offsets)
    state_totals = np.zeros(state_offsets[-1])
    np.add.at(state_totals, states, weights)
    tag_totals = np.zeros(grammar.n_symbols)
    np.add.at(tag_totals, lexical[:, 0], grammar.lexical_weights)
    lexical_scale = np.divide(
        np.repeat(tag_totals, n_states),
        state_totals,
        out=np.zeros_like(state_totals),
        where=state_totals > 0,
    )
    arrays["lexical_rules"] = lexical
    arrays["lexical_offsets"] = np.concatenate([[0], np.cumsum(m_tag)]).astype(np.int64)
    arrays["lexical_weights"] = weights * lexical_scale[states]
    return LPCFG(grammar.symbols, n_states, words=grammar.words, **arrays)


def split_model(model: ParsingModel, m: int, seed: int = 0) -> ParsingModel:
    """The model with its grammar split (split_grammar); lexicon and transforms shared."""
    return ParsingModel(
        split_grammar(model.grammar, m, seed), model.lexicon, model.transform, estimator="split"
    )


def _perturb(weights: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    return weights * (1.0 + noise * rng.uniform(-1.0, 1.0, size=len(weights)))


def _row_states(parents: np.ndarray, m_parent: np.ndarray, state_offsets: np.ndarray):
    """int64: the global state id of each (rule, parent state) row, rules in order."""
    first = np.repeat(state_offsets[parents], m_parent)
    rows = np.arange(int(m_parent.sum())) - np.repeat(np.cumsum(m_parent) - m_parent, m_parent)
    return first + rows


def _row_sums(weights: np.ndarray, row_lengths: np.ndarray) -> np.ndarray:
    starts = np.concatenate([[0], np.cumsum(row_lengths)[:-1]])
    return np.add.reduceat(weights, starts) if len(weights) else np.zeros(0)
