"""The EM core shared by the latent-variable estimators (split-merge, INHERIT).

Training trees are one run of nodes (``treebank``: ``EMTreebank``); a grammar
being trained is dense weight blocks per rule (``grammar``: ``EMGrammar``); the
E-step is an inside-outside over the gold trees' nodes (``kernels``, numba), run
over shards of the treebank here or in workers (``shards``: ``ShardedTreebank``,
``EStep``); the M-step normalises and smooths expected counts (``maximisation``);
split-merge's cycle splits states (``splitting``) and merges pairs back
(``merging``); a trained grammar becomes a ``ParsingModel`` (``model``); training
is recorded per phase (``phases``: ``EMPhase``) and checkpointed per cycle
(``checkpoints``).

The names below are the core's public interface; the numba kernels are imported
from ``em.kernels`` where they run, so that importing the core compiles nothing.
"""

from .checkpoints import (
    Checkpoint,
    CheckpointFolder,
    CycleState,
    array_fingerprint,
    generator_state,
    latest_cycle,
    restore_generator,
    tree_fingerprint,
)
from .grammar import EMGrammar, block_offsets, block_shape, block_start, state_starts
from .maximisation import initial_grammar, m_step, normalise_rules
from .merging import choose_merges, merge_grammar
from .model import POSTERIOR_QUANTUM, RUN_PLACES, latent_model, token_state_counts
from .phases import EMPhase, phases_of
from .shards import EStep, ShardedTreebank
from .splitting import NOISE_CHUNK, clone_some, pair_divergences, split_grammar
from .treebank import (
    KINDS,
    EMTreebank,
    count_distributions,
    em_treebank,
    read_em_treebank,
    symbol_states,
)

__all__ = [
    "KINDS",
    "NOISE_CHUNK",
    "POSTERIOR_QUANTUM",
    "RUN_PLACES",
    "Checkpoint",
    "CheckpointFolder",
    "CycleState",
    "EMGrammar",
    "EMPhase",
    "EMTreebank",
    "EStep",
    "ShardedTreebank",
    "array_fingerprint",
    "block_offsets",
    "block_shape",
    "block_start",
    "choose_merges",
    "clone_some",
    "count_distributions",
    "em_treebank",
    "generator_state",
    "initial_grammar",
    "latent_model",
    "latest_cycle",
    "m_step",
    "merge_grammar",
    "normalise_rules",
    "pair_divergences",
    "phases_of",
    "read_em_treebank",
    "restore_generator",
    "split_grammar",
    "state_starts",
    "symbol_states",
    "token_state_counts",
    "tree_fingerprint",
]
