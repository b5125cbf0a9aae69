"""Inside and outside features of every node of a transformed treebank.

The spectral and clustering estimators (docs/design/architecture.md, 6.1-6.3) describe each node
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

from ..errors import Errors
from ..grammar.signatures import word_shape
from ..progress import progress
from ..trees.nodes import LEFT, ONLY, TreebankNodes

if TYPE_CHECKING:  # scipy is imported where it is used: importing stays cheap
    from scipy import sparse

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
    # whole-treebank numpy steps, no loop: the bar counts the steps
    with progress(desc="features", total=4, unit="step") as bar:
        words = _WordClasses(nodes, word_threshold)
        keys = _rule_keys(nodes, rule_key, words.token_class)
        inside = _inside_keys(nodes, keys, words, inside_templates)
        bar.update()
        outside = _outside_keys(nodes, keys, words, outside_templates)
        bar.update()
        inside_matrix, inside_offsets = _indicator_matrix(len(nodes), inside)
        bar.update()
        outside_matrix, outside_offsets = _indicator_matrix(len(nodes), outside)
        bar.update()
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

    row_parts, column_parts, offsets = [], [], [0]
    for keys in template_keys:
        present = np.flatnonzero(keys >= 0)
        values, codes = np.unique(keys[present], return_inverse=True)
        row_parts.append(present)
        column_parts.append(offsets[-1] + codes.reshape(-1))
        offsets.append(offsets[-1] + len(values))
    rows = np.concatenate(row_parts) if row_parts else np.zeros(0, dtype=np.int64)
    columns = np.concatenate(column_parts) if column_parts else np.zeros(0, dtype=np.int64)
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
    arrays = [np.asarray(column, dtype=np.int64) for column in columns]
    missing = np.zeros(len(arrays[0]), dtype=bool)
    code = np.zeros(len(arrays[0]), dtype=np.int64)
    for column in arrays:
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
        raise ValueError(Errors.E011.format(value=templates, name="templates", expected=expected))
    return templates


def _fit_error(detail: str) -> str:
    return Errors.E029.format(what="features", detail=detail)
