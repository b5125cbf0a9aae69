"""A function labeller: function tags (SBJ, TMP, LOC...) put on a parser's brackets.

Le Roux et al. (2013, section 5.4) find that labelling function tags after
parsing beats the labels a grammar produces. ``FunctionLabeller`` learns, from
the treebank, the function tags of each phrase from features of the phrase,
its head, its parent and siblings (a logistic regression, scikit-learn), and
``label`` puts them on the phrases of any parse: trees without function tags
(a grammar that strips them) or with them (they are replaced).

Features of a phrase: its category; its parent's and grandparent's; the
categories of its left and right siblings and its position among them; the tag
and lower-cased word of its head (head rules of the label scheme); its first
and last tags; the tags of the words before and after it; its length (bucketed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..defaults import LEXICON
from ..trees.heads import find_head
from ..trees.labels import get_scheme
from ..trees.transforms import default_head_rules
from ..trees.tree import ROOT_LABEL, Tree
from .base import BaseEstimator, check_is_fitted, check_number

NONE = ""  # the class of phrases without function tags


class FunctionLabeller(BaseEstimator):
    """Function tags for the phrases of parses, learned from a treebank.

    scheme (str): the label scheme ("penn", "floresta", "cess").
    language (str): the treebank's language (head rules: Collins' for English).
    C (float): inverse regularisation strength of the logistic regression.
    max_iter (int): iterations of its solver.
    min_count (int): features seen fewer times in training are dropped.

    Fitted attributes: ``classes_`` (the function-tag combinations, "" for none),
    ``vectorizer_`` and ``model_`` (scikit-learn DictVectorizer and
    LogisticRegression).
    """

    scheme: str
    language: str
    C: float
    max_iter: int
    min_count: int

    def __init__(
        self,
        *,
        scheme: str = "penn",
        language: str = LEXICON.language,
        C: float = 1.0,
        max_iter: int = 300,
        min_count: int = 2,
    ):
        self._store_params(locals())

    def fit(self, trees: Iterable[Tree]) -> FunctionLabeller:
        """Learn from treebank trees (with their function tags). RETURNS: self."""
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression

        check_number(self, "C", "a number > 0", low=1e-12)
        check_number(self, "max_iter", "an int >= 1", low=1, integer=True)
        check_number(self, "min_count", "an int >= 1", low=1, integer=True)
        scheme = get_scheme(self.scheme)
        features, targets = [], []
        for tree in trees:
            for node, feats in _phrase_features(tree, scheme, self._rules()):
                features.append(feats)
                targets.append("-".join(scheme.functions(node.label)))
        counts: dict[str, int] = {}
        for feats in features:
            for key in feats:
                counts[key] = counts.get(key, 0) + 1
        kept = [
            {k: v for k, v in feats.items() if counts[k] >= self.min_count} for feats in features
        ]
        self.vectorizer_ = DictVectorizer()
        matrix = self.vectorizer_.fit_transform(kept)
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter)
        self.model_.fit(matrix, np.array(targets))
        self.classes_ = tuple(self.model_.classes_.tolist())
        return self

    def label(self, trees: Sequence[Tree]) -> list[Tree]:
        """``trees`` with the predicted function tags on every phrase (below TOP)."""
        check_is_fitted(self, ["model_"])
        scheme = get_scheme(self.scheme)
        nodes = [list(_phrase_features(tree, scheme, self._rules())) for tree in trees]
        flat = [feats for found in nodes for _, feats in found]
        predicted = iter(
            self.model_.predict(self.vectorizer_.transform(flat)).tolist() if flat else []
        )
        labelled = []
        for tree, found in zip(trees, nodes):
            tags = {id(node): next(predicted) for node, _ in found}
            labelled.append(_relabel(tree, tags, scheme))
        return labelled

    def _rules(self) -> str:
        return default_head_rules(self.scheme, self.language)


def _phrase_features(tree: Tree, scheme, rules: str) -> Iterable[tuple[Tree, dict[str, Any]]]:
    """(phrase, its features) for every phrase below TOP, in pre-order."""
    tags = tree.tags()
    words = tree.words()

    def visit(node: Tree, start: int, parent: Tree | None, grandparent: Tree | None):
        end = start + len(node.words())
        if not node.is_preterminal and node.label != ROOT_LABEL:
            yield node, _features(node, start, end, parent, grandparent, tags, words, scheme, rules)
        position = start
        for child in node.children:
            yield from visit(child, position, node, parent)
            position += len(child.words())

    yield from visit(tree, 0, None, None)


def _features(node, start, end, parent, grandparent, tags, words, scheme, rules) -> dict[str, Any]:
    category = scheme.category(node.label)
    feats: dict[str, Any] = {"cat=" + category: 1}
    parent_category = scheme.category(parent.label) if parent is not None else "<none>"
    feats["parent=" + parent_category] = 1
    feats["cat,parent=" + category + "," + parent_category] = 1
    if grandparent is not None:
        feats["grandparent=" + scheme.category(grandparent.label)] = 1
    if parent is not None:
        siblings = parent.children
        index = next(i for i, child in enumerate(siblings) if child is node)
        left = scheme.category(siblings[index - 1].label) if index > 0 else "<start>"
        right = scheme.category(siblings[index + 1].label) if index + 1 < len(siblings) else "<end>"
        feats["left=" + left] = 1
        feats["right=" + right] = 1
        feats["cat,left,right=" + ",".join((category, left, right))] = 1
        head_of_parent = find_head([child.label for child in siblings], parent.label, scheme, rules)
        feats["is_head=" + str(index == head_of_parent)] = 1
    head = node
    while not head.is_preterminal:
        children = head.children
        head = children[find_head([c.label for c in children], head.label, scheme, rules)]
    feats["head_tag=" + head.label] = 1
    feats["head_word=" + (head.word or "").lower()] = 1
    feats["cat,head_tag=" + category + "," + head.label] = 1
    feats["first=" + tags[start]] = 1
    feats["last=" + tags[end - 1]] = 1
    feats["before=" + (tags[start - 1] if start > 0 else "<s>")] = 1
    feats["after=" + (tags[end] if end < len(tags) else "</s>")] = 1
    feats["before_word=" + (words[start - 1].lower() if start > 0 else "<s>")] = 1
    length = end - start
    feats["length=" + str(length if length < 5 else 5 if length < 10 else 10)] = 1
    return feats


def _relabel(tree: Tree, tags: dict[int, str], scheme) -> Tree:
    if tree.is_preterminal:
        return tree
    children = tuple(_relabel(child, tags, scheme) for child in tree.children)
    if id(tree) not in tags:
        return tree.with_children(children)
    functions = tuple(tags[id(tree)].split("-")) if tags[id(tree)] else ()
    return Tree(scheme.join(scheme.category(tree.label), functions), children)
