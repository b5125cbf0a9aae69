"""viterbi against the best derivation found by brute-force enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import enumerate_derivations, random_grammar, sentence

from spacy_lpcfg.chart import viterbi
from spacy_lpcfg.grammar import LexicalScores
from spacy_lpcfg.trees import Tree


@pytest.mark.parametrize("seed,n", [(seed, n) for seed in range(6) for n in (1, 2, 3, 4, 5)])
def test_viterbi_matches_enumeration(seed, n):
    grammar = random_grammar(seed, density=0.3 if n == 5 else 0.5, signed=False)
    lexical = sentence(grammar, n, seed)
    derivations = enumerate_derivations(grammar, lexical)
    result = viterbi(grammar, lexical)
    if not derivations:
        assert not result.has_parse and result.log_score == -np.inf
        return
    best = max(derivations, key=lambda d: d.best[0])
    assert np.isclose(result.log_score, np.log(best.best[0]))
    found = list(zip(result.symbols.tolist(), result.starts.tolist(), result.ends.tolist()))
    assert found == [tuple(int(v) for v in item) for item in best.items]


def test_viterbi_respects_the_mask():
    grammar = random_grammar(2, signed=False)
    lexical = sentence(grammar, 4, 2)
    best = viterbi(grammar, lexical)
    mask = np.ones((5, 5, grammar.n_symbols), dtype=bool)
    inner = next(k for k, (i, j) in enumerate(zip(best.starts, best.ends)) if 0 < j - i < 4)
    mask[best.starts[inner], best.ends[inner], best.symbols[inner]] = False
    other = viterbi(grammar, lexical, mask)
    assert other.log_score < best.log_score
    used = set(zip(other.symbols.tolist(), other.starts.tolist(), other.ends.tolist()))
    assert (best.symbols[inner], best.starts[inner], best.ends[inner]) not in used


def test_viterbi_to_tree():
    grammar = random_grammar(1, signed=False)
    lexical = sentence(grammar, 4, 1)
    result = viterbi(grammar, lexical)
    words = ["a", "b", "c", "d"]
    tree = result.to_tree(grammar.symbols, words)
    assert isinstance(tree, Tree) and tree.label == "TOP"
    assert tree.words() == words
    spans = tree.spans(include_preterminals=True)
    names = [grammar.symbols.name(s) for s in result.symbols]
    assert sorted(spans) == sorted(zip(names, result.starts.tolist(), result.ends.tolist()))


def test_viterbi_no_parse():
    grammar = random_grammar(0, signed=False)
    lexical = LexicalScores.from_word_ids(grammar, [-1, 0])
    result = viterbi(grammar, lexical)
    assert not result.has_parse and result.log_score == -np.inf
