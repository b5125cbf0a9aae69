"""FunctionTagger: the fitted function labeller, saved with a ParsingModel without pickle.

Round trips give the same tags on real trees; damaged or crafted labeller files give
GrammarError naming the file, never an IndexError or a pickle load.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from spacy_lpcfg.defaults import FUNCTION_LABELS
from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import ClusteringEstimator, MLEEstimator
from spacy_lpcfg.estimators.function_labels import FunctionLabeller, attach_function_labeller
from spacy_lpcfg.grammar.function_labels import FunctionTagger, phrase_features
from spacy_lpcfg.grammar.model import ParsingModel, combine_models
from spacy_lpcfg.grammar.serialization import pack_zip, unpack_zip
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.labels import get_scheme
from spacy_lpcfg.trees.normalize import strip_functions
from spacy_lpcfg.trees.transforms import TransformSpec

N_TRAIN = 300
INDEX, ARRAYS = "function_labeller.json", "function_labeller.npz"


@pytest.fixture(scope="module")
def train(load_corpus):
    return load_corpus("ptb_sample", "train")[:N_TRAIN]


@pytest.fixture(scope="module")
def stripped_dev(load_corpus):
    return [strip_functions(tree, "penn") for tree in load_corpus("ptb_sample", "dev")[:80]]


@pytest.fixture(scope="module")
def labeller(train):
    return FunctionLabeller().fit(train)


@pytest.fixture(scope="module")
def model(train, labeller):
    """A function-stripped MLE model with the labeller attached."""
    spec = TransformSpec(keep_functions=False)
    return MLEEstimator(transform=spec).fit(train).model_.with_function_labeller(labeller.tagger_)


@pytest.fixture
def saved(model, tmp_path) -> Path:
    path = tmp_path / "model"
    model.to_disk(path)
    return path


def _sparse_copy(tagger: FunctionTagger) -> FunctionTagger:
    """The tagger with all but every tenth coefficient zeroed (stored sparse)."""
    coef = np.zeros_like(tagger.coef)
    coef[:, ::10] = tagger.coef[:, ::10]
    return FunctionTagger(
        tagger.scheme, tagger.head_rules, tagger.features, tagger.classes, coef, tagger.intercept
    )


# What it predicts ---------------------------------------------------------------


def _reference_features(tree: Tree, scheme, rules: str) -> list[tuple[Tree, list[str]]]:
    """phrase_features read off the tree node by node, every length and head found
    afresh for each phrase: the definition the fast walk must match."""
    from spacy_lpcfg.trees.heads import find_head

    tags, words, found = tree.tags(), tree.words(), []

    def head_of(node: Tree) -> Tree:
        while not node.is_preterminal:
            labels = [child.label for child in node.children]
            node = node.children[find_head(labels, node.label, scheme, rules)]
        return node

    def visit(node, start, parent, grandparent):
        end = start + len(node.words())
        if not node.is_preterminal and node.label != "TOP":
            category = scheme.category(node.label)
            up = scheme.category(parent.label)
            feats = ["cat=" + category, "parent=" + up, f"cat,parent={category},{up}"]
            if grandparent is not None:
                feats.append("grandparent=" + scheme.category(grandparent.label))
            siblings = parent.children
            index = next(i for i, child in enumerate(siblings) if child is node)
            left = scheme.category(siblings[index - 1].label) if index else "<start>"
            last = index + 1 == len(siblings)
            right = "<end>" if last else scheme.category(siblings[index + 1].label)
            parent_head = find_head([c.label for c in siblings], parent.label, scheme, rules)
            feats += [f"left={left}", f"right={right}", f"cat,left,right={category},{left},{right}"]
            feats.append(f"is_head={index == parent_head}")
            head, length = head_of(node), end - start
            feats += [
                "head_tag=" + head.label,
                "head_word=" + (head.word or "").lower(),
                f"cat,head_tag={category},{head.label}",
                "first=" + tags[start],
                "last=" + tags[end - 1],
                "before=" + (tags[start - 1] if start else "<s>"),
                "after=" + (tags[end] if end < len(tags) else "</s>"),
                "before_word=" + (words[start - 1].lower() if start else "<s>"),
                "length=" + str(length if length < 5 else 5 if length < 10 else 10),
            ]
            found.append((node, feats))
        position = start
        for child in node.children:
            visit(child, position, node, parent)
            position += len(child.words())

    visit(tree, 0, None, None)
    return found


def test_phrase_features_match_their_definition(stripped_dev, train):
    scheme = get_scheme("penn")
    for tree in [*stripped_dev, *train[:40]]:
        got = list(phrase_features(tree, scheme, "collins"))
        want = _reference_features(tree, scheme, "collins")
        assert [(id(node), feats) for node, feats in got] == [
            (id(node), feats) for node, feats in want
        ]


def test_tagger_predicts_what_scikit_learn_predicts(labeller, stripped_dev):
    tagger = labeller.tagger_
    scheme = get_scheme("penn")
    phrases = [f for tree in stripped_dev for _, f in phrase_features(tree, scheme, "collins")]
    expected = labeller.model_.predict(tagger.vectorize(phrases))
    assert tagger.predict(phrases).tolist() == expected.tolist()
    assert len(set(expected.tolist())) > 3  # not one class for everything


def test_tagger_two_classes_use_one_row_as_scikit_learn():
    trees = [
        Tree.from_string(text)
        for text in [
            "(TOP (S (NP-SBJ (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
            "(TOP (S (NP-SBJ (NNS dogs)) (VP (VBP eat) (NP (NN food))) (. .)))",
            "(TOP (S (NP-SBJ (PRP it)) (VP (VBD saw) (NP (DT a) (NN cat))) (. .)))",
        ]
    ]
    labeller = FunctionLabeller(min_count=1).fit(trees)
    tagger = labeller.tagger_
    assert tagger.classes == ((), ("SBJ",)) and tagger.coef.shape == (1, len(tagger.features))
    stripped = [strip_functions(tree, "penn") for tree in trees]
    assert labeller.label(stripped) == trees  # it learned the training trees
    loaded = FunctionTagger.from_members(tagger.to_members(), "test")
    assert loaded == tagger and loaded.label(stripped) == trees


# Round trips --------------------------------------------------------------------


def test_model_with_labeller_round_trips_exactly(model, saved, stripped_dev):
    expected = model.labeller.label(stripped_dev)
    assert any("-" in label for tree in expected for label, _, _ in tree.spans())
    data = model.to_bytes()
    for loaded in (ParsingModel.from_disk(saved), ParsingModel.from_bytes(data)):
        assert loaded == model and loaded.to_bytes() == data
        assert loaded.labeller == model.labeller
        assert loaded.function_labels == model.function_labels == FUNCTION_LABELS
        assert np.array_equal(loaded.labeller.coef, model.labeller.coef)
        assert loaded.labeller.label(stripped_dev) == expected


def test_model_with_labeller_layout(model, saved):
    cfg = json.loads((saved / "cfg.json").read_text())
    tagger = model.labeller
    assert cfg["function_labeller"] == {
        "classes": len(tagger.classes),
        "features": len(tagger.features),
    }
    assert cfg["function_labels"] == FUNCTION_LABELS and cfg["format_version"] == 1
    index = json.loads((saved / INDEX).read_text())
    assert index["classes"][0] == [] and ["SBJ"] in index["classes"]
    assert index["coef"] == {"rows": len(tagger.classes), "stored": None}  # L2: dense
    assert index["params"] == {"C": 1.0, "max_iter": 300, "min_count": 2}
    with zipfile.ZipFile(saved / ARRAYS) as archive:
        assert sorted(archive.namelist()) == ["coef.npy", "intercept.npy"]


def test_sparse_coefficients_are_stored_sparse_and_round_trip(model, stripped_dev):
    sparse = _sparse_copy(model.labeller)
    files = sparse.to_members()
    with zipfile.ZipFile(io.BytesIO(files[ARRAYS])) as archive:
        assert sorted(archive.namelist()) == [
            "coef_positions.npy",
            "coef_values.npy",
            "intercept.npy",
        ]
    loaded = ParsingModel.from_bytes(model.with_function_labeller(sparse).to_bytes()).labeller
    assert np.array_equal(loaded.coef, sparse.coef)
    assert loaded.label(stripped_dev) == sparse.label(stripped_dev)
    assert len(files[ARRAYS]) < len(model.labeller.to_members()[ARRAYS]) / 3


def test_model_without_labeller_is_unchanged(model):
    bare = model.with_function_labeller(None)
    cfg = bare.cfg
    assert "function_labeller" not in cfg and "function_labels" not in cfg
    assert not any(
        name.startswith("function_labeller") for name in unpack_zip(bare.to_bytes(), "t")
    )
    loaded = ParsingModel.from_bytes(bare.to_bytes())
    assert loaded.labeller is None and loaded.active_labeller is None


def test_active_labeller_follows_the_setting(train, labeller):
    tagger = labeller.tagger_
    keep = MLEEstimator().fit(train[:50]).model_  # keeps function tags
    assert keep.with_function_labeller(tagger, "grammar").active_labeller is None
    assert keep.with_function_labeller(tagger, "labeller").active_labeller is tagger
    strip = MLEEstimator(transform=TransformSpec(keep_functions=False)).fit(train[:50]).model_
    assert strip.with_function_labeller(tagger, "grammar").active_labeller is tagger
    # auto: a latent grammar's own tags, the labeller's over an MLE grammar's
    latent = ClusteringEstimator(n_states=2).fit(train[:50]).model_
    assert latent.transform.keep_functions and latent.grammar.max_states == 2
    assert latent.with_function_labeller(tagger, "auto").active_labeller is None
    assert keep.with_function_labeller(tagger, "auto").active_labeller is tagger
    assert strip.with_function_labeller(tagger, "auto").active_labeller is tagger
    for parts, expected in (((keep, latent), None), ((keep, strip), tagger)):
        combined = combine_models(parts).with_function_labeller(tagger, "auto")
        assert combined.active_labeller is expected
    with pytest.raises(GrammarError, match="E127.*function_labels"):
        keep.with_function_labeller(tagger, "both")


def test_attach_function_labeller_fits_on_the_models_scheme(train, model):
    attached = attach_function_labeller(model.with_function_labeller(None), train[:60], C=0.5)
    assert attached.labeller.scheme == "penn" and attached.labeller.params["C"] == 0.5
    assert attached.function_labels == FUNCTION_LABELS and attached.grammar is model.grammar


def test_combination_keeps_the_first_labeller_and_members_have_none(train, model):
    left = MLEEstimator(transform=TransformSpec(keep_functions=False, binarization="left"))
    other = left.fit(train[:100]).model_
    combined = combine_models([other, model], "product")
    assert combined.labeller == model.labeller
    assert combined.function_labels == model.function_labels
    assert all(part.labeller is None for part in combined.parts)
    assert ParsingModel.from_bytes(combined.to_bytes()) == combined
    with pytest.raises(GrammarError, match="E127.*function labeller of its own"):
        other.with_members([model], "product")


# Bad parts and damaged files ------------------------------------------------------


@pytest.mark.parametrize(
    "change,message",
    [
        ({"scheme": "tiger"}, "unknown label scheme"),
        ({"head_rules": "middle"}, "unknown head rules"),
        ({"classes": [()]}, "at least two"),
        ({"classes": [(), ()]}, "listed twice"),
        ({"classes": [(), ("",)]}, "non-empty strings"),
        ({"features": ["a", "a"]}, "listed twice"),
        ({"coef": np.zeros((2, 2))}, r"coef is float64\[2, 2\], expected float64\[3, 2\]"),
        ({"coef": np.zeros((3, 2), np.float32)}, "coef is float32"),
        ({"intercept": np.array([0.0, np.inf, 0.0])}, "intercept has non-finite"),
        ({"params": {"x": object()}}, "JSON"),
    ],
)
def test_tagger_checks_its_parts(change, message):
    parts = {
        "scheme": "penn",
        "head_rules": "collins",
        "features": ["a", "b"],
        "classes": [(), ("SBJ",), ("TMP",)],
        "coef": np.zeros((3, 2)),
        "intercept": np.zeros(3),
        "params": {},
    }
    parts.update(change)
    with pytest.raises(GrammarError, match=f"E129.*{message}"):
        FunctionTagger(**parts)


def test_model_refuses_a_labeller_of_another_scheme(model, labeller):
    floresta = FunctionTagger(
        "floresta", "first", ["a"], [(), ("SUBJ",)], np.zeros((1, 1)), np.zeros(1)
    )
    with pytest.raises(GrammarError, match="E127.*'floresta'"):
        model.with_function_labeller(floresta)
    with pytest.raises(GrammarError, match="E127.*FunctionTagger"):
        model.with_function_labeller(labeller)  # the estimator, not what it learned


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _rewrite_arrays(path: Path, **arrays) -> None:
    """Replace members of function_labeller.npz (np.save: object arrays are pickled)."""
    with zipfile.ZipFile(path / ARRAYS) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    for name, array in arrays.items():
        member = io.BytesIO()
        np.save(member, array, allow_pickle=True)
        contents[f"{name}.npy"] = member.getvalue()
    (path / ARRAYS).write_bytes(pack_zip(contents))


def _fake_header(path: Path) -> None:
    """coef.npy claims 10**6 x 10**6 float64s in a few bytes."""
    with zipfile.ZipFile(path / ARRAYS) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
    )
    contents["coef.npy"] = header.getvalue() + b"\0" * 64
    (path / ARRAYS).write_bytes(pack_zip(contents))


def _first_class(data: dict, value) -> None:
    data["classes"][0] = value


DAMAGE = [
    (lambda p: (p / ARRAYS).unlink(), r"missing (file )?function_labeller\.npz"),
    (lambda p: (p / INDEX).write_text("[1"), r"E130.*function_labeller\.json is not valid JSON"),
    (lambda p: (p / ARRAYS).write_bytes(b"PK\x03\x04broken"), r"E130.*not a readable zip"),
    (
        lambda p: (p / ARRAYS).write_bytes((p / ARRAYS).read_bytes()[:-200]),
        r"E130.*function_labeller\.npz",
    ),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(format="x")), "E130.*not the index"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(format_version=2)), "E125.*version 2"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(format_version="1")), "E128"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(head_rules=None)), "'head_rules'"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(head_rules="mid")), "E130.*E129.*head"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(features={"a": 1})), "'features'"),
    (lambda p: _edit_json(p / INDEX, lambda d: d["features"].pop()), r"E130.*coef\.npy has shape"),
    (lambda p: _edit_json(p / INDEX, lambda d: d["features"].__setitem__(0, 7)), "strings"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(classes="SBJ")), "'classes'"),
    (lambda p: _edit_json(p / INDEX, lambda d: _first_class(d, ["SBJ"])), "E129.*twice"),
    (lambda p: _edit_json(p / INDEX, lambda d: d["classes"].pop()), "rows"),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(coef=[1])), "'coef' must be"),
    (lambda p: _edit_json(p / INDEX, lambda d: d["coef"].update(rows=1)), "'coef' must be"),
    (lambda p: _edit_json(p / INDEX, lambda d: d["coef"].update(stored=-1)), "coef.stored"),
    (
        lambda p: _edit_json(p / INDEX, lambda d: d["coef"].update(stored=5)),
        "unexpected or repeated",
    ),
    (lambda p: _edit_json(p / INDEX, lambda d: d.update(params=[])), "'params'"),
    (
        lambda p: _edit_json(p / INDEX, lambda d: d.update(features=["x"] * 10**5)),
        r"E130.*coef\.npy has shape",  # checked before anything of that size is made
    ),
    (lambda p: _rewrite_arrays(p, coef=np.array([object()])), "'object' values, expected float64"),
    (lambda p: _rewrite_arrays(p, intercept=np.zeros(2, np.float32)), "float64"),
    (lambda p: _rewrite_arrays(p, extra=np.zeros(1)), "unexpected or repeated member"),
    (_fake_header, r"E130.*coef\.npy has shape"),
    (
        lambda p: _edit_json(p / "cfg.json", lambda d: d["function_labeller"].update(classes=2)),
        r"E124.*cfg\.json says the function labeller has 2 classes",
    ),
    (
        lambda p: _edit_json(p / "cfg.json", lambda d: d.update(function_labeller=[1])),
        "E124.*'function_labeller' entry",
    ),
    (
        lambda p: _edit_json(p / "cfg.json", lambda d: d.update(function_labeller=None)),
        "E124.*'function_labeller' entry",
    ),
    (
        lambda p: _edit_json(p / "cfg.json", lambda d: d.update(function_labels="both")),
        "E124.*'function_labels' must be",
    ),
]


@pytest.mark.parametrize("damage,message", DAMAGE)
def test_damaged_labeller_files_are_clear_errors(saved, damage, message):
    damage(saved)
    with pytest.raises(GrammarError, match=message):
        ParsingModel.from_disk(saved)
    files = {
        path.relative_to(saved).as_posix(): path.read_bytes()
        for path in saved.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }
    with pytest.raises(GrammarError, match=message):
        ParsingModel.from_bytes(pack_zip(files))


def test_crafted_sparse_positions_are_refused(model):
    sparse = _sparse_copy(model.labeller)
    files = sparse.to_members()
    arrays = unpack_zip(files[ARRAYS], "t")
    positions = np.load(io.BytesIO(arrays["coef_positions.npy"]))
    for bad in (positions[::-1].copy(), positions + sparse.coef.size):
        member = io.BytesIO()
        np.save(member, bad.astype(np.int64))
        crafted = {**files, ARRAYS: pack_zip({**arrays, "coef_positions.npy": member.getvalue()})}
        with pytest.raises(GrammarError, match="E130.*coef_positions must increase"):
            FunctionTagger.from_members(crafted, "crafted")


ODD_VALUES = [None, True, -1, 2.5, "x", [], {}, [[]], [1], [["SBJ"], 1], {"rows": 3}, [[[]]]]


@pytest.mark.parametrize(
    "field",
    ["format", "format_version", "scheme", "head_rules", "features", "classes", "coef", "params"],
)
def test_any_json_value_in_any_field_loads_or_is_a_grammar_error(field):
    tagger = FunctionTagger(
        "penn", "collins", ["a", "b"], [(), ("SBJ",), ("TMP",)], np.ones((3, 2)), np.zeros(3)
    )
    files = tagger.to_members()
    for value in ODD_VALUES:
        index = json.loads(files[INDEX])
        index[field] = value
        crafted = {**files, INDEX: json.dumps(index).encode()}
        try:
            FunctionTagger.from_members(crafted, "crafted")
        except GrammarError as error:
            assert str(error).startswith(("[LPCFG-E130]", "[LPCFG-E128]", "[LPCFG-E125]")), error
