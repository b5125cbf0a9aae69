"""Products of grammars: single-grammar equivalences and brute-force oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decode_oracle import (
    best_span_objective,
    case,
    enumerate_derivations,
    expected_counts,
    no_parse_lexical,
    preorder,
    random_grammar,
    reweighted,
    rule_objective,
    word_ids,
)

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode import (
    max_rule_parse,
    mbr_parse,
    product_mbr_parse,
    product_parse,
    shares_rules,
)
from spacy_lpcfg.decode.product import MIN_PROBABILITY
from spacy_lpcfg.grammar import LPCFG, LexicalScores

SEEDS = range(5)


def _same(a, b) -> bool:
    return (
        np.array_equal(a.labels, b.labels)
        and np.array_equal(a.starts, b.starts)
        and np.array_equal(a.ends, b.ends)
        and np.array_equal(a.tags, b.tags)
        and a.label_names == b.label_names
    )


def _sentence(grammar: LPCFG, seed: int) -> LexicalScores:
    return LexicalScores.from_word_ids(grammar, word_ids(grammar, 4, seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_product_of_one_grammar_is_the_single_decoder(seed):
    grammar, lexical, _ = case(seed, 4, False)
    single = max_rule_parse(grammar, lexical)
    product = product_parse([grammar], [lexical])
    assert product.has_parse == single.has_parse
    assert _same(product, single) and product.score == single.score
    signed, signed_lexical, _ = case(seed, 4, True)
    mbr = mbr_parse(signed, signed_lexical)
    assert _same(product_mbr_parse([signed], [signed_lexical]), mbr)


@pytest.mark.parametrize("seed", SEEDS)
def test_product_of_copies_gives_the_same_tree(seed):
    grammar, lexical, _ = case(seed, 4, False)
    single = max_rule_parse(grammar, lexical)
    if not single.has_parse:
        return
    product = product_parse([grammar] * 3, [lexical] * 3)
    assert _same(product, single) and np.isclose(product.score, 3 * single.score)
    mbr = mbr_parse(grammar, lexical)
    assert _same(product_mbr_parse([grammar] * 3, [lexical] * 3), mbr)


@pytest.mark.parametrize("seed", SEEDS)
def test_product_over_shared_rules_matches_enumeration(seed):
    grammar, lexical, derivations = case(seed, 4, False)
    other = reweighted(grammar, seed + 100)
    other_lexical = LexicalScores.from_word_ids(other, word_ids(grammar, 4, seed))
    assert shares_rules([grammar, other])
    result = product_parse([grammar, other], [lexical, other_lexical])
    if not derivations:
        assert not result.has_parse
        return
    totals = {}
    for g, found in ((grammar, derivations), (other, enumerate_derivations(other, other_lexical))):
        score = rule_objective(g, found, "max_rule")
        for d in found:
            key = tuple(preorder(g, d))
            totals[key] = totals.get(key, 0.0) + score(d)
    best = max(totals.values())
    assert np.isclose(result.score, best)
    tree = result.to_tree(["a", "b", "c", "d"])
    assert np.isclose(totals[tuple(tree.spans(include_preterminals=True))], best)


@pytest.mark.parametrize("seed", SEEDS)
def test_product_over_different_rules_matches_span_enumeration(seed):
    grammars = [random_grammar(seed, signed=False), random_grammar(seed + 50, signed=False)]
    lexicals = [_sentence(grammar, seed) for grammar in grammars]
    assert not shares_rules(grammars)
    found = [enumerate_derivations(g, lex) for g, lex in zip(grammars, lexicals)]
    result = product_parse(grammars, lexicals)
    parsing = [(g, d) for g, d in zip(grammars, found) if d]
    assert result.has_parse == bool(parsing)
    if not parsing:
        return
    counts = [expected_counts(g, d) for g, d in parsing]
    labels = sorted({label for c in counts for label, _, _ in c})

    def log_odds(i, j, label):
        total = 0.0
        for c in counts:
            none = 1.0 - sum(c.get((other, i, j), 0.0) for other in labels)
            total += math.log(max(c.get((label, i, j), 0.0), MIN_PROBABILITY))
            total -= math.log(min(max(none, MIN_PROBABILITY), 1.0))
        return total

    def span_score(i, j):
        return max(log_odds(i, j, label) for label in labels)

    best = best_span_objective(4, span_score)
    assert np.isclose(result.score, best)
    brackets = result.to_tree(["a", "b", "c", "d"]).spans(include_root=False)
    assert np.isclose(sum(log_odds(i, j, label) for label, i, j in brackets), best)


@pytest.mark.parametrize("seed", SEEDS)
def test_product_mbr_over_different_grammars_matches_enumeration(seed):
    grammars = [random_grammar(seed), random_grammar(seed + 50)]  # signed
    lexicals = [_sentence(grammar, seed) for grammar in grammars]
    found = [enumerate_derivations(g, lex) for g, lex in zip(grammars, lexicals)]
    result = product_mbr_parse(grammars, lexicals, threshold=0.4)
    parsing = [(g, d) for g, d in zip(grammars, found) if d]
    if not parsing:
        assert not result.has_parse
        return
    counts = [expected_counts(g, d) for g, d in parsing]
    labels = {label for c in counts for label, _, _ in c}

    def mean(label, i, j):
        return sum(c.get((label, i, j), 0.0) for c in counts) / len(counts)

    best = best_span_objective(4, lambda i, j: max(mean(label, i, j) for label in labels) - 0.4)
    assert np.isclose(result.score, best)


def test_product_leaves_out_members_without_parse():
    grammar, lexical, derivations = case(1, 4, False)
    assert derivations
    failing = no_parse_lexical(grammar, 4)
    single = max_rule_parse(grammar, lexical)
    assert _same(product_parse([grammar, grammar], [failing, lexical]), single)
    assert _same(
        product_mbr_parse([grammar, grammar], [lexical, failing]), mbr_parse(grammar, lexical)
    )
    assert not product_parse([grammar, grammar], [failing, failing]).has_parse
    assert not product_mbr_parse([grammar], [failing]).has_parse


def test_product_respects_masks_and_reuses_posteriors():
    grammar, lexical, _ = case(3, 4, False)
    other = reweighted(grammar, 7)
    other_lexical = LexicalScores.from_word_ids(other, word_ids(grammar, 4, 3))
    mask = np.random.default_rng(0).random((5, 5, grammar.n_symbols)) < 0.8
    mask[0, 4, grammar.root] = True
    grammars, lexicals = [grammar, other], [lexical, other_lexical]
    result = product_parse(grammars, lexicals, [mask, mask])
    charts = [inside_outside(g, lex, mask) for g, lex in zip(grammars, lexicals)]
    assert _same(result, product_parse(grammars, lexicals, posteriors=charts))
    if result.has_parse:
        tree = result.to_tree(["a", "b", "c", "d"])
        for label, start, end in tree.spans(include_preterminals=True):
            assert mask[start, end, grammar.symbols.index(label)]


def test_product_checks_its_arguments():
    grammar, lexical, _ = case(0, 3, False)
    with pytest.raises(ValueError, match="E308"):
        product_parse([], [])
    with pytest.raises(ValueError, match="E305"):
        product_parse([grammar, grammar], [lexical])
    with pytest.raises(ValueError, match="E305"):
        product_mbr_parse([grammar], [lexical], [None, None])
    with pytest.raises(ValueError, match="E306"):
        product_parse([grammar, grammar], [lexical, case(0, 4, False)[1]])
