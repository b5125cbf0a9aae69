"""Flat node arrays, inside/outside features, per-symbol SVD and projections."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from spacy_lpcfg.estimators.features import INSIDE_TEMPLATES, OUTSIDE_TEMPLATES, node_features
from spacy_lpcfg.estimators.mle import count_rules
from spacy_lpcfg.estimators.projections import (
    fit_projections,
    requested_states,
    state_caps,
    truncated_svd,
)
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.nodes import LEFT, ONLY, RIGHT, flatten, node_rules
from spacy_lpcfg.trees.transforms import TransformPipeline, TransformSpec

TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
    "(TOP (NP (NN Food)))",
]


@pytest.fixture(scope="module")
def treebank():
    pipeline = TransformPipeline(TransformSpec())
    trees = [pipeline.apply(Tree.from_string(text)) for text in TREEBANK]
    counts = count_rules(trees)
    nodes = flatten(trees, counts.symbols)
    binary, unary = node_rules(nodes, counts.binary_rules, counts.unary_rules)
    rule_key = np.where(binary >= 0, binary, len(counts.binary_rules) + unary)
    return trees, counts, nodes, binary, unary, node_features(nodes, rule_key, word_threshold=2)


def test_flatten_spans_labels_and_words_match_the_trees(treebank):
    trees, counts, nodes, *_ = treebank
    for t, tree in enumerate(trees):
        mine = nodes.tree == t
        spans = [
            (counts.symbols.name(s), int(i), int(j))
            for s, i, j in zip(nodes.symbol[mine], nodes.start[mine], nodes.end[mine])
        ]
        assert spans == tree.spans(include_preterminals=True)
        tokens = slice(nodes.token_offsets[t], nodes.token_offsets[t + 1])
        assert [nodes.words[w] for w in nodes.token_word[tokens]] == tree.words()
    assert nodes.n_trees == len(trees) and nodes.is_root.sum() == len(trees)


def test_flatten_children_and_positions_are_consistent(treebank):
    _, _, nodes, *_ = treebank
    binary = np.flatnonzero(nodes.is_binary)
    assert (nodes.parent[nodes.left[binary]] == binary).all()
    assert (nodes.parent[nodes.right[binary]] == binary).all()
    assert (nodes.position[nodes.left[binary]] == LEFT).all()
    assert (nodes.position[nodes.right[binary]] == RIGHT).all()
    unary = np.flatnonzero(nodes.is_unary)
    assert (nodes.position[nodes.left[unary]] == ONLY).all()
    assert (nodes.start[nodes.left[binary]] == nodes.start[binary]).all()
    assert (nodes.end[nodes.left[binary]] == nodes.start[nodes.right[binary]]).all()
    assert (nodes.end[nodes.right[binary]] == nodes.end[binary]).all()
    assert not (nodes.is_preterminal & (nodes.left >= 0)).any()


def test_flatten_rejects_unknown_labels_and_wide_nodes(treebank):
    _, counts, *_ = treebank
    with pytest.raises(ValueError, match="E029.*'XP'"):
        flatten([Tree.from_string("(TOP (XP (NN a)))")], counts.symbols)
    with pytest.raises(ValueError, match="more than two children"):
        flatten([Tree.from_string("(TOP (NP^S (NN a) (NN b) (NN c)))")], counts.symbols)


def test_node_rules_find_every_rule(treebank):
    _, counts, nodes, binary, unary, _ = treebank
    at = np.flatnonzero(binary >= 0)
    expected = np.stack(
        [nodes.symbol[at], nodes.symbol[nodes.left[at]], nodes.symbol[nodes.right[at]]], axis=1
    )
    assert (counts.binary_rules[binary[at]] == expected).all()
    at = np.flatnonzero(unary >= 0)
    assert (counts.unary_rules[unary[at], 1] == nodes.symbol[nodes.left[at]]).all()
    assert ((binary >= 0) == nodes.is_binary).all() and ((unary >= 0) == nodes.is_unary).all()


def _fired(features, node, inside=True):
    matrix = features.inside if inside else features.outside
    templates = features.inside_templates if inside else features.outside_templates
    offsets = features.inside_offsets if inside else features.outside_offsets
    columns = matrix.indices[matrix.indptr[node] : matrix.indptr[node + 1]]
    return {templates[np.searchsorted(offsets, c, side="right") - 1]: c for c in columns}


def test_features_fire_once_per_applicable_template(treebank):
    _, _, nodes, _, _, features = treebank
    assert features.inside.shape[0] == features.outside.shape[0] == len(nodes)
    assert set(np.unique(features.inside.data)) == {1.0}
    for node in np.flatnonzero(nodes.is_root):
        assert not _fired(features, node) and not _fired(features, node, inside=False)
    word = np.flatnonzero(nodes.is_preterminal)[0]
    assert set(_fired(features, word)) <= {"word", "lower", "shape", "suffix2", "suffix3"}
    phrase = np.flatnonzero(nodes.is_binary & ~nodes.is_root)[0]
    assert set(_fired(features, phrase)) == {
        "rule", "rule+left", "rule+right", "rule+children", "first_tag", "last_tag",
        "first_word", "last_word", "length",
    }  # fmt: skip
    assert set(_fired(features, phrase, inside=False)) == set(OUTSIDE_TEMPLATES) - {"sibling"}
    # memory is proportional to the nodes: at most one feature per template
    assert features.inside.nnz <= len(nodes) * len(INSIDE_TEMPLATES)
    assert features.outside.nnz <= len(nodes) * len(OUTSIDE_TEMPLATES)


def test_features_share_columns_between_equal_contexts(treebank):
    trees, counts, nodes, _, _, features = treebank
    # "the" opens trees 0 and 1: same left context (sentence start), same word
    the = [nodes.token_node[nodes.token_offsets[t]] for t in (0, 1)]
    assert _fired(features, the[0])["word"] == _fired(features, the[1])["word"]
    left = [_fired(features, n, inside=False)["left_tag"] for n in the]
    assert left[0] == left[1]
    dog = nodes.token_node[nodes.token_offsets[0] + 1]
    assert _fired(features, dog, inside=False)["left_tag"] != left[0]


def test_features_reject_unknown_templates(treebank):
    _, _, nodes, binary, *_ = treebank
    with pytest.raises(ValueError, match="E011"):
        node_features(nodes, binary, inside_templates=("rule", "nonsense"))


def test_requested_states_and_caps():
    from spacy_lpcfg.grammar import SymbolTable

    symbols = SymbolTable.from_kinds(phrasal=["NP", "S"], preterminal=["NN"])
    assert requested_states(8, symbols).tolist() == [1, 8, 8, 8]
    assert requested_states({"NP": 4}, symbols).tolist() == [1, 4, 1, 1]
    for bad in (0, 2.5, {"XP": 2}, {"NP": -1}):
        with pytest.raises(ValueError, match="E011"):
            requested_states(bad, symbols)
    values = (np.zeros(0), np.array([1.0, 0.5, 1e-5]), np.array([2.0, 1.9]), np.array([1.0]))
    caps = state_caps(
        np.array([0, 100, 15, 3]), values, min_count_per_state=5, singular_value_threshold=1e-3
    )
    assert caps.tolist() == [1, 2, 2, 1]


def test_truncated_svd_randomized_matches_dense():
    rng = np.random.default_rng(0)
    n, d, d_out = 3000, 900, 800
    # rows with a few features each, and a strong low-rank signal
    hidden = rng.integers(0, 5, size=n)
    phi = sparse.random(n, d, density=0.004, random_state=1, format="csr")
    psi = sparse.random(n, d_out, density=0.004, random_state=2, format="csr")
    phi = (phi + sparse.csr_matrix((np.ones(n), (np.arange(n), hidden)), shape=(n, d))).tocsr()
    psi = (psi + sparse.csr_matrix((np.ones(n), (np.arange(n), hidden)), shape=(n, d_out))).tocsr()
    u, s, vt = truncated_svd(phi, psi, 5, 10, 5, np.random.default_rng(0))
    exact = np.linalg.svd((phi.T @ psi).toarray() / n)
    assert np.allclose(s, exact[1][:5], rtol=1e-6)
    assert np.allclose(np.abs(u.T @ exact[0][:, :5]), np.eye(5), atol=1e-4)
    assert np.allclose(u.T @ u, np.eye(5)) and np.allclose(vt @ vt.T, np.eye(5))


def test_projections_scale_project_and_truncate(treebank):
    _, counts, nodes, _, _, features = treebank
    n_symbols = len(counts.symbols)
    projections = fit_projections(
        nodes, features, np.full(n_symbols, 3), kappa=5.0, random_state=np.random.default_rng(0)
    )
    np_ = counts.symbols.index("NP^S")
    members = projections.nodes_of(np_)
    n = len(members)
    assert (nodes.symbol[members] == np_).all() and n == 4
    assert (projections.row[members] == np.arange(n)).all()
    # y = U^T phi with phi scaled by sqrt(N / (count + kappa)): recompute for NP^S
    phi = features.inside[members]
    used = np.unique(phi.indices)
    scale = np.sqrt(n / (np.asarray(phi[:, used].sum(axis=0)).ravel() + 5.0))
    psi = features.outside[members]
    used_out = np.unique(psi.indices)
    scale_out = np.sqrt(n / (np.asarray(psi[:, used_out].sum(axis=0)).ravel() + 5.0))
    omega = (phi[:, used].toarray() * scale).T @ (psi[:, used_out].toarray() * scale_out) / n
    u, s, vt = np.linalg.svd(omega)
    k = len(projections.singular_values[np_])
    assert np.allclose(projections.singular_values[np_], s[:k])
    y = projections.inside[np_]
    assert np.allclose(np.abs(y), np.abs((phi[:, used].toarray() * scale) @ u[:, :k]))
    smaller = projections.truncated(np.minimum(projections.rank, 1))
    assert np.array_equal(smaller.inside[np_], y[:, :1])
    with pytest.raises(ValueError, match="E011"):
        projections.truncated(projections.rank + 1)
