"""CKY over the grammar's rule skeleton with anchored log scores: the best coarse tree.

The anchored rules of a sentence form a hypergraph over chart items
(symbol, start, end). Visited cell by cell (by width), binary rules first,
then unary rules in the grammar's topological order of unary parents (every
child before its parents), each hyperedge sees its tail items final, so one
relaxation per hyperedge finds the best tree: unary chains of any length the
grammar's unary DAG allows, and only those the chart produced.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    # Cells by (width, start); within a cell, unary rules by the topological rank of
    # their parent, so chains are relaxed bottom up.
    binary_order = np.argsort(
        (scores.binary_ends - scores.binary_starts) * span + scores.binary_starts, kind="stable"
    )
    rank = np.zeros(grammar.n_symbols, dtype=np.int64)
    rank[grammar.unary_parent_order] = np.arange(len(grammar.unary_parent_order))
    unary_cell = (scores.unary_ends - scores.unary_starts).astype(np.int64) * span
    unary_order = np.argsort(
        (unary_cell + scores.unary_starts) * grammar.n_symbols + rank[unary_rows[:, 0]],
        kind="stable",
    )
    score, labels, starts, ends, tags = _best_tree(
        n,
        grammar.n_symbols,
        grammar.root,
        scores.tag_positions,
        scores.tags,
        scores.tag_scores,
        np.ascontiguousarray(binary_rows[binary_order]),
        scores.binary_starts[binary_order],
        scores.binary_splits[binary_order],
        scores.binary_ends[binary_order],
        scores.binary_scores[binary_order],
        np.ascontiguousarray(unary_rows[unary_order]),
        scores.unary_starts[unary_order],
        scores.unary_ends[unary_order],
        scores.unary_scores[unary_order],
    )
    if len(labels) == 0:
        return ParseResult.failure(n, decoder)
    return ParseResult(n, grammar.symbols.names, labels, starts, ends, tags, float(score), decoder)


@njit(cache=True, nogil=True)
def _best_tree(
    n, n_symbols, root, tag_positions, tags, tag_scores,
    binary_rules, binary_starts, binary_splits, binary_ends, binary_scores,
    unary_rules, unary_starts, unary_ends, unary_scores,
):  # fmt: skip
    """Max-sum over the hypergraph; binary_rules int32[B, 3] and unary_rules int32[U, 2]
    hold the (parent, children) of each anchored rule, sorted as rule_cky sorts them.

    RETURNS (score, labels int32[N], starts int32[N], ends int32[N], tags int32[n]):
        the phrase nodes in pre-order and the tags; empty arrays when no tree exists.
    """
    n_items = tags.shape[0] + binary_rules.shape[0] + unary_rules.shape[0]
    table = np.full((n + 1, n + 1, n_symbols), -1, np.int32)
    best = np.empty(n_items)
    kind = np.empty(n_items, np.int8)
    edge = np.empty(n_items, np.int32)
    item_symbol = np.empty(n_items, np.int32)
    item_start = np.empty(n_items, np.int32)
    item_end = np.empty(n_items, np.int32)
    count = 0
    for e in range(tags.shape[0]):
        i = tag_positions[e]
        table[i, i + 1, tags[e]] = count
        best[count] = tag_scores[e]
        kind[count] = LEAF
        item_symbol[count], item_start[count], item_end[count] = tags[e], i, i + 1
        count += 1
    b = 0
    u = 0
    for width in range(1, n + 1):
        for i in range(n - width + 1):
            j = i + width
            while b < binary_rules.shape[0] and binary_starts[b] == i and binary_ends[b] == j:
                k = binary_splits[b]
                left = table[i, k, binary_rules[b, 1]]
                right = table[k, j, binary_rules[b, 2]]
                if left >= 0 and right >= 0:
                    value = binary_scores[b] + best[left] + best[right]
                    a = binary_rules[b, 0]
                    item = table[i, j, a]
                    if item < 0:
                        item = count
                        count += 1
                        table[i, j, a] = item
                        item_symbol[item], item_start[item], item_end[item] = a, i, j
                        best[item] = -np.inf
                    if value > best[item]:
                        best[item] = value
                        kind[item] = BINARY
                        edge[item] = b
                b += 1
            while u < unary_rules.shape[0] and unary_starts[u] == i and unary_ends[u] == j:
                child = table[i, j, unary_rules[u, 1]]
                if child >= 0:
                    value = unary_scores[u] + best[child]
                    a = unary_rules[u, 0]
                    item = table[i, j, a]
                    if item < 0:
                        item = count
                        count += 1
                        table[i, j, a] = item
                        item_symbol[item], item_start[item], item_end[item] = a, i, j
                        best[item] = -np.inf
                    if value > best[item]:
                        best[item] = value
                        kind[item] = UNARY
                        edge[item] = u
                u += 1
    top = table[0, n, root]
    if top < 0 or best[top] == -np.inf:
        empty = np.zeros(0, np.int32)
        return -np.inf, empty, empty, empty, empty
    # Read the tree back from the root, writing phrase nodes in pre-order.
    labels = np.empty(count, np.int32)
    starts = np.empty(count, np.int32)
    ends = np.empty(count, np.int32)
    tags_out = np.empty(n, np.int32)
    stack = np.empty(count + 1, np.int32)
    stack[0] = top
    depth = 1
    n_nodes = 0
    while depth > 0:
        depth -= 1
        item = stack[depth]
        a, i, j = item_symbol[item], item_start[item], item_end[item]
        if kind[item] == LEAF:
            tags_out[i] = a
            continue
        labels[n_nodes], starts[n_nodes], ends[n_nodes] = a, i, j
        n_nodes += 1
        if kind[item] == UNARY:
            stack[depth] = table[i, j, unary_rules[edge[item], 1]]
            depth += 1
        else:
            r = edge[item]
            k = binary_splits[r]
            stack[depth] = table[k, j, binary_rules[r, 2]]
            stack[depth + 1] = table[i, k, binary_rules[r, 1]]
            depth += 2
    return best[top], labels[:n_nodes], starts[:n_nodes], ends[:n_nodes], tags_out
