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

from array import array
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
from .base import BaseEstimator, Number, check_is_fitted, validate_params


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

    _parameter_constraints = {
        "C": [Number("a number > 0", low=1e-12)],
        "max_iter": [Number("an int >= 1", low=1, integer=True)],
        "min_count": [Number("an int >= 1", low=1, integer=True)],
    }

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

        validate_params(self)
        scheme = get_scheme(self.scheme)
        rules = default_head_rules(self.scheme, self.language)
        phrases = _PhraseTable()
        for tree in trees:
            for node, feats in phrase_features(tree, scheme, rules):
                phrases.add(feats, scheme.functions(node.label))
        classes = sorted(phrases.targets)
        if len(classes) < 2:
            found = "no phrases" if not classes else f"only the function tags {classes[0]}"
            detail = f"the training trees have {found}; it needs at least two combinations"
            raise ValueError(Errors.E029.format(what="function labeller", detail=detail))
        names, matrix = phrases.matrix(self.min_count)
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter)
        # One BLAS thread: L-BFGS's vector operations gain nothing from threads, and
        # on a busy machine they made the fit 9 times slower (ptb_sample, 600 trees:
        # 19.7 s against 2.1 s on 2 shared cores); the fit is also reproducible then.
        with threadpool_limits(limits=1, user_api="blas"):
            self.model_.fit(matrix, phrases.classes(classes))
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


class _PhraseTable:
    """The phrases' features and function tags as numbers while they are read: lists
    of feature strings per phrase took several times the memory of the matrix (BENCHMARKS.md
    "model_memory"). ``matrix`` gives what ``FunctionTagger.vectorize`` makes of the
    features with the tagger's columns (every name seen ``min_count`` times, in name
    order, as scikit-learn's DictVectorizer), the same at fit and label time."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}  # feature name -> id, in order of appearance
        self.targets: dict[tuple[str, ...], int] = {}
        self.ids = array("q")  # the feature ids of every phrase, one after another
        self.lengths = array("q")
        self.target_ids = array("q")

    def add(self, features: list[str], functions: tuple[str, ...]) -> None:
        names = self.names
        self.ids.extend([names.setdefault(name, len(names)) for name in features])
        self.lengths.append(len(features))
        self.target_ids.append(self.targets.setdefault(functions, len(self.targets)))

    def classes(self, classes: list[tuple[str, ...]]) -> np.ndarray:
        """int64: each phrase's index in ``classes``."""
        number = {functions: i for i, functions in enumerate(classes)}
        order = np.array([number[functions] for functions in self.targets], dtype=np.int64)
        return order[np.frombuffer(self.target_ids, dtype=np.int64)]

    def matrix(self, min_count: int):
        """(the feature names kept, sorted; the phrases' CSR matrix over them)."""
        from scipy import sparse

        ids = np.frombuffer(self.ids, dtype=np.int64)
        counts = np.bincount(ids, minlength=len(self.names))
        kept = sorted(name for name, i in self.names.items() if counts[i] >= min_count)
        column = np.full(len(self.names), -1, dtype=np.int64)
        column[[self.names[name] for name in kept]] = np.arange(len(kept))
        lengths = np.frombuffer(self.lengths, dtype=np.int64)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        columns = column[ids]
        known = columns >= 0
        # each row's distinct columns, increasing: unique (row, column) keys
        keys = np.unique(rows[known] * max(len(kept), 1) + columns[known])
        key_rows, indices = np.divmod(keys, max(len(kept), 1))
        indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.bincount(key_rows, minlength=len(lengths)), out=indptr[1:])
        data = np.ones(len(indices))
        shape = (len(lengths), len(kept))
        return kept, sparse.csr_matrix((data, indices.astype(np.int64), indptr), shape=shape)


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
    tagger = fit_function_tagger(trees, model.label_scheme, model.language, **params)
    return model.with_function_labeller(tagger, function_labels)


def fit_function_tagger(
    trees: Iterable[Tree], scheme: str, language: str, **params: Any
) -> FunctionTagger:
    """The fitted tagger of a ``FunctionLabeller`` for models of ``scheme`` and
    ``language`` (``ParsingModel.with_function_labeller`` attaches it).

    params: ``FunctionLabeller`` parameters (C, max_iter, min_count).
    """
    return FunctionLabeller(scheme=scheme, language=language, **params).fit(trees).tagger_
