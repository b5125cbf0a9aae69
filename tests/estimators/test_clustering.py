"""The clustering estimator: contract, sparsity, normalisation, parseability; noisy ensembles."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_lpcfg import STATES, SyntheticLPCFG
from test_estimator_contract import TREES

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode import shares_rules
from spacy_lpcfg.estimators import (
    ClusteringEstimator,
    MLEEstimator,
    NotFittedError,
    check_is_fitted,
    clone,
)
from spacy_lpcfg.estimators.latent import COARSE_GRAMMAR
from spacy_lpcfg.estimators.noise import ENSEMBLE, NOISES, NoisyEnsemble, noisy_projections
from spacy_lpcfg.trees.transforms import TransformSpec

IDENTITY = TransformSpec(v_markov=1)


def small_estimator(**params) -> ClusteringEstimator:
    settings = {"n_states": 2, "min_count_per_state": 1, "open_class_threshold": 1}
    return ClusteringEstimator(**{**settings, **params})


@pytest.fixture(scope="module")
def synthetic():
    """A clustering model of 2,000 trees sampled from the synthetic L-PCFG."""
    truth = SyntheticLPCFG()
    estimator = ClusteringEstimator(
        n_states=STATES, transform=IDENTITY, min_count_per_state=1, rare_threshold=0
    )
    return truth, estimator.fit(truth.sample(2_000, seed=0))


# The estimator contract -------------------------------------------------------------


def test_contract_fit_returns_self_and_fitted_attributes():
    estimator = small_estimator()
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    assert estimator.fit(TREES) is estimator
    check_is_fitted(estimator, ["grammar_", "model_", "lexicon_", "states_", "cells_"])
    assert estimator.model_.grammar is estimator.grammar_
    assert estimator.model_.estimator == "clustering"
    with pytest.raises(NotFittedError):
        check_is_fitted(clone(estimator))


def test_contract_params_roundtrip():
    estimator = small_estimator(smoothing=0.05, init="random")
    params = estimator.get_params()
    assert clone(estimator).get_params() == params
    assert ClusteringEstimator().set_params(**params).get_params() == params
    assert repr(estimator) == repr(clone(estimator))


def test_contract_same_random_state_same_bytes_and_refit_forgets():
    first = small_estimator().fit(TREES)
    assert first.model_.to_bytes() == small_estimator().fit(list(TREES)).model_.to_bytes()
    fresh = small_estimator().fit(TREES[2:])
    refit = small_estimator().fit(TREES[:2]).fit(TREES[2:])
    assert refit.grammar_ == fresh.grammar_ and refit.lexicon_.entries == fresh.lexicon_.entries


@pytest.mark.parametrize(
    "params",
    [
        {"init": "middle"},
        {"n_init": 0},
        {"max_iter": 1.5},
        {"smoothing": 1.0},
        {"lexical_smoothing": -1},
        {"lexical_smoothing": float("nan")},
        {"kappa": -1},
    ],
)
def test_invalid_parameters_fail_before_fitting(params):
    estimator = small_estimator(**params)  # no validation in __init__
    with pytest.raises(ValueError, match=f"E011.*'{next(iter(params))}'"):
        estimator.fit(TREES)


# The estimate --------------------------------------------------------------------------


def test_coarse_grammar_is_the_projection_with_state_frequencies(synthetic):
    """The pruning grammar: every rule's weight averaged over the parent's states by
    their training frequencies, which gives back the treebank's relative frequencies."""
    _, estimator = synthetic
    model, coarse = estimator.model_, estimator.coarse_grammar_
    assert model.training[COARSE_GRAMMAR] == 0 and model.extra_grammars[0] is coarse
    mle = MLEEstimator(transform=IDENTITY, rare_threshold=0).fit(
        SyntheticLPCFG().sample(2_000, seed=0)
    )
    assert np.array_equal(coarse.binary_rules, mle.grammar_.binary_rules)
    assert np.allclose(coarse.binary_weights, mle.grammar_.binary_weights)
    assert np.allclose(coarse.unary_weights, mle.grammar_.unary_weights)


def test_one_state_is_the_treebank_grammar():
    clustered = ClusteringEstimator(n_states=1, open_class_threshold=1).fit(TREES).grammar_
    mle = MLEEstimator(open_class_threshold=1).fit(TREES).grammar_
    assert clustered.symbols == mle.symbols and clustered.words == mle.words
    for kind in ("binary", "unary", "lexical"):
        assert np.array_equal(getattr(clustered, f"{kind}_rules"), getattr(mle, f"{kind}_rules"))
        assert np.allclose(getattr(clustered, f"{kind}_weights"), getattr(mle, f"{kind}_weights"))


def test_states_are_clusters_of_each_symbol(synthetic):
    _, estimator = synthetic
    nodes, grammar = estimator.projected_.nodes, estimator.grammar_
    for name in ("NP", "VP", "NN"):
        symbol = grammar.symbols.index(name)
        states = estimator.states_[nodes.symbol == symbol]
        assert estimator.n_states_[name] == 2 == grammar.n_states[symbol]
        assert set(states.tolist()) == {0, 1}
    assert (estimator.states_[nodes.is_root] == 0).all()


def test_rules_keep_only_the_child_states_seen(synthetic):
    """Zero cells are zero weights, and cells_ lists exactly the non-zero ones."""
    _, estimator = synthetic
    grammar, projected, states = estimator.grammar_, estimator.projected_, estimator.states_
    nodes = projected.nodes
    cells = estimator.cells_["binary"]
    assert np.count_nonzero(grammar.binary_weights) == len(cells.weights)
    assert estimator.sparsity_["binary_nonzero"] == len(cells.weights)
    assert estimator.sparsity_["binary_stored"] == len(grammar.binary_weights)
    for rule in range(len(grammar.binary_rules)):
        members = np.flatnonzero(projected.binary_rule == rule)
        seen = set(zip(states[nodes.left[members]].tolist(), states[nodes.right[members]].tolist()))
        block = grammar.binary_block(rule)
        nonzero = {(int(h2), int(h3)) for _, h2, h3 in zip(*np.nonzero(block))}
        assert nonzero == seen
        mine = cells.states[cells.rules == rule]
        assert np.allclose(block[tuple(mine.T)], cells.weights[cells.rules == rule])


def test_rule_and_emission_weights_are_distributions(synthetic):
    _, estimator = synthetic
    grammar = estimator.grammar_
    totals = [np.zeros(m) for m in grammar.n_states]
    for rule, (a, *_) in enumerate(grammar.binary_rules):
        totals[a] += grammar.binary_block(rule).sum(axis=(1, 2))
    for rule, (a, _) in enumerate(grammar.unary_rules):
        totals[a] += grammar.unary_block(rule).sum(axis=1)
    phrases = grammar.symbols.ids("phrasal").tolist() + [grammar.root]
    for symbol in phrases:
        assert np.allclose(totals[symbol], 1.0)
    emitted = [np.zeros(m) for m in grammar.n_states]
    for rule, (tag, _) in enumerate(grammar.lexical_rules):
        emitted[tag] += grammar.lexical_block(rule)
    for tag in grammar.symbols.ids("preterminal").tolist():
        assert np.allclose(emitted[tag], 1.0, atol=1e-3)


def test_every_sampled_sentence_has_a_parse(synthetic):
    """Emissions smoothed over states: rules that only know some child states still
    combine every preterminal, so the latent grammar parses what the MLE grammar does."""
    truth, estimator = synthetic
    model = estimator.model_
    for tree in truth.sample(50, seed=7):
        chart = inside_outside(model.grammar, model.lexical_scores(tree.words()), None)
        assert chart.has_parse and chart.z_sign > 0


def test_rare_symbols_get_fewer_states():
    estimator = ClusteringEstimator(n_states=8, min_count_per_state=2, open_class_threshold=1)
    estimator.fit(TREES)
    counts = np.bincount(estimator.projected_.nodes.symbol)
    for name, states in estimator.n_states_.items():
        assert states <= counts[estimator.grammar_.symbols.index(name)] // 2


# Noisy ensembles -----------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES)
def test_noisy_members_share_rules_and_vocabulary_but_differ(noise):
    trees = SyntheticLPCFG().sample(300, seed=5)
    member = ClusteringEstimator(n_states=STATES, transform=IDENTITY, min_count_per_state=1)
    ensemble = NoisyEnsemble(estimator=member, n_models=3, noise=noise, noise_scale=0.5)
    ensemble.fit(trees)
    assert len(ensemble.grammars_) == 3 and shares_rules(ensemble.grammars_)
    assert all(g.words == ensemble.grammars_[0].words for g in ensemble.grammars_)
    states = [member.states_ for member in ensemble.estimators_]
    assert any(not np.array_equal(states[0], other) for other in states[1:])
    model = ensemble.model_
    assert model.grammar is ensemble.grammars_[0]
    assert model.extra_grammars[0] == ensemble.estimators_[0].coarse_grammar_
    assert list(model.extra_grammars[1:]) == ensemble.grammars_[1:]
    assert model.training[ENSEMBLE] == [1, 2] and model.training[COARSE_GRAMMAR] == 0
    assert clone(ensemble).fit(trees).model_.to_bytes() == model.to_bytes()


def test_noisy_ensemble_stores_the_shared_spectrum_once():
    ensemble = NoisyEnsemble(estimator=small_estimator(), n_models=2, noise="gaussian").fit(TREES)
    members = ensemble.estimators_
    assert members[0].projected_ is members[1].projected_
    assert ensemble.model_.spectrum is members[0].model_.spectrum
    assert ensemble.model_.spectrum.values == members[1].singular_values_


def test_noise_of_scale_zero_changes_nothing(synthetic):
    _, estimator = synthetic
    projections = estimator.projected_.projections
    rng = np.random.default_rng(0)
    for noise in ("gaussian", "multiplicative"):
        same = noisy_projections(projections, noise, 0.0, rng)
        assert all(np.array_equal(a, b) for a, b in zip(same.inside, projections.inside))
    with pytest.raises(ValueError, match="keep_factors"):
        noisy_projections(projections, "dropout", 0.1, rng)


def test_dropout_projects_the_kept_features():
    ensemble = NoisyEnsemble(
        estimator=small_estimator(), n_models=1, noise="dropout", noise_scale=0.0
    ).fit(TREES)
    projections = ensemble.estimators_[0].projected_.projections
    assert projections.factors is not None
    same = noisy_projections(projections, "dropout", 0.0, np.random.default_rng(0))
    for mine, theirs in zip(same.inside + same.outside, projections.inside + projections.outside):
        assert np.allclose(mine, theirs)


@pytest.mark.parametrize(
    "params",
    [
        {"noise": "salt"},
        {"n_models": 0},
        {"noise_scale": 1.0, "noise": "dropout"},
        {"noise_scale": -0.1},
        {"estimator": MLEEstimator()},
    ],
)
def test_noisy_ensemble_rejects_bad_parameters(params):
    ensemble = NoisyEnsemble(**params)  # no validation in __init__
    with pytest.raises(ValueError, match=f"E011.*'{next(iter(params))}'"):
        ensemble.fit(TREES)


def test_noisy_ensemble_checks_its_members_parameters():
    ensemble = NoisyEnsemble(estimator=small_estimator(smoothing=2.0), n_models=1)
    with pytest.raises(ValueError, match="E011.*'smoothing'"):
        ensemble.fit(TREES)
