"""CCM: the inside-outside and Viterbi kernels against enumeration, the M step by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spacy_lpcfg.unsupervised import CCM, SpectralBracketer
from spacy_lpcfg.unsupervised.ccm import _tree_posteriors
from spacy_lpcfg.unsupervised.ccm_kernels import (
    _inside_outside_logs,
    inside_outside,
    span_index,
    split_uniform_posteriors,
    viterbi_brackets,
)
from spacy_lpcfg.unsupervised.sentences import as_sentences


def binary_trees(i, j):
    """All binary trees over [i, j) as lists of constituents (words included)."""
    if j - i == 1:
        yield [(i, j)]
        return
    for k in range(i + 1, j):
        for left in binary_trees(i, k):
            for right in binary_trees(k, j):
                yield [(i, j), *left, *right]


def random_phi(rng, n):
    return rng.normal(scale=2.0, size=n * (n + 1) // 2)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_inside_outside_matches_enumeration(n):
    rng = np.random.default_rng(n)
    phi = random_phi(rng, n)
    trees = list(binary_trees(0, n))
    scores = np.array([sum(phi[span_index(i, j)] for i, j in t) for t in trees])
    log_z = np.logaddexp.reduce(scores)
    expected = np.zeros_like(phi)
    for tree, score in zip(trees, scores):
        for i, j in tree:
            expected[span_index(i, j)] += math.exp(score - log_z)
    for kernel in (inside_outside, _inside_outside_logs):
        posteriors, got_log_z = kernel(phi, n)
        assert got_log_z == pytest.approx(log_z)
        np.testing.assert_allclose(posteriors, expected, rtol=1e-9, atol=1e-12)


def test_inside_outside_falls_back_to_logs_on_overflow():
    n = 40
    phi = np.zeros(n * (n + 1) // 2)
    phi[: len(phi) // 2] = 800.0  # far beyond the range of exp around the mean
    posteriors, log_z = inside_outside(phi, n)
    expected, expected_log_z = _inside_outside_logs(phi, n)
    assert np.isfinite(log_z) and log_z == pytest.approx(expected_log_z)
    np.testing.assert_allclose(posteriors, expected, atol=1e-9)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_viterbi_is_the_best_tree(n):
    rng = np.random.default_rng(10 + n)
    phi = random_phi(rng, n)
    best = max(binary_trees(0, n), key=lambda t: sum(phi[span_index(i, j)] for i, j in t))
    got = {tuple(span) for span in viterbi_brackets(phi, n)}
    assert got == {(i, j) for i, j in best if j - i >= 2}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_split_uniform_posteriors_match_enumeration(n):
    # A tree's probability under uniform random splits: product of 1 / (length - 1).
    expected = np.zeros(n * (n + 1) // 2)
    for tree in binary_trees(0, n):
        p = math.prod(1 / (j - i - 1) for i, j in tree if j - i >= 2)
        for i, j in tree:
            expected[span_index(i, j)] += p
    np.testing.assert_allclose(split_uniform_posteriors(n), expected)


def test_initial_m_step_by_hand():
    # One sentence "A B": its three spans are constituents with posterior 1.
    model = CCM(init="split_uniform", n_iter=0).fit([[("x", "A"), ("y", "B")]])
    # three yield types seen (A, B, AB) plus the unseen slot: 4 types
    expected_yield = math.log((1 + 2) / (3 + 2 * 4)) - math.log((0 + 8) / (0 + 8 * 4))
    assert model.phi_yield_[:3] == pytest.approx([expected_yield] * 3)
    n_context_types = model.n_contexts_ + 1
    expected_context = math.log(3 / (3 + 2 * n_context_types)) - math.log(8 / (8 * n_context_types))
    seen = model.phi_context_[:-1] > math.log(2 / (3 + 2 * n_context_types)) - math.log(
        1 / n_context_types
    )
    assert seen.sum() == 3  # (<s>, B), (A, <s>), (<s>, <s>)
    assert model.phi_context_[:-1][seen] == pytest.approx([expected_context] * 3)


def test_em_learns_a_consistent_grammar():
    # Determiner-noun pairs always form a unit; the model must bracket them.
    corpus = [
        [("the", "D"), ("dog", "N"), ("saw", "V"), ("a", "D"), ("cat", "N")],
        [("a", "D"), ("cat", "N"), ("saw", "V"), ("the", "D"), ("dog", "N")],
        [("the", "D"), ("dog", "N"), ("ran", "V")],
        [("a", "D"), ("dog", "N"), ("saw", "V"), ("a", "D"), ("dog", "N")],
    ] * 5
    model = CCM(init="split_uniform", n_iter=20).fit(corpus)
    assert np.all(np.diff(model.log_likelihoods_) > -1e-9)
    assert set(model.brackets(corpus[0])) >= {(0, 2), (3, 5)}


def seeding_corpus():
    """Tagged sentences with one tag sequence and varied words (the spectral learner's
    tree is a function of the tags, so it is the same tree for every sentence)."""
    rng = np.random.default_rng(0)
    words = {"D": ["the", "a", "this"], "N": ["dog", "cat", "idea"], "V": ["saw", "had"]}
    return [[(str(rng.choice(words[t])), t) for t in "DNVDN"] for _ in range(30)]


def test_spectral_initialiser_starts_from_the_spectral_trees():
    corpus = seeding_corpus()
    spectral = SpectralBracketer().fit(corpus).brackets(corpus[0])
    assert len(spectral) == 4  # a binary tree over five words
    # Only the spectral trees in the first M step: its Viterbi tree is theirs.
    seeded = CCM(init="spectral", init_weight=1.0, n_iter=0).fit(corpus)
    assert seeded.brackets(corpus[0]) == spectral
    # Weight 0 is Klein & Manning's initialiser exactly.
    uniform = CCM(init="split_uniform", n_iter=0).fit(corpus)
    unweighted = CCM(init="spectral", init_weight=0.0, n_iter=0).fit(corpus)
    np.testing.assert_array_equal(unweighted.phi_yield_, uniform.phi_yield_)
    np.testing.assert_array_equal(unweighted.phi_context_, uniform.phi_context_)
    assert not np.array_equal(seeded.phi_yield_, uniform.phi_yield_)


def test_tree_posteriors_hold_every_constituent_once():
    n, brackets = 5, [(0, 5), (0, 2), (2, 5), (3, 5)]
    posteriors = _tree_posteriors(n, brackets)
    assert posteriors.sum() == 2 * n - 1  # a binary tree's constituents, words included
    assert all(posteriors[span_index(i, j)] == 1 for i, j in brackets)


@pytest.mark.parametrize("weight", [-0.1, 1.5, float("nan")])
def test_init_weight_is_checked(weight):
    with pytest.raises(ValueError, match="init_weight"):
        CCM(init_weight=weight).fit(seeding_corpus())
    with pytest.raises(ValueError, match="init"):
        CCM(init="random").fit(seeding_corpus())


def test_initial_posteriors_mix_each_kept_sentence_with_its_own_tree():
    # Varied lengths and tags; a sentence over max_length and one of punctuation only
    # come first, so that a tree paired with the wrong sentence would show.
    rng = np.random.default_rng(1)
    tags = ["D", "N", "V", "P", "J"]
    corpus = [[(f"w{i}", "N") for i in range(9)], [(".", "."), (",", ",")]]
    for _ in range(40):
        length = int(rng.integers(1, 8))
        corpus.append([(f"w{rng.integers(30)}", str(rng.choice(tags))) for _ in range(length)])
    sentences = as_sentences(corpus)
    model = CCM(init_weight=0.3, max_length=8)
    kept = [s for s in sentences if s.content and len(s.content) <= 8]
    assert len(kept) == len(corpus) - 2
    spectral = SpectralBracketer()
    spectral._fit(sentences)
    expected = np.concatenate(
        [
            0.3 * _tree_posteriors(len(s.content), spectral._brackets_of(s))
            + 0.7 * split_uniform_posteriors(len(s.content))
            for s in kept
        ]
    )
    np.testing.assert_allclose(model._initial_posteriors(sentences, kept), expected)


def test_a_corpus_without_words_is_refused_by_name():
    with pytest.raises(ValueError, match="E505.*CCM.*'. !'"):
        CCM().fit([[(".", "."), ("!", ".")]])
    # one word type is enough (the spectral learner's vectors come from a dense SVD)
    model = CCM().fit([[("a", "D")]] * 5)
    assert model.brackets(["a", "a", "a"]) in ([(0, 3), (1, 3)], [(0, 2), (0, 3)])
