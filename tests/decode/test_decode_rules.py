"""max_rule, variational and viterbi decoding against brute-force enumeration."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from decode_oracle import (
    CASES,
    allowed,
    best_rule_trees,
    case,
    enumerate_derivations,
    no_parse_lexical,
    preorder,
    random_grammar,
    rule_objective,
)

from spacy_lpcfg.chart import inside_outside, viterbi
from spacy_lpcfg.decode import max_rule_parse, variational_parse, viterbi_parse
from spacy_lpcfg.decode.anchored import anchored_scores
from spacy_lpcfg.decode.rule_cky import rule_cky
from spacy_lpcfg.grammar import LexicalScores

RULE_DECODERS = {"max_rule": max_rule_parse, "variational": variational_parse}


def _words(n: int) -> list[str]:
    return [f"w{i}" for i in range(n)]


def _assert_best(grammar, derivations, result, objective):
    score = rule_objective(grammar, derivations, objective)
    best, ties = best_rule_trees(grammar, derivations, score)
    if best == -np.inf:  # every tree has a factor <= 0
        assert not result.has_parse
        return
    assert result.has_parse
    assert np.isclose(result.score, best)
    assert result.to_tree(_words(result.n_words)).spans(include_preterminals=True) in ties


@pytest.mark.parametrize("objective", sorted(RULE_DECODERS))
@pytest.mark.parametrize("seed,n", CASES)
def test_rule_decoders_match_enumeration(objective, seed, n):
    grammar, lexical, derivations = case(seed, n, False)
    result = RULE_DECODERS[objective](grammar, lexical)
    assert result.decoder == objective
    if not derivations:
        assert not result.has_parse
        return
    _assert_best(grammar, derivations, result, objective)


@pytest.mark.parametrize("objective", sorted(RULE_DECODERS))
@pytest.mark.parametrize("seed", range(6))
def test_rule_decoders_on_signed_grammars_skip_non_positive_factors(objective, seed):
    grammar, lexical, derivations = case(seed, 4, True)
    if derivations:
        _assert_best(grammar, derivations, RULE_DECODERS[objective](grammar, lexical), objective)


@pytest.mark.parametrize("objective", sorted(RULE_DECODERS))
@pytest.mark.parametrize("seed", range(4))
def test_rule_decoders_respect_the_mask(objective, seed):
    grammar, lexical, derivations = case(seed, 4, False)
    rng = np.random.default_rng(seed)
    mask = rng.random((5, 5, grammar.n_symbols)) < 0.8
    mask[0, 4, grammar.root] = True
    result = RULE_DECODERS[objective](grammar, lexical, mask)
    kept = allowed(derivations, mask)
    if not kept:
        assert not result.has_parse
        return
    _assert_best(grammar, kept, result, objective)
    for label, start, end in result.to_tree(_words(4)).spans(include_preterminals=True):
        assert mask[start, end, grammar.symbols.index(label)]


@pytest.mark.parametrize("objective", sorted(RULE_DECODERS))
def test_rule_decoders_reuse_given_posteriors(objective):
    grammar, lexical, _ = case(2, 4, False)
    mask = np.ones((5, 5, grammar.n_symbols), dtype=bool)
    mask[1, 3] = False
    posteriors = inside_outside(grammar, lexical, mask)
    decode = RULE_DECODERS[objective]
    given = decode(grammar, lexical, posteriors=posteriors)
    computed = decode(grammar, lexical, mask)
    assert given.score == computed.score
    assert np.array_equal(given.labels, computed.labels)
    assert np.array_equal(given.tags, computed.tags)


@pytest.mark.parametrize("objective", sorted(RULE_DECODERS))
def test_rule_decoders_reject_posteriors_without_rules(objective):
    grammar, lexical, _ = case(2, 3, False)
    posteriors = inside_outside(grammar, lexical, rule_posteriors=False)
    with pytest.raises(ValueError, match="E307"):
        RULE_DECODERS[objective](grammar, lexical, posteriors=posteriors)
    other = inside_outside(grammar, case(2, 4, False)[1])
    with pytest.raises(ValueError, match="E304"):
        RULE_DECODERS[objective](grammar, lexical, posteriors=other)


@pytest.mark.parametrize("seed,n", CASES)
def test_viterbi_parse_agrees_with_chart_viterbi(seed, n):
    grammar, lexical, _ = case(seed, n, False)
    derivation = viterbi(grammar, lexical)
    result = viterbi_parse(grammar, lexical)
    assert result.has_parse == derivation.has_parse
    if not result.has_parse:
        return
    assert result.score == derivation.log_score
    words = _words(n)
    assert result.to_tree(words) == derivation.to_tree(grammar.symbols, words)


@pytest.mark.parametrize("decode", [viterbi_parse, max_rule_parse, variational_parse])
def test_rule_decoders_flag_sentences_without_parse(decode):
    grammar = random_grammar(0, signed=False)
    result = decode(grammar, no_parse_lexical(grammar, 3))
    assert not result.has_parse and result.score == -np.inf
    with pytest.raises(ValueError, match="E301"):
        result.to_tree(_words(3))


@pytest.mark.parametrize("decode", [viterbi_parse, max_rule_parse, variational_parse])
def test_rule_decoders_parse_one_word(decode):
    grammar, lexical, derivations = next(
        found for seed in range(6) if (found := case(seed, 1, False))[2]
    )
    tree = decode(grammar, lexical).to_tree(["w"])
    assert tree.label == "TOP" and tree.words() == ["w"]
    assert tree.spans(include_preterminals=True) in [preorder(grammar, d) for d in derivations]


@pytest.mark.parametrize("seed", range(6))
def test_variational_is_viterbi_for_one_state_grammars(seed):
    # With one state, q(rule) = T in_b in_c / in_a telescopes to P(tree) / Z.
    grammar = random_grammar(seed, max_states=1, signed=False)
    lexical = LexicalScores.from_word_ids(grammar, [0, 1, 2, 1])
    posteriors = inside_outside(grammar, lexical)
    best = viterbi_parse(grammar, lexical)
    result = variational_parse(grammar, lexical, posteriors=posteriors)
    assert result.has_parse == best.has_parse
    if best.has_parse:
        assert np.isclose(result.score, best.score - posteriors.log_abs_z)
        # Trees of equal weight (the same rules in another order) may tie either way.
        _assert_best(grammar, enumerate_derivations(grammar, lexical), result, "variational")


@pytest.mark.parametrize("max_states", [1, 3])
@pytest.mark.parametrize("seed", range(4))
def test_rule_cky_numbers_items_without_chart_ids(seed, max_states):
    # Scores summed over grammars carry no chart item ids: rule_cky numbers the items
    # itself, and must find the same tree.
    grammar = random_grammar(seed, max_states=max_states, signed=False)
    lexical = LexicalScores.from_word_ids(grammar, [0, 1, 2, 1, 0])
    posteriors = inside_outside(grammar, lexical)
    if not posteriors.has_parse:
        return
    scores = anchored_scores(grammar, posteriors, "max_rule")
    assert scores.binary_items is not None
    numbered = dataclasses.replace(scores, tag_items=None, binary_items=None, unary_items=None)
    a, b = rule_cky(grammar, scores, "max_rule"), rule_cky(grammar, numbered, "max_rule")
    assert a.score == b.score
    assert a.to_tree(_words(5)) == b.to_tree(_words(5))
