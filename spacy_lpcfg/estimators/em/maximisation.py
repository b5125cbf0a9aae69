"""The M-step: expected counts normalised per parent state, then smoothed.

Binary and unary rules of a parent state share one distribution; lexical rules
(emissions over training entries) have their own. Smoothing moves each parent
state's distribution towards the mean over its symbol's states, ``p' = (1 - a) p
+ a mean_h p_h``, as the Berkeley parser's smoothing phase does; it is not an
M-step of the likelihood, so the likelihood may dip after it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .grammar import EMGrammar, block_offsets, block_shape, block_start
from .treebank import KINDS, EMTreebank


def m_step(
    treebank: EMTreebank,
    n_states: np.ndarray,
    counts: Mapping[str, np.ndarray],
    smoothing: float = 0.0,
    lexical_smoothing: float = 0.0,
    *,
    overwrite: bool = False,
) -> EMGrammar:
    """Normalise expected counts per parent state, then smooth towards the mean over
    the parent symbol's states (``normalise_rules``).

    counts (Mapping[str, np.ndarray]): kind -> float64 counts laid out like the weights.
    overwrite (bool): the weights are written over the counts (float64 arrays nobody
        else reads), which then are the grammar's: no second array of their size.
    RETURNS (EMGrammar): the grammar.
    """
    n_states = np.asarray(n_states, dtype=np.int64)
    blocks = {}
    for kind in KINDS:
        shape = block_shape(treebank.state_symbols(kind), n_states)
        start = block_start(treebank.state_symbols(kind), n_states)
        blocks[kind] = (shape, block_offsets(shape), start)
    weights = normalise_rules(n_states, blocks, counts, smoothing, lexical_smoothing, overwrite)
    for array in weights.values():
        array.flags.writeable = False  # a grammar's weights never change once made
    return EMGrammar(n_states, weights)


def normalise_rules(
    n_states: np.ndarray,
    blocks: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    counts: Mapping[str, np.ndarray],
    smoothing: float,
    lexical_smoothing: float,
    overwrite: bool = False,
) -> dict[str, np.ndarray]:
    """Expected counts over their parent state's total (binary and unary rules of a
    parent share its distribution, lexical rules have their own), then smoothed
    towards the mean over the parent's states (``kernels.normalise_blocks``).

    blocks (Mapping[str, tuple]): kind -> (shape, offsets, start) of its rule blocks.
    overwrite (bool): write the weights over the counts (``m_step``).
    RETURNS (dict[str, np.ndarray]): kind -> the weights, laid out like the counts.
    """
    from .kernels import add_parent_totals, normalise_blocks, normalise_blocks_in_place

    phrasal, lexical = np.zeros(int(n_states.sum())), np.zeros(int(n_states.sum()))
    for kind, totals in (("binary", phrasal), ("unary", phrasal), ("lexical", lexical)):
        add_parent_totals(*blocks[kind], np.asarray(counts[kind], dtype=np.float64), totals)
    weights = {}
    for kind, totals, alpha in (
        ("binary", phrasal, smoothing),
        ("unary", phrasal, smoothing),
        ("lexical", lexical, lexical_smoothing),
    ):
        kind_counts = np.asarray(counts[kind], dtype=np.float64)
        if overwrite:
            normalise_blocks_in_place(*blocks[kind], kind_counts, totals, alpha)
            weights[kind] = kind_counts
        else:
            weights[kind] = normalise_blocks(*blocks[kind], kind_counts, totals, alpha)
    return weights


def initial_grammar(treebank: EMTreebank) -> EMGrammar:
    """The one-state MLE grammar (rule and entry relative frequencies)."""
    n_states = np.ones(len(treebank.counts.symbols), dtype=np.int64)
    leaf_rules = treebank.node_rule[treebank.nodes.token_node]
    counts = {
        "binary": treebank.counts.binary_counts,
        "unary": treebank.counts.unary_counts,
        "lexical": np.bincount(leaf_rules, minlength=len(treebank.lexical_rules)).astype(float),
    }
    return m_step(treebank, n_states, counts)
