"""The decoder protocol's span-score hook against brute force, the registry's one calling
convention, and parsing from several threads with one parser."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from decode_oracle import (
    CASES,
    best_rule_trees,
    best_span_objective,
    case,
    expected_counts,
    rule_objective,
)

from spacy_lpcfg.decode import DECODERS, SpanScores, mbr_parse, mbr_tree
from spacy_lpcfg.decode.mbr import DEFAULT_THRESHOLD
from spacy_lpcfg.decode.members import members_mbr, members_product
from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.decode.registry import decoder_names
from spacy_lpcfg.decode.span_marginals import SpanMarginals
from spacy_lpcfg.grammar.symbols import PHRASAL

HOOKED = sorted(name for name in decoder_names("grammar", "ensemble") if DECODERS[name].span_scores)


def _random_scores(grammar, n: int, seed: int) -> SpanScores:
    labels = tuple(
        dict.fromkeys(
            grammar.symbols.name(a).partition("^")[0] for a in grammar.symbols.ids("phrasal")
        )
    )
    rng = np.random.default_rng(seed)
    return SpanScores(labels, rng.normal(0.0, 1.0, size=(n + 1, n + 1, len(labels))))


@pytest.mark.parametrize("objective", ["max_rule", "variational"])
@pytest.mark.parametrize("seed,n", [c for c in CASES if c[1] >= 2])
def test_rule_decoders_with_span_scores_match_enumeration(objective, seed, n):
    """The decoder maximises its objective plus the scores of the tree's brackets."""
    grammar, lexical, derivations = case(seed, n, False)
    if not derivations:
        return
    extra = _random_scores(grammar, n, seed)
    column = {label: i for i, label in enumerate(extra.labels)}
    base = rule_objective(grammar, derivations, objective)
    kinds = grammar.symbols.kind_codes

    def score(derivation) -> float:
        bonus = sum(
            extra.scores[i, j, column[grammar.symbols.name(a).partition("^")[0]]]
            for a, i, j in derivation.items
            if kinds[a] == PHRASAL
        )
        return base(derivation) + bonus

    best, ties = best_rule_trees(grammar, derivations, score)
    result = DECODERS[objective]([grammar], [lexical], span_scores=extra)
    if best == -np.inf:
        assert not result.has_parse
        return
    assert np.isclose(result.score, best)
    words = [f"w{i}" for i in range(n)]
    assert result.to_tree(words).spans(include_preterminals=True) in ties


@pytest.mark.parametrize("threshold", [0.0, DEFAULT_THRESHOLD])
@pytest.mark.parametrize("seed,n", [c for c in CASES if c[1] >= 2])
def test_mbr_with_span_scores_matches_enumeration(seed, n, threshold):
    grammar, lexical, derivations = case(seed, n, True)
    if not derivations:
        return
    extra = _random_scores(grammar, n, seed)
    counts = expected_counts(grammar, derivations)

    def span_score(i, j):
        return max(
            counts.get((label, i, j), 0.0) - threshold + extra.scores[i, j, column]
            for column, label in enumerate(extra.labels)
        )

    result = mbr_parse(grammar, lexical, threshold=threshold, span_scores=extra)
    assert np.isclose(result.score, best_span_objective(n, span_score))
    if threshold == DEFAULT_THRESHOLD:  # through the registry, with the grammar twice
        both = DECODERS["product_mbr"]([grammar] * 2, [lexical] * 2, span_scores=extra)
        assert np.isclose(both.score, result.score)


@pytest.mark.parametrize("seed", range(4))
def test_zero_span_scores_change_nothing(seed):
    grammar, lexical, derivations = case(seed, 5, False)
    if not derivations:
        return
    zero = SpanScores(("NONE",), np.zeros((6, 6, 1)))
    for name in HOOKED:
        k = 2 if DECODERS[name].joint else 1
        plain = DECODERS[name]([grammar] * k, [lexical] * k)
        hooked = DECODERS[name]([grammar] * k, [lexical] * k, span_scores=zero)
        assert plain.to_tree(list("abcde")) == hooked.to_tree(list("abcde")), name
        assert np.isclose(plain.score, hooked.score), name


def test_span_scores_force_and_forbid_brackets():
    """A large bonus puts a bracket in the tree, a large penalty takes it out, for the
    span decoders and for a model's members (by category)."""
    n, labels = 3, ("NP", "VP")
    marginals = np.zeros((n + 1, n + 1, 2))
    marginals[0, 2, 0] = 0.9  # NP over [0, 2): the tree without scores has it
    marginals[1, 3, 1] = 0.5
    spans = SpanMarginals(labels, marginals, ("T",), np.ones((n, 1)))
    words = ["a", "b", "c"]

    def brackets(result):
        return set(result.to_tree(words).spans())

    assert ("NP", 0, 2) in brackets(mbr_tree(spans))
    scores = np.zeros((n + 1, n + 1, 2))
    scores[0, 2, 0] = -10.0
    scores[1, 3, 1] = 10.0
    steer = SpanScores(labels, scores)
    steered = brackets(mbr_tree(spans, span_scores=steer))
    assert ("NP", 0, 2) not in steered and ("VP", 1, 3) in steered
    for combine in (members_mbr, members_product):
        combined = brackets(combine([spans], [False], "penn", span_scores=steer))
        assert ("NP", 0, 2) not in combined and ("VP", 1, 3) in combined


def test_viterbi_refuses_span_scores_and_bad_scores_are_refused():
    grammar, lexical, _ = case(0, 3, False)
    extra = _random_scores(grammar, 3, 0)
    with pytest.raises(ValueError, match="E310"):
        DECODERS["viterbi"]([grammar], [lexical], span_scores=extra)
    with pytest.raises(ValueError, match="E309"):
        DECODERS["max_rule"]([grammar], [lexical], span_scores=_random_scores(grammar, 4, 0))
    with pytest.raises(ValueError, match="E309"):
        SpanScores(("NP",), np.full((4, 4, 1), np.nan))
    with pytest.raises(ValueError, match="E309"):
        SpanScores(("NP", "VP"), np.zeros((4, 4, 1)))


@pytest.fixture(scope="module")
def small_model(ptb_small):
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return MLEEstimator().fit(ptb_small[0]).model_


def test_one_parser_parses_from_several_threads(small_model, ptb_small):
    """Threads sharing a parser get the trees of a serial run, and the statistics
    count every sentence once."""
    sentences = [tree.words() for tree in ptb_small[1][:16]]
    serial = Parser(small_model)
    expected = [serial.parse(words).tree for words in sentences]
    shared = Parser(small_model)
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda words: shared.parse(words).tree, sentences * 2))
    assert found == expected * 2
    assert shared.fallbacks == Counter({k: 2 * v for k, v in serial.fallbacks.items()})
    assert set(shared.seconds) == set(serial.seconds)
