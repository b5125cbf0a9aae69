"""CKY over the grammar's rule skeleton with anchored log scores: the best coarse tree.

The anchored rules of a sentence form a hypergraph over chart items
(symbol, start, end). Visited cell by cell (by decreasing start, then
increasing end, the order of the one-state chart), binary rules first,
then unary rules in the grammar's topological order of unary parents (every
child before its parents), each hyperedge sees its tail items final, so one
relaxation per hyperedge finds the best tree: unary chains of any length the
grammar's unary DAG allows, and only those the chart produced.

Items are numbered: the chart kernels give each anchored rule the ids of its
items (``AnchoredScores.binary_items``...), and scores without them (sums over
several grammars) are numbered here by sorting their keys. Arrays indexed by
item id replace a dense (n+1, n+1, n_symbols) table, whose random accesses
missed the cache on every rule.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..chart.inputs import per_grammar
from ..chart.scaled import KERNEL
from ..grammar import LPCFG
from .anchored import AnchoredScores
from .result import ParseResult

LEAF, BINARY, UNARY = 0, 1, 2  # how an item's best tree was built


def rule_cky(grammar: LPCFG, scores: AnchoredScores, decoder: str) -> ParseResult:
    """The tree maximising the sum of the anchored log scores of its rules and tags.

    grammar (LPCFG): the grammar whose rule ids `scores` uses.
    scores (AnchoredScores): the log factors (anchored.anchored_scores).
    decoder (str): the name recorded in the result.
    RETURNS (ParseResult): the best tree, or a failed result if none is complete.
    """
    n = scores.n_words
    span = n + 1
    binary_rows = grammar.binary_rules[scores.binary_rules]  # (parent, left, right)
    unary_rows = grammar.unary_rules[scores.unary_rules]  # (parent, child)
    if scores.binary_items is None:
        tag_items, binary_items, unary_items = _item_ids(scores, binary_rows, unary_rows)
    else:
        tag_items, binary_items, unary_items = (
            scores.tag_items, scores.binary_items, scores.unary_items
        )  # fmt: skip
    # Cells by (decreasing start, increasing end); within a cell, unary rules by the
    # topological rank of their parent, so chains are relaxed bottom up.
    binary_order = cell_order(
        (n - scores.binary_starts).astype(np.int64) * span + scores.binary_ends
    )
    rank = unary_rank(grammar)
    unary_cell = (n - scores.unary_starts).astype(np.int64) * span + scores.unary_ends
    unary_order = cell_order(unary_cell * grammar.n_symbols + rank[unary_rows[:, 0]])
    n_items = 1 + max(
        int(tag_items.max(initial=-1)),
        int(binary_items.max(initial=-1)),
        int(unary_items.max(initial=-1)),
    )
    score, labels, starts, ends, tags = _best_tree(
        n,
        grammar.root,
        n_items,
        tag_items,
        scores.tag_positions,
        scores.tags,
        scores.tag_scores,
        np.ascontiguousarray(binary_items[binary_order]),
        np.ascontiguousarray(binary_rows[binary_order, 0]),
        scores.binary_starts[binary_order],
        scores.binary_ends[binary_order],
        scores.binary_scores[binary_order],
        np.ascontiguousarray(unary_items[unary_order]),
        np.ascontiguousarray(unary_rows[unary_order, 0]),
        scores.unary_starts[unary_order],
        scores.unary_ends[unary_order],
        scores.unary_scores[unary_order],
    )
    if len(labels) == 0:
        return ParseResult.failure(n, decoder)
    return ParseResult(n, grammar.symbols.names, labels, starts, ends, tags, float(score), decoder)


@per_grammar
def unary_rank(grammar: LPCFG) -> np.ndarray:
    """int64[S]: each unary parent's position in the topological order."""
    rank = np.zeros(grammar.n_symbols, dtype=np.int64)
    rank[grammar.unary_parent_order] = np.arange(len(grammar.unary_parent_order))
    return rank


def cell_order(keys: np.ndarray) -> np.ndarray | slice:
    """The stable order sorting keys; a no-op slice when they are sorted already (the
    one-state chart lists its rules cell by cell)."""
    if len(keys) < 2 or (keys[1:] >= keys[:-1]).all():
        return slice(None)
    return np.argsort(keys, kind="stable")


def _item_ids(scores: AnchoredScores, binary_rows: np.ndarray, unary_rows: np.ndarray):
    """(tag_items int32[T], binary_items int32 (B, 3), unary_items int32 (U, 2)): every
    (symbol, start, end) an anchored rule or tag names, numbered by sorting keys."""
    span = scores.n_words + 1

    def keys(symbols, starts, ends):
        return (starts.astype(np.int64) * span + ends) * (1 << 32) + symbols

    tag_keys = keys(scores.tags, scores.tag_positions, scores.tag_positions + 1)
    b_starts, b_splits, b_ends = scores.binary_starts, scores.binary_splits, scores.binary_ends
    binary_keys = np.stack(
        [
            keys(binary_rows[:, 0], b_starts, b_ends),
            keys(binary_rows[:, 1], b_starts, b_splits),
            keys(binary_rows[:, 2], b_splits, b_ends),
        ],
        axis=1,
    )
    unary_keys = np.stack(
        [
            keys(unary_rows[:, 0], scores.unary_starts, scores.unary_ends),
            keys(unary_rows[:, 1], scores.unary_starts, scores.unary_ends),
        ],
        axis=1,
    )
    every = np.concatenate([tag_keys, binary_keys.ravel(), unary_keys.ravel()])
    _, inverse = np.unique(every, return_inverse=True)
    ids = inverse.astype(np.int32).ravel()
    n_tags, n_binary = len(tag_keys), binary_keys.size
    return (
        ids[:n_tags],
        ids[n_tags : n_tags + n_binary].reshape(-1, 3),
        ids[n_tags + n_binary :].reshape(-1, 2),
    )


@njit(**KERNEL)
def _best_tree(
    n, root, n_items, tag_items, tag_positions, tags, tag_scores,
    binary_items, binary_parents, binary_starts, binary_ends, binary_scores,
    unary_items, unary_parents, unary_starts, unary_ends, unary_scores,
):  # fmt: skip
    """Max-sum over the hypergraph. binary_items int32 (B, 3) and unary_items int32
    (U, 2) are the (parent, children) item ids of each anchored rule, sorted as
    rule_cky sorts them; binary_parents / unary_parents their parent symbols.

    RETURNS (score, labels int32[N], starts int32[N], ends int32[N], tags int32[n]):
        the phrase nodes in pre-order and the tags; empty arrays when no tree exists.
    """
    best = np.full(n_items, -np.inf)
    kind = np.empty(n_items, np.int8)
    edge = np.empty(n_items, np.int32)
    item_symbol = np.empty(n_items, np.int32)
    item_start = np.empty(n_items, np.int32)
    item_end = np.empty(n_items, np.int32)
    for e in range(tag_items.shape[0]):
        item = tag_items[e]
        best[item] = tag_scores[e]
        kind[item] = LEAF
        item_symbol[item], item_start[item], item_end[item] = tags[e], tag_positions[e], -1
    top = -1
    b = 0
    u = 0
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n + 1):
            while b < binary_items.shape[0] and binary_starts[b] == i and binary_ends[b] == j:
                parent = binary_items[b, 0]
                value = binary_scores[b] + best[binary_items[b, 1]] + best[binary_items[b, 2]]
                if value > best[parent]:
                    best[parent] = value
                    kind[parent] = BINARY
                    edge[parent] = b
                    item_symbol[parent], item_start[parent], item_end[parent] = (
                        binary_parents[b], i, j
                    )  # fmt: skip
                if i == 0 and j == n and binary_parents[b] == root:
                    top = parent
                b += 1
            while u < unary_items.shape[0] and unary_starts[u] == i and unary_ends[u] == j:
                parent = unary_items[u, 0]
                value = unary_scores[u] + best[unary_items[u, 1]]
                if value > best[parent]:
                    best[parent] = value
                    kind[parent] = UNARY
                    edge[parent] = u
                    item_symbol[parent], item_start[parent], item_end[parent] = (
                        unary_parents[u], i, j
                    )  # fmt: skip
                if i == 0 and j == n and unary_parents[u] == root:
                    top = parent
                u += 1
    if top < 0 or best[top] == -np.inf:
        empty = np.zeros(0, np.int32)
        return -np.inf, empty, empty, empty, empty
    # Read the tree back from the root, writing phrase nodes in pre-order.
    labels = np.empty(n_items, np.int32)
    starts = np.empty(n_items, np.int32)
    ends = np.empty(n_items, np.int32)
    tags_out = np.empty(n, np.int32)
    stack = np.empty(n_items + 1, np.int32)
    stack[0] = top
    depth = 1
    n_nodes = 0
    while depth > 0:
        depth -= 1
        item = stack[depth]
        if kind[item] == LEAF:
            tags_out[item_start[item]] = item_symbol[item]
            continue
        labels[n_nodes] = item_symbol[item]
        starts[n_nodes], ends[n_nodes] = item_start[item], item_end[item]
        n_nodes += 1
        if kind[item] == UNARY:
            stack[depth] = unary_items[edge[item], 1]
            depth += 1
        else:
            stack[depth] = binary_items[edge[item], 2]
            stack[depth + 1] = binary_items[edge[item], 1]
            depth += 2
    return best[top], labels[:n_nodes], starts[:n_nodes], ends[:n_nodes], tags_out
