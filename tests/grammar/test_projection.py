"""Symbol merging (the coarse levels of pruning) against hand-computed grammars."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.chart import coarse_posteriors
from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable
from spacy_lpcfg.grammar.projection import expected_symbol_counts, merge_symbols

WORDS = ["the", "dog", "barks"]


def _pcfg(np_labels: tuple[str, ...] = ("NP",)) -> LPCFG:
    """TOP -> S; S -> NP VP; NP -> DT NN (.5) | NN (.5); VP -> VB NP (.6) | VB (.4),
    with NP optionally split into several copies that have identical rules."""
    symbols = SymbolTable.from_kinds(
        phrasal=["S", *np_labels, "VP"], preterminal=["DT", "NN", "VB"]
    )
    share = 1.0 / len(np_labels)
    binary, unary = {}, {("TOP", "S"): 1.0, ("VP", "VB"): 0.4}
    for label in np_labels:
        binary[("S", label, "VP")] = share
        binary[(label, "DT", "NN")] = 0.5
        unary[(label, "NN")] = 0.5
        binary[("VP", "VB", label)] = 0.6 * share
    lexical = {("DT", "the"): 1.0, ("NN", "dog"): 1.0, ("VB", "barks"): 1.0}
    return LPCFG.from_rules(symbols, {}, binary=binary, unary=unary, lexical=lexical, words=WORDS)


def test_projection_expected_symbol_counts_hand_computed():
    grammar = _pcfg()
    counts = expected_symbol_counts(grammar)
    expected = {"TOP": 1, "S": 1, "NP": 1.6, "VP": 1, "DT": 0.8, "NN": 1.6, "VB": 1}
    for name, value in expected.items():
        assert counts[grammar.symbols.index(name)] == pytest.approx(value)


def _rules_by_name(grammar: LPCFG) -> dict[tuple[str, ...], float]:
    """Every rule as a tuple of names (lexical rules end with the word) -> weight."""
    name = grammar.symbols.name
    rules = {}
    for kind in ("binary", "unary"):
        for rule, weight in zip(
            getattr(grammar, f"{kind}_rules").tolist(), getattr(grammar, f"{kind}_weights")
        ):
            rules[tuple(map(name, rule))] = weight
    for (tag, word), weight in zip(grammar.lexical_rules.tolist(), grammar.lexical_weights):
        rules[(name(tag), grammar.words[word])] = weight
    return rules


def test_projection_merging_identical_copies_restores_the_grammar():
    fine = _pcfg(("NP^S", "NP^VP"))
    merged = merge_symbols(fine, [name.partition("^")[0] for name in fine.symbols.names])
    got, want = _rules_by_name(merged.grammar), _rules_by_name(_pcfg())
    assert got.keys() == want.keys()
    for rule, weight in want.items():
        assert got[rule] == pytest.approx(weight), rule


def test_projection_merged_lexical_scores_and_posteriors():
    fine = _pcfg(("NP^S", "NP^VP"))
    merged = merge_symbols(fine, [name.partition("^")[0] for name in fine.symbols.names])
    lexical = LexicalScores.from_word_ids(
        fine, [fine.word_index[w] for w in ["the", "dog", "barks"]]
    )
    coarse_lexical = merged.lexical(lexical)
    coarse_lexical.check(merged.grammar)
    fine_post = coarse_posteriors(fine, lexical)
    coarse_post = coarse_posteriors(merged.grammar, coarse_lexical)
    assert coarse_post.log_abs_z == pytest.approx(fine_post.log_abs_z)
    # A coarse item's posterior is the sum of its fine members' posteriors here.
    summed = np.zeros_like(coarse_post.posteriors)
    for a in range(fine.n_symbols):
        summed[:, :, merged.coarse_of[a]] += fine_post.posteriors[:, :, a]
    assert np.allclose(summed, coarse_post.posteriors)


def test_projection_kinds_never_merge():
    fine = _pcfg()
    names = [
        name if fine.symbols.kind(i) == "root" else "X" for i, name in enumerate(fine.symbols.names)
    ]
    merged = merge_symbols(fine, names)
    kinds = {merged.grammar.symbols.kind(i) for i in range(merged.grammar.n_symbols)}
    assert kinds == {"root", "phrasal", "preterminal"}
    assert merged.grammar.n_symbols == 3


def test_projection_rejects_latent_grammars():
    symbols = SymbolTable.from_kinds(phrasal=["S"], preterminal=["NN"])
    latent = LPCFG.from_rules(
        symbols,
        {"S": 2, "NN": 1},
        unary={("TOP", "S"): [[0.5, 0.5]], ("S", "NN"): [[1.0], [1.0]]},
        lexical={("NN", "x"): 1.0},
        words=["x"],
    )
    with pytest.raises(GrammarError, match="E133"):
        merge_symbols(latent, list(symbols.names))
