"""Invertible tree transforms: exact shapes, round trips, invariants, specs and errors."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_lpcfg.errors import TransformError
from spacy_lpcfg.trees.brackets import iter_raw_trees, raw_to_tree
from spacy_lpcfg.trees.heads import HeadRules
from spacy_lpcfg.trees.normalize import normalize, strip_functions
from spacy_lpcfg.trees.transforms import (
    BIN_MARK,
    BINARIZATIONS,
    LEFT_CONTEXT,
    PARENT_SEP,
    RESERVED_SEPARATORS,
    RIGHT_CONTEXT,
    UNARY_SEP,
    TransformPipeline,
    TransformSpec,
    annotate_parents,
    binarize,
    collapse_unaries,
    debinarize,
    expand_unaries,
    intermediate_parent,
    is_intermediate,
    mark_phrases,
    strip_annotations,
    tag_phrase_labels,
    transform_treebank,
    validate_labels,
)
from spacy_lpcfg.trees.tree import Tree

H_MARKOV = (0, 1, 2, None)
V_MARKOV = (1, 2, 3)
ALL_SPECS = [
    TransformSpec(binarization=b, h_markov=h, v_markov=v, collapse_unary=c)
    for b, h, v, c in itertools.product(BINARIZATIONS, H_MARKOV, V_MARKOV, (True, False))
]

HAND_MADE = [
    "(TOP (NN word))",
    "(TOP (S (VP (VB Go))))",
    "(TOP (S (NP (PRP I)) (VP (VBD saw) (NP (PRP it)))))",
    "(TOP (S (NP-SBJ (DT The) (JJ big) (JJ red) (NN dog)) (VP (VBD chased) (NP (DT the) (NN cat))"
    " (PP-DIR (IN into) (NP (DT the) (NN house))) (ADVP-TMP (RB yesterday))) (. .)))",
    "(TOP (S (S (VP (VB Go) (NP (NN home)))) (CC and) (S (VP (VB rest))) (. !)))",
    "(TOP (FRAG (NP (NP (NP (NN a)))) (: :) (NP (NN b)) (. .)) (META (NN c)))",
    "(TOP (X (Y (Z (A a) (B b) (C c) (D d) (E e) (F f)))) (X (Y (A a))) (X (A a) (B b)))",
    "(TOP (NP (NP (NN a)) (NP (NN a)) (NP (NN a)) (NP (NN a)) (NP (NN a))))",
    "(TOP (IP-MAT (NP-SBJ (PRO-N hann)) (VBDI reið) (ADVP-DIR (ADV heim)) (. .)))",
    "(TOP (SUBJ+np (>N+art o) (H+n gato)) (P+v-fin dorme) (N<{'x'} y) (ADVL/N<[+1]+pp (H+prp em)))",
]


def _tree(text: str) -> Tree:
    return Tree.from_string(text)


@pytest.fixture(scope="module")
def ptb_trees(data_dir) -> list[Tree]:
    trees = []
    for path in sorted((data_dir / "ptb_sample").glob("*.mrg")):
        for raw, line in iter_raw_trees(path.read_text(encoding="ascii"), path=path):
            tree = normalize(raw_to_tree(raw, path=path, line=line), "penn")
            if tree is not None:
                trees.append(tree)
    assert len(trees) == 3914
    return trees


def _check_shape(tree: Tree, spec: TransformSpec) -> None:
    """Binary everywhere; unaries only at the root, over one preterminal or (no collapse) chains."""
    for node in tree.subtrees():
        if node.word is not None:
            continue
        assert 1 <= len(node.children) <= 2, node
        if len(node.children) == 1 and node is not tree and spec.collapse_unary:
            assert node.children[0].word is not None, node
        if is_intermediate(node.label):
            assert len(node.children) == 2


def _check_intermediates(tree: Tree) -> None:
    """Every intermediate label records the label of the phrase it was split from."""
    stack = [(tree, None)]
    while stack:
        node, owner = stack.pop()
        if is_intermediate(node.label):
            assert intermediate_parent(node.label) == owner
        else:
            owner = node.label
        stack.extend((child, owner) for child in node.children)


# ------------------------------------------------------------------ exact shapes

FIVE = "(TOP (X (A a) (B b) (C c) (D d) (E e)))"


@pytest.mark.parametrize(
    "binarization, h_markov, expected",
    [
        ("left", 1, "(TOP (X (A a) (@X|<A (B b) (@X|<B (C c) (@X|<C (D d) (E e))))))"),
        ("left", 2, "(TOP (X (A a) (@X|<A (B b) (@X|<A_B (C c) (@X|<B_C (D d) (E e))))))"),
        ("left", 0, "(TOP (X (A a) (@X|< (B b) (@X|< (C c) (@X|< (D d) (E e))))))"),
        ("left", None, "(TOP (X (A a) (@X|<A (B b) (@X|<A_B (C c) (@X|<A_B_C (D d) (E e))))))"),
        ("right", 1, "(TOP (X (@X|>E (@X|>D (@X|>C (A a) (B b)) (C c)) (D d)) (E e)))"),
        ("right", None, "(TOP (X (@X|>E (@X|>E_D (@X|>E_D_C (A a) (B b)) (C c)) (D d)) (E e)))"),
    ],
)
def test_binarize_shapes(binarization, h_markov, expected):
    assert str(binarize(_tree(FIVE), binarization, h_markov)) == expected


def test_head_binarization_peels_left_then_right():
    rules = HeadRules("toy", {"X": (("left", ("C",)),)})
    tree = binarize(_tree(FIVE), "head", 2, head_rules=rules)
    assert str(tree) == "(TOP (X (A a) (@X|<A (B b) (@X|<A_B (@X|>B_E (C c) (D d)) (E e)))))"


def test_head_binarization_with_collins_rules():
    tree = _tree(
        "(TOP (S (NP (DT The) (JJ big) (NN dog)) (VP (VBD saw) (NP (PRP it)) (ADVP (RB now))) (. .)))"
    )
    assert str(binarize(tree, "head", 1)) == (
        "(TOP (S (NP (DT The) (@NP|<DT (JJ big) (NN dog)))"
        " (@S|<NP (VP (@VP|>ADVP (VBD saw) (NP (PRP it))) (ADVP (RB now))) (. .))))"
    )


def test_collapse_unaries_shape():
    tree = _tree("(TOP (S (VP (VP (VB Go) (NP (NP (NN home)))))))")
    assert str(collapse_unaries(tree)) == "(TOP (S::VP::VP (VB Go) (NP::NP (NN home))))"
    # the root never merges; a unary over a preterminal stays
    assert str(collapse_unaries(_tree("(TOP (NP (NN a)))"))) == "(TOP (NP (NN a)))"


@pytest.mark.parametrize(
    "v_markov, preterminals, expected",
    [
        (1, False, "(TOP (S-TPC (NP-SBJ (PRP I)) (VP (VBD saw) (NP (PRP it)))))"),
        (2, False, "(TOP (S-TPC^TOP (NP-SBJ^S (PRP I)) (VP^S (VBD saw) (NP^VP (PRP it)))))"),
        (
            3,
            False,
            "(TOP (S-TPC^TOP (NP-SBJ^S^TOP (PRP I)) (VP^S^TOP (VBD saw) (NP^VP^S (PRP it)))))",
        ),
        (
            2,
            True,
            "(TOP (S-TPC^TOP (NP-SBJ^S (PRP^NP I)) (VP^S (VBD^VP saw) (NP^VP (PRP^NP it)))))",
        ),
    ],
)
def test_annotate_parents_shapes(v_markov, preterminals, expected):
    tree = _tree("(TOP (S-TPC (NP-SBJ (PRP I)) (VP (VBD saw) (NP (PRP it)))))")
    out = annotate_parents(tree, v_markov, "penn", annotate_preterminals=preterminals)
    assert str(out) == expected


def test_annotation_sees_through_collapsed_chains():
    tree = collapse_unaries(_tree("(TOP (S (VP (VB Go) (NP (NN home)))))"))
    assert str(annotate_parents(tree, 3)) == "(TOP (S::VP^TOP (VB Go) (NP^VP^S (NN home))))"


def test_pipeline_equals_the_pairs_in_sequence(ptb_trees):
    for spec in ALL_SPECS[::5]:
        pipeline = TransformPipeline(spec)
        for tree in ptb_trees[:40]:
            staged = collapse_unaries(tree) if spec.collapse_unary else tree
            staged = annotate_parents(staged, spec.v_markov, spec.scheme)
            staged = binarize(staged, spec.binarization, spec.h_markov, head_rules=spec.head_rules)
            assert pipeline.apply(tree) == staged


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("spec", ALL_SPECS, ids=repr)
@pytest.mark.parametrize("annotate_preterminals", [False, True])
def test_roundtrip_hand_made(spec, annotate_preterminals):
    spec = dataclasses.replace(spec, annotate_preterminals=annotate_preterminals)
    pipeline = TransformPipeline(spec)
    for text in HAND_MADE:
        tree = _tree(text)
        out = pipeline.apply(tree)
        assert pipeline.invert(out) == tree
        _check_shape(out, spec)
        _check_intermediates(out)
        assert out.words() == tree.words()


def test_pairs_invert_separately():
    for text in HAND_MADE:
        tree = _tree(text)
        assert expand_unaries(collapse_unaries(tree)) == tree
        assert strip_annotations(annotate_parents(tree, 3, annotate_preterminals=True)) == tree
        for binarization in BINARIZATIONS:
            assert debinarize(binarize(tree, binarization, None)) == tree


def _ptb_specs():
    yield from (TransformSpec(binarization=b) for b in BINARIZATIONS)
    yield TransformSpec(binarization="head", h_markov=None, v_markov=3, collapse_unary=False)
    yield TransformSpec(binarization="left", h_markov=0, v_markov=1, annotate_preterminals=True)
    yield TransformSpec(binarization="right", h_markov=2, v_markov=3, annotate_preterminals=True)


@pytest.mark.parametrize("spec", list(_ptb_specs()), ids=repr)
def test_roundtrip_ptb_sample(ptb_trees, spec):
    pipeline = TransformPipeline(spec)
    for tree in ptb_trees:
        out = pipeline.apply(tree)
        assert pipeline.invert(out) == tree
        assert out.words() == tree.words()
        if not spec.annotate_preterminals:
            assert out.tags() == tree.tags()


def test_every_combination_on_a_ptb_slice(ptb_trees):
    for spec in ALL_SPECS:
        pipeline = TransformPipeline(spec)
        for tree in ptb_trees[::40]:
            out = pipeline.apply(tree)
            assert pipeline.invert(out) == tree
            _check_shape(out, spec)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ALL_SPECS, ids=repr)
def test_every_combination_on_all_ptb(ptb_trees, spec):
    pipeline = TransformPipeline(spec)
    for tree in ptb_trees:
        assert pipeline.invert(pipeline.apply(tree)) == tree


@pytest.mark.parametrize("binarization", BINARIZATIONS)
def test_stripping_functions_inverts_to_stripped_tree(ptb_trees, binarization):
    pipeline = TransformPipeline(TransformSpec(binarization=binarization, keep_functions=False))
    for tree in ptb_trees:
        assert pipeline.invert(pipeline.apply(tree)) == strip_functions(tree, "penn")


# ------------------------------------------------------------------ hypothesis

_CHARS = "ABNPSV-+=|<>.,:$*'"


def _valid_label(label: str) -> bool:
    return not any(sep in label for sep in RESERVED_SEPARATORS) and not (
        label.startswith(":") or label.endswith(":")
    )


labels = st.one_of(
    st.sampled_from(["NP", "NP-SBJ", "S", "VP", "TOP", "PP-LOC-1", "-NONE-", "ADVP|PRT"]),
    st.text(_CHARS, min_size=1, max_size=5).filter(_valid_label),
)
tags = st.one_of(st.sampled_from(["DT", "NN", ":", ",", "-LRB-", "PRP$"]), labels)
words = st.text("abc:@^|<>", min_size=1, max_size=3)
preterminals = st.builds(Tree.leaf, tags, words)
subtrees = st.recursive(
    preterminals,
    lambda kids: st.builds(Tree, labels, st.lists(kids, min_size=1, max_size=6).map(tuple)),
    max_leaves=25,
)
trees = st.lists(subtrees, min_size=1, max_size=3).map(lambda kids: Tree("TOP", tuple(kids)))
specs = st.builds(
    TransformSpec,
    binarization=st.sampled_from(BINARIZATIONS),
    h_markov=st.sampled_from(H_MARKOV),
    v_markov=st.sampled_from(V_MARKOV),
    collapse_unary=st.booleans(),
    annotate_preterminals=st.booleans(),
    head_rules=st.sampled_from(["collins", "ppche", "first", "last"]),
)


@settings(max_examples=400, deadline=None)
@given(trees, specs)
def test_roundtrip_random_trees(tree, spec):
    pipeline = TransformPipeline(spec)
    out = pipeline.apply(tree)
    assert pipeline.invert(out) == tree
    _check_shape(out, spec)
    _check_intermediates(out)
    assert out.words() == tree.words()


@settings(max_examples=150, deadline=None)
@given(trees, specs)
def test_pipeline_equals_the_pairs_in_sequence_random_trees(tree, spec):
    staged = collapse_unaries(tree) if spec.collapse_unary else tree
    staged = annotate_parents(
        staged, spec.v_markov, spec.scheme, annotate_preterminals=spec.annotate_preterminals
    )
    staged = binarize(staged, spec.binarization, spec.h_markov, head_rules=spec.head_rules)
    assert TransformPipeline(spec).apply(tree) == staged


@settings(max_examples=150, deadline=None)
@given(trees, specs)
def test_stripping_functions_random_trees(tree, spec):
    spec = dataclasses.replace(spec, keep_functions=False)
    pipeline = TransformPipeline(spec)
    stripped = strip_functions(tree, "penn")
    if spec.collapse_unary and not _valid_phrase_labels(stripped):
        # a category ending with ':' ('<:-' -> '<:') would misread in a chain '<:::NP'
        with pytest.raises(TransformError, match="E019"):
            pipeline.apply(tree)
        return
    assert pipeline.invert(pipeline.apply(tree)) == stripped


def _valid_phrase_labels(tree: Tree) -> bool:
    return all(_valid_label(node.label) for node in tree.subtrees() if node.word is None)


def test_stripping_functions_checks_the_categories():
    tree = Tree.from_string("(TOP (<:-SBJ (NP (DT :))))")
    with pytest.raises(TransformError, match="E019.*'<:'"):
        TransformPipeline(TransformSpec(keep_functions=False)).apply(tree)
    # without unary collapse no chain is built, and the label reads back
    pipeline = TransformPipeline(TransformSpec(keep_functions=False, collapse_unary=False))
    assert pipeline.invert(pipeline.apply(tree)) == strip_functions(tree, "penn")


# ------------------------------------------------------- inverting parser output


@pytest.mark.parametrize(
    "parsed, expected",
    [
        # an intermediate directly under TOP is spliced into TOP
        ("(TOP (@S|<NP (NP (NN a)) (VP (VB b))))", "(TOP (NP (NN a)) (VP (VB b)))"),
        # on the "wrong" side, nested under another intermediate, recording another parent
        (
            "(TOP (S (@VP|>X (@NP|<A (A a) (B b)) (C c)) (D d)))",
            "(TOP (S (A a) (B b) (C c) (D d)))",
        ),
        # an intermediate with one child
        ("(TOP (S (@S|< (NP (NN a)))))", "(TOP (S (NP (NN a))))"),
        # chains expand over anything, annotations go everywhere
        ("(TOP (S::VP^TOP (VB^VP go)))", "(TOP (S (VP (VB go))))"),
        ("(TOP (S (X::NN a)))", "(TOP (S (X (NN a))))"),
        (
            "(TOP (S^TOP (@S^TOP|<NP::NP (NP::NP^S (NN a)) (VP^S (VB b)))))",
            "(TOP (S (NP (NP (NN a))) (VP (VB b))))",
        ),
    ],
)
def test_invert_accepts_parser_output(parsed, expected):
    assert TransformPipeline().invert(_tree(parsed)) == _tree(expected)


@pytest.mark.parametrize(
    "parsed",
    [
        "(TOP (S (@X|<A a)))",  # intermediate preterminal
        "(TOP (S:: (NN a)))",  # empty chain part
        "(TOP (::S (NN a)))",
    ],
)
def test_invert_rejects_impossible_shapes(parsed):
    with pytest.raises(TransformError, match=r"\[LPCFG-E010\]"):
        TransformPipeline().invert(_tree(parsed))


def test_invert_rejects_intermediate_root():
    tree = Tree(BIN_MARK + "S|<A", (Tree.leaf("A", "a"), Tree.leaf("B", "b")))
    with pytest.raises(TransformError, match=r"\[LPCFG-E010\].*root"):
        TransformPipeline().invert(tree)


def test_intermediate_parent():
    assert intermediate_parent("@NP^S|<DT_JJ") == "NP^S"
    assert intermediate_parent("@ADVP|PRT|>RB") == "ADVP|PRT"
    assert intermediate_parent("@S::VP^TOP|<") == "S::VP^TOP"
    assert not is_intermediate("NP")
    with pytest.raises(TransformError, match=r"\[LPCFG-E010\]"):
        intermediate_parent("NP")


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize("sep", RESERVED_SEPARATORS)
def test_reserved_separators_are_rejected(sep):
    label = f"NP{sep}X"
    tree = _tree(f"(TOP (S ({label} (NN a)) (VP (VB b))))")
    with pytest.raises(TransformError, match=r"\[LPCFG-E008\].*" + re.escape(f"'{label}'")):
        TransformPipeline().apply(tree)
    with pytest.raises(TransformError, match=r"\[LPCFG-E008\]"):
        validate_labels(tree)


@pytest.mark.parametrize(
    "transform, sep",
    [
        (collapse_unaries, UNARY_SEP),
        (annotate_parents, PARENT_SEP),
        (binarize, BIN_MARK),
        (binarize, LEFT_CONTEXT),
        (binarize, RIGHT_CONTEXT),
    ],
)
def test_each_transform_rejects_its_separator(transform, sep):
    tree = _tree(f"(TOP (S (NP (NN a)) (VP (VB{sep}X b))))")  # on a tag, too
    with pytest.raises(TransformError, match=r"\[LPCFG-E008\]"):
        transform(tree)


def test_colon_at_phrase_label_edge_is_rejected():
    with pytest.raises(TransformError, match=r"\[LPCFG-E019\].*'X:'"):
        TransformPipeline().apply(_tree("(TOP (S (X: (NN a)) (VP (VB b))))"))
    # the PTB tag ":" is fine
    tree = _tree("(TOP (S (NP (NN a)) (: :) (NP (NN b))))")
    assert TransformPipeline().invert(TransformPipeline().apply(tree)) == tree


# ------------------------------------------------------------------ spec


def test_spec_defaults_and_json_roundtrip():
    spec = TransformSpec()
    assert (spec.binarization, spec.h_markov, spec.v_markov) == ("right", 1, 2)
    assert spec.collapse_unary and spec.keep_functions and not spec.annotate_preterminals
    for spec in [
        *ALL_SPECS[:7],
        TransformSpec(scheme="floresta", head_rules="first", keep_functions=False),
    ]:
        data = json.loads(json.dumps(spec.to_dict()))
        assert data["version"] == 1
        assert TransformSpec.from_dict(data) == spec
        assert TransformPipeline.from_dict(data).spec == spec
    assert TransformSpec.from_dict({}) == TransformSpec()


@pytest.mark.parametrize(
    "data, name",
    [
        ({"binarisation": "left"}, "binarisation"),
        ({"binarization": "middle"}, "middle"),
        ({"h_markov": -1}, "h_markov"),
        ({"h_markov": True}, "h_markov"),
        ({"h_markov": 1.5}, "h_markov"),
        ({"v_markov": 0}, "v_markov"),
        ({"collapse_unary": "yes"}, "collapse_unary"),
        ({"keep_functions": 1}, "keep_functions"),
        ({"scheme": "tiger"}, "tiger"),
        ({"head_rules": "magerman"}, "magerman"),
        ({"version": 99}, "version"),
        ({"version": "1"}, "version"),
    ],
)
def test_spec_rejects_bad_settings(data, name):
    with pytest.raises(ValueError, match=name):
        TransformSpec.from_dict(data)


# ------------------------------------------------- labels that are tags and phrases

TAG_PHRASES = [
    "(TOP (IP (NP (NN (NN a) (NN b)) (NN c)) (VP (ADV (ADV d) (ADV e)) (VV f)) (ADV g)))",
    "(TOP (IP (NP-SBJ (NN (NN a) (NN b) (NN c))) (VP (ADV-TMP (ADV d) (ADV e)) (VV f))))",
    "(TOP (NN (NN a) (NN b) (NN c)))",
]


def test_mark_phrases_shape_and_inverse():
    tree = Tree.from_string(TAG_PHRASES[0])
    marked = mark_phrases(tree, {"NN", "ADV", "NP"})
    assert str(marked) == (
        "(TOP (IP (NP^ (NN^ (NN a) (NN b)) (NN c)) (VP (ADV^ (ADV d) (ADV e)) (VV f)) (ADV g)))"
    )
    assert strip_annotations(marked) == tree
    assert tag_phrase_labels([tree]) == {"NN", "ADV"}
    assert tag_phrase_labels([marked]) == set()
    with pytest.raises(TransformError, match="E008"):
        mark_phrases(Tree.from_string("(TOP (X^Y (A a)))"), {"X"})


def test_transform_treebank_marks_only_clashing_labels():
    trees = [Tree.from_string(text) for text in TAG_PHRASES]
    flat = TransformSpec(v_markov=1, h_markov=None)
    spec, transformed = transform_treebank(trees, flat)
    assert spec == dataclasses.replace(flat, marked_phrases=("ADV", "NN"))
    assert str(transformed[0]) == (
        "(TOP (IP (@IP|>ADV (NP (NN^ (NN a) (NN b)) (NN c)) (VP (ADV^ (ADV d) (ADV e)) (VV f)))"
        " (ADV g)))"
    )
    # a chain does not clash; intermediates name the marked parent
    assert "NP-SBJ::NN" in {node.label for node in transformed[1].subtrees()}
    assert str(transformed[2]) == "(TOP (NN^ (@NN^|>NN (NN a) (NN b)) (NN c)))"
    assert TransformPipeline(spec).invert_all(transformed) == trees
    assert tag_phrase_labels(transformed) == set()
    # parent annotation separates them already: nothing is marked or re-transformed
    spec, transformed = transform_treebank(iter(trees), TransformSpec())
    assert spec == TransformSpec()
    assert transformed == TransformPipeline(spec).apply_all(trees)
    # a spec that has the marks already keeps them
    again, _ = transform_treebank(trees, dataclasses.replace(flat, marked_phrases=("NN", "ADV")))
    assert again.marked_phrases == ("ADV", "NN")


@pytest.mark.parametrize("spec", ALL_SPECS, ids=str)
@pytest.mark.parametrize("keep_functions", [True, False])
@pytest.mark.parametrize("annotate_preterminals", [True, False])
def test_transform_treebank_roundtrip_and_kinds(spec, keep_functions, annotate_preterminals):
    trees = [Tree.from_string(text) for text in TAG_PHRASES]
    spec = dataclasses.replace(
        spec, keep_functions=keep_functions, annotate_preterminals=annotate_preterminals
    )
    fitted, transformed = transform_treebank(trees, spec)
    assert tag_phrase_labels(transformed) == set()
    assert TransformPipeline(fitted).apply_all(trees) == transformed
    expected = trees if keep_functions else [strip_functions(t, "penn") for t in trees]
    assert TransformPipeline(fitted).invert_all(transformed) == expected
    assert TransformSpec.from_dict(json.loads(json.dumps(fitted.to_dict()))) == fitted


def test_spec_marked_phrases_json():
    spec = TransformSpec(v_markov=1, marked_phrases=["NN", "ADV", "NN"])
    assert spec.marked_phrases == ("ADV", "NN")
    data = json.loads(json.dumps(spec.to_dict()))
    assert data["version"] == 2 and data["marked_phrases"] == ["ADV", "NN"]
    assert TransformSpec.from_dict(data) == spec
    # without marks the file is what earlier versions wrote and read
    assert "marked_phrases" not in TransformSpec().to_dict()
    for bad in ("NN", [1], [""], ["TOP"], ["@NP|<DT"], ["S::VP"]):
        with pytest.raises(ValueError, match="marked_phrases"):
            TransformSpec(marked_phrases=bad)


# ------------------------------------------------------------------ whole corpora

CORPUS_SCHEMES = {
    "ptb_sample": "penn",
    "icepahc": "penn",
    "floresta": "floresta",
    "cess_esp": "cess",
}
CORPUS_HEAD_RULES = {"ptb_sample": "collins", "icepahc": "ppche"}


@pytest.mark.slow
@pytest.mark.parametrize("corpus", list(CORPUS_SCHEMES))
def test_roundtrip_every_tree_of_every_corpus(data_dir, corpus):
    from spacy_lpcfg.trees.formats import read_treebank

    scheme = CORPUS_SCHEMES[corpus]
    corpus_trees = list(read_treebank(data_dir / corpus))
    for spec in [
        TransformSpec(scheme=scheme),
        TransformSpec(
            scheme=scheme,
            binarization="head",
            head_rules=CORPUS_HEAD_RULES.get(corpus, "first"),
            h_markov=None,
            v_markov=3,
            annotate_preterminals=True,
        ),
    ]:
        pipeline = TransformPipeline(spec)
        assert pipeline.invert_all(pipeline.apply_all(corpus_trees)) == corpus_trees
    pipeline = TransformPipeline(TransformSpec(scheme=scheme, keep_functions=False))
    for tree in corpus_trees:
        assert pipeline.invert(pipeline.apply(tree)) == strip_functions(tree, scheme)


@pytest.mark.parametrize("corpus", list(CORPUS_SCHEMES))
def test_roundtrip_sample_of_every_corpus(load_corpus, corpus):
    """Default-run version of the test above: every 25th tree, three settings."""
    scheme = CORPUS_SCHEMES[corpus]
    sample = load_corpus(corpus)[::25]
    for spec in [
        TransformSpec(scheme=scheme),
        TransformSpec(
            scheme=scheme,
            binarization="head",
            head_rules=CORPUS_HEAD_RULES.get(corpus, "first"),
            h_markov=2,
            v_markov=3,
        ),
        TransformSpec(scheme=scheme, binarization="left", h_markov=None, collapse_unary=False),
    ]:
        pipeline = TransformPipeline(spec)
        assert pipeline.invert_all(pipeline.apply_all(sample)) == list(sample)
    pipeline = TransformPipeline(TransformSpec(scheme=scheme, keep_functions=False))
    assert [pipeline.invert(pipeline.apply(t)) for t in sample] == [
        strip_functions(t, scheme) for t in sample
    ]
