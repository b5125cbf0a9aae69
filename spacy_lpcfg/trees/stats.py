"""Treebank statistics, with the definitions of the treebanks' README.

* tokens: overt terminals (preterminals other than ``-NONE-``); vocabulary:
  their distinct strings, case-sensitive.
* POS tags: distinct preterminal labels; for Floresta, whose words carry a
  function like phrases (``H+n``), the word class after the last ``+``, as
  written.
* Phrasal nodes: nodes that dominate another node, except preterminals and the
  ``TOP`` root. Their labels are counted with indices removed ("with function",
  ``NP-SBJ-1`` -> ``NP-SBJ``; Floresta also drops discontinuity markers) and as
  bare categories ("without function"); function tags are counted one by one
  (``NP-SBJ-PRN`` counts ``SBJ`` and ``PRN``). The label scheme defines the
  parts (``trees.labels``).
* Empty elements are counted only in trees that still hold them (read with
  ``NormalizeOptions(remove_empty=False)``); such trees are normalised before
  everything else is counted, so the other numbers do not change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .labels import LabelScheme, get_scheme
from .normalize import NormalizeOptions, normalize
from .tree import EMPTY_TAG, Tree

TOP_CATEGORIES = 10
_REMOVE_EMPTY_ONLY = NormalizeOptions(remove_empty=True, strip_indices=False, keep_functions=True)


def treebank_stats(trees: Iterable[Tree], scheme: str | LabelScheme) -> dict:
    """Count the statistics of ``TOP``-rooted trees labelled in ``scheme``'s notation.

    trees (Iterable[Tree]): the trees, normalised or not.
    scheme (str | LabelScheme): their label scheme (``"penn"``, ``"floresta"``, ``"cess"``).
    RETURNS (dict): ``trees``, ``tokens``, ``vocabulary``, ``pos_tags``,
        ``categories_with_function``, ``categories_without_function``,
        ``phrasal_nodes``, ``phrasal_nodes_with_function``, ``distinct_function_tags``,
        ``empty_elements``, ``average_length``, ``max_length``, ``length_one_trees``,
        ``function_tags`` (tag -> count) and ``top_categories`` (the most frequent
        bare categories -> count).
    """
    scheme = get_scheme(scheme)
    words: set[str] = set()
    tags: Counter[str] = Counter()
    phrase_labels: Counter[str] = Counter()
    lengths: Counter[int] = Counter()
    empty_elements = 0
    for tree in trees:
        counts = _count_nodes(tree)
        if counts[3]:
            empty_elements += counts[3]
            kept = normalize(tree, scheme, _REMOVE_EMPTY_ONLY)
            counts = _count_nodes(kept) if kept is not None else ([], [], [], 0)
        tree_words, tree_tags, tree_phrases, _ = counts
        words.update(tree_words)
        tags.update(tree_tags)
        phrase_labels.update(tree_phrases)
        lengths[len(tree_words)] += 1
    return _summarise(scheme, words, tags, phrase_labels, lengths, empty_elements)


def _count_nodes(tree: Tree) -> tuple[list[str], list[str], list[str], int]:
    """Words, POS tags and phrase labels below the root, and the number of empty elements."""
    words: list[str] = []
    tags: list[str] = []
    phrases: list[str] = []
    empties = 0
    stack = list(tree.children)
    while stack:
        node = stack.pop()
        if node.word is not None:
            if node.label == EMPTY_TAG:
                empties += 1
            else:
                words.append(node.word)
                tags.append(node.label)
        else:
            phrases.append(node.label)
            stack.extend(node.children)
    return words, tags, phrases, empties


def _summarise(scheme, words, tags, phrase_labels, lengths, empty_elements) -> dict:
    with_function: set[str] = set()
    categories: Counter[str] = Counter()
    function_tags: Counter[str] = Counter()
    nodes_with_function = 0
    for label, count in phrase_labels.items():
        parsed = scheme.split(label)
        with_function.add(scheme.join(parsed.category, parsed.functions))
        categories[parsed.category] += count
        if parsed.functions:
            nodes_with_function += count
            for function in parsed.functions:
                function_tags[function] += count
    n_trees = sum(lengths.values())
    n_tokens = sum(length * count for length, count in lengths.items())
    return {
        "trees": n_trees,
        "tokens": n_tokens,
        "vocabulary": len(words),
        "pos_tags": len({_pos_tag(tag, scheme) for tag in tags}),
        "categories_with_function": len(with_function),
        "categories_without_function": len(categories),
        "phrasal_nodes": sum(phrase_labels.values()),
        "phrasal_nodes_with_function": nodes_with_function,
        "distinct_function_tags": len(function_tags),
        "empty_elements": empty_elements,
        "average_length": n_tokens / n_trees if n_trees else 0.0,
        "max_length": max(lengths, default=0),
        "length_one_trees": lengths[1],
        "function_tags": dict(function_tags.most_common()),
        "top_categories": dict(categories.most_common(TOP_CATEGORIES)),
    }


def _pos_tag(label: str, scheme: LabelScheme) -> str:
    # Floresta words are labelled FUNCTION+class like phrases; the POS tag is the class.
    return label.rpartition("+")[2] if scheme.name == "floresta" else label
