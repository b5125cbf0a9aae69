"""The scikit-learn-style contract, checked for every estimator, and the base helpers."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.estimators import (
    BaseEstimator,
    MLEEstimator,
    NotFittedError,
    check_is_fitted,
    check_random_state,
    clone,
)
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformSpec

TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
    "(TOP (S (NP (PRP It)) (VP (VBD was) (ADJP (JJ big))) (. .)))",
]
TREES = [Tree.from_string(text) for text in TREEBANK]

# Every estimator, with parameters that make it fit on the small treebank above.
ESTIMATORS = [
    MLEEstimator(open_class_threshold=1),
    MLEEstimator(signature="generic", transform=TransformSpec(binarization="left", v_markov=1)),
]


@pytest.fixture(params=ESTIMATORS, ids=repr)
def estimator(request):
    return clone(request.param)


def test_contract_fit_returns_self(estimator):
    assert estimator.fit(TREES) is estimator
    assert estimator.fit(TREES, dev_trees=TREES[:1]) is estimator


def test_contract_not_fitted_before_fit(estimator):
    with pytest.raises(NotFittedError, match="E211"):
        check_is_fitted(estimator)
    estimator.fit(TREES)
    check_is_fitted(estimator)
    check_is_fitted(estimator, ["grammar_", "model_"])


def test_contract_params_roundtrip(estimator):
    params = estimator.get_params()
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == params
    assert type(copy)().set_params(**params).get_params() == params
    assert repr(copy) == repr(estimator)


def test_contract_clone_is_unfitted(estimator):
    estimator.fit(TREES)
    with pytest.raises(NotFittedError):
        check_is_fitted(clone(estimator))


def test_contract_same_data_same_bytes(estimator):
    first = estimator.fit(TREES).grammar_.to_bytes()
    second = clone(estimator).fit(list(TREES)).grammar_.to_bytes()
    assert first == second
    assert estimator.model_.to_bytes() == clone(estimator).fit(TREES).model_.to_bytes()


def test_contract_refit_forgets_old_fit(estimator):
    fresh = clone(estimator).fit(TREES[2:])
    estimator.fit(TREES[:2]).fit(TREES[2:])
    assert estimator.grammar_ == fresh.grammar_
    assert estimator.lexicon_.entries == fresh.lexicon_.entries


def test_contract_fitted_grammar_is_a_model(estimator):
    estimator.fit(TREES)
    assert estimator.model_.grammar is estimator.grammar_
    assert estimator.model_.estimator == estimator.name


# The base helpers -------------------------------------------------------------------


class Toy(BaseEstimator):
    def __init__(self, *, alpha=1.0, inner=None, values=(1, 2)):
        self.alpha = alpha
        self.inner = inner
        self.values = values


class Meddling(BaseEstimator):
    def __init__(self, *, values=(1, 2)):
        self.values = list(values)


def test_base_get_set_params_nested():
    toy = Toy(inner=Toy(alpha=2.0))
    params = toy.get_params()
    assert params["inner__alpha"] == 2.0 and params["alpha"] == 1.0
    assert toy.set_params(alpha=3.0, inner__alpha=4.0) is toy
    assert toy.alpha == 3.0 and toy.inner.alpha == 4.0
    assert "inner__alpha" not in toy.get_params(deep=False)


def test_base_set_params_rejects_unknown_names():
    with pytest.raises(ValueError, match="E212.*'beta'"):
        Toy().set_params(beta=1)
    with pytest.raises(ValueError, match="E212"):
        Toy(inner=None).set_params(inner__alpha=1)


def test_base_clone_copies_parameters():
    inner = Toy(alpha=5.0)
    toy = Toy(inner=inner, values=[1, 2])
    copy = clone(toy)
    assert copy.inner is not inner and copy.inner.alpha == 5.0
    assert copy.values == [1, 2] and copy.values is not toy.values
    assert [repr(item) for item in clone([toy, toy])] == [repr(toy)] * 2


def test_base_clone_detects_constructor_logic():
    with pytest.raises(RuntimeError, match="E213.*values"):
        clone(Meddling())


def test_base_repr_shows_changed_parameters():
    assert repr(Toy()) == "Toy()"
    assert repr(Toy(alpha=2.0)) == "Toy(alpha=2.0)"
    assert repr(MLEEstimator(rare_threshold=3)) == "MLEEstimator(rare_threshold=3)"


def test_base_check_random_state():
    assert check_random_state(7).random() == check_random_state(7).random()
    generator = np.random.default_rng(1)
    assert check_random_state(generator) is generator
    assert isinstance(check_random_state(None), np.random.Generator)
    assert isinstance(check_random_state(np.int64(3)), np.random.Generator)
    for bad in ("seed", 1.5, True):
        with pytest.raises(ValueError, match="E214"):
            check_random_state(bad)
