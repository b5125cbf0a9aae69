"""Split-merge EM PCFG-LA (Matsuzaki et al. 2005; Petrov et al. 2006).

Training starts from the one-state MLE grammar of the transformed treebank (by
default X-bar: right binarised, no parent or sibling context, no function tags,
the latent states learn the context) and repeats a cycle (DESIGN.md 6.4):

1. split every latent state of every symbol but TOP in two: each rule weight
   is copied to the new cells (divided among the split children), perturbed by
   ``split_noise`` (1%) and renormalised;
2. ``em_iterations`` of EM on the gold trees;
3. merge back the ``merge_fraction`` of the new pairs of states whose merging
   loses least likelihood, by Petrov's approximation at each node
   (``em_kernels.merge_losses``);
4. ``merge_em_iterations`` of EM whose M-step smooths each parent state's rules
   towards the mean over the symbol's states, ``p' = (1 - a) p + a mean_h p_h``
   (``smoothing`` for rules, ``lexical_smoothing`` for emissions), as the Berkeley
   parser's smoothing phase does.

The E-step is ``em_kernels.inside_outside_nodes`` over the whole treebank (or
over shards of it in ``n_jobs`` processes; their counts are summed). The M-step
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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..defaults import LATENT, LEXICON, SPLIT_MERGE
from ..grammar import LPCFG
from ..grammar.lexicon import Lexicon
from ..grammar.model import COARSE_GRAMMAR
from ..progress import progress
from ..trees.nodes import TreebankNodes, flatten, node_rules
from ..trees.transforms import TransformSpec, transform_treebank
from ..trees.tree import Tree
from .base import check_number, check_random_state
from .mle import RuleCounts, TreebankEstimator, as_transform_spec, count_rules

KINDS = ("binary", "unary", "lexical")
# Petrov et al. (2006) start from the X-bar grammar (no parent or sibling context) and let
# the latent states learn the context. On ptb_sample (4 cycles, 20 + 10 EM iterations,
# full train) it gave dev / test F1 86.04 / 85.17, against 83.85 / 81.51 with the other
# estimators' TransformSpec() (v=2, h=1, function tags kept) and 85.34 / 82.81 with X-bar
# keeping function tags.
XBAR = TransformSpec(
    binarization=SPLIT_MERGE.binarization,
    h_markov=SPLIT_MERGE.h_markov,
    v_markov=SPLIT_MERGE.v_markov,
    keep_functions=SPLIT_MERGE.keep_functions,
)
# Token posteriors go to the lexicon as multiples of 2**-20 summing to exactly one, so
# that its word counts are exact integers (it compares them with rare_threshold).
POSTERIOR_QUANTUM = 2.0**-20


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
) -> EMGrammar:
    """Normalise expected counts per parent state, then smooth towards the mean over
    the parent symbol's states (``em_kernels.normalise_blocks``).

    counts (Mapping[str, np.ndarray]): kind -> float64 counts laid out like the weights.
    RETURNS (EMGrammar): the grammar.
    """
    from .em_kernels import add_parent_totals, normalise_blocks

    n_states = np.asarray(n_states, dtype=np.int64)
    blocks = {}
    for kind in KINDS:
        shape = _block_shape(treebank.state_symbols(kind), n_states)
        start = _block_start(treebank.state_symbols(kind), n_states)
        blocks[kind] = (shape, _block_offsets(shape), start)
    # binary and unary rules of a parent share its distribution; lexical rules their own
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
        weights[kind] = normalise_blocks(*blocks[kind], kind_counts, totals, alpha)
    return EMGrammar(n_states, weights)


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
    treebank: EMTreebank, grammar: EMGrammar, noise: float, random_state: np.random.Generator
) -> EMGrammar:
    """Every state of every symbol but TOP in two: state h becomes 2h and 2h + 1.

    Each new cell copies its parent cell's weight divided by the number of child
    cells it was split into (``em_kernels.split_blocks``), times ``1 + noise * u``
    with u uniform in [-1, 1]; each parent state is renormalised.
    """
    from .em_kernels import split_blocks

    split = np.ones(len(grammar.n_states), dtype=bool)
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
        weights *= 1.0 + noise * random_state.uniform(-1.0, 1.0, size=len(weights))
        expanded[kind] = weights
    return m_step(treebank, n_states, expanded)


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
    return m_step(treebank, new_n_states, merged_counts, smoothing, lexical_smoothing)


# The E-step over shards ---------------------------------------------------------------


class EStep(NamedTuple):
    """What an E-step returns.

    log_likelihood (float): of the gold trees under the grammar.
    counts (dict[str, np.ndarray]): expected counts, laid out like the weights.
    state_counts (np.ndarray): float64[sum(n_states)], expected nodes per symbol state.
    """

    log_likelihood: float
    counts: dict[str, np.ndarray]
    state_counts: np.ndarray


def tree_shards(treebank: EMTreebank, n_shards: int) -> list[dict[str, np.ndarray]]:
    """The node arrays of ``n_shards`` runs of whole trees with about as many nodes
    each, children re-numbered within the shard."""
    nodes = treebank.nodes
    roots = np.flatnonzero(nodes.parent < 0)
    cuts = np.searchsorted(roots, np.linspace(0, len(nodes), n_shards + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], roots[np.minimum(cuts, len(roots) - 1)], [len(nodes)]]))
    shards = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        left, right = nodes.left[lo:hi], nodes.right[lo:hi]
        shards.append(
            {
                "symbol": nodes.symbol[lo:hi],
                "left": np.where(left >= 0, left - lo, -1),
                "right": np.where(right >= 0, right - lo, -1),
                "is_root": nodes.parent[lo:hi] < 0,
                "node_rule": treebank.node_rule[lo:hi],
            }
        )
    return shards


def shard_pass(
    shard: Mapping[str, np.ndarray],
    n_states: np.ndarray,
    weights: Mapping[str, np.ndarray],
    offsets: Mapping[str, np.ndarray],
    *,
    pair_share: np.ndarray | None = None,
    tokens: bool = False,
):
    """Inside-outside over one shard.

    pair_share (np.ndarray | None): given, RETURNS the merge losses of the shard's nodes
        (``em_kernels.merge_losses``) instead of counts.
    tokens (bool): RETURNS the posteriors over the states of each leaf (flat, node order).
    RETURNS (EStep): otherwise.
    """
    from .em_kernels import inside_outside_nodes, merge_losses

    state_start = np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)
    result = inside_outside_nodes(
        shard["symbol"],
        shard["left"],
        shard["right"],
        shard["is_root"],
        shard["node_rule"],
        n_states,
        state_start,
        offsets["binary"],
        weights["binary"],
        offsets["unary"],
        weights["unary"],
        offsets["lexical"],
        weights["lexical"],
    )
    inside, outside, _, _, log_likelihood, binary, unary, lexical, state_counts = result
    if pair_share is not None:
        is_split = n_states % 2 == 0  # right after a split: every symbol but TOP
        return merge_losses(
            shard["symbol"], n_states, state_start, is_split, inside, outside, pair_share
        )
    if tokens:
        node_states = n_states[shard["symbol"]]
        leaf = np.repeat((shard["left"] < 0) & (shard["right"] < 0), node_states)
        node_of_value = np.repeat(np.arange(len(node_states)), node_states)
        product = inside * outside
        total = np.bincount(node_of_value, product, minlength=len(node_states))
        return (product / total[node_of_value])[leaf]
    return EStep(
        log_likelihood, {"binary": binary, "unary": unary, "lexical": lexical}, state_counts
    )


class ShardedTreebank:
    """Runs ``shard_pass`` over the shards of a treebank, in joblib processes when
    ``n_jobs > 1``. As a context manager it keeps one ``joblib.Parallel`` for all
    its passes (starting one per pass doubled the time of an E-step)."""

    def __init__(self, treebank: EMTreebank, n_jobs: int):
        self.treebank = treebank
        self.n_jobs = n_jobs
        self.shards = tree_shards(treebank, n_jobs)
        self._parallel = None

    def __enter__(self) -> ShardedTreebank:
        if self.n_jobs > 1:
            from joblib import Parallel

            self._parallel = Parallel(n_jobs=self.n_jobs).__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._parallel is not None:
            self._parallel.__exit__(*exc_info)
            self._parallel = None

    def _map(self, grammar: EMGrammar, **options) -> list:
        offsets = {kind: grammar.offsets(self.treebank, kind) for kind in KINDS}
        args = (grammar.n_states, grammar.weights, offsets)
        if self.n_jobs == 1:
            return [shard_pass(shard, *args, **options) for shard in self.shards]
        from joblib import Parallel, delayed

        jobs = (delayed(shard_pass)(shard, *args, **options) for shard in self.shards)
        return (self._parallel or Parallel(n_jobs=self.n_jobs))(jobs)

    def e_step(self, grammar: EMGrammar) -> EStep:
        """Expected counts and log-likelihood over the whole treebank."""
        parts = self._map(grammar)
        if len(parts) == 1:
            return parts[0]
        return EStep(
            float(sum(part.log_likelihood for part in parts)),
            {kind: _total(part.counts[kind] for part in parts) for kind in KINDS},
            _total(part.state_counts for part in parts),
        )

    def merge_losses(self, grammar: EMGrammar, state_counts: np.ndarray) -> np.ndarray:
        """float64[sum(n_states)]: the approximate change of log-likelihood of merging
        each pair (2k, 2k + 1), at its first state."""
        n_states = grammar.n_states
        symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
        state = np.arange(len(state_counts))
        local = state - grammar.state_start[symbol_of_state]
        partner = np.where(local % 2 == 0, state + 1, state - 1)  # pairs (2k, 2k + 1)
        partner = np.where(n_states[symbol_of_state] % 2 == 0, partner, state)
        pair_total = state_counts + state_counts[partner]
        share = np.divide(
            state_counts, pair_total, out=np.full_like(state_counts, 0.5), where=pair_total > 0
        )
        return _total(self._map(grammar, pair_share=share))

    def token_posteriors(self, grammar: EMGrammar) -> np.ndarray:
        """float64: each token's posterior over its tag's states, token after token."""
        return np.concatenate(self._map(grammar, tokens=True))


def _total(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """The sum of arrays, added in place into a copy of the first."""
    arrays = iter(arrays)
    total = next(arrays).copy()
    for array in arrays:
        total += array
    return total


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
    split_noise (float): relative perturbation of split weights. Defaults to 0.01.
    smoothing (float): weight of the mean over the parent's states in each rule
        distribution (after merging). Defaults to 0.01.
    lexical_smoothing (float): the same for emissions. Defaults to 0.1.
    n_jobs (int): processes of the E-step (shards of the treebank). Defaults to 1.
    random_state (int | np.random.Generator | None): seeds the split noise.
    transform (TransformSpec | dict | None): tree transforms. Defaults to ``XBAR``
        (h_markov=0, v_markov=1, function tags stripped), as Petrov et al.
    The other parameters are the Lexicon's (see MLEEstimator).

    Fitted attributes: ``grammar_`` (LPCFG), ``coarse_grammar_`` (its projection
    with the expected state frequencies, ``extra_grammars[0]`` of ``model_``),
    ``lexicon_``, ``model_`` (ParsingModel), ``n_states_`` (dict symbol -> states,
    symbols with more than one), ``log_likelihoods_`` (list[EMPhase]),
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
    split_noise: float
    smoothing: float
    lexical_smoothing: float
    n_jobs: int
    random_state: int | np.random.Generator | None
    transform: TransformSpec | Mapping | None

    def __init__(
        self,
        *,
        n_cycles: int = SPLIT_MERGE.n_cycles,
        em_iterations: int = SPLIT_MERGE.em_iterations,
        merge_em_iterations: int = SPLIT_MERGE.merge_em_iterations,
        merge_fraction: float = SPLIT_MERGE.merge_fraction,
        split_noise: float = SPLIT_MERGE.split_noise,
        smoothing: float = SPLIT_MERGE.smoothing,
        lexical_smoothing: float = SPLIT_MERGE.lexical_smoothing,
        n_jobs: int = SPLIT_MERGE.n_jobs,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        transform: TransformSpec | Mapping | None = XBAR,
        rare_threshold: int = LEXICON.rare_threshold,
        signature: str = LEXICON.signature,
        language: str = LEXICON.language,
        suffix_length: int = LEXICON.suffix_length,
        open_class_threshold: int = LEXICON.open_class_threshold,
        smooth_threshold: int = LEXICON.smooth_threshold,
        word_smoothing: float = LEXICON.word_smoothing,
        signature_smoothing: float = LEXICON.signature_smoothing,
    ):
        self._store_params(locals())

    def _check_params(self) -> None:
        self._make_lexicon()  # checks the lexicon parameters
        check_number(self, "n_cycles", "an int >= 0", low=0, integer=True)
        check_number(self, "em_iterations", "an int >= 0", low=0, integer=True)
        check_number(self, "merge_em_iterations", "an int >= 0", low=0, integer=True)
        check_number(self, "n_jobs", "an int >= 1", low=1, integer=True)
        check_number(self, "merge_fraction", "0 <= f <= 1", low=0.0, high=np.nextafter(1.0, 2.0))
        check_number(self, "split_noise", "0 <= noise < 1", low=0.0, high=1.0)
        for name in ("smoothing", "lexical_smoothing"):
            check_number(self, name, "0 <= s < 1", low=0.0, high=1.0)

    def fit(
        self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None
    ) -> SplitMergeEstimator:
        """Fit the grammar and lexicon.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): not used.
        RETURNS (SplitMergeEstimator): self.
        """
        self._check_params()  # before the long part
        random_state = check_random_state(self.random_state)
        spec, transformed = transform_treebank(trees, as_transform_spec(self.transform))
        counts = count_rules(transformed, total=len(transformed))
        nodes = flatten(transformed, counts.symbols, total=len(transformed))
        del transformed
        treebank = em_treebank(spec, counts, nodes, self._make_lexicon().fit_counts(counts.tokens))
        with ShardedTreebank(treebank, self.n_jobs) as sharded:
            grammar, estep = self._train(sharded, random_state)
            self._set_fitted(treebank, sharded, grammar, estep)
        return self

    def _train(
        self, sharded: ShardedTreebank, random_state: np.random.Generator
    ) -> tuple[EMGrammar, EStep]:
        """The split-merge cycles; RETURNS the grammar and its E-step. Sets
        ``log_likelihoods_`` and ``cycle_seconds_``."""
        import time

        treebank = sharded.treebank
        grammar = initial_grammar(treebank)
        self.log_likelihoods_: list[EMPhase] = []
        self.cycle_seconds_: list[float] = []
        for cycle in progress(range(1, self.n_cycles + 1), desc="split-merge", unit="cycle"):
            started = time.perf_counter()
            grammar = split_grammar(treebank, grammar, self.split_noise, random_state)
            grammar, estep, values = self._em(sharded, grammar, self.em_iterations, 0.0, 0.0)
            self.log_likelihoods_.append(EMPhase(cycle, "split", values))
            losses = sharded.merge_losses(grammar, estep.state_counts)
            merged = choose_merges(grammar.n_states, losses, self.merge_fraction)
            grammar = merge_grammar(
                treebank,
                grammar.n_states,
                estep.counts,
                merged,
                self.smoothing,
                self.lexical_smoothing,
            )
            grammar, estep, values = self._em(
                sharded, grammar, self.merge_em_iterations, self.smoothing, self.lexical_smoothing
            )
            self.log_likelihoods_.append(EMPhase(cycle, "merge", values))
            self.cycle_seconds_.append(time.perf_counter() - started)
        if not self.n_cycles:
            estep = sharded.e_step(grammar)
        return grammar, estep

    def _em(
        self,
        sharded: ShardedTreebank,
        grammar: EMGrammar,
        iterations: int,
        smoothing: float,
        lexical_smoothing: float,
    ) -> tuple[EMGrammar, EStep, tuple[float, ...]]:
        """``iterations`` EM steps; RETURNS the last grammar, its E-step and the
        log-likelihood of each grammar of the phase."""
        values = []
        bar = progress(range(iterations + 1), desc="EM", unit="iteration")
        for iteration in bar:
            estep = sharded.e_step(grammar)
            values.append(estep.log_likelihood)
            bar.set_postfix(log_likelihood=f"{estep.log_likelihood:.1f}")
            if iteration < iterations:
                grammar = m_step(
                    sharded.treebank, grammar.n_states, estep.counts, smoothing, lexical_smoothing
                )
        return grammar, estep, tuple(values)

    def _set_fitted(
        self, treebank: EMTreebank, sharded: ShardedTreebank, grammar: EMGrammar, estep: EStep
    ) -> None:
        """The LPCFG (lexicon refitted on token posteriors) and the fitted attributes."""
        from .em_kernels import smooth_blocks

        counts, symbols = treebank.counts, treebank.counts.symbols
        n_states = grammar.n_states
        tag_states = {symbols.name(a): int(m) for a, m in enumerate(n_states) if m > 1}
        lexicon = self._make_lexicon().fit_counts(
            token_state_counts(treebank, n_states, sharded.token_posteriors(grammar)), tag_states
        )
        lexical = lexicon.lexical_arrays(symbols)
        weights = lexical["lexical_weights"] = lexical["lexical_weights"].copy()
        shape = _block_shape(lexical["lexical_rules"][:, :1], n_states)
        smooth_blocks(shape, _block_offsets(shape), weights, self.lexical_smoothing)
        self.grammar_ = LPCFG(
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
        frequencies = [estep.state_counts[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        self.coarse_grammar_ = self.grammar_.project(frequencies)
        self.lexicon_ = lexicon
        self.n_states_ = tag_states
        self.treebank_ = treebank
        self.em_grammar_ = grammar
        training: dict[str, Any] = {COARSE_GRAMMAR: 0}
        self.model_ = self._make_model(
            self.grammar_,
            lexicon,
            treebank.spec,
            counts,
            extra_grammars=(self.coarse_grammar_,),
            **training,
        )


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
