"""The ``ParsingModel`` of a grammar trained by EM (split-merge's, INHERIT's expanded).

The lexicon is refitted like the clustering estimator's: ``Lexicon.fit_counts`` on
each token's posterior over its tag's states (``token_state_counts``), then the
emissions are smoothed towards the mean over each tag's states like the rules.
The model carries the grammar's projection with the expected state frequencies
as the coarse grammar for pruning (``extra_grammars[0]``,
``training["coarse_grammar"]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...grammar import LPCFG
from ...grammar.lexicon import Lexicon
from ...grammar.model import COARSE_GRAMMAR, ParsingModel
from ..base import TreebankEstimator, json_params
from .checkpoints import CycleState
from .grammar import EMGrammar, block_offsets, block_shape
from .treebank import EMTreebank, symbol_states

# Token posteriors go to the lexicon as multiples of 2**-20 summing to exactly one, so
# that its word counts are exact integers (it compares them with rare_threshold).
POSTERIOR_QUANTUM = 2.0**-20
# Parameters that say where training runs, not what it learns (the checkpoint folder,
# the cluster: paths, addresses, a client): not in the model's parameters.
RUN_PLACES = ("scheduler", "checkpoint_dir")


def latent_model(
    estimator: TreebankEstimator,
    treebank: EMTreebank,
    state: CycleState,
    token_posteriors: np.ndarray,
    lexical_smoothing: float,
    **training: Any,
) -> tuple[LPCFG, LPCFG, Lexicon, ParsingModel]:
    """The LPCFG of a grammar trained by EM (lexicon refitted on token posteriors and
    smoothed towards the mean over each tag's states), its coarse projection, the
    lexicon and the ParsingModel.

    estimator (TreebankEstimator): what trained it (lexicon settings, name, parameters).
    state (CycleState): the grammar in ``EMGrammar`` layout and its state counts.
    token_posteriors (np.ndarray): float64, each token's posterior over its tag's states.
    lexical_smoothing (float): the weight of the mean in the smoothed emissions.
    """
    from .kernels import smooth_blocks

    counts, symbols = treebank.counts, treebank.counts.symbols
    grammar = EMGrammar(state.n_states, state.weights)
    n_states = grammar.n_states
    lexicon = estimator._make_lexicon().fit_counts(
        token_state_counts(treebank, n_states, token_posteriors),
        symbol_states(treebank, n_states),
    )
    # new arrays, smoothed in place; the grammar takes them (and the EM weights) as they
    # are once read-only, and the lexicon's own copy of the emissions goes
    lexical = lexicon.lexical_arrays(symbols, release=True)
    shape = block_shape(lexical["lexical_rules"][:, :1], n_states)
    smooth_blocks(shape, block_offsets(shape), lexical["lexical_weights"], lexical_smoothing)
    for array in lexical.values():
        array.flags.writeable = False
    lpcfg = LPCFG(
        symbols,
        n_states.astype(np.int32),
        binary_rules=counts.binary_rules,
        binary_offsets=grammar.offsets(treebank, "binary"),
        binary_weights=grammar.weights["binary"],
        unary_rules=counts.unary_rules,
        unary_offsets=grammar.offsets(treebank, "unary"),
        unary_weights=grammar.weights["unary"],
        words=lexicon.entries,
        **lexical,
    )
    bounds = np.concatenate([[0], np.cumsum(n_states)])
    frequencies = [state.state_counts[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    coarse = lpcfg.project(frequencies)
    # the folder and the cluster training used are no part of the model
    params = {k: v for k, v in json_params(estimator).items() if k not in RUN_PLACES}
    model = ParsingModel(
        lpcfg,
        lexicon,
        treebank.spec,
        estimator=estimator.name,
        params=params,
        training={
            "trees": counts.n_trees,
            "words": counts.n_words,
            COARSE_GRAMMAR: 0,
            **training,
        },
        extra_grammars=(coarse,),
    )
    return lpcfg, coarse, lexicon, model


def token_state_counts(
    treebank: EMTreebank, n_states: np.ndarray, posteriors: np.ndarray
) -> dict[tuple[str, str, bool], np.ndarray]:
    """(word, tag, first word of the sentence) -> float64[m_tag] posterior counts,
    what ``Lexicon.fit_counts`` takes.

    posteriors (np.ndarray): float64, each token's posterior over its tag's states.
    """
    nodes, symbols = treebank.nodes, treebank.counts.symbols
    tags = nodes.token_tag.astype(np.int64)
    sizes = n_states[tags]
    token_of_value = np.repeat(np.arange(len(tags)), sizes)
    # multiples of POSTERIOR_QUANTUM, each token's largest taking the rounding
    values = np.round(posteriors / POSTERIOR_QUANTUM) * POSTERIOR_QUANTUM
    residual = 1.0 - np.bincount(token_of_value, values, minlength=len(tags))
    largest = np.lexsort((-values, token_of_value))[np.concatenate([[0], np.cumsum(sizes)[:-1]])]
    values[largest] += residual
    initial = np.arange(len(tags)) == nodes.token_offsets[nodes.tree[nodes.token_node]]
    keys = (nodes.token_word.astype(np.int64) * len(symbols) + tags) * 2 + initial
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    key_sizes = sizes[first]
    key_start = np.concatenate([[0], np.cumsum(key_sizes)[:-1]])
    local = np.arange(len(values)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    table = np.bincount(
        key_start[inverse][token_of_value] + local, values, minlength=int(key_sizes.sum())
    )
    result = {}
    for key, start, size in zip(unique.tolist(), key_start.tolist(), key_sizes.tolist()):
        word_tag, first_word = divmod(key, 2)
        word, tag = divmod(word_tag, len(symbols))
        result[nodes.words[word], symbols.name(tag), bool(first_word)] = table[start : start + size]
    return result
