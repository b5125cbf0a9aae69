"""A function labeller: function tags (SBJ, TMP, LOC...) put on a parser's brackets.

Le Roux et al. (2013, section 5.4) find that labelling function tags after
parsing beats the labels a grammar produces. ``FunctionLabeller`` learns, from
the treebank, the function tags of each phrase from features of the phrase,
its head, its parent and siblings (a logistic regression, scikit-learn), and
``label`` puts them on the phrases of any parse: trees without function tags
(a grammar that strips them) or with them (they are replaced).

What it learns is a ``grammar.function_labels.FunctionTagger`` (``tagger_``;
the features are listed there), which a ``ParsingModel`` saves and the parser
applies to every parse: ``attach_function_labeller`` fits one for a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..defaults import FUNCTION_LABELLER, FUNCTION_LABELS, LEXICON
from ..errors import Errors
from ..grammar.function_labels import FunctionTagger, phrase_features
from ..grammar.model import ParsingModel
from ..trees.labels import get_scheme
from ..trees.transforms import default_head_rules
from ..trees.tree import ROOT_LABEL, Tree
from .base import BaseEstimator, check_is_fitted, check_number


class FunctionLabeller(BaseEstimator):
    """Function tags for the phrases of parses, learned from a treebank.

    scheme (str): the label scheme ("penn", "floresta", "cess").
    language (str): the treebank's language (head rules: Collins' for English).
    C (float): inverse regularisation strength of the logistic regression.
    max_iter (int): iterations of its solver.
    min_count (int): features seen fewer times in training are dropped.

    Fitted attributes: ``tagger_`` (the ``FunctionTagger``: features, classes and
    coefficients), ``classes_`` (its function-tag combinations, () for none) and
    ``model_`` (the scikit-learn LogisticRegression).
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
        C: float = FUNCTION_LABELLER.C,
        max_iter: int = FUNCTION_LABELLER.max_iter,
        min_count: int = FUNCTION_LABELLER.min_count,
    ):
        self._store_params(locals())

    def fit(self, trees: Iterable[Tree]) -> FunctionLabeller:
        """Learn from treebank trees (with their function tags). RETURNS: self.

        RAISES ValueError: bad parameters, or trees with fewer than two function-tag
            combinations (none at all: a treebank without function tags).
        """
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_limits

        check_number(self, "C", "a number > 0", low=1e-12)
        check_number(self, "max_iter", "an int >= 1", low=1, integer=True)
        check_number(self, "min_count", "an int >= 1", low=1, integer=True)
        scheme = get_scheme(self.scheme)
        rules = default_head_rules(self.scheme, self.language)
        features, targets = [], []
        for tree in trees:
            for node, feats in phrase_features(tree, scheme, rules):
                features.append(feats)
                targets.append(scheme.functions(node.label))
        classes = sorted(set(targets))
        if len(classes) < 2:
            found = "no phrases" if not classes else f"only the function tags {classes[0]}"
            detail = f"the training trees have {found}; it needs at least two combinations"
            raise ValueError(Errors.E206.format(what="function labeller", detail=detail))
        counts: dict[str, int] = {}
        for feats in features:
            for name in feats:
                counts[name] = counts.get(name, 0) + 1
        names = sorted(name for name, count in counts.items() if count >= self.min_count)
        rows = 1 if len(classes) == 2 else len(classes)
        # The tagger's own vectorizer makes the training matrix: columns in name order
        # (as scikit-learn's DictVectorizer), the same at fit and label time.
        blank = FunctionTagger(
            self.scheme, rules, names, classes, np.zeros((rows, len(names))), np.zeros(rows)
        )
        number = {functions: i for i, functions in enumerate(classes)}
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter)
        # One BLAS thread: L-BFGS's vector operations gain nothing from threads, and
        # on a busy machine they made the fit 9 times slower (ptb_sample, 600 trees:
        # 19.7 s against 2.1 s on 2 shared cores); the fit is also reproducible then.
        with threadpool_limits(limits=1, user_api="blas"):
            self.model_.fit(blank.vectorize(features), np.array([number[t] for t in targets]))
        self.tagger_ = FunctionTagger(
            self.scheme,
            rules,
            names,
            classes,
            np.ascontiguousarray(self.model_.coef_, dtype=np.float64),
            np.ascontiguousarray(self.model_.intercept_, dtype=np.float64),
            params={"C": self.C, "max_iter": self.max_iter, "min_count": self.min_count},
        )
        self.classes_ = self.tagger_.classes
        return self

    def label(self, trees: Sequence[Tree]) -> list[Tree]:
        """``trees`` with the predicted function tags on every phrase (below TOP)."""
        check_is_fitted(self, ["tagger_"])
        return self.tagger_.label(trees)


def has_function_tags(trees: Iterable[Tree], scheme: str) -> bool:
    """Whether the phrases of ``trees`` carry at least two combinations of function tags
    (none counts as one): what a function labeller needs to learn anything."""
    labels = get_scheme(scheme)
    seen: set[tuple[str, ...]] = set()
    for tree in trees:
        for node in tree.subtrees():
            if node.children and node.label != ROOT_LABEL:
                seen.add(labels.functions(node.label))
                if len(seen) > 1:
                    return True
    return False


def attach_function_labeller(
    model: ParsingModel,
    trees: Iterable[Tree],
    *,
    function_labels: str = FUNCTION_LABELS,
    **params: Any,
) -> ParsingModel:
    """``model`` with a function labeller fitted on ``trees`` (the treebank trees, with
    their function tags: the grammar's training trees).

    function_labels (str): whose tags win when the grammar keeps function tags too,
        "grammar" or "labeller" (``ParsingModel``); a grammar that strips them always
        gets the labeller's.
    params: ``FunctionLabeller`` parameters (C, max_iter, min_count); the label
        scheme and language are the model's.
    RETURNS (ParsingModel): a new model (grammars shared, not copied).
    RAISES ValueError: bad parameters, or trees without function tags.
    """
    labeller = FunctionLabeller(scheme=model.label_scheme, language=model.language, **params)
    return model.with_function_labeller(labeller.fit(trees).tagger_, function_labels)
