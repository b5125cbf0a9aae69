"""Split-merge EM PCFG-LA (Matsuzaki et al. 2005; Petrov et al. 2006).

Training starts from the one-state MLE grammar of the transformed treebank (by
default X-bar: right binarised, no parent or sibling context, no function tags,
the latent states learn the context) and repeats a cycle (docs/design/architecture.md, 6.4):

1. split every latent state of every symbol but TOP in two: each rule weight
   is copied to the new cells (divided among the split children), perturbed by
   ``split_noise`` (1%) and renormalised. With ``split="some"``, only the
   symbols whose pairs of sibling states have diverged most (``clone_some``:
   Dreyer & Eisner 2006's "clone some", with ``merge_fraction=0``);
2. ``em_iterations`` of EM on the gold trees;
3. merge back the ``merge_fraction`` of the new pairs of states whose merging
   loses least likelihood, by Petrov's approximation at each node
   (``em_kernels.merge_losses``);
4. ``merge_em_iterations`` of EM whose M-step smooths each parent state's rules
   towards the mean over the symbol's states, ``p' = (1 - a) p + a mean_h p_h``
   (``smoothing`` for rules, ``lexical_smoothing`` for emissions), as the Berkeley
   parser's smoothing phase does.

The E-step is ``em_kernels.inside_outside_nodes`` over the whole treebank (or
over shards of it in ``n_jobs`` threads or processes, or on Dask workers, which
keep their shards for the whole fit: ``em_shards``; the counts are summed). The M-step
normalises expected counts per parent state; merging sums the expected counts
of the merged states, which is the M-step of the merged grammar (Petrov's
merged weights are the sub-states' weights averaged by their expected counts).
Without smoothing, the likelihood never decreases within a phase (smoothing is
not an M-step of the likelihood, so the phases after merging may dip).

Emissions during EM are multinomials over *training entries*: a token is its
word (or lowercase form) when the one-state lexicon knows it, else its
unknown-word class (``Lexicon.entry``), so rare words train the classes that
unknown words use at parse time. The fitted model's lexicon is then fitted
like the clustering estimator's, with ``Lexicon.fit_counts`` on each token's
posterior over its tag's states, and smoothed like the rules. The model carries
the grammar's projection with the expected state frequencies as the coarse
grammar for pruning (``extra_grammars[0]``, ``training["coarse_grammar"]``).

Grammars during training are ``EMGrammar``s: states per symbol and dense
weight blocks per rule laid out as in ``grammar.lpcfg`` (lexical rules over
training entries).

With ``checkpoint_dir``, each complete cycle is checkpointed (``checkpoints``:
the grammar, the random generator, the history) and ``fit(..., resume=True)``
goes on from the last one to the grammar an uninterrupted fit gives. With dev
trees (and a ``dev_scorer``: the estimators do not import the parser:
docs/design/architecture.md, section 2), the model of each cycle parses a sample of them and the best cycle's grammar
is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..defaults import CEILINGS, LATENT, LEXICON, SPLIT_MERGE
from ..errors import Errors
from ..grammar import LPCFG
from ..grammar.lexicon import Lexicon, LexiconSpec
from ..grammar.model import COARSE_GRAMMAR, ParsingModel
from ..progress import progress
from ..trees.nodes import TreebankNodes, flatten, node_rules
from ..trees.transforms import TransformSpec, transform_treebank
from ..trees.tree import Tree
from .base import Bool, Choice, Number, check_random_state, int_range
from .checkpoints import (
    Checkpoint,
    CheckpointFolder,
    CycleState,
    array_fingerprint,
    generator_state,
    restore_generator,
    tree_fingerprint,
)
from .em_shards import KINDS, EStep, ShardedTreebank
from .mle import RuleCounts, TreebankEstimator, as_transform_spec, count_rules, json_params

# Petrov et al. (2006) start from the X-bar grammar (no parent or sibling context) and let
# the latent states learn the context. On ptb_sample (4 cycles, 20 + 10 EM iterations,
# full train) it scored higher on dev and test than the other estimators' TransformSpec()
# (v=2, h=1, function tags kept) and than X-bar keeping function tags (the X-bar seeds'
# scores: BENCHMARKS.md "Split-merge EM against the Berkeley parser (ptb_sample)").
XBAR = TransformSpec(
    binarization=SPLIT_MERGE.binarization,
    h_markov=SPLIT_MERGE.h_markov,
    v_markov=SPLIT_MERGE.v_markov,
    keep_functions=SPLIT_MERGE.keep_functions,
)
# Token posteriors go to the lexicon as multiples of 2**-20 summing to exactly one, so
# that its word counts are exact integers (it compares them with rare_threshold).
POSTERIOR_QUANTUM = 2.0**-20
SPLITS = ("all", "some")
# Split noise is drawn and applied this many weights at a time: the draws are the same
# as one call's, without temporaries the size of the split grammar.
NOISE_CHUNK = 1 << 20


@dataclass(frozen=True)
class EMTreebank:
    """A transformed treebank laid out for EM.

    spec (TransformSpec): the transforms applied.
    counts (RuleCounts): rule and token counts, and the symbol table.
    nodes (TreebankNodes): every node, tree by tree in pre-order.
    node_rule (np.ndarray): int64[N], each node's row in the binary, unary (TOP
        included) or lexical rules, by its number of children.
    entries (tuple[str, ...]): the training entries the lexical rules emit.
    lexical_rules (np.ndarray): int32[RL, 2] (tag, entry), sorted.
    """

    spec: TransformSpec
    counts: RuleCounts
    nodes: TreebankNodes
    node_rule: np.ndarray
    entries: tuple[str, ...]
    lexical_rules: np.ndarray

    def state_symbols(self, kind: str) -> np.ndarray:
        """int32[R, k]: the symbols of a kind's rules that have latent states
        (parent and children; only the tag of a lexical rule)."""
        if kind == "binary":
            return self.counts.binary_rules
        if kind == "unary":
            return self.counts.unary_rules
        return self.lexical_rules[:, :1]


def em_treebank(
    spec: TransformSpec, counts: RuleCounts, nodes: TreebankNodes, lexicon: Lexicon
) -> EMTreebank:
    """Lay out a flattened treebank for EM.

    lexicon (Lexicon): fitted on ``counts.tokens``; it maps each token to its entry.
    """
    binary_rule, unary_rule = node_rules(nodes, counts.binary_rules, counts.unary_rules)
    # tokens in node order (pre-order visits words left to right); the kernels rely on it
    token_tree = nodes.tree[nodes.token_node]
    initial = np.arange(len(nodes.token_word)) == nodes.token_offsets[token_tree]
    pairs, inverse = np.unique(nodes.token_word.astype(np.int64) * 2 + initial, return_inverse=True)
    entry_names = [lexicon.entry(nodes.words[p // 2], 0 if p % 2 else 1) for p in pairs.tolist()]
    entries, entry_of_pair = np.unique(entry_names, return_inverse=True)
    tags = nodes.token_tag.astype(np.int64)
    keys = tags * len(entries) + entry_of_pair[inverse.reshape(-1)]
    rule_keys, token_rule = np.unique(keys, return_inverse=True)
    lexical_rules = np.stack(np.divmod(rule_keys, len(entries)), axis=1).astype(np.int32)
    node_rule = np.where(binary_rule >= 0, binary_rule, unary_rule)
    node_rule[nodes.token_node] = token_rule.reshape(-1)
    return EMTreebank(spec, counts, nodes, node_rule, tuple(entries.tolist()), lexical_rules)


def read_em_treebank(
    trees: Iterable[Tree], transform: TransformSpec | Mapping | None, lexicon: Lexicon
) -> EMTreebank:
    """Training trees transformed, counted and laid out for EM (``em_treebank``).

    transform (TransformSpec | Mapping | None): an estimator's ``transform`` parameter.
    lexicon (Lexicon): unfitted; it is fitted on the trees' tokens.
    """
    spec, transformed = transform_treebank(trees, as_transform_spec(transform))
    counts = count_rules(transformed, total=len(transformed))
    nodes = flatten(transformed, counts.symbols, total=len(transformed))
    del transformed
    return em_treebank(spec, counts, nodes, lexicon.fit_counts(counts.tokens))


def count_distributions(treebank: EMTreebank, n_states: np.ndarray) -> int:
    """The distributions of a latent grammar: rules per phrasal parent state (binary and
    unary together) and emissions per tag state, one sum-to-one constraint each."""
    counts = treebank.counts
    phrasal = np.unique(np.concatenate([counts.binary_rules[:, 0], counts.unary_rules[:, 0]]))
    tags = np.unique(treebank.lexical_rules[:, 0])
    return int(n_states[phrasal].sum() + n_states[tags].sum())


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
        return np.concatenate([[0], np.cumsum(self.n_states)[:-1]]).astype(np.int64)

    def offsets(self, treebank: EMTreebank, kind: str) -> np.ndarray:
        """int64[R + 1]: where each rule's block starts in ``weights[kind]``."""
        return _block_offsets(_block_shape(treebank.state_symbols(kind), self.n_states))


def _block_shape(symbols: np.ndarray, n_states: np.ndarray) -> np.ndarray:
    """int64[R, 3]: the states of each rule's columns, 1 for the columns it does not have."""
    shape = np.ones((len(symbols), 3), dtype=np.int64)
    shape[:, : symbols.shape[1]] = n_states[symbols]
    return shape


def _block_start(symbols: np.ndarray, n_states: np.ndarray) -> np.ndarray:
    """int64[R, 3]: the first global state of each column's symbol; sum(n_states) (one
    past the last state) for the columns a rule does not have."""
    state_start = np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)
    start = np.full((len(symbols), 3), int(n_states.sum()), dtype=np.int64)
    start[:, : symbols.shape[1]] = state_start[symbols]
    return start


def _block_offsets(shape: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(shape.prod(axis=1))]).astype(np.int64)


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
        shape = _block_shape(treebank.state_symbols(kind), n_states)
        start = _block_start(treebank.state_symbols(kind), n_states)
        blocks[kind] = (shape, _block_offsets(shape), start)
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
    towards the mean over the parent's states (``em_kernels.normalise_blocks``).

    blocks (Mapping[str, tuple]): kind -> (shape, offsets, start) of its rule blocks.
    overwrite (bool): write the weights over the counts (``m_step``).
    RETURNS (dict[str, np.ndarray]): kind -> the weights, laid out like the counts.
    """
    from .em_kernels import add_parent_totals, normalise_blocks, normalise_blocks_in_place

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


def split_grammar(
    treebank: EMTreebank,
    grammar: EMGrammar,
    noise: float,
    random_state: np.random.Generator,
    symbols: np.ndarray | None = None,
) -> EMGrammar:
    """Every state of every symbol but TOP in two: state h becomes 2h and 2h + 1.

    Each new cell copies its parent cell's weight divided by the number of child
    cells it was split into (``em_kernels.split_blocks``), times ``1 + noise * u``
    with u uniform in [-1, 1]; each parent state is renormalised.

    symbols (np.ndarray | None): bool[n_symbols], the symbols to split (TOP never
        is); None: all.
    """
    from .em_kernels import split_blocks

    split = np.ones(len(grammar.n_states), dtype=bool) if symbols is None else symbols.copy()
    split[treebank.counts.symbols.root] = False
    n_states = np.where(split, 2 * grammar.n_states, grammar.n_states)
    expanded = {}
    for kind in KINDS:
        symbols = treebank.state_symbols(kind)
        old_shape, new_shape = (
            _block_shape(symbols, grammar.n_states),
            _block_shape(symbols, n_states),
        )
        weights = split_blocks(
            old_shape,
            _block_offsets(old_shape),
            new_shape,
            _block_offsets(new_shape),
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
        shape = _block_shape(symbols, grammar.n_states)
        offsets = _block_offsets(shape)
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
    from .em_kernels import merge_blocks

    state_start = np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)
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
        old_shape, new_shape = _block_shape(symbols, n_states), _block_shape(symbols, new_n_states)
        merged_counts[kind] = merge_blocks(
            old_shape,
            _block_offsets(old_shape),
            new_shape,
            _block_offsets(new_shape),
            _block_start(symbols, n_states),
            new_local,
            np.asarray(counts[kind], dtype=np.float64),
        )
    return m_step(
        treebank, new_n_states, merged_counts, smoothing, lexical_smoothing, overwrite=True
    )


# The estimator ------------------------------------------------------------------------


class EMPhase(NamedTuple):
    """The log-likelihoods of one EM phase: of the grammar that starts it, then after
    each M-step.

    cycle (int): 1-based split-merge cycle.
    phase (str): "split" (EM after splitting) or "merge" (smoothed EM after merging).
    log_likelihoods (tuple[float, ...]): of the training trees.
    """

    cycle: int
    phase: str
    log_likelihoods: tuple[float, ...]


class SplitMergeEstimator(TreebankEstimator):
    """Split-merge EM PCFG-LA (Petrov et al. 2006); see the module docstring.

    n_cycles (int): split-merge cycles (each at most doubles the states). Defaults to 4.
    em_iterations (int): EM iterations after each split. Defaults to 20.
    merge_em_iterations (int): smoothed EM iterations after each merge. Defaults to 10.
    merge_fraction (float): fraction of the new splits merged back. Defaults to 0.5.
    split (str): which symbols each cycle splits: "all" (Petrov et al.), or "some":
        the symbols whose pairs of sibling states diverge more than the average
        (``clone_some``; Dreyer & Eisner 2006's "clone some"; needs
        ``merge_fraction=0``). Defaults to "all".
    split_noise (float): relative perturbation of split weights. Defaults to 0.01.
    smoothing (float): weight of the mean over the parent's states in each rule
        distribution (after merging). Defaults to 0.01.
    lexical_smoothing (float): the same for emissions. Defaults to 0.1.
    select_cycle_on_dev (bool): given dev trees, parse them after each cycle (with
        ``fit``'s ``dev_scorer``) and keep the grammar of the cycle with the best
        score. Defaults to True.
    dev_sample (int): dev trees parsed per cycle at most (evenly spaced through the
        dev trees). Defaults to 300.
    n_jobs (int): workers of the E-step (shards of the treebank; threads unless joblib
        is configured otherwise, see ``em_shards``). Defaults to 1.
    scheduler (str | distributed.Client | None): a Dask scheduler address or client: the
        E-step runs on its workers (so it does under ``joblib.parallel_config(
        backend="dask")``). ``clone`` cannot copy a client: give the address to clone
        the estimator. Defaults to None.
    checkpoint_dir (str | Path | None): where to checkpoint each complete cycle
        (``checkpoints``), so that ``fit(..., resume=True)`` goes on from the last one.
        Defaults to None (no checkpoints).
    random_state (int | np.random.Generator | None): seeds the split noise.
    transform (TransformSpec | dict | None): tree transforms. Defaults to ``XBAR``
        (h_markov=0, v_markov=1, function tags stripped), as Petrov et al.
    lexicon (LexiconSpec | dict | None), language (str): as for MLEEstimator.

    Fitted attributes: ``grammar_`` (LPCFG), ``coarse_grammar_`` (its projection
    with the expected state frequencies, ``extra_grammars[0]`` of ``model_``),
    ``lexicon_``, ``model_`` (ParsingModel), ``n_states_`` (dict symbol -> states,
    symbols with more than one), ``selected_cycle_`` (int, the cycle whose grammar
    was kept: the last, or the best on dev), ``log_likelihoods_`` (list[EMPhase]),
    ``history_`` (dict, JSON: "log_likelihoods" of every EM phase, "dev_f1" and
    "n_states" per cycle, "best_cycle"; also ``model_.training["history"]``),
    ``cycle_seconds_`` (list[float], training time of each cycle), ``treebank_``
    (EMTreebank, the training nodes) and ``em_grammar_`` (EMGrammar, the rules as
    trained, emissions over training entries).
    """

    name = "split_merge"
    # the parameters, stored by __init__ (declared for type checkers)
    n_cycles: int
    em_iterations: int
    merge_em_iterations: int
    merge_fraction: float
    split: str
    split_noise: float
    smoothing: float
    lexical_smoothing: float
    select_cycle_on_dev: bool
    dev_sample: int
    n_jobs: int
    scheduler: Any
    checkpoint_dir: str | Path | None
    random_state: int | np.random.Generator | None
    transform: TransformSpec | Mapping | None
    # fitted attributes that training sets cycle by cycle
    log_likelihoods_: list[EMPhase]
    cycle_seconds_: list[float]

    def __init__(
        self,
        *,
        n_cycles: int = SPLIT_MERGE.n_cycles,
        em_iterations: int = SPLIT_MERGE.em_iterations,
        merge_em_iterations: int = SPLIT_MERGE.merge_em_iterations,
        merge_fraction: float = SPLIT_MERGE.merge_fraction,
        split: str = SPLIT_MERGE.split,
        split_noise: float = SPLIT_MERGE.split_noise,
        smoothing: float = SPLIT_MERGE.smoothing,
        lexical_smoothing: float = SPLIT_MERGE.lexical_smoothing,
        select_cycle_on_dev: bool = SPLIT_MERGE.select_cycle_on_dev,
        dev_sample: int = SPLIT_MERGE.dev_sample,
        n_jobs: int = SPLIT_MERGE.n_jobs,
        scheduler: Any = None,
        checkpoint_dir: str | Path | None = None,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        transform: TransformSpec | Mapping | None = XBAR,
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    _parameter_constraints = {
        "n_cycles": [int_range(0, CEILINGS.n_cycles)],
        "em_iterations": [int_range(0, CEILINGS.em_iterations)],
        "merge_em_iterations": [int_range(0, CEILINGS.em_iterations)],
        "n_jobs": [int_range(1, CEILINGS.n_jobs)],
        "dev_sample": [Number("an int >= 1", low=1, integer=True)],
        "merge_fraction": [Number("0 <= f <= 1", low=0.0, high=float(np.nextafter(1.0, 2.0)))],
        "split_noise": [Number("0 <= noise < 1", low=0.0, high=1.0)],
        "split": [Choice(SPLITS)],
        "smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "lexical_smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "select_cycle_on_dev": [Bool()],
    }

    def _check_params(self) -> None:
        super()._check_params()
        if self.split == "some" and self.merge_fraction > 0:
            # merging after a partial split would pair states of symbols not split
            # this cycle (and leave odd state counts the next selection misreads)
            raise ValueError(
                Errors.E012.format(
                    value=self.merge_fraction,
                    name="merge_fraction",
                    expected="0 with split='some' (clone some merges nothing back)",
                )
            )

    def fit(
        self,
        trees: Iterable[Tree],
        dev_trees: Iterable[Tree] | None = None,
        *,
        resume: bool = False,
        dev_scorer: DevScorer | None = None,
    ) -> SplitMergeEstimator:
        """Fit the grammar and lexicon.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): with ``select_cycle_on_dev``, the trees whose
            (sampled) parses choose the cycle kept.
        resume (bool): go on from the last cycle checkpointed in ``checkpoint_dir`` (from
            the start when it has none): the same grammar as an uninterrupted fit.
            Otherwise the folder's checkpoints are replaced.
        dev_scorer (Callable[[ParsingModel, list[Tree]], float] | None): the score of a
            model on dev trees, higher is better (e.g. the F1 of ``spacy_lpcfg.evaluate``
            with ``spacy_lpcfg.decode.Parser(model)``); needed with dev trees.
        RETURNS (SplitMergeEstimator): self.
        RAISES ValueError: bad parameters, or a checkpoint that cannot be resumed.
        """
        self._check_params()  # before the long part
        if resume and self.checkpoint_dir is None:
            raise ValueError(Errors.E311)
        random_state = check_random_state(self.random_state)
        dev = self._dev_sample(dev_trees)
        if dev is not None and dev_scorer is None:
            raise ValueError(Errors.E316)
        treebank = read_em_treebank(trees, self.transform, self._make_lexicon())
        checkpoints, start = None, None
        if self.checkpoint_dir is not None:
            checkpoints = CheckpointFolder(
                self.checkpoint_dir, self._fingerprint(treebank, dev, random_state)
            )
            if resume:
                start = checkpoints.load()
            else:
                checkpoints.clear()  # a new run: an earlier run's checkpoints go
            if start is not None and start.last.cycle > self.n_cycles:
                raise ValueError(
                    Errors.E315.format(
                        path=checkpoints.folder, cycle=start.last.cycle, n_cycles=self.n_cycles
                    )
                )
        sharded = ShardedTreebank(treebank, self.n_jobs, self.scheduler)
        with sharded:
            run = _Run(self, sharded, random_state, dev, dev_scorer, checkpoints)
            kept = run.train(start)
            self._set_fitted(treebank, sharded, kept, run.history)
        return self

    def _dev_sample(self, dev_trees: Iterable[Tree] | None) -> list[Tree] | None:
        """The dev trees parsed after each cycle (None: no choice on dev)."""
        if dev_trees is None or not self.select_cycle_on_dev:
            return None
        dev = list(dev_trees)
        if len(dev) > self.dev_sample:  # evenly spaced: every part of the dev set
            dev = [
                dev[i]
                for i in np.linspace(0, len(dev), self.dev_sample, endpoint=False).astype(int)
            ]
        return dev or None

    def _fingerprint(
        self, treebank: EMTreebank, dev: list[Tree] | None, random_state: np.random.Generator
    ) -> dict[str, Any]:
        """What a checkpoint must match to be resumed: the training nodes (transforms
        and lexicon entries included), the dev sample and the parameters that shape
        training."""
        nodes = treebank.nodes
        params = {
            name: value
            for name, value in json_params(self).items()
            # n_cycles: a run can go on to more cycles; the transforms are in the treebank's
            if name not in ("n_cycles", "transform", *RUN_PARAMS)
        }
        if params.get("split") == SPLIT_MERGE.split:
            del params["split"]  # checkpoints from before the parameter resume
        if isinstance(self.random_state, np.random.Generator):
            params["random_state"] = generator_state(random_state)
        return {
            "treebank": array_fingerprint(
                treebank.spec.to_dict(),
                list(treebank.counts.symbols.names),
                list(nodes.words),
                list(treebank.entries),
                *(getattr(nodes, name) for name in ("symbol", "parent", "left", "right")),
                nodes.token_word,
                treebank.node_rule,
                treebank.lexical_rules,
            ),
            "dev": None if dev is None else tree_fingerprint(dev),
            "params": params,
        }

    def _build(
        self, treebank: EMTreebank, sharded: ShardedTreebank, state: CycleState, **training: Any
    ) -> tuple[LPCFG, LPCFG, Lexicon, ParsingModel]:
        """``latent_model`` of a trained grammar, its tokens' posteriors from ``sharded``."""
        grammar = EMGrammar(state.n_states, state.weights)
        posteriors = sharded.token_posteriors(grammar)
        return latent_model(self, treebank, state, posteriors, self.lexical_smoothing, **training)

    def _set_fitted(
        self,
        treebank: EMTreebank,
        sharded: ShardedTreebank,
        state: CycleState,
        history: dict[str, Any],
    ) -> None:
        """The model of the kept cycle and the fitted attributes."""
        self.grammar_, self.coarse_grammar_, self.lexicon_, self.model_ = self._build(
            treebank, sharded, state, history=history
        )
        self.n_states_ = _symbol_states(treebank, state.n_states)
        self.selected_cycle_ = state.cycle
        self.history_ = history
        self.treebank_ = treebank
        self.em_grammar_ = EMGrammar(state.n_states, state.weights)


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
    from .em_kernels import smooth_blocks

    counts, symbols = treebank.counts, treebank.counts.symbols
    grammar = EMGrammar(state.n_states, state.weights)
    n_states = grammar.n_states
    lexicon = estimator._make_lexicon().fit_counts(
        token_state_counts(treebank, n_states, token_posteriors),
        _symbol_states(treebank, n_states),
    )
    # new arrays, smoothed in place; the grammar takes them (and the EM weights) as they
    # are once read-only, and the lexicon's own copy of the emissions goes
    lexical = lexicon.lexical_arrays(symbols, release=True)
    shape = _block_shape(lexical["lexical_rules"][:, :1], n_states)
    smooth_blocks(shape, _block_offsets(shape), lexical["lexical_weights"], lexical_smoothing)
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


# The cycles ------------------------------------------------------------------------------

DevScorer = Callable[[ParsingModel, list[Tree]], float]


# Parameters that say where training runs, not what it learns: not in a checkpoint's
# fingerprint (the shards of n_jobs change the sums' rounding only); the folder and the
# cluster (paths, addresses, a client) are not in the model's parameters either.
RUN_PLACES = ("scheduler", "checkpoint_dir")
RUN_PARAMS = ("n_jobs", *RUN_PLACES)


class _Run:
    """The split-merge cycles of one fit, from the start or from a checkpoint."""

    def __init__(
        self,
        estimator: SplitMergeEstimator,
        sharded: ShardedTreebank,
        random_state: np.random.Generator,
        dev: list[Tree] | None,
        dev_scorer: DevScorer | None,
        checkpoints: CheckpointFolder | None,
    ):
        self.estimator = estimator
        self.sharded = sharded
        self.treebank = sharded.treebank
        self.random_state = random_state
        self.dev, self.dev_scorer = dev, dev_scorer
        self.checkpoints = checkpoints
        self.history: dict[str, Any] = {
            "log_likelihoods": [],
            "dev_f1": [],
            "n_states": [],
            "best_cycle": None,
        }

    def train(self, start: Checkpoint | None) -> CycleState:
        """Run the cycles left; RETURNS the grammar kept (the best on dev, else the
        last). Sets the estimator's ``log_likelihoods_`` and ``cycle_seconds_``."""
        import time

        estimator, sharded, treebank = self.estimator, self.sharded, self.treebank
        estimator.log_likelihoods_ = []
        estimator.cycle_seconds_ = []
        last: CycleState | None = None
        best: CycleState | None = None
        if start is not None:
            last, best = start.last, start.best
            self.random_state = restore_generator(start.random_state)
            self.history = start.history
            estimator.cycle_seconds_ = list(start.cycle_seconds)
            estimator.log_likelihoods_ = [
                EMPhase(phase["cycle"], phase["phase"], tuple(phase["values"]))
                for phase in self.history["log_likelihoods"]
            ]
            grammar = EMGrammar(last.n_states, last.weights)
        else:
            grammar = initial_grammar(treebank)
        first = 1 if last is None else last.cycle + 1
        cycles = range(first, estimator.n_cycles + 1)
        bar = progress(
            cycles, desc="split-merge", unit="cycle", total=estimator.n_cycles, initial=first - 1
        )
        for cycle in bar:
            started = time.perf_counter()
            chosen = clone_some(treebank, grammar) if estimator.split == "some" else None
            # Each phase's first grammar is handed over in a list that _em empties, so
            # that no name here keeps it (a grammar's size) for the whole phase.
            pending = [
                split_grammar(treebank, grammar, estimator.split_noise, self.random_state, chosen)
            ]
            del grammar
            grammar, estep = self._em(cycle, "split", pending, estimator.em_iterations, 0.0, 0.0)
            if estimator.merge_fraction > 0:
                losses = sharded.merge_losses(grammar, estep.state_counts)
                merged = choose_merges(grammar.n_states, losses, estimator.merge_fraction)
            else:
                merged = np.zeros(int(grammar.n_states.sum()), dtype=bool)
            smoothing = (estimator.smoothing, estimator.lexical_smoothing)
            n_states, counts = grammar.n_states, estep.counts
            del grammar, estep  # merging reads the counts only
            pending = [merge_grammar(treebank, n_states, counts, merged, *smoothing)]
            del counts
            grammar, estep = self._em(
                cycle, "merge", pending, estimator.merge_em_iterations, *smoothing
            )
            last = CycleState(cycle, grammar.n_states, grammar.weights, estep.state_counts)
            self.history["n_states"].append(_symbol_states(treebank, grammar.n_states))
            if self.dev is not None:
                score = self._score(last)
                self.history["dev_f1"].append(score)
                if best is None or score > self.history["dev_f1"][best.cycle - 1]:
                    best, self.history["best_cycle"] = last, cycle
                bar.set_postfix(dev=f"{score:.2f}", best=self.history["best_cycle"])
            estimator.cycle_seconds_.append(time.perf_counter() - started)
            if self.checkpoints is not None:
                self.checkpoints.save(
                    Checkpoint(
                        last,
                        best,
                        generator_state(self.random_state),
                        self.history,
                        estimator.cycle_seconds_,
                    )
                )
        if last is None:  # no cycle: the one-state grammar
            estep = sharded.e_step(grammar)
            last = CycleState(0, grammar.n_states, grammar.weights, estep.state_counts)
        return best if best is not None else last

    def _em(
        self,
        cycle: int,
        phase: str,
        pending: list[EMGrammar],
        iterations: int,
        smoothing: float,
        lexical_smoothing: float,
    ) -> tuple[EMGrammar, EStep]:
        """``iterations`` EM steps from the grammar in ``pending`` (taken out of it);
        RETURNS the last grammar and its E-step. Records the log-likelihood of each
        grammar of the phase."""
        grammar = pending.pop()
        values = []
        bar = progress(range(iterations + 1), desc="EM", unit="iteration")
        for iteration in bar:
            estep = self.sharded.e_step(grammar)
            values.append(estep.log_likelihood)
            bar.set_postfix(log_likelihood=f"{estep.log_likelihood:.1f}")
            if iteration < iterations:
                # the weights overwrite the counts, which nothing reads after
                n_states, counts = grammar.n_states, estep.counts
                del grammar  # its weights go as the new ones are made
                grammar = m_step(
                    self.treebank, n_states, counts, smoothing, lexical_smoothing, overwrite=True
                )
        self.estimator.log_likelihoods_.append(EMPhase(cycle, phase, tuple(values)))
        self.history["log_likelihoods"].append(
            {"cycle": cycle, "phase": phase, "values": [float(v) for v in values]}
        )
        return grammar, estep

    def _score(self, state: CycleState) -> float:
        """The dev scorer's score of the cycle's model."""
        assert self.dev is not None and self.dev_scorer is not None
        model = self.estimator._build(self.treebank, self.sharded, state)[3]
        score = self.dev_scorer(model, self.dev)
        if not isinstance(score, (int, float, np.number)) or not np.isfinite(score):
            raise ValueError(Errors.E317.format(value=score, cycle=state.cycle))
        return float(score)


def _symbol_states(treebank: EMTreebank, n_states: np.ndarray) -> dict[str, int]:
    """Symbol name -> latent states, for the symbols with more than one."""
    symbols = treebank.counts.symbols
    return {symbols.name(a): int(m) for a, m in enumerate(n_states) if m > 1}


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
