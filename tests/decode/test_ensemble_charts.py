"""An ensemble's grammars pruned by the first grammar's posteriors (``ensemble_charts``),
against charts computed apart and the brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest
from chart.brute_force import oracle_posteriors
from decode_oracle import allowed, case, enumerate_derivations, reweighted, word_ids

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode.charts import ensemble_charts
from spacy_lpcfg.grammar import LexicalScores

SEEDS = range(12)


def _members(seed: int, signed: bool = False):
    grammar, _, _ = case(seed, 4, signed)
    grammars = [grammar] + [reweighted(grammar, seed + k, 0.05, 3.0) for k in (100, 200)]
    words = word_ids(grammar, 4, seed)
    return grammars, [LexicalScores.from_word_ids(g, words) for g in grammars]


def _assert_parsed_alone(grammar, lexical, chart, rule_posteriors: bool = False) -> None:
    """``chart`` is the member's chart over the whole mask (here: no mask)."""
    alone = inside_outside(grammar, lexical, None, rule_posteriors=rule_posteriors)
    assert chart.has_parse == alone.has_parse
    if alone.has_parse:
        np.testing.assert_allclose(chart.marginals, alone.marginals)
        if rule_posteriors:
            np.testing.assert_allclose(chart.binary.scores, alone.binary.scores)


def _pruned_by_first(seed: int, threshold_of):
    """(grammars, lexicals, the first's kept items, ensemble_charts) at the threshold
    ``threshold_of(the first's marginals)``; None when the first has no parse."""
    grammars, lexicals = _members(seed)
    first = inside_outside(grammars[0], lexicals[0], None, rule_posteriors=False)
    if not first.has_parse:
        return None
    threshold = float(threshold_of(first.marginals))
    mask = _kept(first, grammars[0].n_symbols, threshold)
    charts = ensemble_charts(grammars, lexicals, None, threshold=threshold, rule_posteriors=False)
    np.testing.assert_allclose(charts[0].marginals, first.marginals)
    return grammars, lexicals, mask, charts


def _kept(chart, n_symbols: int, threshold: float) -> np.ndarray:
    n = chart.n_words
    mask = np.zeros((n + 1, n + 1, n_symbols), dtype=bool)
    kept = chart.marginals > threshold
    mask[chart.item_starts[kept], chart.item_ends[kept], chart.item_symbols[kept]] = True
    return mask


@pytest.mark.parametrize("seed", SEEDS)
def test_threshold_zero_parses_every_member_alone(seed):
    grammars, lexicals = _members(seed)
    charts = ensemble_charts(grammars, lexicals, None, threshold=0.0, rule_posteriors=True)
    for grammar, lexical, chart in zip(grammars, lexicals, charts):
        _assert_parsed_alone(grammar, lexical, chart, rule_posteriors=True)


def test_members_parse_the_items_the_first_keeps():
    # The oracle: every derivation of the member whose items all have a posterior
    # above the threshold under the first member.
    pruned = 0
    for seed in SEEDS:
        found = _pruned_by_first(seed, lambda marginals: np.quantile(marginals, 0.3))
        if found is None:
            continue
        grammars, lexicals, mask, charts = found
        for grammar, lexical, chart in zip(grammars[1:], lexicals[1:], charts[1:]):
            derivations = allowed(enumerate_derivations(grammar, lexical), mask)
            if not derivations:  # no parse there: the member parsed over the whole mask
                _assert_parsed_alone(grammar, lexical, chart)
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
        found = _pruned_by_first(seed, lambda _: 1 - 1e-9)  # items of every derivation
        if found is None:
            continue
        grammars, lexicals, mask, charts = found
        for grammar, lexical, chart in zip(grammars[1:], lexicals[1:], charts[1:]):
            if inside_outside(grammar, lexical, mask, rule_posteriors=False).has_parse:
                continue
            fell_back += 1
            _assert_parsed_alone(grammar, lexical, chart)
    assert fell_back >= 3


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_a_signed_first_member_prunes_nothing(seed):
    # spectral posteriors are no probabilities: every member parses the whole mask
    grammars, lexicals = _members(seed, signed=True)
    assert grammars[0].signed
    charts = ensemble_charts(grammars, lexicals, None, threshold=0.5, rule_posteriors=False)
    for grammar, lexical, chart in zip(grammars, lexicals, charts):
        _assert_parsed_alone(grammar, lexical, chart)
