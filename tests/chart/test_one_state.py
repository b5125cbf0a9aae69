"""The one-state kernels against the latent kernels, merged masks and the items they
leave out (the enumeration oracle runs in test_inside_outside with max_states=1)."""

from __future__ import annotations

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
