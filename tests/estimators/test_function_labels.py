"""FunctionLabeller: function tags put on the phrases of parses, learned from a treebank."""

from __future__ import annotations

import pytest

from spacy_lpcfg.estimators.function_labels import FunctionLabeller
from spacy_lpcfg.evaluation.parsing import score_parses
from spacy_lpcfg.trees.normalize import strip_functions


@pytest.fixture(scope="module")
def labeller(load_corpus):
    return FunctionLabeller().fit(load_corpus("ptb_sample", "train")[:600])


def test_labels_change_only_function_tags(labeller, load_corpus):
    gold = load_corpus("ptb_sample", "dev")[:40]
    stripped = [strip_functions(tree, "penn") for tree in gold]
    labelled = labeller.label(stripped)
    for before, after in zip(stripped, labelled):
        assert strip_functions(after, "penn") == before  # same brackets, categories, words
    assert any(label.endswith("-SBJ") for tree in labelled for label, _, _ in tree.spans())
    assert labeller.label([]) == []


def test_function_tags_on_gold_brackets_beat_a_floor(labeller, load_corpus):
    """Function-tag F1 on the gold brackets of dev: measured 79.3 when trained on 600
    trees (85.3 on the whole train split)."""
    gold = load_corpus("ptb_sample", "dev")
    labelled = labeller.label([strip_functions(tree, "penn") for tree in gold])
    assert score_parses(gold, labelled).functions.functions.fscore > 75.0


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="C"):
        FunctionLabeller(C=0).fit([])
    with pytest.raises(ValueError, match="max_parameters"):
        FunctionLabeller(max_parameters=0).fit([])


@pytest.mark.parametrize("seed", range(20))
def test_the_feature_threshold_is_the_least_count_that_fits(seed):
    import numpy as np

    from spacy_lpcfg.estimators.function_labels import _PhraseTable

    rng = np.random.default_rng(seed)
    table = _PhraseTable()
    for _ in range(int(rng.integers(1, 60))):
        table.add([f"f{k}" for k in rng.geometric(0.2, int(rng.integers(1, 8)))], ())
    counts = table.counts()
    for min_count in (1, 2, 3):
        for most in (0, 1, 3, 10, 1000):
            fits = [t for t in range(min_count, counts.max() + 2) if (counts >= t).sum() <= most]
            assert table.threshold(min_count, most) == fits[0], (min_count, most)


def test_max_parameters_drops_rarer_features_until_the_model_fits(labeller, load_corpus):
    trees = load_corpus("ptb_sample", "train")[:600]
    classes, features = labeller.tagger_.coef.shape
    assert labeller.min_count_ == 2 and labeller.tagger_.params["min_count"] == 2
    budget = classes * (features // 3)
    small = FunctionLabeller(max_parameters=budget).fit(trees)
    kept = len(small.tagger_.features)
    assert small.min_count_ > 2 and classes * (kept + 1) <= budget
    assert small.tagger_.params["min_count"] == small.min_count_  # what the model was fitted with
    # the same model as asking for that count: the budget only raises it
    same = FunctionLabeller(min_count=small.min_count_).fit(trees)
    assert same.tagger_.features == small.tagger_.features
    assert (same.tagger_.coef == small.tagger_.coef).all()
    # one feature more would have been over (the least count that fits)
    looser = FunctionLabeller(min_count=small.min_count_ - 1).fit(trees)
    assert classes * (len(looser.tagger_.features) + 1) > budget
    with pytest.raises(ValueError, match=f"max_parameters {2 * classes - 1} leaves no feature"):
        FunctionLabeller(max_parameters=2 * classes - 1).fit(trees)


def _multiclass_problem(seed: int, n: int, features: int, classes: int, ones: bool):
    import numpy as np
    from scipy import sparse

    rng = np.random.default_rng(seed)
    X = sparse.random(n, features, density=0.05, format="csr", random_state=rng)
    if ones:  # the labeller's matrices: binary features
        X.data[:] = 1.0
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)  # every class seen
    return X, y


@pytest.mark.parametrize("ones", [True, False])
@pytest.mark.parametrize("block", [1, 64, 5000])
def test_blocked_loss_gradient_is_scikit_learns_to_the_bit(ones, block):
    """The loss and gradient summed over blocks of samples are those of scikit-learn's
    LinearModelLoss over the whole matrix, bit for bit."""
    import numpy as np
    from sklearn._loss.loss import HalfMultinomialLoss
    from sklearn.linear_model._linear_loss import LinearModelLoss

    from spacy_lpcfg.estimators.function_labels import _BlockedMultinomialLoss

    X, y = _multiclass_problem(0, 997, 53, 7, ones)
    coef = np.random.default_rng(1).standard_normal(7 * 54)
    whole = LinearModelLoss(HalfMultinomialLoss(n_classes=7), fit_intercept=True)
    loss, grad = whole.loss_gradient(coef, X, y.astype(float), None, 0.01, 1)
    blocked = _BlockedMultinomialLoss(7, block).loss_gradient(coef, X, y.astype(float), 0.01)
    assert blocked[0] == loss
    assert np.array_equal(blocked[1], grad)


@pytest.mark.parametrize("max_iter", [2, 300])
def test_blocked_fit_is_logistic_regression_fit_to_the_bit(max_iter):
    """``_fit_multinomial`` gives LogisticRegression.fit's coefficients bit for bit,
    and its warning when lbfgs stops at max_iter."""
    import warnings

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from spacy_lpcfg.estimators.function_labels import _fit_multinomial

    X, y = _multiclass_problem(2, 1500, 80, 9, True)
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        reference = LogisticRegression(C=0.5, max_iter=max_iter).fit(X, y)
    model = LogisticRegression(C=0.5, max_iter=max_iter)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _fit_multinomial(model, X, y, 9, block=100)
    assert np.array_equal(model.coef_, reference.coef_)
    assert np.array_equal(model.intercept_, reference.intercept_)
    assert np.array_equal(model.n_iter_, reference.n_iter_)
    assert [type(w.message) for w in seen] == [type(w.message) for w in expected]
    assert np.array_equal(model.predict_proba(X), reference.predict_proba(X))
