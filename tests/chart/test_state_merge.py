"""Latent states merged into runs (chart.state_merge) against their definition, block by
block with loops."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.chart.state_merge import merge_states
from spacy_lpcfg.grammar import LPCFG, LexicalScores


def _latent_grammar(seed: int = 0, m: int = 5) -> LPCFG:
    from chart.brute_force import noisy_split
    from grammar.test_lpcfg import toy_pcfg

    return noisy_split(toy_pcfg(), m, seed)


def _groups(n: int, k: int) -> list[list[int]]:
    k = min(k, n)
    return [[h for h in range(n) if h * k // n == g] for g in range(k)]


def _mostly_zero(grammar: LPCFG, seed: int = 0) -> LPCFG:
    """The grammar with 97% of its binary weights zeroed: stored as values and positions."""
    rng = np.random.default_rng(seed)
    weights = grammar.binary_weights * (rng.random(len(grammar.binary_weights)) < 0.03)
    arrays = {
        name: getattr(grammar, name)
        for kind in ("binary", "unary", "lexical")
        for name in (f"{kind}_rules", f"{kind}_offsets", f"{kind}_weights")
    }
    arrays["binary_weights"] = weights
    sparse = LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)
    assert sparse.binary_sparse is not None
    return sparse


@pytest.mark.parametrize("stored", ["dense", "sparse"])
def test_merge_states_matches_its_definition(stored):
    # T'[x, y, z] = sum_{h1 in x} w(h1) / w(x) * sum_{h2 in y, h3 in z} T[h1, h2, h3],
    # computed block by block with loops.
    grammar = _latent_grammar(m=6)
    if stored == "sparse":
        grammar = _mostly_zero(grammar)
    merge = merge_states(grammar, 2)
    weights = grammar.expected_state_weights()
    for kind in ("binary", "unary", "lexical"):
        rules = getattr(grammar, f"{kind}_rules")
        for r, rule in enumerate(rules.tolist()):
            fine = getattr(grammar, f"{kind}_block")(r)
            symbols = rule[: fine.ndim]
            groups = [_groups(int(grammar.n_states[s]), 2) for s in symbols]
            want = np.zeros(tuple(len(g) for g in groups))
            for index in np.ndindex(*want.shape):
                parent = groups[0][index[0]]
                mass = weights[symbols[0]][parent]
                share = (
                    mass / mass.sum() if mass.sum() > 0 else np.full(len(parent), 1 / len(parent))
                )
                for h1, w in zip(parent, share):
                    rows = fine[h1]
                    for axis, g in enumerate(index[1:]):
                        rows = np.take(rows, groups[axis + 1][g], axis=axis)
                    want[index] += w * rows.sum()
            got = getattr(merge.grammar, f"{kind}_block")(r)
            assert np.allclose(got, want), (kind, rule)


def test_merged_lexical_scores_sum_the_fine_ones_by_share():
    grammar = _latent_grammar(1)
    merge = merge_states(grammar, 2)
    ids = [grammar.word_index[w] for w in ("the", "dog", "saw", "the", "cat")]
    fine = LexicalScores.from_word_ids(grammar, ids)
    merged = merge.lexical(fine)
    starts = np.concatenate([[0], np.cumsum(grammar.n_states)[:-1]])
    for e, tag in enumerate(fine.tags):
        vector = fine.values[fine.offsets[e] : fine.offsets[e + 1]]
        states = starts[tag] + np.arange(len(vector))
        want = np.bincount(merge.group_of[states], vector * merge.share[states])
        assert np.allclose(merged.values[merged.offsets[e] : merged.offsets[e + 1]], want)
    # the merged grammar's own lexical rules are the same sums
    assert np.allclose(merged.values, LexicalScores.from_word_ids(merge.grammar, ids).values)


def test_merging_into_one_state_is_the_one_state_projection():
    grammar = _latent_grammar(2)
    merged, projected = merge_states(grammar, 1).grammar, grammar.project()
    assert merged.max_states == 1
    for name in ("binary_weights", "unary_weights", "lexical_weights"):
        assert np.allclose(getattr(merged, name), getattr(projected, name))


def test_merging_with_room_for_every_state_changes_nothing():
    grammar = _latent_grammar(3)
    merged = merge_states(grammar, int(grammar.max_states)).grammar
    assert (merged.n_states == grammar.n_states).all()
    for name in ("binary_weights", "unary_weights", "lexical_weights"):
        assert np.allclose(getattr(merged, name), getattr(grammar, name))
    with pytest.raises(ValueError, match="max_states"):
        merge_states(grammar, 0)


def test_expected_state_weights_solved_and_iterated_agree(monkeypatch):
    import spacy_lpcfg.grammar.lpcfg as lpcfg_module

    grammar = _latent_grammar(4)
    solved = grammar.expected_state_weights()
    monkeypatch.setattr(lpcfg_module, "DENSE_SOLVE_SIZE", 0)
    iterated = grammar.expected_state_weights()
    for a, b in zip(solved, iterated):
        assert np.allclose(a, b, rtol=1e-8)
