"""The one-state kernels against the latent kernels, merged masks and the items they
leave out (the enumeration oracle runs in test_inside_outside with max_states=1)."""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest
from brute_force import (
    assert_dicts_close,
    chart_dicts,
    random_grammar,
    sentence,
    with_unused_state,
    with_unused_state_lexical,
)

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.chart.inputs import MergedMask, chart_index
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable


def _nonzero(items: dict) -> dict:
    return {key: value for key, value in items.items() if value != 0.0}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("masked", [False, True])
def test_one_state_kernels_equal_latent_kernels(seed, masked):
    grammar = random_grammar(seed, max_states=1, signed=seed % 2 == 0, density=0.4)
    lexical = sentence(grammar, 9, seed)
    latent = with_unused_state(grammar)
    latent_lexical = with_unused_state_lexical(lexical, latent)
    mask = None
    if masked:
        mask = np.random.default_rng(seed).random((10, 10, grammar.n_symbols)) < 0.8
    one = inside_outside(grammar, lexical, mask)
    two = inside_outside(latent, latent_lexical, mask)
    assert one.has_parse == two.has_parse
    if not one.has_parse:
        return
    assert np.isclose(one.log_abs_z, two.log_abs_z) and one.z_sign == two.z_sign
    one_items, one_rules = chart_dicts(one)
    two_items, two_rules = chart_dicts(two)
    # The one-state chart leaves out items no parse can use: their marginals are 0.
    assert set(_nonzero(one_items)) <= set(two_items)
    assert_dicts_close(_nonzero(one_items), _nonzero(two_items))
    assert_dicts_close(_nonzero(one_rules), _nonzero(two_rules))


@pytest.mark.parametrize("max_states", [1, 3])
def test_merged_mask_equals_its_dense_mask(max_states):
    grammar = random_grammar(5, max_states=max_states, signed=False, density=0.5)
    lexical = sentence(grammar, 6, 5)
    rng = np.random.default_rng(0)
    columns = rng.integers(0, 3, size=grammar.n_symbols).astype(np.int32)
    merged = MergedMask(rng.random((7, 7, 3)) < 0.7, columns)
    a = inside_outside(grammar, lexical, merged)
    b = inside_outside(grammar, lexical, merged.dense())
    assert a.log_abs_z == b.log_abs_z
    assert np.array_equal(
        a.dense_marginals(grammar.n_symbols), b.dense_marginals(grammar.n_symbols)
    )


def _left_only_grammar() -> LPCFG:
    """S -> A S | @S T, @S -> A A: @S is only ever a left child, and needs a T on its
    right."""
    symbols = SymbolTable.from_kinds(phrasal=["S"], intermediate=["@S|>T"], preterminal=["A", "T"])
    return LPCFG.from_rules(
        symbols,
        {},
        binary={("S", "A", "S"): 0.5, ("S", "@S|>T", "T"): 0.5, ("@S|>T", "A", "A"): 1.0},
        unary={("TOP", "S"): [[1.0]]},
        lexical={("A", "a"): 1.0, ("T", "t"): 1.0},
    )


def test_left_only_items_need_their_right_sibling():
    grammar = _left_only_grammar()
    intermediate = grammar.symbols.index("@S|>T")
    assert chart_index(grammar).left_only.tolist() == [
        name == "@S|>T" for name in grammar.symbols.names
    ]
    lexical = LexicalScores.from_word_ids(grammar, [grammar.word_index[w] for w in "aaat"])
    result = inside_outside(grammar, lexical)
    spans = {
        (int(i), int(j))
        for a, i, j in zip(result.item_symbols, result.item_starts, result.item_ends)
        if a == intermediate
    }
    assert spans == {(1, 3)}  # (0, 2) is followed by an "a": no parse uses it
    assert np.isclose(np.exp(result.log_abs_z), 0.25)  # S(A, S(@S(A A), T))


def test_rule_groups_partition_each_parents_rules():
    for seed in range(3):
        grammar = random_grammar(seed, max_states=1, density=0.5)
        index = chart_index(grammar)
        rules = grammar.binary_rules
        for a in range(grammar.n_symbols):
            groups = range(index.group_offsets[a], index.group_offsets[a + 1])
            spans = [(index.group_rules[g], index.group_rules[g + 1]) for g in groups]
            rows = [r for first, last in spans for r in range(first, last)]
            assert rows == np.flatnonzero(rules[:, 0] == a).tolist()
            lefts = index.group_lefts[list(groups)].tolist()
            assert lefts == sorted(set(rules[rules[:, 0] == a, 1].tolist()))
            for left, (first, last) in zip(lefts, spans):
                assert (rules[first:last, 1] == left).all()


def _kernels_module():
    return importlib.import_module("spacy_lpcfg.chart.inside_outside")


@pytest.mark.parametrize("capacity", [0, 40, 100])
@pytest.mark.parametrize("seed", range(4))
def test_hyperedges_searched_again_equal_recorded(seed, capacity, monkeypatch):
    """The outside pass searches again the hyperedges the inside pass could not record
    (a full buffer, here small): the same chart either way (the recorded one is
    checked against the oracle in test_inside_outside)."""
    grammar = random_grammar(seed, max_states=1, signed=seed % 2 == 0, density=0.4)
    lexical = sentence(grammar, 7, seed)
    mask = np.random.default_rng(seed).random((8, 8, grammar.n_symbols)) < 0.9
    recorded = inside_outside(grammar, lexical, mask)
    module = _kernels_module()
    monkeypatch.setattr(module, "_EDGE_CAPACITY", capacity)
    monkeypatch.setattr(module, "_SCRATCH", threading.local())
    searched = inside_outside(grammar, lexical, mask)
    assert recorded.has_parse == searched.has_parse
    if not recorded.has_parse:
        return
    assert np.isclose(recorded.log_abs_z, searched.log_abs_z)
    a_items, a_rules = chart_dicts(recorded)
    b_items, b_rules = chart_dicts(searched)
    assert set(a_items) == set(b_items) and set(a_rules) == set(b_rules)
    assert_dicts_close(a_items, b_items)
    assert_dicts_close(a_rules, b_rules)


def test_scratch_reuse_does_not_leak_between_sentences(monkeypatch):
    """The item table and bitsets are reused dirty from sentence to sentence: a short
    sentence after a long one (and the converse) gets the chart of a fresh buffer."""
    grammar = random_grammar(2, max_states=1, signed=False, density=0.5)
    sentences = {"short": sentence(grammar, 5, 1), "long": sentence(grammar, 12, 2)}
    module = _kernels_module()
    fresh = {}
    for name, lexical in sentences.items():
        monkeypatch.setattr(module, "_SCRATCH", threading.local())
        fresh[name] = chart_dicts(inside_outside(grammar, lexical))
    for order in (("long", "short"), ("short", "long", "long", "short")):
        monkeypatch.setattr(module, "_SCRATCH", threading.local())
        for name in order:
            items, rules = chart_dicts(inside_outside(grammar, sentences[name]))
            assert items.keys() == fresh[name][0].keys()
            assert_dicts_close(items, fresh[name][0])
            assert_dicts_close(rules, fresh[name][1])


def _binary_posteriors(result) -> np.ndarray:
    """float64 (K, 5): (rule, start, split, end, posterior) of the non-zero binary
    posteriors, sorted."""
    b = result.binary
    rows = np.stack([b.rules, b.starts, b.splits, b.ends, b.scores], axis=1)[b.scores != 0]
    return rows[np.lexsort(rows[:, 3::-1].T)]


@pytest.mark.parametrize("n", [63, 64, 129])
def test_one_state_kernels_beyond_one_bit_word(n):
    """Split bitsets take n // 64 + 1 words: sentences around and past 64 words
    against the latent kernels."""
    grammar = random_grammar(1, max_states=1, signed=False, density=0.3)
    lexical = sentence(grammar, n, n)
    latent = with_unused_state(grammar)
    one = inside_outside(grammar, lexical)
    two = inside_outside(latent, with_unused_state_lexical(lexical, latent))
    assert one.has_parse and two.has_parse
    assert np.isclose(one.log_abs_z, two.log_abs_z)
    assert np.allclose(
        one.dense_marginals(grammar.n_symbols), two.dense_marginals(grammar.n_symbols)
    )
    one_rules, two_rules = _binary_posteriors(one), _binary_posteriors(two)
    assert np.array_equal(one_rules[:, :4], two_rules[:, :4])
    assert np.allclose(one_rules[:, 4], two_rules[:, 4])
