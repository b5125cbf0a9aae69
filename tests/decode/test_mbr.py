"""mbr_parse against expected labelled recall computed by enumeration (signed grammars)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from decode_oracle import (
    CASES,
    allowed,
    best_span_objective,
    case,
    expected_counts,
    no_parse_lexical,
    random_grammar,
    tag_marginals,
)

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode import SpanMarginals, mbr_parse, mbr_tree
from spacy_lpcfg.grammar.symbols import PHRASAL


def _check_mbr(grammar, derivations, result, threshold=0.0):
    n = result.n_words
    counts = expected_counts(grammar, derivations)
    phrasal = [grammar.symbols.name(a) for a in grammar.symbols.ids("phrasal")]

    def span_score(i, j):
        return max(counts.get((label, i, j), 0.0) for label in phrasal) - threshold

    best = best_span_objective(n, span_score)
    tree = result.to_tree([f"w{i}" for i in range(n)])
    brackets = tree.spans(include_root=False)
    assert np.isclose(result.score, best)
    assert np.isclose(sum(counts.get(b, 0.0) - threshold for b in brackets), best)
    assert len(set((i, j) for _, i, j in brackets)) == len(brackets)  # one label per span
    tags = tag_marginals(grammar, derivations)
    for i, tag in enumerate(tree.tags()):
        assert np.isclose(tags[(tag, i)], max(v for (_, p), v in tags.items() if p == i))


@pytest.mark.parametrize("threshold", [0.0, 0.4])
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("seed,n", CASES)
def test_mbr_matches_enumeration(seed, n, signed, threshold):
    grammar, lexical, derivations = case(seed, n, signed)
    result = mbr_parse(grammar, lexical, threshold=threshold)
    assert result.decoder == "mbr"
    if not derivations:
        assert not result.has_parse
        return
    assert result.has_parse
    _check_mbr(grammar, derivations, result, threshold)


def test_mbr_sees_negative_marginals():
    # Guards the signed cases above: some chart does have negative natural marginals.
    negative = False
    for seed, n in CASES:
        grammar, lexical, _ = case(seed, n, True)
        posteriors = inside_outside(grammar, lexical)
        natural = grammar.symbols.kind_codes[posteriors.item_symbols] == PHRASAL
        negative = negative or (posteriors.marginals[natural] < 0).any()
    assert negative


@pytest.mark.parametrize("seed", range(4))
def test_mbr_respects_the_mask(seed):
    grammar, lexical, derivations = case(seed, 4, True)
    mask = np.random.default_rng(seed).random((5, 5, grammar.n_symbols)) < 0.8
    mask[0, 4, grammar.root] = True
    result = mbr_parse(grammar, lexical, mask, threshold=0.0)
    kept = allowed(derivations, mask)
    assert result.has_parse == bool(kept)
    if not kept:
        return
    _check_mbr(grammar, kept, result)
    tree = result.to_tree(["a", "b", "c", "d"])
    for label, start, end in tree.spans(include_root=False, include_preterminals=True):
        assert mask[start, end, grammar.symbols.index(label)]


def test_mbr_reuses_given_posteriors():
    grammar, lexical, _ = case(1, 4, True)
    posteriors = inside_outside(grammar, lexical, rule_posteriors=False)
    given = mbr_parse(grammar, lexical, posteriors=posteriors)
    computed = mbr_parse(grammar, lexical)
    assert given.score == computed.score and np.array_equal(given.labels, computed.labels)


def test_mbr_flags_sentences_without_parse():
    grammar = random_grammar(0)
    result = mbr_parse(grammar, no_parse_lexical(grammar, 2))
    assert not result.has_parse
    with pytest.raises(ValueError, match="E301"):
        result.to_tree(["a", "b"])


def test_mbr_parses_one_word():
    grammar, lexical, _ = next(found for seed in range(6) if (found := case(seed, 1, True))[2])
    tree = mbr_parse(grammar, lexical).to_tree(["w"])
    assert tree.label == "TOP" and tree.words() == ["w"]


CHAIN_LABELS = ("S::VP", "NP", "NP::NP", "S", "VP", "VP::VP::VP")


@pytest.mark.parametrize("threshold", [0.0, 0.25, 0.4])
@pytest.mark.parametrize("seed", range(6))
def test_mbr_tree_counts_chain_brackets_as_evalb_matches_them(seed, threshold):
    # Each span's gold label is one chain (or none) with the given probabilities; a
    # predicted chain's expected matches are the multiset overlap with the gold chain.
    n = 4
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet(np.full(len(CHAIN_LABELS) + 1, 0.3), size=(n + 1, n + 1))
    marginals = probabilities[:, :, 1:]
    spans = SpanMarginals(CHAIN_LABELS, marginals, ("T",), np.ones((n, 1)))
    result = mbr_tree(spans, threshold=threshold)

    def gain(label: str, i: int, j: int) -> float:
        predicted = Counter(label.split("::"))
        expected = sum(
            marginals[i, j, g] * sum((predicted & Counter(gold.split("::"))).values())
            for g, gold in enumerate(CHAIN_LABELS)
        )
        return expected - threshold * sum(predicted.values())

    best = best_span_objective(n, lambda i, j: max(gain(label, i, j) for label in CHAIN_LABELS))
    assert np.isclose(result.score, best)
    tree = result.to_tree(["a", "b", "c", "d"])
    chains = [(node.label, i, j) for node, (_, i, j) in _labelled_nodes(tree)]
    assert np.isclose(sum(gain(label, i, j) for label, i, j in chains), best)


def _labelled_nodes(tree):
    """(node, span) of the phrase nodes below the root, pre-order."""
    nodes = [node for node in tree.subtrees() if not node.is_preterminal][1:]
    return list(zip(nodes, tree.spans(include_root=False)))
