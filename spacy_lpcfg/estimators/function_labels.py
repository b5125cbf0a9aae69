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

from ..defaults import CEILINGS, FUNCTION_LABELLER, FUNCTION_LABELS, LEXICON
from ..errors import Errors
from ..grammar.function_labels import FunctionTagger, phrase_features
from ..grammar.model import ParsingModel
from ..memory import release_freed_memory
from ..trees.labels import get_scheme
from ..trees.transforms import default_head_rules
from ..trees.tree import ROOT_LABEL, Tree
from .base import BaseEstimator, Number, check_is_fitted, int_range, validate_params


class FunctionLabeller(BaseEstimator):
    """Function tags for the phrases of parses, learned from a treebank.

    scheme (str): the label scheme ("penn", "floresta", "cess").
    language (str): the treebank's language (head rules: Collins' for English).
    C (float): inverse regularisation strength of the logistic regression.
    max_iter (int): iterations of its solver.
    min_count (int): features seen fewer times in training are dropped.
    max_parameters (int): at most this many coefficients (classes x (features + 1)):
        the solver's memory grows with them (``defaults.FunctionLabellerDefaults``).
        Rarer features are dropped until the model fits.

    Fitted attributes: ``tagger_`` (the ``FunctionTagger``: features, classes and
    coefficients), ``classes_`` (its function-tag combinations, () for none),
    ``min_count_`` (the count a feature needed: ``min_count`` unless
    ``max_parameters`` raised it) and ``model_`` (the scikit-learn LogisticRegression).
    """

    _parameter_constraints = {
        "C": [Number("a number > 0", low=1e-12)],
        "max_iter": [Number("an int >= 1", low=1, integer=True)],
        "min_count": [Number("an int >= 1", low=1, integer=True)],
        "max_parameters": [int_range(1, CEILINGS.labeller_parameters)],
    }

    scheme: str
    language: str
    C: float
    max_iter: int
    min_count: int
    max_parameters: int

    def __init__(
        self,
        *,
        scheme: str = "penn",
        language: str = LEXICON.language,
        C: float = FUNCTION_LABELLER.C,
        max_iter: int = FUNCTION_LABELLER.max_iter,
        min_count: int = FUNCTION_LABELLER.min_count,
        max_parameters: int = FUNCTION_LABELLER.max_parameters,
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
        most_features = self.max_parameters // len(classes) - 1  # and an intercept each
        if most_features < 1:
            detail = (
                f"max_parameters {self.max_parameters} leaves no feature to its "
                f"{len(classes)} classes (one intercept and at least one feature each)"
            )
            raise ValueError(Errors.E029.format(what="function labeller", detail=detail))
        self.min_count_ = phrases.threshold(self.min_count, most_features)
        names, matrix = phrases.matrix(self.min_count_)
        target = phrases.classes(classes)
        del phrases  # its feature ids: the matrix's size again
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter)
        # One BLAS thread: L-BFGS's vector operations gain nothing from threads, and
        # on a busy machine they made the fit 9 times slower (ptb_sample, 600 trees:
        # 19.7 s against 2.1 s on 2 shared cores); the fit is also reproducible then.
        with threadpool_limits(limits=1, user_api="blas"):
            if len(classes) > 2:
                _fit_multinomial(self.model_, matrix, target, len(classes))
            else:
                self.model_.fit(matrix, target)
        self.tagger_ = FunctionTagger(
            self.scheme,
            rules,
            names,
            classes,
            np.ascontiguousarray(self.model_.coef_, dtype=np.float64),
            np.ascontiguousarray(self.model_.intercept_, dtype=np.float64),
            params={"C": self.C, "max_iter": self.max_iter, "min_count": self.min_count_},
        )
        self.classes_ = self.tagger_.classes
        return self

    def label(self, trees: Sequence[Tree]) -> list[Tree]:
        """``trees`` with the predicted function tags on every phrase (below TOP)."""
        check_is_fitted(self, ["tagger_"])
        return self.tagger_.label(trees)


# Samples per block of ``_BlockedMultinomialLoss``: its arrays of a block's
# predictions and gradients take SAMPLE_BLOCK x classes floats (icepahc: 203 classes,
# 6.6 MB), where scikit-learn's take the whole treebank's phrases (600 000: 1 GB each).
SAMPLE_BLOCK = 4096


def _fit_multinomial(
    model: Any, X: Any, y: np.ndarray, n_classes: int, block: int = SAMPLE_BLOCK
) -> None:
    """Fit the LogisticRegression ``model`` (lbfgs, L2, an intercept; not fitted) on the
    CSR matrix ``X`` and the classes ``y`` (0 ... n_classes - 1, every one seen, at
    least 3) as its ``fit`` does, to the same bits, without its two arrays of (samples x
    classes) floats: the loss and gradient are summed over blocks of ``block`` samples
    (``_BlockedMultinomialLoss``). Sets ``coef_``, ``intercept_``, ``classes_``,
    ``n_iter_`` and ``n_features_in_``.

    The steps are those of scikit-learn's ``_logistic_regression_path`` for a
    multinomial lbfgs fit without sample weights (version 1.9);
    ``tests/estimators/test_function_labels.py`` compares the coefficients with
    ``LogisticRegression.fit``'s bit for bit.
    """
    import warnings

    from scipy import optimize
    from sklearn.exceptions import ConvergenceWarning

    n_samples, n_features = X.shape
    loss = _BlockedMultinomialLoss(n_classes, block)
    # the coefficients with the intercept last, ravelled with each feature's classes
    # together (order "F"), as scikit-learn's LinearModelLoss reads them
    w0 = np.zeros((n_classes, n_features + 1), order="F").ravel(order="F")
    l2_reg_strength = 1.0 / (model.C * n_samples)
    result = optimize.minimize(
        loss.loss_gradient,
        w0,
        method="L-BFGS-B",
        jac=True,
        args=(X, y.astype(np.float64), l2_reg_strength),
        options={
            "maxiter": model.max_iter,
            "maxls": 50,
            "gtol": model.tol,
            "ftol": 64 * np.finfo(float).eps,
        },
    )
    n_iter = min(result.nit, model.max_iter)
    if result.status != 0:
        warnings.warn(
            f"lbfgs failed to converge after {n_iter} iteration(s) "
            f"(status={result.status}):\n{result.message}\n",
            ConvergenceWarning,
            stacklevel=3,
        )
    coef = np.reshape(result.x, (n_classes, -1), order="F").copy(order="K")
    model.classes_ = np.arange(n_classes)
    model.n_features_in_ = n_features
    model.n_iter_ = np.asarray([n_iter], dtype=np.int32)
    model.coef_ = coef[:, :-1]
    model.intercept_ = coef[:, -1]


class _BlockedMultinomialLoss:
    """scikit-learn's ``LinearModelLoss(HalfMultinomialLoss(n_classes), fit_intercept=
    True).loss_gradient`` (no sample weights) summed over blocks of ``block`` samples,
    with the same bits: each sample's prediction, loss and gradient are computed as
    there (row by row), the losses summed as one array, and the gradient's sums over
    the samples accumulated in the same order (scipy's ``csc_matvecs``, which
    ``grad_pointwise.T @ X`` runs on the whole matrix, run on each block's columns of
    ``X.T`` into one output; numpy's column sums, row after row)."""

    def __init__(self, n_classes: int, block: int = SAMPLE_BLOCK):
        from sklearn._loss.loss import HalfMultinomialLoss

        self.base_loss = HalfMultinomialLoss(n_classes=n_classes)
        self.n_classes = n_classes
        self.block = block

    def loss_gradient(
        self, coef: np.ndarray, X: Any, y: np.ndarray, l2_reg_strength: float
    ) -> tuple[float, np.ndarray]:
        """(loss, gradient) at the ravelled coefficients ``coef`` of the CSR matrix ``X``
        and the classes ``y`` (float64)."""
        from scipy.sparse import _sparsetools
        from sklearn.utils.extmath import squared_norm

        (n_samples, n_features), n_classes = X.shape, self.n_classes
        matrix = coef.reshape((n_classes, -1), order="F")
        weights, intercept = matrix[:, :-1], matrix[:, -1]
        losses = np.empty(n_samples)
        flat = np.zeros(n_classes * (n_features + 1))
        grad = flat.reshape((n_classes, -1), order="F")  # a view: classes x (features + 1)
        # its first n_features columns in memory: X.T @ G's (features x classes), C order
        grad_x = flat[: n_classes * n_features].reshape((n_features, n_classes))
        intercept_grad = None
        indptr, indices, data = X.indptr, X.indices, X.data
        for start in range(0, n_samples, self.block):
            stop = min(start + self.block, n_samples)
            raw_prediction = X[start:stop] @ weights.T + intercept
            _, gradient = self.base_loss.loss_gradient(
                y_true=y[start:stop],
                raw_prediction=raw_prediction,
                loss_out=losses[start:stop],
                n_threads=1,
            )
            del raw_prediction
            gradient /= n_samples
            # grad_x += X[start:stop].T @ gradient, summed sample after sample
            _sparsetools.csc_matvecs(
                n_features,
                stop - start,
                n_classes,
                indptr[start : stop + 1],
                indices,
                data,
                gradient.ravel(),
                grad_x.ravel(),  # a view (C order): accumulated in place
            )
            if intercept_grad is None:
                intercept_grad = gradient.sum(axis=0)
            else:  # the column sums go on from the last block's, row after row
                intercept_grad = np.concatenate((intercept_grad[None, :], gradient)).sum(axis=0)
        loss = float(np.sum(losses) / n_samples)
        loss += float(0.5 * l2_reg_strength * squared_norm(weights))
        grad_x += (l2_reg_strength * weights).T
        grad[:, -1] = intercept_grad
        return loss, flat


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

    def threshold(self, min_count: int, most_features: int) -> int:
        """The least count from ``min_count`` up that at most ``most_features``
        feature names reach."""
        counts = self.counts()
        if np.count_nonzero(counts >= min_count) <= most_features:
            return min_count
        largest = np.sort(counts)[::-1]  # fewer than most_features + 1 names exceed it
        return max(min_count, int(largest[most_features]) + 1)

    def counts(self) -> np.ndarray:
        """int64: how often each feature name was seen, by id."""
        return np.bincount(np.frombuffer(self.ids, dtype=np.int64), minlength=len(self.names))

    def matrix(self, min_count: int):
        """(the feature names kept, sorted; the phrases' CSR matrix over them)."""
        from scipy import sparse

        ids = np.frombuffer(self.ids, dtype=np.int64)
        counts = self.counts()
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
    params: ``FunctionLabeller`` parameters (C, max_iter, min_count, max_parameters); the label
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

    params: ``FunctionLabeller`` parameters (C, max_iter, min_count, max_parameters).
    """
    tagger = FunctionLabeller(scheme=scheme, language=language, **params).fit(trees).tagger_
    release_freed_memory()  # the solver's arrays, gone with the labeller, before what follows
    return tagger
