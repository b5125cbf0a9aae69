"""The clustering estimator of Narayan & Cohen (2015): k-means on projections, then counts.

Every node of symbol ``a`` is represented by its normalised projections
``x = [y / |y| ; z / |z|]`` (``projections``), and k-means splits the nodes of
each symbol into ``m_a`` clusters (docs/design/architecture.md, 6.3). The cluster is the node's
latent state, so the treebank becomes fully observed and the grammar is a
smoothed relative-frequency estimate over annotated rules:

``P(a_h1 -> b_h2 c_h3) = (1 - smoothing) c(a_h1 -> b_h2 c_h3) / c(a_h1)
                         + smoothing c(a -> b_h2 c_h3) / c(a)``

(each parent state is shrunk towards the state-less parent, as the Berkeley
parser smooths split symbols), unary rules likewise, ``pi[a_h] = c(root a_h) /
n_trees``, and the emissions come from ``Lexicon.fit_counts`` with one-hot
state counts per token, each state's then mixed with the tag's state-less
emissions (``lexical_smoothing``): rules only know the child states seen in
training, and emissions from every state keep every sentence that the
one-state grammar parses parseable. The model carries the grammar's
projection with the states' training frequencies (which gives back the
treebank's relative frequencies) as its coarse grammar for pruning,
``extra_grammars[0]`` (``training["coarse_grammar"]``).

Sparsity. Only child-state pairs ``(h2, h3)`` seen with a rule get weights,
so most cells of a block are zero. ``cells_`` keeps the non-zero cells in
coordinate form (rule, h1, h2, h3, weight); the LPCFG container stores
dense blocks, and ``sparsity_`` says how much of them is zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..defaults import CLUSTERING, LATENT, LEXICON
from ..grammar import LPCFG
from ..grammar.lexicon import LexiconSpec
from ..grammar.sparse_weights import SPARSE_FRACTION, SparseWeights, position_dtype
from ..progress import progress
from ..trees.transforms import TransformSpec
from .base import Choice, Number
from .latent import LatentEstimator, ProjectedTreebank
from .projections import Projections

INITS = ("k-means++", "random")


@dataclass(frozen=True)
class RuleCells:
    """The non-zero cells of rule blocks, in coordinate form.

    rules (np.ndarray): int64[K], rule ids (rows of the grammar's binary or unary rules).
    states (np.ndarray): int64[K, arity], the states (h1, h2[, h3]).
    weights (np.ndarray): float64[K].
    """

    rules: np.ndarray
    states: np.ndarray
    weights: np.ndarray


class ClusteringEstimator(LatentEstimator):
    """Clustering L-PCFG (Narayan & Cohen 2015): k-means states, smoothed counts.

    smoothing (float): weight of the state-less parent in each rule distribution.
    lexical_smoothing (float): weight of the tag's state-less emissions in each
        state's emissions. It also makes every state of a tag emit every word the
        tag emits, so that every sentence the one-state grammar parses has a
        parse (rules only have the child states seen in training).
    n_init (int): k-means restarts per symbol (the best inertia is kept).
    init (str): k-means initialisation, "k-means++" or "random" (Narayan & Cohen's choice).
    max_iter (int): k-means iterations per run.
    random_state (int | np.random.Generator | None): seeds the SVDs and k-means.
    The other parameters are LatentEstimator's.

    Fitted attributes: LatentEstimator's (the coarse grammar is the grammar's
    projection with the states' training frequencies), and ``states_`` (int64[N],
    the latent state of every node of ``projected_.nodes``), ``cells_`` (dict
    "binary"/"unary" -> RuleCells), ``sparsity_`` (dict: stored and non-zero
    weights per kind).
    """

    name = "clustering"
    _parameter_constraints = {
        "init": [Choice(INITS)],
        "n_init": [Number("an int >= 1", low=1, integer=True)],
        "max_iter": [Number("an int >= 1", low=1, integer=True)],
        "smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "lexical_smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
    }

    smoothing: float
    lexical_smoothing: float
    n_init: int
    init: str
    max_iter: int

    def __init__(
        self,
        *,
        n_states: int | Mapping[str, int] = CLUSTERING.n_states,
        transform: TransformSpec | Mapping | None = TransformSpec(),
        kappa: float = LATENT.kappa,
        word_threshold: int = LATENT.word_threshold,
        min_count_per_state: float = LATENT.min_count_per_state,
        singular_value_threshold: float = LATENT.singular_value_threshold,
        smoothing: float = CLUSTERING.smoothing,
        lexical_smoothing: float = CLUSTERING.lexical_smoothing,
        n_init: int = CLUSTERING.n_init,
        init: str = CLUSTERING.init,
        max_iter: int = CLUSTERING.max_iter,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    def fit_projected(
        self,
        projected: ProjectedTreebank,
        *,
        random_state: np.random.Generator | None = None,
    ) -> ClusteringEstimator:
        """Cluster and count from an already projected treebank.

        random_state (np.random.Generator | None): for k-means; defaults to the
            estimator's ``random_state``.
        RETURNS (ClusteringEstimator): self.
        """
        self._check_params()
        random_state = self._fit_random_state(random_state)
        wanted = self._n_states(projected)
        projections = projected.projections.truncated(wanted)
        return self.fit_states(projected, *self._cluster(projections, wanted, random_state))

    def fit_states(
        self, projected: ProjectedTreebank, states: np.ndarray, n_states: np.ndarray
    ) -> ClusteringEstimator:
        """Estimate the grammar of a treebank whose nodes have latent states.

        states (np.ndarray): int64[N], each node's state (0 for TOP).
        n_states (np.ndarray): int64[n_symbols], states per symbol.
        RETURNS (ClusteringEstimator): self.
        """
        # whole-treebank numpy steps, no loop: the bar counts the steps
        with progress(desc="counting states", total=3, unit="step") as bar:
            return self._fit_states(projected, states, n_states, bar)

    def _fit_states(
        self, projected: ProjectedTreebank, states: np.ndarray, n_states: np.ndarray, bar
    ) -> ClusteringEstimator:
        counts, symbols, nodes = projected.counts, projected.counts.symbols, projected.nodes
        binary = annotated_cells(projected, states, n_states, "binary", self.smoothing)
        unary = annotated_cells(projected, states, n_states, "unary", self.smoothing)
        bar.update()
        lexicon = self._make_lexicon().fit_counts(
            _token_state_counts(projected, states, n_states),
            {symbols.name(a): int(m) for a, m in enumerate(n_states) if m > 1},
        )
        bar.update()
        binary_offsets, binary_weights = _sparse_blocks(counts.binary_rules, n_states, binary)
        unary_offsets, unary_weights = _dense_blocks(counts.unary_rules, n_states, unary)
        grammar = LPCFG(
            symbols,
            n_states,
            binary_rules=counts.binary_rules,
            binary_offsets=binary_offsets,
            binary_weights=binary_weights,
            unary_rules=counts.unary_rules,
            unary_offsets=unary_offsets,
            unary_weights=unary_weights,
            words=lexicon.entries,
            **_smooth_emissions(
                lexicon.lexical_arrays(symbols),
                n_states,
                np.concatenate(_state_frequencies(nodes, states, n_states)),
                self.lexical_smoothing,
            ),
        )
        self.states_ = states
        self.cells_ = {"binary": binary, "unary": unary}
        self.sparsity_ = {
            "binary_stored": int(binary_offsets[-1]),
            "binary_nonzero": len(binary.weights),
            "unary_stored": len(unary_weights),
            "unary_nonzero": len(unary.weights),
        }
        # The coarse grammar for pruning: the projection with the states' training
        # frequencies (cheap, unlike expected_state_weights on large dense blocks).
        coarse = grammar.project(_state_frequencies(nodes, states, n_states))
        bar.update()
        self._set_fitted(projected, n_states, grammar, coarse, lexicon)
        return self

    def _cluster(
        self, projections: Projections, n_states: np.ndarray, random_state: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """``cluster_nodes`` with the estimator's k-means settings."""
        return cluster_nodes(
            projections,
            n_states,
            n_init=self.n_init,
            init=self.init,
            max_iter=self.max_iter,
            random_state=random_state,
        )


def cluster_nodes(
    projections: Projections,
    n_states: np.ndarray,
    *,
    n_init: int,
    init: str,
    max_iter: int,
    random_state: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """k-means on the normalised projections of each symbol's nodes.

    projections (Projections): the projections, truncated to the states wanted.
    n_states (np.ndarray): int64[n_symbols], clusters wanted per symbol.
    RETURNS (tuple[np.ndarray, np.ndarray]): int64[N] the state of each node, and
        int64[n_symbols] the states used per symbol (empty clusters are dropped).
    """
    from threadpoolctl import threadpool_limits

    n_symbols = len(n_states)
    seeds = random_state.integers(0, 2**31 - 1, size=n_symbols)
    states = np.zeros(len(projections.order), dtype=np.int64)
    used = np.ones(n_symbols, dtype=np.int64)
    symbols = np.flatnonzero(n_states > 1)
    # One thread: most symbols are small, and KMeans' OpenMP and BLAS threads cost
    # more than they save there (ten times more on a shared two-core machine).
    with threadpool_limits(limits=1):
        for a in progress(symbols, desc="k-means", unit="symbol"):
            labels = cluster_symbol(
                projections,
                a,
                int(n_states[a]),
                n_init=n_init,
                init=init,
                max_iter=max_iter,
                seed=int(seeds[a]),
            )
            states[projections.nodes_of(a)] = labels
            used[a] = labels.max() + 1 if len(labels) else 1
    return states, used


def cluster_symbol(
    projections: Projections,
    symbol: int,
    n_clusters: int,
    *,
    n_init: int,
    init: str,
    max_iter: int,
    seed: int,
) -> np.ndarray:
    """k-means on one symbol's normalised projections, truncated to ``n_clusters``
    dimensions (a no-op on projections already truncated by ``Projections.truncated``).

    RETURNS (np.ndarray): int64[N_a], the state of each of the symbol's nodes (in
        ``projections.nodes_of(symbol)`` order), numbered by first occurrence so that
        equal fits give equal grammars; all 0 when fewer than two distinct points.
    """
    from sklearn.cluster import KMeans

    points = normalised_projections(projections, symbol, n_clusters)
    k = min(n_clusters, len(np.unique(points, axis=0)))
    if k < 2:
        return np.zeros(len(points), dtype=np.int64)
    kmeans = KMeans(n_clusters=k, n_init=n_init, init=init, max_iter=max_iter, random_state=seed)
    labels = kmeans.fit_predict(points)
    _, first = np.unique(labels, return_index=True)
    renumber = np.empty(labels.max() + 1, dtype=np.int64)
    renumber[labels[np.sort(first)]] = np.arange(len(first))
    return renumber[labels]


def normalised_projections(
    projections: Projections, symbol: int, rank: int | None = None
) -> np.ndarray:
    """float64 (N_a, 2 m_a): [y / |y| ; z / |z|] of the symbol's nodes (zero rows stay
    zero), y and z cut to their first ``rank`` dimensions (None: all)."""
    y, z = projections.inside[symbol][:, :rank], projections.outside[symbol][:, :rank]
    return np.hstack([_unit_rows(y), _unit_rows(z)])


def annotated_cells(
    projected: ProjectedTreebank,
    states: np.ndarray,
    n_states: np.ndarray,
    kind: str,
    smoothing: float,
) -> RuleCells:
    """The smoothed relative frequencies of the annotated binary or unary rules.

    kind (str): "binary" or "unary" (TOP -> X: the root probabilities).
    RETURNS (RuleCells): the non-zero cells, sorted by (rule, h1, h2[, h3]).
    """
    nodes, counts = projected.nodes, projected.counts
    rule_of_node = projected.binary_rule if kind == "binary" else projected.unary_rule
    rules = counts.binary_rules if kind == "binary" else counts.unary_rules
    at = np.flatnonzero(rule_of_node >= 0)
    rule = rule_of_node[at]
    children = [nodes.left[at], nodes.right[at]][: rules.shape[1] - 1]
    parent_states = states[at]
    sizes = [n_states[rules[rule, k + 1]] for k in range(len(children))]
    # cells and their counts; the child-state part is the same for every parent state
    child_cell = np.zeros(len(at), dtype=np.int64)
    for size, child in zip(sizes, children):
        child_cell = child_cell * size + states[child]
    # c(a_h1) counts every node of a_h1, as parent of a binary or a unary rule
    node_totals = np.bincount(
        _state_ids(nodes.symbol, states, n_states), minlength=int(n_states.sum())
    )
    symbol_totals = np.bincount(nodes.symbol, minlength=len(n_states))
    own_keys, own_counts = np.unique(
        np.stack([rule, parent_states, child_cell]), axis=1, return_counts=True
    )
    shared_keys, shared_counts = np.unique(np.stack([rule, child_cell]), axis=1, return_counts=True)
    parents = rules[:, 0]
    root = counts.symbols.root
    # every parent state of a rule gets the cells seen with any of them
    m_parent = n_states[parents[shared_keys[0]]]
    cell_rule = np.repeat(shared_keys[0], m_parent)
    cell_child = np.repeat(shared_keys[1], m_parent)
    cell_parent = np.arange(len(cell_rule)) - np.repeat(np.cumsum(m_parent) - m_parent, m_parent)
    cell_shared = np.repeat(shared_counts, m_parent)
    # match the observed (rule, h1, child cell) counts to these cells
    order = np.lexsort((cell_child, cell_parent, cell_rule))
    cell_rule, cell_parent = cell_rule[order], cell_parent[order]
    cell_child, cell_shared = cell_child[order], cell_shared[order]
    position = _lexsearch((cell_rule, cell_parent, cell_child), own_keys)
    cell_own = np.zeros(len(cell_rule))
    cell_own[position] = own_counts
    symbol = parents[cell_rule]
    own_total = node_totals[_state_ids(symbol, cell_parent, n_states)]
    # TOP has one state (nothing to smooth) and one node per tree: pi = c(root a_h) / n_trees
    alpha = np.where(symbol == root, 0.0, smoothing)
    own = cell_own / np.maximum(own_total, 1)
    shared = cell_shared / np.maximum(symbol_totals[symbol], 1)
    weights = (1 - alpha) * own + alpha * shared
    radices = [n_states[rules[cell_rule, k + 1]] for k in range(len(sizes))]
    keep = weights > 0
    return RuleCells(
        cell_rule[keep],
        np.stack([cell_parent, *_digits(cell_child, radices)], axis=1)[keep],
        weights[keep],
    )


def _dense_blocks(
    rules: np.ndarray, n_states: np.ndarray, cells: RuleCells
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[R + 1], weights float64): the cells written into C-order blocks."""
    shapes = n_states[rules]  # (R, arity)
    sizes = np.prod(shapes, axis=1)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    weights = np.zeros(int(offsets[-1]))
    flat = np.zeros(len(cells.rules), dtype=np.int64)
    for k in range(rules.shape[1]):
        flat = flat * shapes[cells.rules, k] + cells.states[:, k]
    weights[offsets[cells.rules] + flat] = cells.weights
    return offsets, weights


def _sparse_blocks(
    rules: np.ndarray, n_states: np.ndarray, cells: RuleCells
) -> tuple[np.ndarray, np.ndarray | SparseWeights]:
    """``_dense_blocks`` without the dense array when the grammar keeps its weights
    sparse (``SparseWeights.worth_it``: clustering grammars do): their non-zero values
    and positions, what ``SparseWeights.from_dense`` of the dense array gives."""
    shapes = n_states[rules]
    offsets = np.concatenate([[0], np.cumsum(np.prod(shapes, axis=1))]).astype(np.int64)
    flat = np.zeros(len(cells.rules), dtype=np.int64)
    for k in range(rules.shape[1]):
        flat = flat * shapes[cells.rules, k] + cells.states[:, k]
    positions = offsets[cells.rules] + flat
    # the last value written at a position is the dense array's (fancy assignment)
    last = len(positions) - 1 - np.unique(positions[::-1], return_index=True)[1]
    positions, values = positions[last], cells.weights[last]
    nonzero = values != 0
    length = int(offsets[-1])
    if length == 0 or np.count_nonzero(nonzero) > SPARSE_FRACTION * length:
        return _dense_blocks(rules, n_states, cells)
    return offsets, SparseWeights(
        positions[nonzero].astype(position_dtype(length)), values[nonzero], length
    )


def _smooth_emissions(
    arrays: dict[str, np.ndarray], n_states: np.ndarray, state_counts: np.ndarray, smoothing: float
) -> dict[str, np.ndarray]:
    """Lexical arrays with each state's emissions mixed with the tag's state-less ones:
    ``(1 - smoothing) P(e | t_h) + smoothing sum_h' P(h' | t) P(e | t_h')``.

    state_counts (np.ndarray): float64[sum(n_states)], nodes per (symbol, state).
    """
    rules, offsets = arrays["lexical_rules"], arrays["lexical_offsets"]
    weights = arrays["lexical_weights"].copy()
    tags = rules[:, 0]
    sizes = n_states[tags]
    rule_of_weight = np.repeat(np.arange(len(rules)), sizes)
    prior = state_counts[
        _state_ids(
            tags[rule_of_weight], np.arange(len(weights)) - offsets[rule_of_weight], n_states
        )
    ]
    totals = np.bincount(rule_of_weight, prior, minlength=len(rules))
    mixed = np.bincount(rule_of_weight, prior * weights, minlength=len(rules))
    shared = np.divide(mixed, totals, out=np.zeros_like(mixed), where=totals > 0)
    weights = (1 - smoothing) * weights + smoothing * shared[rule_of_weight]
    return {**arrays, "lexical_weights": weights}


def _token_state_counts(
    projected: ProjectedTreebank, states: np.ndarray, n_states: np.ndarray
) -> dict[tuple[str, str, bool], np.ndarray]:
    """(word, tag, first word of the sentence) -> float64[m_tag] counts of each state."""
    nodes, symbols = projected.nodes, projected.counts.symbols
    initial = np.zeros(len(nodes.token_word), dtype=bool)
    lengths = np.diff(nodes.token_offsets)
    initial[nodes.token_offsets[:-1][lengths > 0]] = True
    tags = nodes.token_tag.astype(np.int64)
    keys = (nodes.token_word.astype(np.int64) * len(symbols) + tags) * 2 + initial
    unique, inverse = np.unique(keys, return_inverse=True)
    width = int(n_states.max())
    table = np.bincount(
        inverse.reshape(-1) * width + states[nodes.token_node], minlength=len(unique) * width
    ).reshape(len(unique), width)
    result = {}
    for key, row in zip(unique.tolist(), table.astype(np.float64)):
        word_tag, first = divmod(key, 2)
        word, tag = divmod(word_tag, len(symbols))
        result[nodes.words[word], symbols.name(tag), bool(first)] = row[: n_states[tag]]
    return result


def _state_frequencies(nodes, states: np.ndarray, n_states: np.ndarray) -> list[np.ndarray]:
    """Per symbol, float64[m_a]: how many nodes of the symbol have each state."""
    counts = np.bincount(_state_ids(nodes.symbol, states, n_states), minlength=int(n_states.sum()))
    bounds = np.concatenate([[0], np.cumsum(n_states)])
    return [counts[lo:hi].astype(np.float64) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _state_ids(symbols: np.ndarray, states: np.ndarray, n_states: np.ndarray) -> np.ndarray:
    """int64: a global id per (symbol, state)."""
    starts = np.concatenate([[0], np.cumsum(n_states)[:-1]])
    return starts[symbols] + states


def _digits(values: np.ndarray, radices: list[np.ndarray]) -> list[np.ndarray]:
    """Mixed-radix digits of values (most significant first) for per-row radices."""
    digits = []
    for radix in reversed(radices):
        values, digit = np.divmod(values, radix)
        digits.append(digit)
    return digits[::-1]


def _lexsearch(sorted_columns: tuple[np.ndarray, ...], keys: np.ndarray) -> np.ndarray:
    """int64: the row of each key tuple (a column of ``keys``) in lexicographically
    sorted columns; every key must be present."""
    radices = [int(column.max(initial=0)) + 1 for column in sorted_columns]
    table = np.zeros(len(sorted_columns[0]), dtype=np.int64)
    query = np.zeros(keys.shape[1], dtype=np.int64)
    for column, key, radix in zip(sorted_columns, keys, radices):
        table = table * radix + column
        query = query * radix + key
    return np.searchsorted(table, query)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
