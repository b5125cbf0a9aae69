"""The Tree type and Penn bracket parsing: spans, traversals, printing round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_lpcfg.errors import TreebankFormatError
from spacy_lpcfg.trees import ROOT_LABEL, Tree
from spacy_lpcfg.trees.brackets import iter_raw_trees, raw_to_tree

TEXT = "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (NP (NP (NN home)))) (. .)) )"


def test_tree_root_wrappers_become_top():
    for text in (TEXT, TEXT.replace("( (S", "(TOP (S"), TEXT.replace("( (S", "(ROOT (S")):
        assert Tree.from_string(text).label == ROOT_LABEL
    wrapped = Tree.from_string("(S (NN x))")
    assert wrapped.label == ROOT_LABEL and wrapped.children[0].label == "S"


def test_tree_spans_are_half_open_preorder_with_unary_chains():
    tree = Tree.from_string(TEXT)
    assert tree.spans() == [
        ("TOP", 0, 5),
        ("S", 0, 5),
        ("NP-SBJ", 0, 2),
        ("VP", 2, 4),
        ("NP", 3, 4),  # a unary chain: outermost first, same offsets
        ("NP", 3, 4),
    ]
    with_tags = tree.spans(include_root=False, include_preterminals=True)
    assert with_tags[:4] == [("S", 0, 5), ("NP-SBJ", 0, 2), ("DT", 0, 1), ("NN", 1, 2)]
    assert tree.words() == ["The", "cat", "sat", "home", "."]
    assert tree.tags() == ["DT", "NN", "VBD", "NN", "."]
    assert tree.n_words == 5


def test_tree_is_immutable_and_hashable():
    tree = Tree.from_string(TEXT)
    with pytest.raises(AttributeError):
        tree.label = "X"
    assert hash(tree) == hash(Tree.from_string(TEXT))


def test_tree_deep_trees_need_no_recursion():
    tree = Tree.leaf("NN", "x")
    for _ in range(5000):
        tree = Tree("NP", (tree,))
    tree = Tree(ROOT_LABEL, (tree,))
    assert tree.n_words == 1 and len(tree.spans()) == 5001
    assert Tree.from_string(tree.pformat()).n_words == 1


@pytest.mark.parametrize(
    "text, line",
    [
        ("(S (NP x)", 1),  # not closed
        ("(S (NP x))\n\n(S (NP y)))", 3),  # one ')' too many
        ("\n\nword (S (NN x))", 3),  # text outside brackets
        ("(S (NN x))\n(S\n (NN x y))", 2),  # two words under one tag
    ],
)
def test_tree_malformed_brackets_raise_with_file_and_line(text, line):
    with pytest.raises(TreebankFormatError) as error:
        for raw, at in iter_raw_trees(text, path="f.mrg"):
            raw_to_tree(raw, path="f.mrg", line=at)
    assert error.value.line == line and error.value.path == "f.mrg"
    assert f"f.mrg, line {line}" in str(error.value)


def test_tree_with_words_replaces_in_order():
    tree = Tree.from_string(TEXT)
    replaced = tree.with_words(["a", "b", "c", "d", "e"])
    assert replaced.words() == ["a", "b", "c", "d", "e"] and replaced.tags() == tree.tags()
    assert replaced.with_words(tree.words()) == tree
    with pytest.raises(ValueError):
        tree.with_words(["too", "few"])


LABELS = st.sampled_from(["S", "NP", "VP", "NP-SBJ", "PP-LOC", "SBAR", "@X|<Y", "A::B"])
WORDS = st.text(alphabet="abcXYZ019.,'$-", min_size=1, max_size=4)


def _trees(depth: int):
    leaf = st.builds(Tree.leaf, st.sampled_from(["NN", "DT", "VBD", "-NONE-"]), WORDS)
    if depth == 0:
        return leaf
    return st.one_of(
        leaf,
        st.builds(
            lambda label, kids: Tree(label, tuple(kids)),
            LABELS,
            st.lists(_trees(depth - 1), min_size=1, max_size=3),
        ),  # fmt: skip
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(_trees(4), min_size=1, max_size=3))
def test_tree_pformat_roundtrip(children):
    tree = Tree(ROOT_LABEL, tuple(children))
    assert Tree.from_string(tree.pformat()) == tree
    assert Tree.from_string(tree.pretty()) == tree
    labels = [label for label, _, _ in tree.spans(include_preterminals=True)]
    assert labels == [node.label for node in tree.subtrees()]
