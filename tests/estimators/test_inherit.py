"""INHERIT (Dreyer & Eisner 2006): the folded E-step against enumeration of every
feature and pass pattern, against PCFG-LA's E-step on the expanded grammar, EM and
the estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_estimator_contract import TREES
from test_split_merge import TINY, layout, long_tree

from spacy_lpcfg.estimators import clone
from spacy_lpcfg.estimators.em import KINDS, ShardedTreebank, read_em_treebank
from spacy_lpcfg.estimators.inherit import (
    InheritEstimator,
    InheritGrammar,
    _parent_blocks,
    clone_values,
    expand,
    free_parameters,
    inherit_e_step,
    inherit_m_step,
    initial_inherit,
    passable,
)
from spacy_lpcfg.estimators.inherit_kernels import BOTH, DRAW, LEFT, NEITHER, PASS, RIGHT


def random_inherit(treebank, rng, n_values) -> InheritGrammar:
    """Random positive parameters, patterns only where a child can inherit (not
    normalised: the E-step must not care)."""
    n_states = np.full(len(treebank.counts.symbols), n_values, dtype=np.int64)
    n_states[treebank.counts.symbols.root] = 1
    weights = {
        kind: rng.uniform(0.05, 1.0, size=_parent_blocks(treebank, n_states, kind)[1][-1])
        for kind in KINDS
    }
    patterns = {
        kind: np.where(allowed, rng.uniform(0.05, 1.0, size=allowed.shape), 0.0)
        for kind, allowed in passable(treebank, n_states).items()
    }
    annotation = rng.uniform(0.05, 1.0, size=int(n_states.sum()))
    return InheritGrammar(n_states, weights, patterns, annotation)


def enumerate_derivations(treebank, grammar, i, h):
    """Every derivation of node i's subtree with feature h: (probability, parameters
    used), a parameter being (name, index)."""
    nodes = treebank.nodes
    offsets = {kind: _parent_blocks(treebank, grammar.n_states, kind)[1] for kind in KINDS}
    rule, a, b = treebank.node_rule[i], nodes.left[i], nodes.right[i]

    def child(c, inherited):
        """The child's derivations when it inherits h or draws its feature."""
        if inherited:
            return enumerate_derivations(treebank, grammar, c, h)
        start = grammar.state_start[nodes.symbol[c]]
        return [
            (grammar.annotation[start + v] * p, [("annotation", start + v), *used])
            for v in range(grammar.n_states[nodes.symbol[c]])
            for p, used in enumerate_derivations(treebank, grammar, c, v)
        ]

    if b >= 0:
        weight = grammar.weights["binary"][offsets["binary"][rule] + h]
        result = []
        for pattern, (pass_a, pass_b) in (
            (NEITHER, (False, False)),
            (LEFT, (True, False)),
            (RIGHT, (False, True)),
            (BOTH, (True, True)),
        ):
            p = grammar.patterns["binary"][rule, pattern]
            if p == 0:
                continue
            for pa, used_a in child(a, pass_a):
                for pb, used_b in child(b, pass_b):
                    used = [
                        ("binary", offsets["binary"][rule] + h),
                        ("binary_pattern", (rule, pattern)),
                    ]
                    result.append((weight * p * pa * pb, used + used_a + used_b))
        return result
    if a >= 0:
        weight = grammar.weights["unary"][offsets["unary"][rule] + h]
        result = []
        for pattern, inherited in ((DRAW, False), (PASS, True)):
            p = grammar.patterns["unary"][rule, pattern]
            if p == 0:
                continue
            for pa, used_a in child(a, inherited):
                used = [("unary", offsets["unary"][rule] + h), ("unary_pattern", (rule, pattern))]
                result.append((weight * p * pa, used + used_a))
        return result
    cell = offsets["lexical"][rule] + h
    return [(grammar.weights["lexical"][cell], [("lexical", cell)])]


def brute_force(treebank, grammar):
    """Log-likelihood and expected counts of every parameter by enumeration."""
    nodes = treebank.nodes
    counts = {kind: np.zeros_like(grammar.weights[kind]) for kind in KINDS}
    counts["binary_pattern"] = np.zeros_like(grammar.patterns["binary"])
    counts["unary_pattern"] = np.zeros_like(grammar.patterns["unary"])
    counts["annotation"] = np.zeros_like(grammar.annotation)
    log_likelihood = 0.0
    for root in np.flatnonzero(nodes.parent < 0):
        derivations = enumerate_derivations(treebank, grammar, root, 0)
        z = sum(p for p, _ in derivations)
        log_likelihood += math.log(z)
        for p, used in derivations:
            for name, index in used:
                counts[name][index] += p / z
    return log_likelihood, counts


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_values", [1, 2, 3])
def test_folded_e_step_matches_enumeration(seed, n_values):
    treebank = layout(TINY)
    grammar = random_inherit(treebank, np.random.default_rng(seed), n_values)
    log_likelihood, expected = brute_force(treebank, grammar)
    estep = inherit_e_step(treebank, grammar)
    assert estep.log_likelihood == pytest.approx(log_likelihood, rel=1e-12)
    for kind in KINDS:
        np.testing.assert_allclose(estep.counts[kind], expected[kind], rtol=1e-9, atol=1e-12)
    for kind in ("binary", "unary"):
        np.testing.assert_allclose(
            estep.pattern_counts[kind], expected[f"{kind}_pattern"], rtol=1e-9, atol=1e-12
        )
    np.testing.assert_allclose(
        estep.annotation_counts, expected["annotation"], rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("seed", range(3))
def test_expanded_grammar_gives_the_same_likelihood_and_state_posteriors(seed, load_corpus):
    """The folded E-step equals PCFG-LA's (O(L^3) per node) on the expanded grammar."""
    trees = load_corpus("ptb_sample", "train", keep_functions=False)[:150]
    estimator = InheritEstimator(n_states=3, em_iterations=0)
    treebank = _treebank(estimator, trees)
    grammar = initial_inherit(treebank, 3, 0.5, np.random.default_rng(seed))
    folded = inherit_e_step(treebank, grammar)
    expanded = ShardedTreebank(treebank).e_step(expand(treebank, grammar))
    assert folded.log_likelihood == pytest.approx(expanded.log_likelihood, rel=1e-12)
    np.testing.assert_allclose(folded.state_counts, expanded.state_counts, rtol=1e-9, atol=1e-9)


def _treebank(estimator, trees):
    return read_em_treebank(trees, estimator.transform, estimator._make_lexicon())


def test_expanded_rules_are_distributions():
    treebank = layout(TINY)
    grammar = initial_inherit(treebank, 3, 0.5, np.random.default_rng(0))
    expanded = expand(treebank, grammar)
    totals = np.zeros(int(grammar.n_states.sum()))
    for kind in ("binary", "unary"):
        offsets = expanded.offsets(treebank, kind)
        parents = treebank.state_symbols(kind)[:, 0]
        for r, parent in enumerate(parents):
            block = expanded.weights[kind][offsets[r] : offsets[r + 1]]
            rows = block.reshape(grammar.n_states[parent], -1).sum(axis=1)
            totals[grammar.state_start[parent] : grammar.state_start[parent] + len(rows)] += rows
    phrasal = np.unique(
        np.concatenate([treebank.counts.binary_rules[:, 0], treebank.counts.unary_rules[:, 0]])
    )
    for symbol in phrasal:
        start = grammar.state_start[symbol]
        np.testing.assert_allclose(totals[start : start + grammar.n_states[symbol]], 1.0)


def test_m_step_normalises_every_distribution():
    treebank = layout(TINY)
    grammar = random_inherit(treebank, np.random.default_rng(1), 2)
    estep = inherit_e_step(treebank, grammar)
    new = inherit_m_step(
        treebank, grammar.n_states, estep.counts, estep.pattern_counts, estep.annotation_counts
    )
    for kind in ("binary", "unary"):
        np.testing.assert_allclose(new.patterns[kind].sum(axis=1), 1.0)
        assert np.all(new.patterns[kind][~passable(treebank, grammar.n_states)[kind]] == 0)
    symbol_of_state = np.repeat(np.arange(len(grammar.n_states)), grammar.n_states)
    np.testing.assert_allclose(np.bincount(symbol_of_state, new.annotation), 1.0)


@pytest.mark.parametrize("n_values", [1, 2])
def test_cloning_without_noise_keeps_the_likelihood(n_values):
    treebank = layout(TINY)
    rng = np.random.default_rng(3)
    grammar = initial_inherit(treebank, n_values, 0.5, rng)
    cloned = clone_values(treebank, grammar, 0.0, rng)
    root = treebank.counts.symbols.root
    assert cloned.n_states[root] == 1
    assert np.all(np.delete(cloned.n_states, root) == 2 * n_values)
    before = inherit_e_step(treebank, grammar).log_likelihood
    assert inherit_e_step(treebank, cloned).log_likelihood == pytest.approx(before, rel=1e-12)
    noisy = clone_values(treebank, grammar, 0.3, rng)
    assert inherit_e_step(treebank, noisy).log_likelihood != pytest.approx(before, rel=1e-6)


def test_em_never_decreases_the_likelihood(load_corpus):
    trees = load_corpus("ptb_sample", "train", keep_functions=False)[:200]
    estimator = InheritEstimator(
        n_states=4, clone_all=False, em_iterations=12, smoothing=0.0, lexical_smoothing=0.0
    )
    values = np.array(estimator.fit(trees).log_likelihoods_)
    assert len(values) == 13
    assert np.all(np.diff(values) >= -1e-7 * np.abs(values[1:]))
    assert values[-1] > values[0] + 100  # it learns


@pytest.mark.parametrize("n_values", [2, 3])
def test_free_parameters_are_the_papers_plus_unary_patterns(n_values):
    """Paper 003's eq. 9, L (R2 + R1 + R0) + 3 R2 - N, plus a free pattern per unary rule
    below TOP, less the (L - 1) weights TOP's one state does not have per rule."""
    treebank = layout(TINY)
    grammar = initial_inherit(treebank, n_values, 0.1, np.random.default_rng(0))
    counts = treebank.counts
    r2, r1, r0 = len(counts.binary_rules), len(counts.unary_rules), len(treebank.lexical_rules)
    top_rules = int(np.sum(counts.unary_rules[:, 0] == counts.symbols.root))
    paper = n_values * (r2 + r1 + r0) + 3 * r2 - len(counts.symbols)
    expected = paper + (r1 - top_rules) - (n_values - 1) * top_rules
    assert free_parameters(treebank, grammar) == expected


def test_one_value_is_the_treebank_pcfg():
    """L = 1: no pattern can pass, the free parameters are the PCFG's."""
    treebank = layout(TINY)
    grammar = initial_inherit(treebank, 1, 0.1, np.random.default_rng(0))
    for kind, allowed in passable(treebank, grammar.n_states).items():
        assert not allowed[:, 1:].any(), kind
    counts = treebank.counts
    rules = len(counts.binary_rules) + len(counts.unary_rules) + len(treebank.lexical_rules)
    assert free_parameters(treebank, grammar) == rules - len(counts.symbols)


def test_folded_e_step_scales_long_trees():
    """A 400-word tree whose probability underflows float64: the log-likelihood moves by
    log(1e-3) per node when every weight is 1e-3 times smaller, the counts not at all."""
    treebank = layout([long_tree(400), long_tree(3)])
    grammar = random_inherit(treebank, np.random.default_rng(0), 3)
    small = InheritGrammar(
        grammar.n_states,
        {kind: weights * 1e-3 for kind, weights in grammar.weights.items()},
        grammar.patterns,
        grammar.annotation,
    )
    normal, scaled = inherit_e_step(treebank, grammar), inherit_e_step(treebank, small)
    n_nodes = len(treebank.nodes)
    assert np.isfinite(scaled.log_likelihood)
    assert scaled.log_likelihood == pytest.approx(
        normal.log_likelihood + n_nodes * math.log(1e-3), rel=1e-9
    )
    for kind in KINDS:
        np.testing.assert_allclose(scaled.counts[kind], normal.counts[kind], rtol=1e-9)
    for kind in ("binary", "unary"):
        np.testing.assert_allclose(
            scaled.pattern_counts[kind], normal.pattern_counts[kind], rtol=1e-9
        )
    np.testing.assert_allclose(scaled.annotation_counts, normal.annotation_counts, rtol=1e-9)
    np.testing.assert_allclose(scaled.state_counts.sum(), n_nodes, rtol=1e-9)  # posteriors


def test_estimator_contract_and_reproducibility():
    estimator = InheritEstimator(n_states=2, em_iterations=3, open_class_threshold=1)
    assert estimator.fit(TREES) is estimator
    assert estimator.model_.estimator == "inherit"
    assert estimator.model_.grammar.n_states.max() == 2
    again = clone(estimator).fit(TREES)
    assert again.model_.to_bytes() == estimator.model_.to_bytes()
    assert clone(estimator).get_params() == estimator.get_params()


@pytest.mark.parametrize(
    "n_states, clone_all, stages",
    [(8, True, 3), (16, True, 4), (12, True, 3), (2, True, 1), (5, True, 1), (8, False, 1)],
)
def test_clone_all_trains_in_stages(n_states, clone_all, stages):
    """8: 2, 4 then 8 values; 16: from 2 too; 12: 3, 6, 12; 2 and 5: one stage; without
    annealing, 8 at once."""
    estimator = InheritEstimator(
        n_states=n_states, clone_all=clone_all, em_iterations=2, open_class_threshold=1
    )
    estimator.fit(TREES)
    assert len(estimator.log_likelihoods_) == stages * 3  # 2 EM steps each
    assert estimator.inherit_grammar_.n_states.max() == n_states
    assert estimator.model_.grammar.n_states.max() == n_states


@pytest.mark.parametrize(
    "params",
    [
        {"n_states": 0},
        {"em_iterations": -1},
        {"noise": 1.5},
        {"smoothing": 1.0},
        {"clone_all": 2},
    ],
)
def test_bad_params_raise_before_fitting(params):
    with pytest.raises(ValueError, match=next(reversed(params))):
        InheritEstimator(**params).fit(TREES)


def test_parses_ptb_sample_dev_above_a_floor(load_corpus):
    """L = 8 (annealed from 2): 77.4 to 79.5 dev F1 with seeds 0 to 3 (split-merge's
    first cycle: 75.0)."""
    from spacy_lpcfg import evaluate
    from spacy_lpcfg.decode.parser import Parser

    train = load_corpus("ptb_sample", "train", keep_functions=False)
    dev = load_corpus("ptb_sample", "dev", keep_functions=False)
    estimator = InheritEstimator(n_states=8).fit(train)
    assert evaluate(Parser(estimator.model_), dev).fscore > 76.5
