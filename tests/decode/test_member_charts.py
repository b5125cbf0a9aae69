"""An ensemble's members pruned by the first member's posteriors (``member_charts``),
against charts computed apart and the brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest
from chart.brute_force import oracle_posteriors
from decode_oracle import allowed, case, enumerate_derivations, word_ids

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode.charts import member_charts
from spacy_lpcfg.grammar import LPCFG, LexicalScores

SEEDS = range(12)


def _reweighted(grammar: LPCFG, seed: int) -> LPCFG:
    """The same rules, every weight multiplied by a random positive factor: a member."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for kind in ("binary", "unary", "lexical"):
        weights = getattr(grammar, f"{kind}_weights")
        arrays[f"{kind}_rules"] = getattr(grammar, f"{kind}_rules")
        arrays[f"{kind}_offsets"] = getattr(grammar, f"{kind}_offsets")
        arrays[f"{kind}_weights"] = weights * rng.uniform(0.05, 3.0, size=weights.shape)
    return LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)


def _members(seed: int, signed: bool = False):
    grammar, _, _ = case(seed, 4, signed)
    grammars = [grammar, _reweighted(grammar, seed + 100), _reweighted(grammar, seed + 200)]
    words = word_ids(grammar, 4, seed)
    return grammars, [LexicalScores.from_word_ids(g, words) for g in grammars]


def _kept(chart, n_symbols: int, threshold: float) -> np.ndarray:
    n = chart.n_words
    mask = np.zeros((n + 1, n + 1, n_symbols), dtype=bool)
    kept = chart.marginals > threshold
    mask[chart.item_starts[kept], chart.item_ends[kept], chart.item_symbols[kept]] = True
    return mask


@pytest.mark.parametrize("seed", SEEDS)
def test_threshold_zero_parses_every_member_alone(seed):
    grammars, lexicals = _members(seed)
    charts = member_charts(grammars, lexicals, None, threshold=0.0, rule_posteriors=True)
    for grammar, lexical, chart in zip(grammars, lexicals, charts):
        alone = inside_outside(grammar, lexical, None)
        assert chart.has_parse == alone.has_parse
        if alone.has_parse:
            np.testing.assert_allclose(chart.marginals, alone.marginals)
            np.testing.assert_allclose(chart.binary.scores, alone.binary.scores)


def test_members_parse_the_items_the_first_keeps():
    # The oracle: every derivation of the member whose items all have a posterior
    # above the threshold under the first member.
    pruned = 0
    for seed in SEEDS:
        grammars, lexicals = _members(seed)
        first = inside_outside(grammars[0], lexicals[0], None, rule_posteriors=False)
        if not first.has_parse:
            continue
        threshold = float(np.quantile(first.marginals, 0.3))
        mask = _kept(first, grammars[0].n_symbols, threshold)
        charts = member_charts(grammars, lexicals, None, threshold=threshold, rule_posteriors=False)
        np.testing.assert_allclose(charts[0].marginals, first.marginals)
        for grammar, lexical, chart in zip(grammars[1:], lexicals[1:], charts[1:]):
            derivations = allowed(enumerate_derivations(grammar, lexical), mask)
            if not derivations:  # no parse there: the member parsed over the whole mask
                alone = inside_outside(grammar, lexical, None, rule_posteriors=False)
                np.testing.assert_allclose(chart.marginals, alone.marginals)
                continue
            _, items, _ = oracle_posteriors(derivations)
            found = {
                (int(a), int(i), int(j)): value
                for a, i, j, value in zip(
                    chart.item_symbols, chart.item_starts, chart.item_ends, chart.marginals
                )
                if value != 0
            }
            expected = {key: value for key, value in items.items() if abs(value) > 1e-12}
            assert found.keys() == expected.keys()
            for key, value in expected.items():
                assert found[key] == pytest.approx(value, rel=1e-9)
            pruned += len(enumerate_derivations(grammar, lexical)) > len(derivations)
    assert pruned >= 3  # the threshold removed derivations of some members


def test_a_member_without_parse_on_the_kept_items_parses_over_the_mask():
    # At a threshold just below 1 the first keeps only the items of all its
    # derivations; the others then rarely find a parse there, and parse without it.
    fell_back = 0
    for seed in SEEDS:
        grammars, lexicals = _members(seed)
        first = inside_outside(grammars[0], lexicals[0], None, rule_posteriors=False)
        if not first.has_parse:
            continue
        threshold = 1 - 1e-9
        mask = _kept(first, grammars[0].n_symbols, threshold)
        charts = member_charts(grammars, lexicals, None, threshold=threshold, rule_posteriors=False)
        for grammar, lexical, chart in zip(grammars[1:], lexicals[1:], charts[1:]):
            if inside_outside(grammar, lexical, mask, rule_posteriors=False).has_parse:
                continue
            fell_back += 1
            alone = inside_outside(grammar, lexical, None, rule_posteriors=False)
            assert chart.has_parse == alone.has_parse
            np.testing.assert_allclose(chart.marginals, alone.marginals)
    assert fell_back >= 3


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_a_signed_first_member_prunes_nothing(seed):
    # spectral posteriors are no probabilities: every member parses the whole mask
    grammars, lexicals = _members(seed, signed=True)
    assert grammars[0].signed
    charts = member_charts(grammars, lexicals, None, threshold=0.5, rule_posteriors=False)
    for grammar, lexical, chart in zip(grammars, lexicals, charts):
        alone = inside_outside(grammar, lexical, None, rule_posteriors=False)
        assert chart.has_parse == alone.has_parse
        if alone.has_parse:
            np.testing.assert_allclose(chart.marginals, alone.marginals)
