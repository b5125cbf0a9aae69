"""The dense coarse pass against enumeration and against the latent pass."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import enumerate_derivations, oracle_posteriors, random_grammar, sentence

from spacy_lpcfg.chart import coarse_posteriors, inside_outside
from spacy_lpcfg.grammar import LexicalScores


@pytest.mark.parametrize("seed,n", [(seed, n) for seed in range(6) for n in (1, 2, 3, 4, 5)])
def test_coarse_posteriors_match_enumeration(seed, n):
    grammar = random_grammar(seed, max_states=1, density=0.3 if n == 5 else 0.5)
    lexical = sentence(grammar, n, seed)
    derivations = enumerate_derivations(grammar, lexical)
    result = coarse_posteriors(grammar, lexical)
    if not derivations:
        assert not result.has_parse and not result.posteriors.any()
        return
    z, items, _ = oracle_posteriors(derivations)
    assert np.isclose(result.z_sign * np.exp(result.log_abs_z), z)
    expected = np.zeros_like(result.posteriors)
    for (a, i, j), value in items.items():
        expected[i, j, a] = value
    assert np.allclose(result.posteriors, expected)


@pytest.mark.parametrize("seed", range(3))
def test_coarse_posteriors_long_sentence_match_latent_pass(seed):
    grammar = random_grammar(seed, max_states=1, signed=False, density=0.7)
    words = sentence(grammar, 150, seed)
    lexical = LexicalScores(
        words.n_words, words.positions, words.tags, words.offsets, words.values * 1e-4
    )
    coarse = coarse_posteriors(grammar, lexical)
    latent = inside_outside(grammar, lexical, rule_posteriors=False)
    assert coarse.has_parse and np.isfinite(coarse.log_abs_z) and coarse.log_abs_z < -745
    assert np.isclose(coarse.log_abs_z, latent.log_abs_z, rtol=1e-10)
    assert np.allclose(coarse.posteriors, latent.dense_marginals(grammar.n_symbols), atol=1e-10)


def test_coarse_posteriors_of_projected_grammar_give_a_mask():
    grammar = random_grammar(4, signed=False)  # not probabilities: give the state weights
    rng = np.random.default_rng(0)
    weights = [rng.uniform(0.1, 1.0, size=m) for m in grammar.n_states]
    lexical = sentence(grammar, 5, 4)
    coarse = coarse_posteriors(grammar.project(weights), lexical.project(grammar, weights))
    mask = coarse.posteriors > 0
    fine = inside_outside(grammar, lexical)
    assert np.isclose(inside_outside(grammar, lexical, mask).log_abs_z, fine.log_abs_z)


def test_coarse_posteriors_need_one_state():
    grammar = random_grammar(0, max_states=3)
    assert grammar.max_states > 1
    with pytest.raises(ValueError, match="E202"):
        coarse_posteriors(grammar, sentence(grammar, 3, 0))


def test_coarse_posteriors_no_parse():
    grammar = random_grammar(0, max_states=1)
    result = coarse_posteriors(grammar, LexicalScores.from_word_ids(grammar, [0, -1, 1]))
    assert not result.has_parse and result.log_abs_z == -np.inf
