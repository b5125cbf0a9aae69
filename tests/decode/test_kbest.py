"""k-best parsing (decode.kbest, Parser.kbest) against enumeration of every tree of
small random grammars, then on PTB models: the 1-best is the decoder's tree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decode_oracle import (
    CASES,
    allowed,
    case,
    enumerate_derivations,
    random_grammar,
    rule_objective,
    word_ids,
)

from spacy_lpcfg.decode import max_rule_parse, variational_parse, viterbi_parse
from spacy_lpcfg.decode.kbest import format_kbest, kbest_parse
from spacy_lpcfg.decode.parser import Parse, Parser
from spacy_lpcfg.grammar import LexicalScores
from spacy_lpcfg.grammar.model import combine_models
from spacy_lpcfg.trees.tree import Tree


def _latent_case(seed: int, n: int, max_states: int):
    grammar = random_grammar(
        seed, density=0.3 if n == 5 else 0.5, signed=False, max_states=max_states
    )
    lexical = LexicalScores.from_word_ids(grammar, word_ids(grammar, n, seed))
    return grammar, lexical, enumerate_derivations(grammar, lexical)


def _key(result) -> tuple:
    """A tree of the grammar (ParseResult), comparable with a derivation's items."""
    phrases = zip(result.labels.tolist(), result.starts.tolist(), result.ends.tolist())
    return tuple(sorted(phrases)), tuple(result.tags.tolist())


def _oracle(grammar, derivations, score) -> dict[tuple, float]:
    """tree -> its score; a tree's several derivations (latent states are summed or
    maximised inside each enumerated one) keep the best."""
    kinds = grammar.symbols.kind_codes
    found: dict[tuple, float] = {}
    for derivation in derivations:
        value = score(derivation)
        if value == -math.inf:
            continue
        tags = [0] * (max(j for _, _, j in derivation.items))
        phrases = []
        for a, i, j in derivation.items:
            if kinds[a] == 3:  # PRETERMINAL
                tags[i] = int(a)
            else:
                phrases.append((int(a), int(i), int(j)))
        key = (tuple(sorted(phrases)), tuple(tags))
        found[key] = max(found.get(key, -math.inf), value)
    return found


def _check_top(results, oracle: dict[tuple, float], k: int) -> None:
    """results are the k best of oracle: the same scores in order (ties in any order),
    distinct trees, each scored as the oracle scores it."""
    expected = sorted(oracle.values(), reverse=True)[:k]
    assert len(results) == len(expected)
    assert np.allclose([r.score for r in results], expected, rtol=1e-9, atol=1e-9)
    keys = [_key(r) for r in results]
    assert len(set(keys)) == len(keys)
    for result, key in zip(results, keys):
        assert math.isclose(oracle[key], result.score, rel_tol=1e-9, abs_tol=1e-9)


def _viterbi_score(derivation) -> float:
    best = derivation.best[0]
    return math.log(best) if best > 0 else -math.inf


@pytest.mark.parametrize("seed,n", CASES)
def test_viterbi_kbest_matches_enumeration_one_state(seed, n):
    grammar, lexical, derivations = _latent_case(seed, n, 1)
    oracle = _oracle(grammar, derivations, _viterbi_score)
    every = len(oracle) + 5  # every tree, and no more
    for k in (1, 3, 10, every if every < 2000 else 200):
        _check_top(kbest_parse(grammar, lexical, k=k), oracle, k)


@pytest.mark.parametrize("seed,n", CASES)
def test_viterbi_kbest_matches_enumeration_latent(seed, n):
    """Latent states: a tree's score is its best derivation's (max over states), and
    each tree comes once however many derivations it has."""
    grammar, lexical, derivations = _latent_case(seed, n, 3)
    oracle = _oracle(grammar, derivations, _viterbi_score)
    for k in (1, 4, len(oracle) + 5):
        _check_top(kbest_parse(grammar, lexical, k=k), oracle, k)


@pytest.mark.parametrize("objective", ["max_rule", "variational"])
@pytest.mark.parametrize("seed,n", CASES)
def test_rule_objective_kbest_matches_enumeration(seed, n, objective):
    grammar, lexical, derivations = case(seed, n, False)
    if not derivations:
        assert kbest_parse(grammar, lexical, objective=objective) == []
        return
    oracle = _oracle(grammar, derivations, rule_objective(grammar, derivations, objective))
    for k in (1, 5, len(oracle) + 5):
        _check_top(kbest_parse(grammar, lexical, k=k, objective=objective), oracle, k)


@pytest.mark.parametrize("max_states", [1, 3])
@pytest.mark.parametrize("seed,n", [case for case in CASES if case[1] >= 2])
def test_one_best_is_the_decoders_tree(seed, n, max_states):
    grammar, lexical, _ = _latent_case(seed, n, max_states)
    for objective, decode in (
        ("viterbi", viterbi_parse),
        ("max_rule", max_rule_parse),
        ("variational", variational_parse),
    ):
        expected = decode(grammar, lexical)
        found = kbest_parse(grammar, lexical, k=2, objective=objective)
        if not expected.has_parse:
            assert found == []
            continue
        assert math.isclose(found[0].score, expected.score, rel_tol=1e-9, abs_tol=1e-9)
        if len(found) == 1 or not math.isclose(found[1].score, found[0].score):
            assert _key(found[0]) == _key(expected)  # no tie: the same tree


@pytest.mark.parametrize("seed", range(4))
def test_kbest_respects_the_mask(seed):
    grammar, lexical, derivations = _latent_case(seed, 4, 1)
    rng = np.random.default_rng(seed)
    mask = rng.random((5, 5, grammar.n_symbols)) < 0.8
    mask[0, 4, grammar.root] = True
    oracle = _oracle(grammar, allowed(derivations, mask), _viterbi_score)
    _check_top(kbest_parse(grammar, lexical, mask, k=len(oracle) + 2), oracle, len(oracle) + 2)


def test_kbest_refuses_what_it_cannot_rank():
    grammar, lexical, _ = case(0, 3, True)  # signed weights
    with pytest.raises(ValueError, match="E311"):
        kbest_parse(grammar, lexical)
    grammar, lexical, _ = case(0, 3, False)
    with pytest.raises(ValueError, match="E303"):
        kbest_parse(grammar, lexical, objective="mbr")
    for k in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="E011"):
            kbest_parse(grammar, lexical, k=k)


def test_format_kbest_is_berkeley_style():
    tree = Tree.from_string("(TOP (S (NN a)))")
    text = format_kbest([Parse(tree, score=-1.5), Parse(tree, "flat")])
    assert text == "-1.5\t(TOP (S (NN a)))\n-inf\t(TOP (S (NN a)))\n"


# The parser on PTB models ------------------------------------------------------------


@pytest.fixture(scope="module")
def small_model(ptb_small):
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return MLEEstimator().fit(ptb_small[0]).model_


@pytest.fixture(scope="module")
def latent_model(ptb_small):
    from spacy_lpcfg.estimators.clustering import ClusteringEstimator

    return ClusteringEstimator(n_states=2).fit(ptb_small[0][:150]).model_


@pytest.fixture(scope="module")
def sentences(ptb_small):
    return [tree.words() for tree in ptb_small[1][:8]]


def _check_list(parses: list[Parse], one: Parse, k: int) -> None:
    assert 1 <= len(parses) <= k
    assert parses[0].tree == one.tree
    assert math.isclose(parses[0].score, one.score, rel_tol=1e-9)
    scores = [parse.score for parse in parses]
    assert all(a >= b - 1e-9 for a, b in zip(scores, scores[1:]))
    assert len({parse.tree.pformat() for parse in parses}) == len(parses)
    assert all(parse.tree.words() == one.tree.words() for parse in parses)
    assert len({parse.log_likelihood for parse in parses}) == 1
    for parse in parses:
        assert [s[:3] for s in parse.span_posteriors] == parse.tree.spans(include_root=False)


@pytest.mark.parametrize("decoder", ["viterbi", "max_rule", "variational"])
def test_parser_kbest_starts_with_the_decoders_parse(small_model, sentences, decoder):
    parser = Parser(small_model, decoder=decoder)
    for words in sentences:
        parses = parser.kbest(words, k=10)
        _check_list(parses, parser.parse(words), 10)
        assert len(parses) == 10  # PTB sentences have many trees
        if decoder == "viterbi":
            # one state per symbol: each score is log P(tree, words) <= log P(words)
            probabilities = [math.exp(p.score - p.log_likelihood) for p in parses]
            assert sum(probabilities) <= 1 + 1e-9


def test_parser_kbest_with_a_latent_grammar(latent_model, sentences):
    parser = Parser(latent_model, decoder="viterbi")
    for words in sentences[:5]:
        _check_list(parser.kbest(words, k=5), parser.parse(words), 5)


def test_parser_kbest_of_one_is_parse(small_model, sentences):
    parser = Parser(small_model, decoder="viterbi")
    [parse] = parser.kbest(sentences[0], k=1)
    assert parse.tree == parser.parse(sentences[0]).tree
    assert parser.kbest_all(sentences[:2], k=2)[0][0].tree == parse.tree


def test_parser_kbest_fallback_is_one_flat_tree(small_model, sentences):
    [parse] = Parser(small_model, decoder="viterbi", max_length=2).kbest(sentences[0], k=5)
    assert parse.fallback == "too_long" and parse.score is None


def test_parser_kbest_refuses_what_it_does_not_support(small_model, sentences):
    words = sentences[0]
    for parser in (
        Parser(small_model, decoder="mbr"),
        Parser(combine_models([small_model, small_model], "product")),
        Parser(small_model.with_members([small_model], "mbr")),
    ):
        with pytest.raises(ValueError, match="E311"):
            parser.kbest(words, k=3)
    for k in (0, 10**6, 2.5):
        with pytest.raises(ValueError, match="E011"):
            Parser(small_model, decoder="viterbi").kbest(words, k=k)


def test_kbest_lists_in_processes_are_the_parsers(small_model, sentences, tmp_path):
    """parse_in_processes(kbest=K) writes each sentence's list as format_kbest does."""
    from spacy_lpcfg.decode.processes import parse_in_processes

    small_model.to_disk(tmp_path / "model")
    options = {"decoder": "viterbi"}
    parser = Parser(small_model, **options)
    given = [(words, None) for words in sentences[:3]] + [None]
    found = list(parse_in_processes(tmp_path / "model", given, 2, options, kbest=3))
    expected = [format_kbest(parser.kbest(words, k=3)) for words in sentences[:3]] + [""]
    assert found == expected
    assert found[0].count("\n") == 3
    best = float(found[0].split("\t")[0])
    assert math.isclose(best, parser.parse(sentences[0]).score, rel_tol=1e-12)
