"""inside_outside against brute-force enumeration of every derivation, plus masks,
degenerate sentences and the scaling of long sentences."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import (
    assert_dicts_close,
    chart_dicts,
    enumerate_derivations,
    oracle_posteriors,
    random_grammar,
    sentence,
)

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable

CASES = [(seed, n) for seed in range(6) for n in (1, 2, 3, 4, 5)]


def _case(seed: int, n: int, signed: bool = True, max_states: int = 3):
    grammar = random_grammar(
        seed, density=0.3 if n == 5 else 0.5, signed=signed, max_states=max_states
    )
    return grammar, sentence(grammar, n, seed)


@pytest.mark.parametrize("max_states", [3, 1])  # latent kernels, one-state kernels
@pytest.mark.parametrize("seed,n", CASES)
def test_inside_outside_matches_enumeration(seed, n, max_states):
    grammar, lexical = _case(seed, n, max_states=max_states)
    derivations = enumerate_derivations(grammar, lexical)
    result = inside_outside(grammar, lexical)
    if not derivations:
        assert not result.has_parse
        return
    z, items, rules = oracle_posteriors(derivations)
    assert result.has_parse
    assert np.isclose(result.z_sign * np.exp(result.log_abs_z), z)
    found_items, found_rules = chart_dicts(result)
    assert_dicts_close(found_items, items)
    assert_dicts_close(found_rules, rules)


def test_inside_outside_has_negative_marginals_for_signed_grammars():
    # Guards the oracle test: signed weights really produce negative values.
    negative = False
    for seed, n in CASES:
        grammar, lexical = _case(seed, n)
        negative = negative or (inside_outside(grammar, lexical).marginals < 0).any()
    assert negative


@pytest.mark.parametrize("seed", range(4))
def test_inside_outside_full_mask_equals_no_mask(seed):
    grammar, lexical = _case(seed, 4)
    full = np.ones((5, 5, grammar.n_symbols), dtype=bool)
    a, b = inside_outside(grammar, lexical), inside_outside(grammar, lexical, full)
    assert a.log_abs_z == b.log_abs_z
    assert np.array_equal(
        a.dense_marginals(grammar.n_symbols), b.dense_marginals(grammar.n_symbols)
    )


@pytest.mark.parametrize("seed", range(4))
def test_inside_outside_pruning_unused_items_changes_nothing(seed):
    grammar, lexical = _case(seed, 4, signed=False)
    reference = inside_outside(grammar, lexical)
    marginals = reference.dense_marginals(grammar.n_symbols)
    pruned = inside_outside(grammar, lexical, marginals > 0)
    assert np.isclose(pruned.log_abs_z, reference.log_abs_z)
    assert np.allclose(pruned.dense_marginals(grammar.n_symbols), marginals)
    assert (marginals == 0).any()  # something was pruned


def test_inside_outside_pruning_drops_derivations():
    grammar, lexical = _case(1, 4, signed=False)
    reference = inside_outside(grammar, lexical)
    marginals = reference.dense_marginals(grammar.n_symbols)
    mask = marginals > 0
    i, j, a = np.argwhere(mask & (marginals < 0.999))[0]
    mask[i, j, a] = False
    pruned = inside_outside(grammar, lexical, mask)
    assert pruned.log_abs_z < reference.log_abs_z
    assert pruned.dense_marginals(grammar.n_symbols)[i, j, a] == 0


def _tiny_grammar() -> LPCFG:
    symbols = SymbolTable.from_kinds(phrasal=["S"], preterminal=["N", "V"])
    return LPCFG.from_rules(
        symbols,
        {"S": 2, "N": 2},
        binary={("S", "N", "V"): np.full((2, 2, 1), 0.25)},
        unary={("TOP", "S"): [[0.5, 0.5]], ("TOP", "N"): [[1.0, 0.0]]},
        lexical={("N", "dogs"): [0.2, 0.4], ("V", "bark"): 1.0},
    )


def test_inside_outside_one_word():
    grammar = _tiny_grammar()
    lexical = LexicalScores.from_word_ids(grammar, [grammar.word_index["dogs"]])
    result = inside_outside(grammar, lexical)
    assert result.has_parse
    assert np.isclose(np.exp(result.log_abs_z), 0.2)
    marginals = result.dense_marginals(grammar.n_symbols)
    assert np.isclose(marginals[0, 1, grammar.symbols.index("N")], 1.0)
    assert np.isclose(result.unary.scores.sum(), 1.0)


@pytest.mark.parametrize("words", [["bark", "dogs"], ["dogs", "unknown"], ["bark"]])
def test_inside_outside_no_derivation_flags_no_parse(words):
    grammar = _tiny_grammar()
    lexical = LexicalScores.from_word_ids(grammar, [grammar.word_index.get(w, -1) for w in words])
    result = inside_outside(grammar, lexical)
    assert not result.has_parse
    assert result.log_abs_z == -np.inf and result.z_sign == 0.0
    assert len(result.marginals) == 0 and len(result.binary.scores) == 0


def _dogs_bark(grammar: LPCFG) -> LexicalScores:
    return LexicalScores.from_word_ids(grammar, [grammar.word_index[w] for w in ("dogs", "bark")])


def test_inside_outside_mask_without_root_has_no_parse():
    grammar = _tiny_grammar()
    lexical = _dogs_bark(grammar)
    mask = np.ones((3, 3, grammar.n_symbols), dtype=bool)
    mask[0, 2, grammar.root] = False
    assert inside_outside(grammar, lexical).has_parse
    assert not inside_outside(grammar, lexical, mask).has_parse


def test_inside_outside_rejects_bad_mask():
    grammar = _tiny_grammar()
    lexical = _dogs_bark(grammar)
    with pytest.raises(ValueError, match="E201"):
        inside_outside(grammar, lexical, np.ones((3, 3, grammar.n_symbols), dtype=int))
    with pytest.raises(ValueError, match="E201"):
        inside_outside(grammar, lexical, np.ones((2, 3, grammar.n_symbols), dtype=bool))


def _log_space_inside(grammar: LPCFG, lexical: LexicalScores) -> float:
    """log Z by a log-sum-exp inside pass over numpy arrays (no unary chains of length > 1
    needed: the long-sentence grammar has only root unaries)."""
    n = lexical.n_words
    m = grammar.max_states
    log_inside = np.full((n + 1, n + 1, grammar.n_symbols, m), -np.inf)
    for e, (i, tag) in enumerate(zip(lexical.positions, lexical.tags)):
        log_inside[i, i + 1, tag, : grammar.n_states[tag]] = np.log(
            lexical.values[lexical.offsets[e] : lexical.offsets[e + 1]]
        )
    for width in range(2, n + 1):
        starts = np.arange(n - width + 1)
        for r, (a, b, c) in enumerate(grammar.binary_rules):
            log_t = np.log(grammar.binary_block(r))  # (ma, mb, mc)
            mb, mc = log_t.shape[1:]
            terms = []
            for k in range(1, width):
                left = log_inside[starts, starts + k, b, :mb]  # (cells, mb)
                right = log_inside[starts + k, starts + width, c, :mc]
                terms.append(log_t[None] + left[:, None, :, None] + right[:, None, None, :])
            stacked = np.stack(terms).reshape(width - 1, len(starts), log_t.shape[0], -1)
            top = stacked.max(axis=(0, 3), keepdims=True)
            safe = np.where(np.isfinite(top), top, 0.0)
            with np.errstate(divide="ignore"):  # log(0) = -inf where nothing derives a
                value = np.log(np.exp(stacked - safe).sum(axis=(0, 3))) + safe[0, :, :, 0]
            current = log_inside[starts, starts + width, a, : log_t.shape[0]]
            log_inside[starts, starts + width, a, : log_t.shape[0]] = np.logaddexp(current, value)
    total = log_inside[0, n, grammar.root, 0]  # TOP -> b c, then the root unaries
    for r, (_, x) in enumerate(grammar.unary_rules):
        block = np.log(grammar.unary_block(r))[0]
        total = np.logaddexp(total, np.logaddexp.reduce(block + log_inside[0, n, x, : len(block)]))
    return float(total)


def test_inside_outside_long_sentence_is_scaled():
    """150 words (three bitset words of splits), latent states, against log space."""
    grammar = random_grammar(
        4, n_phrasal=2, n_intermediate=0, max_states=2, density=1.0, signed=False, n_words=4
    )
    grammar = LPCFG.from_rules(  # keep only root unaries, so the reference stays simple
        grammar.symbols,
        grammar.n_states,
        binary={
            tuple(rule): grammar.binary_block(r) for r, rule in enumerate(grammar.binary_rules)
        },
        unary={
            tuple(rule): grammar.unary_block(r)
            for r, rule in enumerate(grammar.unary_rules)
            if rule[0] == grammar.root
        },
        lexical={
            (int(t), int(w)): grammar.lexical_block(r)
            for r, (t, w) in enumerate(grammar.lexical_rules)
        },
        words=grammar.words,
    )
    assert grammar.max_states == 2  # the latent kernels, not the one-state ones
    words = sentence(grammar, 150, seed=0)
    # Small emission scores push Z far below the float64 range (about e**-1000).
    lexical = LexicalScores(
        words.n_words, words.positions, words.tags, words.offsets, words.values * 1e-4
    )
    result = inside_outside(grammar, lexical, rule_posteriors=False)
    assert result.has_parse and np.isfinite(result.log_abs_z)
    assert result.log_abs_z < -745  # 0.0 in float64 without scaling
    assert np.isclose(result.log_abs_z, _log_space_inside(grammar, lexical), rtol=1e-10)
    marginals = result.dense_marginals(grammar.n_symbols)
    assert np.isfinite(marginals).all() and marginals.min() >= -1e-12
    assert np.isclose(marginals[0, 150, grammar.root], 1.0)
    preterminals = grammar.symbols.ids("preterminal")
    tag_mass = marginals[np.arange(150), np.arange(1, 151)][:, preterminals].sum(axis=1)
    assert np.allclose(tag_mass, 1.0)  # each word has exactly one preterminal


def _sparsified(grammar: LPCFG, seed: int, keep: float) -> LPCFG:
    """The grammar with most binary weights set to zero (clustering grammars are ~98%
    zero), so that its blocks take the kernels' sparse path."""
    rng = np.random.default_rng(seed)
    weights = grammar.binary_weights * (rng.random(grammar.binary_weights.shape) < keep)
    arrays = {
        name: getattr(grammar, name)
        for kind in ("binary", "unary", "lexical")
        for name in (f"{kind}_rules", f"{kind}_offsets", f"{kind}_weights")
    }
    arrays["binary_weights"] = weights
    return LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)


@pytest.mark.parametrize("seed,n", [c for c in CASES if c[1] >= 2])
def test_inside_outside_sparse_blocks_match_enumeration(seed, n):
    from spacy_lpcfg.chart.inputs import sparse_blocks

    base, lexical = _case(seed, n, max_states=4)
    grammar = _sparsified(base, seed, keep=0.2)
    blocks = sparse_blocks(grammar)
    assert blocks.sparse.any()  # guards the test: the sparse path runs
    derivations = enumerate_derivations(grammar, lexical)
    result = inside_outside(grammar, lexical)
    if not derivations or sum(d.total[0] for d in derivations) == 0.0:  # every weight zero
        assert not result.has_parse
        return
    z, items, rules = oracle_posteriors(derivations)
    assert np.isclose(result.z_sign * np.exp(result.log_abs_z), z)
    found_items, found_rules = chart_dicts(result)
    assert_dicts_close(found_items, items)
    assert_dicts_close(found_rules, rules)


@pytest.mark.parametrize("seed,n", [c for c in CASES if c[1] >= 2][:4])
def test_inside_outside_reads_sparse_grammars_without_dense_weights(seed, n):
    """A grammar that keeps its binary weights sparse parses from its non-zero cells and
    the dense rules' compact blocks; the result equals the dense grammar's."""
    from spacy_lpcfg.chart.inputs import dense_blocks, sparse_blocks

    base, lexical = _case(seed, n, max_states=4)
    grammar = _sparsified(base, seed, keep=0.4)
    dense_grammar = _sparsified(base, seed, keep=0.4)
    assert grammar.binary_sparse is not None
    result = inside_outside(grammar, lexical)
    assert "binary_weights" not in vars(grammar)
    offsets, weights = dense_blocks(grammar)
    sparse = sparse_blocks(grammar).sparse
    assert (~sparse).any() and sparse.any()  # guards the test: both kinds of block
    for rule in range(len(grammar.binary_rules)):
        block = weights[offsets[rule] : offsets[rule + 1]]
        expected = [] if sparse[rule] else grammar.binary_block(rule).ravel()
        assert np.array_equal(block, expected)
    dense_grammar.__dict__["binary_weights"] = dense_grammar.binary_weights
    dense_grammar.binary_sparse = None  # as a grammar that keeps dense weights
    assert dense_blocks(dense_grammar)[1] is dense_grammar.binary_weights
    expected = inside_outside(dense_grammar, lexical)
    assert result.has_parse == expected.has_parse
    if expected.has_parse:
        assert np.isclose(result.log_abs_z, expected.log_abs_z, rtol=1e-12)
        found, wanted = chart_dicts(result), chart_dicts(expected)
        assert_dicts_close(found[0], wanted[0])
        assert_dicts_close(found[1], wanted[1])
