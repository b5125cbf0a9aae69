"""The spectral estimator: contract, tensor algebra, convergence on a known L-PCFG, decoding."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_lpcfg import STATES, SyntheticLPCFG
from test_estimator_contract import TREES

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode import mbr_parse
from spacy_lpcfg.estimators import (
    MLEEstimator,
    NotFittedError,
    SpectralEstimator,
    check_is_fitted,
    clone,
)
from spacy_lpcfg.estimators.latent import COARSE_GRAMMAR
from spacy_lpcfg.trees.transforms import TransformSpec

IDENTITY = TransformSpec(v_markov=1)  # the synthetic trees are binary already


def small_estimator(**params) -> SpectralEstimator:
    settings = {"n_states": 2, "min_count_per_state": 1, "open_class_threshold": 1}
    return SpectralEstimator(**{**settings, **params})


def synthetic_estimator() -> SpectralEstimator:
    """Settings under which the estimate is consistent: the true numbers of states,
    no caps, every word its own feature and vocabulary entry, no smoothing."""
    return SpectralEstimator(
        n_states=STATES,
        transform=IDENTITY,
        min_count_per_state=1,
        singular_value_threshold=0.0,
        word_threshold=1,
        lexical_smoothing=0.0,
        rare_threshold=0,
        smooth_threshold=0,
    )


# The estimator contract -------------------------------------------------------------


def test_contract_fit_returns_self_and_fitted_attributes():
    estimator = small_estimator()
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    assert estimator.fit(TREES) is estimator
    check_is_fitted(estimator, ["grammar_", "model_", "lexicon_", "n_states_"])
    assert estimator.model_.grammar is estimator.grammar_
    assert estimator.model_.estimator == "spectral"
    with pytest.raises(NotFittedError):
        check_is_fitted(clone(estimator))


def test_contract_params_roundtrip():
    estimator = small_estimator(kappa=2.0, n_states={"NP^S": 3})
    params = estimator.get_params()
    assert clone(estimator).get_params() == params
    assert SpectralEstimator().set_params(**params).get_params() == params
    assert repr(estimator) == repr(clone(estimator))


def test_contract_same_random_state_same_bytes_and_refit_forgets():
    first = small_estimator().fit(TREES)
    again = small_estimator().fit(list(TREES))
    assert first.grammar_.to_bytes() == again.grammar_.to_bytes()
    assert first.model_.to_bytes() == again.model_.to_bytes()
    fresh = small_estimator().fit(TREES[2:])
    refit = small_estimator().fit(TREES[:2]).fit(TREES[2:])
    assert refit.grammar_ == fresh.grammar_ and refit.lexicon_.entries == fresh.lexicon_.entries


def test_model_carries_the_spectrum_of_every_decomposed_symbol():
    estimator = small_estimator(n_states=3).fit(TREES)
    spectrum, projections = estimator.model_.spectrum, estimator.projected_.projections
    assert list(spectrum.values) == list(estimator.singular_values_)
    symbols = estimator.grammar_.symbols
    for name, values in estimator.singular_values_.items():
        assert spectrum.values[name] is values and values.dtype == np.float64
        assert spectrum.counts[name] == projections.counts[symbols.index(name)]
    assert symbols.name(symbols.root) not in spectrum.values  # TOP has no SVD


def test_model_carries_the_mle_grammar_for_pruning():
    estimator = small_estimator().fit(TREES)
    model = estimator.model_
    assert model.training[COARSE_GRAMMAR] == 0
    mle = MLEEstimator(open_class_threshold=1).fit(TREES).grammar_
    assert model.extra_grammars[0] == mle == estimator.coarse_grammar_
    assert estimator.grammar_.max_states == 2


# The tensor algebra --------------------------------------------------------------------


def test_one_state_parameters_are_products_of_projections():
    """With one state, T = mean over the rule's nodes of z * y_left * y_right."""
    estimator = small_estimator(n_states=1).fit(TREES)
    projected, grammar = estimator.projected_, estimator.grammar_
    nodes, projections = projected.nodes, projected.projections
    for rule in range(len(grammar.binary_rules)):
        a, b, c = grammar.binary_rules[rule]
        members = np.flatnonzero(projected.binary_rule == rule)

        def first(symbol, which, at):
            values = getattr(projections, which)[symbol][projections.row[at], 0]
            return values

        expected = (
            np.sum(
                first(a, "outside", members)
                * first(b, "inside", nodes.left[members])
                * first(c, "inside", nodes.right[members])
            )
            / projections.counts[a]
        )
        assert grammar.binary_block(rule)[0, 0, 0] == pytest.approx(expected)


def test_sampled_treebank_marginals_converge_to_the_truth():
    """Data from a known L-PCFG: the spectral marginals approach the true ones as the
    sample grows (measured: 1.1e-3 with 1k trees, 4.9e-4 with 10k, 3.0e-4 with 100k),
    while the one-state MLE grammar, which cannot represent the states, stays at 2.8e-3."""
    truth = SyntheticLPCFG()
    test = truth.sample(40, seed=99)
    small, large = (
        _marginal_error(truth, synthetic_estimator().fit(truth.sample(n, seed=n)), test)
        for n in (1_000, 10_000)
    )
    assert large < small * 0.7 and large < 1e-3
    mle = MLEEstimator(transform=IDENTITY, rare_threshold=0, smooth_threshold=0)
    assert _marginal_error(truth, mle.fit(truth.sample(10_000, seed=1)), test) > 3 * large


@pytest.mark.slow
def test_sampled_treebank_marginals_converge_with_100k_trees():
    truth = SyntheticLPCFG()
    test = truth.sample(40, seed=99)
    small, large = (
        _marginal_error(truth, synthetic_estimator().fit(truth.sample(n, seed=n)), test)
        for n in (10_000, 100_000)
    )
    assert large < small * 0.8 and large < 4e-4


def _marginal_error(truth: SyntheticLPCFG, estimator: SpectralEstimator, test) -> float:
    """Mean absolute difference of the item marginals mu(a, i, j) over the test sentences."""
    model = estimator.model_
    true_grammar = truth.grammar(model.grammar.symbols, model.grammar.words)
    differences = []
    for tree in test:
        words = tree.words()
        estimated = inside_outside(model.grammar, model.lexical_scores(words), None)
        exact = inside_outside(
            true_grammar, model.lexicon.lexical_scores(true_grammar, words), None
        )
        n_symbols = model.grammar.n_symbols
        gap = estimated.dense_marginals(n_symbols) - exact.dense_marginals(n_symbols)
        differences.append(np.abs(gap).sum() / max(len(exact.marginals), 1))
    return float(np.mean(differences))


# Decoding signed grammars ---------------------------------------------------------------


def test_mbr_decodes_signed_marginals():
    """A spectral grammar from little data (40 trees) has negative weights, negative
    marginals and even negative totals Z; MBR still returns a tree over every sentence
    (marginals are divided by the signed Z, and negative ones make no brackets)."""
    truth = SyntheticLPCFG()
    model = synthetic_estimator().fit(truth.sample(40, seed=3)).model_
    assert (model.grammar.binary_weights < 0).any()
    negative = negative_z = 0
    for tree in truth.sample(30, seed=4):
        words = tree.words()
        lexical = model.lexical_scores(words)
        chart = inside_outside(model.grammar, lexical, None, rule_posteriors=False)
        negative += int((chart.marginals < 0).sum())
        negative_z += chart.z_sign < 0
        result = mbr_parse(model.grammar, lexical, None, posteriors=chart)
        assert result.has_parse
        parse = model.pipeline.invert(result.to_tree(words))
        assert parse.words() == words
    assert negative > 0 and negative_z > 0


def test_one_svd_serves_every_smaller_number_of_states():
    large = small_estimator(n_states=3).fit(TREES)
    small = small_estimator(n_states=2).fit_projected(large.projected_)
    assert small.grammar_.max_states == 2 and small.projected_ is large.projected_
    symbol = small.grammar_.symbols.index("NP^S")
    m = small.grammar_.n_states[symbol]
    rule = int(np.flatnonzero(small.grammar_.unary_rules[:, 0] == symbol)[0])
    members = np.flatnonzero(large.projected_.unary_rule == rule)
    projections = large.projected_.projections
    child = small.grammar_.unary_rules[rule, 1]
    m_child = small.grammar_.n_states[child]
    z = projections.outside[symbol][projections.row[members], :m]
    y = projections.inside[child][projections.row[large.projected_.nodes.left[members]], :m_child]
    expected = z.T @ y / projections.counts[symbol]
    assert np.allclose(small.grammar_.unary_block(rule), expected)


@pytest.mark.parametrize(
    "params",
    [
        {"kappa": -1},
        {"word_threshold": 0},
        {"min_count_per_state": 0},
        {"singular_value_threshold": 1.0},
        {"lexical_smoothing": -0.5},
        {"n_states": 0},
        {"n_states": {"NOT-A-SYMBOL": 2}},
        {"rare_threshold": -1},
        {"kappa": float("nan")},
        {"word_threshold": True},
        {"word_threshold": 2.5},
        {"random_state": "seed"},
    ],
)
def test_invalid_parameters_fail_in_fit_naming_the_parameter(params):
    estimator = small_estimator(**params)  # no validation in __init__
    (name,) = params
    code = "E404" if name == "random_state" else f"E011.*'{name}'"
    with pytest.raises(ValueError, match=code):
        estimator.fit(TREES)
