"""The scikit-learn-style contract, checked for every estimator, and the base helpers."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.estimators import (
    BaseEstimator,
    ClusteringEstimator,
    MLEEstimator,
    NotFittedError,
    SpectralEstimator,
    check_is_fitted,
    check_random_state,
    clone,
)
from spacy_lpcfg.estimators.base import check_choice, check_number
from spacy_lpcfg.estimators.noise import NoisyEnsemble
from spacy_lpcfg.grammar.serialization import ARRAY_SPECS
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
    with pytest.raises(NotFittedError, match="E401"):
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


def test_contract_mle_rejects_bad_parameters_in_fit_by_name():
    for name, value in (("rare_threshold", -1), ("signature", "x"), ("transform", 3)):
        estimator = MLEEstimator(**{name: value})  # no validation in __init__
        with pytest.raises(ValueError, match=f"E011.*'{name}'"):
            estimator.fit(TREES)


# Every estimator: set_params; the latent ones: random_state --------------------------

SMALL = {"n_states": 2, "min_count_per_state": 1, "open_class_threshold": 1}
# (estimator, parameters to set): each changes plain and, for the ensemble, nested ones
SET_PARAMS = [
    (MLEEstimator(), {"rare_threshold": 2, "transform": {"v_markov": 1}}),
    (SpectralEstimator(), {"kappa": 2.0, "n_states": {"NP^S": 3}}),
    (ClusteringEstimator(), {"init": "random", "random_state": 7}),
    (
        NoisyEnsemble(estimator=ClusteringEstimator()),
        {"noise": "gaussian", "n_models": 2, "estimator__n_init": 3},
    ),
]


@pytest.mark.parametrize(("estimator", "changes"), SET_PARAMS, ids=lambda x: repr(x)[:40])
def test_contract_set_params_changes_only_those_and_returns_self(estimator, changes):
    estimator = clone(estimator)
    before = estimator.get_params()
    assert estimator.set_params(**changes) is estimator
    after = estimator.get_params()
    assert {name: after[name] for name in changes} == changes
    unchanged = set(before) - set(changes) - {"estimator"}  # the nested object itself
    assert {name: after[name] for name in unchanged} == {name: before[name] for name in unchanged}


def test_contract_ensemble_clone_copies_the_member_settings():
    ensemble = NoisyEnsemble(estimator=ClusteringEstimator(**SMALL), n_models=2, noise_scale=0.2)
    copy = clone(ensemble)
    assert copy.estimator is not ensemble.estimator
    params, copied = ensemble.get_params(), copy.get_params()
    assert params.pop("estimator").get_params() == copied.pop("estimator").get_params()
    assert params == copied and repr(copy) == repr(ensemble)
    assert type(ensemble)().set_params(**ensemble.get_params(deep=False)).get_params() == (
        ensemble.get_params()
    )


def test_contract_ensemble_fit_returns_self_and_fitted_attributes():
    ensemble = NoisyEnsemble(estimator=ClusteringEstimator(**SMALL), n_models=2)
    with pytest.raises(NotFittedError, match="E401.*NoisyEnsemble"):
        check_is_fitted(ensemble)
    assert ensemble.fit(TREES, dev_trees=TREES[:1]) is ensemble
    check_is_fitted(ensemble, ["estimators_", "grammars_", "model_"])
    assert ensemble.model_.grammar is ensemble.grammars_[0]
    assert ensemble.model_.estimator == ensemble.name
    with pytest.raises(NotFittedError):
        check_is_fitted(clone(ensemble))


@pytest.fixture(scope="module")
def ptb_trees(load_corpus):
    """200 PTB-sample trees: frequent symbols take the randomized SVD, so the seed matters."""
    return load_corpus("ptb_sample", "train")[:200]


def _grammar_arrays(estimator) -> list[np.ndarray]:
    model = estimator.model_
    grammars = (model.grammar, *model.extra_grammars)
    return [getattr(grammar, name) for grammar in grammars for name in ARRAY_SPECS]


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: SpectralEstimator(n_states=4, random_state=seed),
        lambda seed: ClusteringEstimator(n_states=4, random_state=seed),
        lambda seed: NoisyEnsemble(
            estimator=ClusteringEstimator(n_states=3),
            n_models=2,
            noise="gaussian",
            random_state=seed,
        ),
    ],
    ids=["spectral", "clustering", "noisy_ensemble"],
)
def test_contract_random_state_makes_fits_bit_identical(ptb_trees, make):
    first = _grammar_arrays(make(0).fit(ptb_trees))
    again = _grammar_arrays(make(0).fit(list(ptb_trees)))
    other = _grammar_arrays(make(1).fit(ptb_trees))
    assert all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(first, other))


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
    with pytest.raises(ValueError, match="E402.*'beta'"):
        Toy().set_params(beta=1)
    with pytest.raises(ValueError, match="E402"):
        Toy(inner=None).set_params(inner__alpha=1)


def test_base_clone_copies_parameters():
    inner = Toy(alpha=5.0)
    toy = Toy(inner=inner, values=[1, 2])
    copy = clone(toy)
    assert copy.inner is not inner and copy.inner.alpha == 5.0
    assert copy.values == [1, 2] and copy.values is not toy.values
    assert [repr(item) for item in clone([toy, toy])] == [repr(toy)] * 2


def test_base_clone_detects_constructor_logic():
    with pytest.raises(RuntimeError, match="E403.*values"):
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
        with pytest.raises(ValueError, match="E404"):
            check_random_state(bad)


class Stored(BaseEstimator):
    def __init__(self, *, values=(1, 2), scale=0.5, kind="a"):
        self._store_params(locals())


def test_base_store_params_keeps_the_arguments_unchanged():
    values = [3, 4]
    stored = Stored(values=values)
    assert stored.values is values and stored.get_params() == {
        "values": [3, 4],
        "scale": 0.5,
        "kind": "a",
    }
    assert "self" not in vars(stored) and clone(stored).values == values


@pytest.mark.parametrize("scale", [-0.1, 1.0, float("nan"), True, "0.5", None])
def test_base_check_number_names_the_parameter(scale):
    with pytest.raises(ValueError, match="E011.*'scale'.*0 <= s < 1"):
        check_number(Stored(scale=scale), "scale", "0 <= s < 1", low=0.0, high=1.0)


def test_base_check_number_and_choice_accept_valid_values():
    check_number(Stored(scale=np.float32(0.0)), "scale", "0 <= s < 1", low=0.0, high=1.0)
    check_number(Stored(scale=np.int64(3)), "scale", "an int >= 1", low=1, integer=True)
    with pytest.raises(ValueError, match="an int"):
        check_number(Stored(scale=3.0), "scale", "an int >= 1", low=1, integer=True)
    check_choice(Stored(), "kind", ("a", "b"))
    with pytest.raises(ValueError, match="E011.*'kind'.*one of a, b"):
        check_choice(Stored(kind="c"), "kind", ("a", "b"))
