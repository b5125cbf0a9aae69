"""k-best parsing: the K best trees of a pruned chart, in order, by lazy enumeration
(Huang & Chiang 2005, Algorithm 3).

The chart's anchored rules (``inside_outside(..., rule_posteriors=True)``: every
rule over every span that some derivation the mask allows uses) form a hypergraph
over chart items; a numba pass computes the best score of every node bottom up
(the Viterbi objective's inside maximum), and the k-th best derivation of a node
is then found lazily from its incoming hyperedges: each node keeps a heap of
candidates (a hyperedge and the rank of the derivation taken at each tail),
initialised with the best candidate of each hyperedge, and the successors of the
last derivation taken are pushed only when the next one is asked for. Only the
nodes the K best derivations reach are ever expanded. Each node lists distinct
subtrees (latent states projected away), each at its best derivation: a
derivation that repeats a subtree the node has listed (other latent states below,
a lower score) is skipped there, its successors still pushed, which is exact since
the best derivation of a tree is made of the best derivations of its children's
subtrees. So the root's list is distinct trees, however many state assignments
each has.

Objectives (``KBEST_DECODERS``), the score being each tree's log score:

``viterbi``      nodes are (item, latent state), hyperedges the non-zero weights of
                 the anchored rules; the score of a derivation is the log of its
                 weight (rules and lexical weights). A tree's score is that of its
                 best derivation (max over latent states), the ``viterbi``
                 decoder's objective; the trees are ranked by it, not by their
                 probability summed over states. With one state per symbol (MLE
                 grammars) a derivation is a tree and its score is the log of the
                 joint weight of tree and words.
``max_rule``     nodes are chart items, hyperedges the anchored rules with the log
                 of their posterior (and of the tags' posteriors): the max-rule
                 product objective of the ``max_rule`` decoder (the Berkeley
                 parser's k-best lists use it), one derivation per tree.
``variational``  the same with the ``variational`` decoder's factors.

The 1-best is the tree of the decoder of that name over the same mask (up to
ties). Trees are those of the grammar (``ParseResult``: transformed labels, latent
states projected away); ``Parser.kbest`` inverts them to treebank labels. Meant for
grammars with non-negative weights: weights <= 0 are impossible, as for Viterbi.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from ..chart import ChartPosteriors, inside_outside
from ..chart.inputs import Mask, per_grammar
from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.symbols import PRETERMINAL
from .anchored import anchored_scores
from .charts import chart_posteriors
from .result import ParseResult
from .rule_cky import cell_order, unary_rank

KBEST_DECODERS = ("viterbi", "max_rule", "variational")
LEAF, BINARY, UNARY = 0, 1, 2


def kbest_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: Mask = None,
    *,
    k: int = 10,
    objective: str = "viterbi",
    posteriors: ChartPosteriors | None = None,
) -> list[ParseResult]:
    """The k best trees of the chart, best first (see the module docstring).

    grammar (LPCFG): a grammar with non-negative weights.
    lexical (LexicalScores): the preterminal scores of the sentence.
    mask (np.ndarray | MergedMask | None): the items allowed, as for inside_outside.
    k (int): how many trees (>= 1); fewer when the chart has fewer.
    objective (str): "viterbi", "max_rule" or "variational".
    posteriors (ChartPosteriors | None): inside_outside(grammar, lexical, mask,
        rule_posteriors=True) when already computed; then ``mask`` is not used again.
    RETURNS (list[ParseResult]): distinct trees, scores non-increasing; empty when
        the chart has no parse.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(Errors.E011.format(name="k", value=k, expected="an int >= 1"))
    if posteriors is None:
        chart = inside_outside(grammar, lexical, mask, rule_posteriors=True)
    else:
        chart = chart_posteriors(grammar, lexical, None, posteriors)
    found = []
    for result in kbest_results(grammar, lexical, chart, objective):
        found.append(result)
        if len(found) == k:
            break
    return found


def format_kbest(parses: Sequence[Any]) -> str:
    """A k-best list as the Berkeley parser's ``-kbest`` writes it: one line per tree,
    ``score<TAB>tree`` (the tree in one-line Penn notation), each line ending in a
    newline; the caller ends the list with an empty line. A parse without a score
    (a fallback's flat tree, not from the chart) gets ``-inf``.

    parses (Sequence[Parse]): ``Parser.kbest``'s list.
    """
    return "".join(
        f"{-math.inf if parse.score is None else parse.score!r}\t{parse.tree.pformat()}\n"
        for parse in parses
    )


def kbest_results(
    grammar: LPCFG,
    lexical: LexicalScores,
    chart: ChartPosteriors,
    objective: str = "viterbi",
) -> Iterator[ParseResult]:
    """The chart's trees, best first, each once, generated lazily: what kbest_parse
    takes the first k of. ``chart`` needs its anchored rule posteriors.

    RAISES ValueError: an unknown objective (E303), a signed grammar (E311), a chart
        of another sentence (E304) or without rule posteriors (E307), at the call.
    """
    if objective not in KBEST_DECODERS:
        raise ValueError(
            Errors.E303.format(name="objective", value=objective, known=", ".join(KBEST_DECODERS))
        )
    if grammar.signed:
        raise ValueError(Errors.E311.format(found="the grammar has negative weights"))
    if chart.n_words != lexical.n_words:
        raise ValueError(Errors.E304.format(found=chart.n_words, expected=lexical.n_words))
    if not chart.has_parse:
        return iter(())
    no_items = chart.binary.items is None or chart.unary.items is None
    if no_items or len(chart.binary.rules) + len(chart.unary.rules) == 0:
        raise ValueError(Errors.E307.format(decoder=f"k-best {objective}"))
    return _trees(_forest(grammar, lexical, chart, objective), grammar, objective)


def _trees(forest: _Forest, grammar: LPCFG, objective: str) -> Iterator[ParseResult]:
    if forest.root < 0:
        return
    search = _LazySearch(forest)
    rank = 0
    while search.ensure(forest.root_node, rank):
        yield search.result(rank, grammar, objective)
        rank += 1


@dataclass(frozen=True)
class _Cells:
    """Positive rule weights by (rule, parent state), for the hyperedges of a node.

    The cells of rule r in parent state h are ``state_base[r] + h``'s rows:
    ``positions[row_offsets[row]:row_offsets[row + 1]]`` (in the grammar's flat weight
    array) with ``log_weights``; the children's states are read off the position:
    ``local = position - rule_offsets[r] - h * child_sizes[r]``, left (or only) child
    ``local // right_sizes[r]``, right child ``local % right_sizes[r]``.
    """

    state_base: np.ndarray
    row_offsets: np.ndarray
    positions: np.ndarray
    log_weights: np.ndarray
    rule_offsets: np.ndarray
    child_sizes: np.ndarray
    right_sizes: np.ndarray

    def children(self, rules: np.ndarray, cells: np.ndarray, states: int | np.ndarray):
        """(left or only child's state, right child's state) of each cell."""
        local = self.positions[cells] - self.rule_offsets[rules] - states * self.child_sizes[rules]
        return local // self.right_sizes[rules], local % self.right_sizes[rules]


def _cells(
    parents: np.ndarray,
    n_states: np.ndarray,
    rule_offsets: np.ndarray,
    positions: np.ndarray,
    values: np.ndarray,
    child_sizes: np.ndarray,
    right_sizes: np.ndarray,
) -> _Cells:
    positive = values > 0
    positions, values = positions[positive], values[positive]
    rules = np.searchsorted(rule_offsets, positions, side="right") - 1
    states = (positions - rule_offsets[rules]) // child_sizes[rules]
    state_base = np.zeros(len(parents) + 1, dtype=np.int64)
    np.cumsum(n_states[parents], out=state_base[1:])
    rows = state_base[rules] + states
    row_offsets = np.zeros(int(state_base[-1]) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=int(state_base[-1])), out=row_offsets[1:])
    return _Cells(
        state_base,
        row_offsets,
        positions.astype(np.int64),  # one kernel signature for every grammar
        np.log(values),
        np.asarray(rule_offsets, dtype=np.int64),
        child_sizes.astype(np.int64),
        right_sizes.astype(np.int64),
    )


@per_grammar
def _binary_cells(grammar: LPCFG) -> _Cells:
    rules, states = grammar.binary_rules, grammar.n_states.astype(np.int64)
    nonzero = grammar.nonzero_binary_weights()
    return _cells(
        rules[:, 0],
        states,
        grammar.binary_offsets,
        nonzero.positions,
        nonzero.values,
        states[rules[:, 1]] * states[rules[:, 2]],
        states[rules[:, 2]],
    )


@per_grammar
def _unary_cells(grammar: LPCFG) -> _Cells:
    rules, states = grammar.unary_rules, grammar.n_states.astype(np.int64)
    return _cells(
        rules[:, 0],
        states,
        grammar.unary_offsets,
        np.arange(len(grammar.unary_weights), dtype=np.int64),
        grammar.unary_weights,
        states[rules[:, 1]],
        np.ones(len(rules), dtype=np.int64),
    )


def _one_cell() -> _Cells:
    """One rule of weight 1 (log 0) between one-state symbols: the hyperedges of the
    label-space objectives carry their scores themselves."""
    ones = np.ones(1, dtype=np.int64)
    return _Cells(
        np.array([0, 1]), np.array([0, 1]), np.zeros(1, np.int64), np.zeros(1), np.array([0, 1]),
        ones, ones,
    )  # fmt: skip


@dataclass(frozen=True)
class _Forest:
    """The hypergraph of one chart. Node ``node_offsets[item] + h`` is item ``item`` in
    state h; ``best`` holds each node's best score (leaves: their own score).
    Hyperedges (binary: parent, left, right items; unary: parent, child) carry a
    ``rule`` (a row of the cells) and a ``base`` score; ``*_by_parent`` lists them by
    parent item (CSR ``*_first``)."""

    item_symbols: np.ndarray
    item_starts: np.ndarray
    item_ends: np.ndarray
    is_leaf: np.ndarray
    node_offsets: np.ndarray
    node_items: np.ndarray
    best: np.ndarray
    binary_items: np.ndarray
    binary_rules: np.ndarray
    binary_base: np.ndarray
    binary_first: np.ndarray
    binary_by_parent: np.ndarray
    unary_items: np.ndarray
    unary_rules: np.ndarray
    unary_base: np.ndarray
    unary_first: np.ndarray
    unary_by_parent: np.ndarray
    binary_cells: _Cells
    unary_cells: _Cells
    root: int

    @property
    def root_node(self) -> int:
        return int(self.node_offsets[self.root])


def _forest(
    grammar: LPCFG, lexical: LexicalScores, chart: ChartPosteriors, objective: str
) -> _Forest:
    n = chart.n_words
    symbols, starts, ends = chart.item_symbols, chart.item_starts, chart.item_ends
    n_items = len(symbols)
    is_leaf = grammar.symbols.kind_codes[symbols] == PRETERMINAL
    if objective == "viterbi":
        sizes = grammar.n_states[symbols].astype(np.int64)
        binary, unary = chart.binary, chart.unary
        assert binary.items is not None and unary.items is not None  # kbest_results checks
        b_kept, u_kept = binary.scores > 0, unary.scores > 0
        b_items, b_rules = binary.items[b_kept], binary.rules[b_kept]
        u_items, u_rules = unary.items[u_kept], unary.rules[u_kept]
        b_base, u_base = np.zeros(len(b_rules)), np.zeros(len(u_rules))
        b_cells, u_cells = _binary_cells(grammar), _unary_cells(grammar)
    else:
        sizes = np.ones(n_items, dtype=np.int64)
        scores = anchored_scores(grammar, chart, objective)
        assert scores.binary_items is not None and scores.unary_items is not None
        b_items, u_items = scores.binary_items, scores.unary_items
        b_rules = np.zeros(len(b_items), dtype=np.int32)
        u_rules = np.zeros(len(u_items), dtype=np.int32)
        b_base, u_base = scores.binary_scores, scores.unary_scores
        b_cells = u_cells = _one_cell()
    node_offsets = np.zeros(n_items + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_offsets[1:])
    best = np.full(int(node_offsets[-1]), -np.inf)
    if objective == "viterbi":
        _set_lexical(best, grammar, lexical, chart, is_leaf, node_offsets)
    else:
        best[node_offsets[scores.tag_items]] = scores.tag_scores
    # bottom up: cells by decreasing start, then increasing end; within a cell binary
    # rules, then unary rules children first (rule_cky's order)
    span = n + 1
    b_parents = b_items[:, 0]
    b_order = cell_order((n - starts[b_parents]).astype(np.int64) * span + ends[b_parents])
    u_parents = u_items[:, 0]
    u_cell = (n - starts[u_parents]).astype(np.int64) * span + ends[u_parents]
    u_order = cell_order(u_cell * grammar.n_symbols + unary_rank(grammar)[symbols[u_parents]])
    b_items, b_rules, b_base = (
        np.ascontiguousarray(b_items[b_order]), b_rules[b_order], b_base[b_order]
    )  # fmt: skip
    u_items, u_rules, u_base = (
        np.ascontiguousarray(u_items[u_order]), u_rules[u_order], u_base[u_order]
    )  # fmt: skip
    _max_inside(
        n, node_offsets, best,
        b_items, b_rules.astype(np.int64), b_base, starts[b_items[:, 0]], ends[b_items[:, 0]],
        u_items, u_rules.astype(np.int64), u_base, starts[u_items[:, 0]], ends[u_items[:, 0]],
        b_cells.state_base, b_cells.row_offsets, b_cells.positions, b_cells.log_weights,
        b_cells.rule_offsets, b_cells.child_sizes, b_cells.right_sizes,
        u_cells.state_base, u_cells.row_offsets, u_cells.positions, u_cells.log_weights,
        u_cells.rule_offsets, u_cells.child_sizes, u_cells.right_sizes,
    )  # fmt: skip
    roots = np.flatnonzero((symbols == grammar.root) & (starts == 0) & (ends == n))
    root = int(roots[0]) if len(roots) else -1
    if root >= 0 and best[node_offsets[root]] == -np.inf:
        root = -1
    b_by_parent = np.argsort(b_items[:, 0], kind="stable")
    u_by_parent = np.argsort(u_items[:, 0], kind="stable")
    return _Forest(
        item_symbols=symbols,
        item_starts=starts,
        item_ends=ends,
        is_leaf=is_leaf,
        node_offsets=node_offsets,
        node_items=np.repeat(np.arange(n_items), sizes),
        best=best,
        binary_items=b_items,
        binary_rules=b_rules.astype(np.int64),
        binary_base=b_base,
        binary_first=_first(b_items[:, 0], n_items),
        binary_by_parent=b_by_parent,
        unary_items=u_items,
        unary_rules=u_rules.astype(np.int64),
        unary_base=u_base,
        unary_first=_first(u_items[:, 0], n_items),
        unary_by_parent=u_by_parent,
        binary_cells=b_cells,
        unary_cells=u_cells,
        root=root,
    )


def _first(parents: np.ndarray, n_items: int) -> np.ndarray:
    offsets = np.zeros(n_items + 1, dtype=np.int64)
    np.cumsum(np.bincount(parents, minlength=n_items), out=offsets[1:])
    return offsets


def _set_lexical(best, grammar, lexical, chart, is_leaf, node_offsets) -> None:
    """best[node of (tag item, h)] = log of its lexical weight (Viterbi)."""
    n_symbols = grammar.n_symbols
    leaves = np.flatnonzero(is_leaf)
    if not len(leaves):
        return
    item_keys = chart.item_starts[leaves].astype(np.int64) * n_symbols + chart.item_symbols[leaves]
    order = np.argsort(item_keys)
    entry_keys = lexical.positions.astype(np.int64) * n_symbols + lexical.tags
    found = np.minimum(np.searchsorted(item_keys, entry_keys, sorter=order), len(order) - 1)
    matched = np.flatnonzero(item_keys[order[found]] == entry_keys)
    items = leaves[order[found[matched]]]
    sizes = np.diff(lexical.offsets)[matched]
    steps = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    values = lexical.values[np.repeat(lexical.offsets[matched], sizes) + steps]
    nodes = np.repeat(node_offsets[items], sizes) + steps
    with np.errstate(divide="ignore"):
        best[nodes] = np.where(values > 0, np.log(np.maximum(values, 1e-300)), -np.inf)


@njit(cache=True, nogil=True)
def _max_inside(
    n, node_offsets, best,
    b_items, b_rules, b_base, b_starts, b_ends,
    u_items, u_rules, u_base, u_starts, u_ends,
    b_state_base, b_row_offsets, b_positions, b_log_weights, b_rule_offsets, b_child_sizes,
    b_right_sizes,
    u_state_base, u_row_offsets, u_positions, u_log_weights, u_rule_offsets, u_child_sizes,
    u_right_sizes,
):  # fmt: skip
    """best[node] = max over its hyperedges of base + log weight + best of the tails,
    in place; hyperedges sorted as _forest sorts them."""
    b = 0
    u = 0
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n + 1):
            while b < b_items.shape[0] and b_starts[b] == i and b_ends[b] == j:
                parent = node_offsets[b_items[b, 0]]
                left = node_offsets[b_items[b, 1]]
                right = node_offsets[b_items[b, 2]]
                r = b_rules[b]
                for h in range(node_offsets[b_items[b, 0] + 1] - parent):
                    row = b_state_base[r] + h
                    base = b_rule_offsets[r] + h * b_child_sizes[r]
                    for c in range(b_row_offsets[row], b_row_offsets[row + 1]):
                        local = b_positions[c] - base
                        s = (
                            b_base[b]
                            + b_log_weights[c]
                            + best[left + local // b_right_sizes[r]]
                            + best[right + local % b_right_sizes[r]]
                        )
                        if s > best[parent + h]:
                            best[parent + h] = s
                b += 1
            while u < u_items.shape[0] and u_starts[u] == i and u_ends[u] == j:
                parent = node_offsets[u_items[u, 0]]
                child = node_offsets[u_items[u, 1]]
                r = u_rules[u]
                for h in range(node_offsets[u_items[u, 0] + 1] - parent):
                    row = u_state_base[r] + h
                    base = u_rule_offsets[r] + h * u_child_sizes[r]
                    for c in range(u_row_offsets[row], u_row_offsets[row + 1]):
                        local = u_positions[c] - base
                        s = u_base[u] + u_log_weights[c] + best[child + local // u_right_sizes[r]]
                        if s > best[parent + h]:
                            best[parent + h] = s
                u += 1
    return best


class _LazySearch:
    """The k best subtrees of the forest's nodes, found lazily.

    ``derivations[v]`` lists node v's derivations found so far, best first, one per
    distinct subtree (latent states projected away), as (score, kind, edge, cell,
    tails, ranks, weight, tree): the hyperedge (its index among the binary or unary
    ones) and cell, the tail nodes and the rank taken in each tail's list, the
    hyperedge's own score, and the subtree's id. ``candidates[v]`` is the heap of the
    next ones; ``last[v]`` the last derivation popped whose successors are not in it
    yet (its successors are pushed before the next pop). A popped derivation whose
    subtree v has already (the same tree with other
    latent states below, and a lower score) is not listed, but its successors are
    pushed: the best derivation of a subtree is made of the best derivations of its
    children's subtrees, so lists of distinct subtrees at the tails give every tree
    at its best score. Work is done with an explicit stack (trees are deep).
    """

    def __init__(self, forest: _Forest):
        self.forest = forest
        self.derivations: dict[int, list[tuple]] = {}
        self.candidates: dict[int, list[tuple]] = {}
        self.seen: dict[int, set[tuple]] = {}  # (kind, edge, cell, ranks) pushed at v
        self.trees: dict[int, set[int]] = {}  # the subtrees listed at v
        self.last: dict[int, tuple | None] = {}
        self.tree_ids: dict[tuple, int] = {}  # (kind, edge or item, children's ids) -> id
        self.counter = 0  # ties: first come, first out

    def ensure(self, node: int, rank: int) -> bool:
        """Find node's derivation of this rank (0: the best); False when it has fewer."""
        stack = [(node, rank)]
        while stack:
            v, k = stack[-1]
            found = self.derivations.get(v)
            if found is None:
                found = self._start(v)
            if len(found) > k:
                stack.pop()
                continue
            last = self.last[v]
            if last is not None:  # its successors first: they need the next of a tail
                missing = self._unknown(last[4], tuple(r + 1 for r in last[5]))
                if missing is not None:
                    stack.append(missing)
                    continue
                self._push_successors(v, last)
            heap = self.candidates[v]
            if not heap:  # v has no more
                stack.pop()
                continue
            missing = self._unknown(heap[0][5], heap[0][6])  # the best candidate's tails
            if missing is not None:
                stack.append(missing)
                continue
            self._pop(v)
        return len(self.derivations[node]) > rank

    def _pop(self, v: int) -> None:
        """Take v's best candidate; list it unless its subtree is listed already."""
        entry = heapq.heappop(self.candidates[v])
        kind, edge, tails, ranks = entry[2], entry[3], entry[5], entry[6]
        if not all(self._available(t, r) for t, r in zip(tails, ranks)):
            return  # a tail without that derivation (never pushed so): nothing to list
        key = (kind, edge, tuple(self.derivations[t][r][7] for t, r in zip(tails, ranks)))
        tree = self.tree_ids.setdefault(key, len(self.tree_ids))
        derivation = (-entry[0], *entry[2:], tree)
        self.last[v] = derivation
        if tree not in self.trees[v]:
            self.trees[v].add(tree)
            self.derivations[v].append(derivation)

    def _available(self, v: int, k: int) -> bool | None:
        """Whether node v has a derivation of rank k; None when not known yet."""
        found = self.derivations.get(v)
        if found is None:
            return None
        if len(found) > k:
            return True
        if not self.candidates[v] and self.last[v] is None:
            return False
        return None

    def _unknown(self, tails: tuple, ranks: tuple) -> tuple[int, int] | None:
        """The first (tail, rank) not known to exist or not."""
        for tail, rank in zip(tails, ranks):
            if self._available(tail, rank) is None:
                return tail, rank
        return None

    def _push_successors(self, v: int, derivation: tuple) -> None:
        _, kind, edge, cell, tails, ranks, weight, _ = derivation
        seen = self.seen[v]
        heap = self.candidates[v]
        for position, tail in enumerate(tails):
            if not self._available(tail, ranks[position] + 1):
                continue
            successor = ranks[:position] + (ranks[position] + 1,) + ranks[position + 1 :]
            key = (kind, edge, cell, successor)
            if key in seen:
                continue
            seen.add(key)
            score = weight + sum(self.derivations[t][r][0] for t, r in zip(tails, successor))
            self.counter += 1
            heapq.heappush(heap, (-score, self.counter, kind, edge, cell, tails, successor, weight))
        self.last[v] = None

    def _start(self, v: int) -> list[tuple]:
        """Node v's heap: the best candidate of each hyperedge (scored with the forest's
        best scores of the tails, their rank-0 derivations)."""
        forest = self.forest
        item = int(forest.node_items[v])
        self.seen[v] = set()
        self.trees[v] = set()
        self.last[v] = None
        self.derivations[v] = []
        if forest.is_leaf[item]:
            self.candidates[v] = []
            tree = self.tree_ids.setdefault((LEAF, item, ()), len(self.tree_ids))
            self.derivations[v].append((float(forest.best[v]), LEAF, -1, -1, (), (), 0.0, tree))
            return self.derivations[v]
        state = v - int(forest.node_offsets[item])
        heap: list[tuple] = []
        for kind in (BINARY, UNARY):
            heap.extend(self._edge_candidates(kind, item, state))
        heapq.heapify(heap)
        self.seen[v].update((entry[2], entry[3], entry[4], entry[6]) for entry in heap)
        self.candidates[v] = heap
        return self.derivations[v]

    def _edge_candidates(self, kind: int, item: int, state: int) -> list[tuple]:
        """The best candidate of each hyperedge (and cell) into (item, state)."""
        forest = self.forest
        if kind == BINARY:
            first, order = forest.binary_first, forest.binary_by_parent
            items, rules, base = forest.binary_items, forest.binary_rules, forest.binary_base
            cells = forest.binary_cells
        else:
            first, order = forest.unary_first, forest.unary_by_parent
            items, rules, base = forest.unary_items, forest.unary_rules, forest.unary_base
            cells = forest.unary_cells
        edges = order[first[item] : first[item + 1]]
        if not len(edges):
            return []
        rows = cells.state_base[rules[edges]] + state
        low, counts = cells.row_offsets[rows], np.diff(cells.row_offsets)[rows]
        edge = np.repeat(edges, counts)
        steps = np.arange(len(edge)) - np.repeat(np.cumsum(counts) - counts, counts)
        cell = np.repeat(low, counts) + steps
        left_state, right_state = cells.children(rules[edge], cell, state)
        weight = base[edge] + cells.log_weights[cell]
        offsets, best = forest.node_offsets, forest.best
        left = offsets[items[edge, 1]] + left_state
        score = weight + best[left]
        if kind == BINARY:
            right = offsets[items[edge, 2]] + right_state
            score = score + best[right]
        keep = np.flatnonzero(np.isfinite(score))
        candidates = []
        for position in keep.tolist():
            tails = (
                (int(left[position]), int(right[position]))
                if kind == BINARY
                else (int(left[position]),)
            )
            self.counter += 1
            candidates.append(
                (
                    -float(score[position]),
                    self.counter,
                    kind,
                    int(edge[position]),
                    int(cell[position]),
                    tails,
                    (0,) * len(tails),
                    float(weight[position]),
                )
            )
        return candidates

    def result(self, rank: int, grammar: LPCFG, decoder: str) -> ParseResult:
        """The tree of the root's derivation of this rank (found by ensure)."""
        forest = self.forest
        n = int(forest.item_ends[forest.root])
        labels, starts, ends = [], [], []
        tags = np.zeros(n, dtype=np.int32)
        stack = [(forest.root_node, rank)]
        while stack:
            v, k = stack.pop()
            _, kind, _, _, tails, ranks, _, _ = self.derivations[v][k]
            item = int(forest.node_items[v])
            if kind == LEAF:
                tags[forest.item_starts[item]] = forest.item_symbols[item]
                continue
            labels.append(forest.item_symbols[item])
            starts.append(forest.item_starts[item])
            ends.append(forest.item_ends[item])
            stack.extend(zip(reversed(tails), reversed(ranks)))
        return ParseResult(
            n_words=n,
            label_names=grammar.symbols.names,
            labels=np.array(labels, dtype=np.int32),
            starts=np.array(starts, dtype=np.int32),
            ends=np.array(ends, dtype=np.int32),
            tags=tags,
            score=float(self.derivations[forest.root_node][rank][0]),
            decoder=decoder,
        )
