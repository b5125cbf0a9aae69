"""Inside and outside features of every node of a transformed treebank.

The spectral and clustering estimators (DESIGN.md 6.1-6.3) describe each node
of the training trees by sparse indicator features of its *inside tree* (the
subtree below it) and of its *outside tree* (everything else), after Cohen et
al. (2013). Everything is computed over flat arrays: one Python pass lays the
transformed trees out as nodes (``flatten``), and every template is then a
few numpy operations over all nodes at once.

Templates (the node's own symbol ``a`` is implicit: the estimators use the
features of one symbol at a time). A node's *rule key* is its rule (binary or
unary rule id), or for a preterminal its tag with the word class.

inside, phrases:
    ``rule`` (its rule), ``rule+left`` / ``rule+right`` (with the rule key of
    the left / right child), ``rule+children`` (with both), ``first_tag``,
    ``last_tag`` and ``first_word`` / ``last_word`` (word classes) of its
    span, ``length`` (binned span length);
inside, preterminals:
    ``word`` (word class), ``lower`` (lowercased word, if frequent),
    ``shape`` (``signatures.word_shape``), ``suffix2``, ``suffix3``;
outside, every node below TOP:
    ``parent`` (parent rule and the node's position under it),
    ``grandparent`` (that and the parent's rule key and position),
    ``sibling`` (position and the sibling's rule key), ``left_tag`` /
    ``right_tag`` and ``left_word`` / ``right_word`` (the tokens just outside
    the span, or sentence boundaries), ``left_distance`` /
    ``right_distance`` (binned distances to the sentence edges),
    ``tags_around`` (the left and right tags together).

A *word class* is the word itself when it occurs at least
``word_threshold`` times in the training data, else its shape.
Feature columns are numbered template by template, so a column's template
is ``templates[np.searchsorted(template_offsets, column, side="right") - 1]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from ..errors import Errors
from ..grammar import SymbolTable
from ..grammar.signatures import word_shape
from ..grammar.symbols import PRETERMINAL, ROOT
from ..trees.tree import Tree

if TYPE_CHECKING:  # scipy is imported where it is used: importing stays cheap
    from scipy import sparse

LEFT, RIGHT, ONLY = 0, 1, 2  # a node's position under its parent
LENGTH_BINS = np.array([1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40])  # bin k: >= bins[k]
DISTANCE_BINS = np.array([0, 1, 2, 3, 5, 8, 12, 20, 30])
INSIDE_TEMPLATES = (
    "rule",
    "rule+left",
    "rule+right",
    "rule+children",
    "first_tag",
    "last_tag",
    "first_word",
    "last_word",
    "length",
    "word",
    "lower",
    "shape",
    "suffix2",
    "suffix3",
)
OUTSIDE_TEMPLATES = (
    "parent",
    "grandparent",
    "sibling",
    "left_tag",
    "right_tag",
    "left_word",
    "right_word",
    "left_distance",
    "right_distance",
    "tags_around",
)


@dataclass(frozen=True)
class TreebankNodes:
    """The nodes of transformed trees as flat arrays: tree by tree, each in pre-order.

    symbols (SymbolTable): the grammar's symbols; ``symbol`` indexes them.
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

    symbols: SymbolTable
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
        """bool[N]."""
        return self.symbols.kind_codes[self.symbol] == PRETERMINAL

    @property
    def is_root(self) -> np.ndarray:
        """bool[N]: the TOP nodes (one per tree)."""
        return self.symbols.kind_codes[self.symbol] == ROOT

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
    trees: Iterable[Tree], symbols: SymbolTable, *, total: int | None = None
) -> TreebankNodes:
    """Lay out transformed trees (binary, rooted at TOP) as flat node arrays.

    The only Python loop over nodes in feature extraction: it records each
    node's symbol, parent and depth (and each token's word); children, spans
    and positions are derived with numpy.

    trees (Iterable[Tree]): transformed trees, e.g. ``TransformPipeline.apply``'s.
    symbols (SymbolTable): a table with every label of the trees (``count_rules``').
    total (int | None): number of trees, for the progress bar.
    RETURNS (TreebankNodes): the nodes.
    RAISES ValueError: an unknown label or a node with more than two children.
    """
    index = {name: i for i, name in enumerate(symbols.names)}
    word_index: dict[str, int] = {}
    labels: list[int] = []
    parents: list[int] = []
    depths: list[int] = []
    token_words: list[int] = []
    lengths: list[int] = []
    for tree in tqdm(trees, desc="Flattening", total=total, unit="tree", disable=None, leave=False):
        n_tokens = len(token_words)
        stack = [(tree, -1, 0)]
        while stack:
            node, parent, depth = stack.pop()
            me = len(labels)
            try:
                labels.append(index[node.label])
            except KeyError:
                raise ValueError(_fit_error(f"label '{node.label}' is not a symbol")) from None
            parents.append(parent)
            depths.append(depth)
            if node.word is not None:
                token_words.append(word_index.setdefault(node.word, len(word_index)))
            elif len(node.children) > 2:
                raise ValueError(_fit_error(f"node '{node.label}' has more than two children"))
            else:
                stack.extend((child, me, depth + 1) for child in reversed(node.children))
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
    is_token = symbols.kind_codes[symbol] == PRETERMINAL
    tokens_before = np.concatenate([[0], np.cumsum(is_token, dtype=np.int64)])
    first_token = token_offsets[tree]
    start = (tokens_before[:-1] - first_token).astype(np.int32)
    end = (tokens_before[np.arange(n_nodes) + size] - first_token).astype(np.int32)
    if len(token_words) != int(is_token.sum()):
        raise ValueError(_fit_error("a preterminal label is used for phrases"))
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
        token_node=np.flatnonzero(is_token),
        words=tuple(word_index),
    )


@dataclass(frozen=True)
class NodeFeatures:
    """Sparse inside and outside indicator features of every node.

    inside (sparse.csr_matrix): float64 (N, D_inside), 1.0 where a feature fires.
    outside (sparse.csr_matrix): float64 (N, D_outside).
    inside_templates, outside_templates (tuple[str, ...]): the templates used.
    inside_offsets, outside_offsets (np.ndarray): int64[n_templates + 1], the
        columns of template k are ``offsets[k]:offsets[k + 1]``.
    """

    inside: sparse.csr_matrix
    outside: sparse.csr_matrix
    inside_templates: tuple[str, ...]
    outside_templates: tuple[str, ...]
    inside_offsets: np.ndarray
    outside_offsets: np.ndarray


def node_features(
    nodes: TreebankNodes,
    rule_key: np.ndarray,
    *,
    word_threshold: int = 5,
    inside_templates: Iterable[str] = INSIDE_TEMPLATES,
    outside_templates: Iterable[str] = OUTSIDE_TEMPLATES,
) -> NodeFeatures:
    """Indicator features of the inside and outside trees of every node.

    nodes (TreebankNodes): the treebank.
    rule_key (np.ndarray): int64[N], non-negative ids of each phrase's rule (binary
        and unary rules numbered apart); preterminals' entries are ignored.
    word_threshold (int): words seen at least this often are their own word class.
    inside_templates, outside_templates (Iterable[str]): the templates to use (module docstring).
    RETURNS (NodeFeatures): TOP nodes have no features.
    """
    inside_templates = _check_templates(inside_templates, INSIDE_TEMPLATES)
    outside_templates = _check_templates(outside_templates, OUTSIDE_TEMPLATES)
    words = _WordClasses(nodes, word_threshold)
    keys = _rule_keys(nodes, rule_key, words.token_class)
    inside = _inside_keys(nodes, keys, words, inside_templates)
    outside = _outside_keys(nodes, keys, words, outside_templates)
    inside_matrix, inside_offsets = _indicator_matrix(len(nodes), inside)
    outside_matrix, outside_offsets = _indicator_matrix(len(nodes), outside)
    return NodeFeatures(
        inside_matrix,
        outside_matrix,
        inside_templates,
        outside_templates,
        inside_offsets,
        outside_offsets,
    )


class _WordClasses:
    """Word classes and spelling features of the tokens (ids >= 0)."""

    def __init__(self, nodes: TreebankNodes, threshold: int):
        words = nodes.words
        counts = np.bincount(nodes.token_word, minlength=len(words))
        frequent = counts >= threshold
        initial = np.zeros(len(nodes.token_word), dtype=bool)
        initial[nodes.token_offsets[:-1][np.diff(nodes.token_offsets) > 0]] = True
        # shapes depend on the position only through sentence-initial capitals
        shape_names: dict[str, int] = {}
        shape_of = np.array(
            [
                [shape_names.setdefault(word_shape(w, p), len(shape_names)) for p in (1, 0)]
                for w in words
            ],
            dtype=np.int64,
        ).reshape(len(words), 2)
        token_shape = shape_of[nodes.token_word, initial.astype(np.int64)]
        self.token_shape = token_shape
        self.token_class = np.where(
            frequent[nodes.token_word], nodes.token_word, len(words) + token_shape
        )
        lowered = _factorize([w.lower() for w in words])
        lower_counts = np.bincount(lowered, weights=counts)
        self.token_lower = np.where(lower_counts[lowered] >= threshold, lowered, -1)[
            nodes.token_word
        ]
        self.token_suffix2 = _factorize([w[-2:].lower() for w in words])[nodes.token_word]
        self.token_suffix3 = _factorize([w[-3:].lower() for w in words])[nodes.token_word]


def _rule_keys(nodes: TreebankNodes, rule_key: np.ndarray, token_class: np.ndarray) -> np.ndarray:
    """int64[N]: each node's rule key, preterminals as (tag, word class) after the rules."""
    keys = np.asarray(rule_key, dtype=np.int64).copy()
    tokens = nodes.token_node
    lexical = _combine(nodes.symbol[tokens], token_class)
    keys[tokens] = keys[~nodes.is_preterminal].max(initial=-1) + 1 + lexical
    return keys


def _inside_keys(
    nodes: TreebankNodes, keys: np.ndarray, words: _WordClasses, templates: tuple[str, ...]
) -> list[np.ndarray]:
    n = len(nodes)
    phrase = ~nodes.is_preterminal & ~nodes.is_root
    token_of_node = np.full(n, -1, dtype=np.int64)
    token_of_node[nodes.token_node] = np.arange(len(nodes.token_node))
    first = nodes.token_offsets[nodes.tree] + nodes.start
    last = nodes.token_offsets[nodes.tree] + nodes.end - 1
    tags = nodes.token_tag
    none = np.full(n, -1, dtype=np.int64)

    def for_phrases(values: np.ndarray) -> np.ndarray:
        return np.where(phrase, values, -1)

    def for_tokens(token_values: np.ndarray) -> np.ndarray:
        out = none.copy()
        out[nodes.token_node] = token_values
        return out

    left_key = np.where(nodes.left >= 0, keys[nodes.left], -1)
    right_key = np.where(nodes.right >= 0, keys[nodes.right], n)  # unary: "no right child"
    makers = {
        "rule": lambda: for_phrases(keys),
        "rule+left": lambda: for_phrases(_combine(keys, left_key)),
        "rule+right": lambda: for_phrases(_combine(keys, right_key)),
        "rule+children": lambda: for_phrases(_combine(keys, left_key, right_key)),
        "first_tag": lambda: for_phrases(tags[first]),
        "last_tag": lambda: for_phrases(tags[last]),
        "first_word": lambda: for_phrases(words.token_class[first]),
        "last_word": lambda: for_phrases(words.token_class[last]),
        "length": lambda: for_phrases(_bin(nodes.end - nodes.start, LENGTH_BINS)),
        "word": lambda: for_tokens(words.token_class),
        "lower": lambda: for_tokens(words.token_lower),
        "shape": lambda: for_tokens(words.token_shape),
        "suffix2": lambda: for_tokens(words.token_suffix2),
        "suffix3": lambda: for_tokens(words.token_suffix3),
    }
    return [makers[name]() for name in templates]


def _outside_keys(
    nodes: TreebankNodes, keys: np.ndarray, words: _WordClasses, templates: tuple[str, ...]
) -> list[np.ndarray]:
    n = len(nodes)
    below_top = ~nodes.is_root
    parent = np.where(below_top, nodes.parent, 0)
    position = nodes.position.astype(np.int64)
    parent_key = _combine(keys[parent], position)
    grandparent = nodes.parent[parent]
    # the children of TOP have no grandparent: an id no rule key takes
    grandparent_key = np.where(
        grandparent >= 0, _combine(keys[np.maximum(grandparent, 0)], nodes.position[parent]), -2
    )
    sibling = np.where(position == LEFT, nodes.right[parent], nodes.left[parent])
    sibling_key = np.where((position != ONLY) & below_top, keys[np.maximum(sibling, 0)], -1)
    lengths = nodes.sentence_length
    before = nodes.token_index(np.arange(n), nodes.start.astype(np.int64) - 1)
    after = nodes.token_index(np.arange(n), nodes.end.astype(np.int64))
    n_tags, n_classes = len(nodes.symbols), int(words.token_class.max(initial=0)) + 1
    left_tag = np.where(before >= 0, nodes.token_tag[before], n_tags)  # n_tags: sentence start
    right_tag = np.where(after >= 0, nodes.token_tag[after], n_tags)
    left_word = np.where(before >= 0, words.token_class[before], n_classes)
    right_word = np.where(after >= 0, words.token_class[after], n_classes)

    def below(values: np.ndarray) -> np.ndarray:
        return np.where(below_top, values, -1)

    makers = {
        "parent": lambda: below(parent_key),
        "grandparent": lambda: below(_combine(parent_key, grandparent_key + 2)),
        "sibling": lambda: below(np.where(sibling_key >= 0, _combine(position, sibling_key), -1)),
        "left_tag": lambda: below(left_tag),
        "right_tag": lambda: below(right_tag),
        "left_word": lambda: below(left_word),
        "right_word": lambda: below(right_word),
        "left_distance": lambda: below(_bin(nodes.start, DISTANCE_BINS)),
        "right_distance": lambda: below(_bin(lengths - nodes.end, DISTANCE_BINS)),
        "tags_around": lambda: below(_combine(left_tag, right_tag)),
    }
    return [makers[name]() for name in templates]


def _indicator_matrix(
    n_rows: int, template_keys: list[np.ndarray]
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """CSR (n_rows, D) with a 1 at each (row, feature); columns numbered template by template."""
    from scipy import sparse

    rows, columns, offsets = [], [], [0]
    for keys in template_keys:
        present = np.flatnonzero(keys >= 0)
        values, codes = np.unique(keys[present], return_inverse=True)
        rows.append(present)
        columns.append(offsets[-1] + codes.reshape(-1))
        offsets.append(offsets[-1] + len(values))
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    columns = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)
    order = np.lexsort((columns, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))])
    matrix = sparse.csr_matrix(
        (np.ones(len(order)), columns[order].astype(np.int32), indptr.astype(np.int64)),
        shape=(n_rows, offsets[-1]),
    )
    return matrix, np.array(offsets, dtype=np.int64)


def _combine(*columns: np.ndarray) -> np.ndarray:
    """int64 codes of the rows' tuples of non-negative ids (-1 where any id is negative).

    Codes are mixed-radix numbers, renumbered densely when the next radix
    could overflow, so any number and size of columns works.
    """
    columns = [np.asarray(column, dtype=np.int64) for column in columns]
    missing = np.zeros(len(columns[0]), dtype=bool)
    code = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        missing |= column < 0
        radix = int(column.max(initial=0)) + 1
        if int(code.max(initial=0)) >= (1 << 62) // max(radix, 1):
            code = np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64)
        code = code * radix + np.maximum(column, 0)
    code[missing] = -1
    return code


def _bin(values: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """int64: the index of the last bin edge <= value."""
    return np.searchsorted(bins, values, side="right").astype(np.int64) - 1


def _factorize(values: list[str]) -> np.ndarray:
    """int64 ids of strings (equal strings, equal ids)."""
    ids: dict[str, int] = {}
    return np.array([ids.setdefault(value, len(ids)) for value in values], dtype=np.int64)


def _check_templates(templates: Iterable[str], known: tuple[str, ...]) -> tuple[str, ...]:
    templates = tuple(templates)
    unknown = [name for name in templates if name not in known]
    if unknown or len(set(templates)) != len(templates):
        expected = "distinct templates among " + ", ".join(known)
        raise ValueError(Errors.E012.format(value=templates, name="templates", expected=expected))
    return templates


def _fit_error(detail: str) -> str:
    return Errors.E206.format(what="features", detail=detail)


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
