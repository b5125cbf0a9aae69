"""The nodes of a treebank as flat arrays, for estimators that work on all trees at once.

``flatten`` lays transformed (binary) trees out as nodes, tree by tree, each in
pre-order: one Python pass over the nodes, then numpy. Feature extraction
(``estimators.features``) and the inside-outside passes over gold trees work
on these arrays, never on ``Tree`` objects. ``node_rules`` finds each node's
row in a grammar's rule arrays.

The symbol table is the grammar's (``grammar.SymbolTable``), used through its
``names`` and ``root`` only, so this module does not depend on the grammar layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import Errors
from ..progress import progress
from .tree import Tree

LEFT, RIGHT, ONLY = 0, 1, 2  # a node's position under its parent


class SymbolIndex(Protocol):
    """What the nodes need of a symbol table (``grammar.SymbolTable`` is one)."""

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def root(self) -> int: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True)
class TreebankNodes:
    """The nodes of transformed trees as flat arrays: tree by tree, each in pre-order.

    symbols (SymbolIndex): the grammar's symbols; ``symbol`` indexes them.
    symbol (np.ndarray): int32[N], each node's symbol.
    parent (np.ndarray): int64[N], the parent node; -1 for the TOP nodes.
    left, right (np.ndarray): int64[N], the first and second child; -1 for none
        (a unary node's child is ``left``).
    position (np.ndarray): int8[N], LEFT, RIGHT or ONLY (child of a unary node);
        -1 for TOP.
    tree (np.ndarray): int32[N], the tree of each node.
    start, end (np.ndarray): int32[N], the half-open word span in its sentence.
    token_offsets (np.ndarray): int64[n_trees + 1], the tokens of tree t are
        ``token_offsets[t]:token_offsets[t + 1]``.
    token_word (np.ndarray): int32[T], each token's index into ``words``.
    token_node (np.ndarray): int64[T], each token's preterminal node.
    words (tuple[str, ...]): the word types, in order of first occurrence.
    """

    symbols: SymbolIndex
    symbol: np.ndarray
    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    position: np.ndarray
    tree: np.ndarray
    start: np.ndarray
    end: np.ndarray
    token_offsets: np.ndarray
    token_word: np.ndarray
    token_node: np.ndarray
    words: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.symbol)

    @property
    def n_trees(self) -> int:
        return len(self.token_offsets) - 1

    @property
    def is_preterminal(self) -> np.ndarray:
        """bool[N]: the nodes over a word."""
        preterminal = np.zeros(len(self.symbol), dtype=bool)
        preterminal[self.token_node] = True
        return preterminal

    @property
    def is_root(self) -> np.ndarray:
        """bool[N]: the TOP nodes (one per tree)."""
        return self.parent < 0

    @property
    def is_binary(self) -> np.ndarray:
        """bool[N]: nodes with two children."""
        return self.right >= 0

    @property
    def is_unary(self) -> np.ndarray:
        """bool[N]: nodes with one child (TOP included)."""
        return (self.left >= 0) & (self.right < 0)

    @property
    def token_tag(self) -> np.ndarray:
        """int32[T]: the symbol (preterminal) of each token."""
        return self.symbol[self.token_node]

    @property
    def sentence_length(self) -> np.ndarray:
        """int32[N]: the length of each node's sentence."""
        return np.diff(self.token_offsets).astype(np.int32)[self.tree]

    def token_index(self, nodes: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """int64: the global index of word ``offset`` (sentence position) of each node's
        tree; -1 where the position is outside the sentence."""
        lengths = np.diff(self.token_offsets)[self.tree[nodes]]
        inside = (offset >= 0) & (offset < lengths)
        return np.where(inside, self.token_offsets[self.tree[nodes]] + offset, -1)


def flatten(
    trees: Iterable[Tree], symbols: SymbolIndex, *, total: int | None = None
) -> TreebankNodes:
    """Lay out transformed trees (binary, rooted at TOP) as flat node arrays.

    The only Python loop over nodes in feature extraction: it records each
    node's symbol, parent and depth (and each token's word); children, spans
    and positions are derived with numpy.

    trees (Iterable[Tree]): transformed trees, e.g. ``TransformPipeline.apply``'s.
    symbols (SymbolIndex): a table with every label of the trees (``count_rules``').
    total (int | None): number of trees, for the progress bar.
    RETURNS (TreebankNodes): the nodes.
    RAISES ValueError: an unknown label, a node with more than two children, or a
        label over both words and phrases.
    """
    index = {name: i for i, name in enumerate(symbols.names)}
    word_index: dict[str, int] = {}
    labels: list[int] = []
    parents: list[int] = []
    depths: list[int] = []
    token_words: list[int] = []
    token_nodes: list[int] = []
    lengths: list[int] = []
    for tree in progress(trees, desc="flattening", total=total, unit="tree"):
        n_tokens = len(token_words)
        stack = [(tree, -1, 0)]
        while stack:
            node, parent_id, node_depth = stack.pop()
            me = len(labels)
            try:
                labels.append(index[node.label])
            except KeyError:
                raise ValueError(_fit_error(f"label '{node.label}' is not a symbol")) from None
            parents.append(parent_id)
            depths.append(node_depth)
            if node.word is not None:
                token_words.append(word_index.setdefault(node.word, len(word_index)))
                token_nodes.append(me)
            elif len(node.children) > 2:
                raise ValueError(_fit_error(f"node '{node.label}' has more than two children"))
            else:
                stack.extend((child, me, node_depth + 1) for child in reversed(node.children))
        lengths.append(len(token_words) - n_tokens)
    symbol = np.array(labels, dtype=np.int32)
    parent = np.array(parents, dtype=np.int64)
    depth = np.array(depths, dtype=np.int32)
    n_nodes = len(symbol)
    token_offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])

    is_root = parent < 0
    tree = (np.cumsum(is_root) - 1).astype(np.int32)
    has_parent = np.flatnonzero(~is_root)
    n_children = np.bincount(parent[has_parent], minlength=n_nodes)
    # In pre-order a node's first child comes right after it.
    is_first = parent[has_parent] == has_parent - 1
    position = np.full(n_nodes, -1, dtype=np.int8)
    position[has_parent] = np.where(
        is_first, np.where(n_children[parent[has_parent]] == 1, ONLY, LEFT), RIGHT
    )
    left = np.full(n_nodes, -1, dtype=np.int64)
    right = np.full(n_nodes, -1, dtype=np.int64)
    left[parent[has_parent[is_first]]] = has_parent[is_first]
    right[parent[has_parent[~is_first]]] = has_parent[~is_first]

    # Subtree sizes, deepest level first; a subtree is the pre-order range [i, i + size).
    size = np.ones(n_nodes, dtype=np.int64)
    by_depth = np.argsort(depth, kind="stable")
    level_starts = np.searchsorted(depth[by_depth], np.arange(depth.max(initial=0) + 2))
    for level in range(len(level_starts) - 2, 0, -1):
        nodes = by_depth[level_starts[level] : level_starts[level + 1]]
        np.add.at(size, parent[nodes], size[nodes])
    is_token = np.zeros(n_nodes, dtype=bool)
    is_token[token_nodes] = True
    if np.intersect1d(symbol[is_token], symbol[~is_token]).size:
        raise ValueError(_fit_error("a preterminal label is used for phrases"))
    tokens_before = np.concatenate([[0], np.cumsum(is_token, dtype=np.int64)])
    first_token = token_offsets[tree]
    start = (tokens_before[:-1] - first_token).astype(np.int32)
    end = (tokens_before[np.arange(n_nodes) + size] - first_token).astype(np.int32)
    return TreebankNodes(
        symbols=symbols,
        symbol=symbol,
        parent=parent,
        left=left,
        right=right,
        position=position,
        tree=tree,
        start=start,
        end=end,
        token_offsets=token_offsets,
        token_word=np.array(token_words, dtype=np.int32),
        token_node=np.array(token_nodes, dtype=np.int64),
        words=tuple(word_index),
    )


def node_rules(
    nodes: TreebankNodes, binary_rules: np.ndarray, unary_rules: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The rule of every node as a row of the grammar's rule arrays.

    nodes (TreebankNodes): the treebank.
    binary_rules (np.ndarray): int32[R2, 3] (parent, left, right), sorted (``RuleCounts``).
    unary_rules (np.ndarray): int32[R1, 2] (parent, child), sorted.
    RETURNS (tuple[np.ndarray, np.ndarray]): int64[N] binary rule ids (-1 for other
        nodes) and int64[N] unary rule ids (-1 for other nodes; TOP nodes have one).
    RAISES ValueError: a node whose rule is not in the arrays.
    """
    n_symbols = len(nodes.symbols)
    binary = np.full(len(nodes), -1, dtype=np.int64)
    unary = np.full(len(nodes), -1, dtype=np.int64)
    for ids, rules, mask in (
        (binary, binary_rules, nodes.is_binary),
        (unary, unary_rules, nodes.is_unary),
    ):
        at = np.flatnonzero(mask)
        children = [nodes.left[at], nodes.right[at]][: rules.shape[1] - 1]
        found = _find_rows(
            [rules[:, k] for k in range(rules.shape[1])],
            [nodes.symbol[at], *(nodes.symbol[child] for child in children)],
            n_symbols,
        )
        if (found < 0).any():
            raise ValueError(_fit_error("a node's rule is missing from the rule arrays"))
        ids[at] = found
    return binary, unary


def _find_rows(table: list[np.ndarray], queries: list[np.ndarray], radix: int) -> np.ndarray:
    """int64: the row of each query tuple in a table sorted by its columns, or -1."""
    table_key = np.zeros(len(table[0]), dtype=np.int64)
    query_key = np.zeros(len(queries[0]), dtype=np.int64)
    for column, query in zip(table, queries):
        table_key = table_key * radix + column
        query_key = query_key * radix + query
    rows = np.searchsorted(table_key, query_key)
    rows = np.minimum(rows, max(len(table_key) - 1, 0))
    hit = len(table_key) > 0 and (table_key[rows] == query_key)
    return np.where(hit, rows, -1)


def _fit_error(detail: str) -> str:
    return Errors.E029.format(what="features", detail=detail)
