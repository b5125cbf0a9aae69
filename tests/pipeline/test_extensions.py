"""The benepar-compatible getters (spacy_lpcfg.pipeline.extensions) on known trees."""

from __future__ import annotations

import subprocess
import sys

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_lpcfg import NonConstituentException, NotParsedError
from spacy_lpcfg.pipeline import install_extensions, tree_to_doc
from spacy_lpcfg.trees import Tree

TREE = (
    "(TOP (S (NP-SBJ (PRP She)) (VP (VBD said) (SBAR (S (VP (VB go) (ADVP-DIR (RB home))))))"
    " (. .)))"
)


@pytest.fixture(scope="module")
def doc():
    install_extensions()
    return tree_to_doc(spacy.blank("en").vocab, Tree.from_string(TREE), scheme="penn")


def test_extensions_labels_and_functions(doc):
    assert doc[0:5]._.labels == ("S",)
    assert doc[0:1]._.full_labels == ("NP-SBJ",)
    assert doc[0:1]._.labels == ("NP",)
    assert doc[0:1]._.function_labels == ("SBJ",)
    assert doc[2:4]._.labels == ("SBAR", "S", "VP")  # a unary chain, outermost first
    assert doc[2:4]._.function_labels == ("", "", "")
    assert doc[1]._.labels == ()  # a word that is no phrase
    assert doc[0]._.labels == ("NP",)  # a word that is a unary phrase
    assert doc[3]._.full_labels == ("ADVP-DIR",)


def test_extensions_parse_string_round_trips(doc):
    """Categories by default, as benepar writes them; full labels when the group says so."""
    assert doc[2:4]._.parse_string == "(SBAR (S (VP (VB go) (ADVP (RB home)))))"
    assert doc[1]._.parse_string == "(VBD said)"
    assert doc[0]._.parse_string == "(NP (PRP She))"
    group = doc.spans["constituents"]
    group.attrs["parse_string_labels"] = "full"
    try:
        assert Tree.from_string(f"(TOP {doc[0:5]._.parse_string})") == Tree.from_string(TREE)
        assert doc[2:4]._.parse_string == "(SBAR (S (VP (VB go) (ADVP-DIR (RB home)))))"
        assert doc[0]._.parse_string == "(NP-SBJ (PRP She))"
    finally:
        del group.attrs["parse_string_labels"]


def test_extensions_tree_navigation(doc):
    texts = lambda spans: [span.text for span in spans]  # noqa: E731
    assert texts(doc[0:5]._.children) == ["She", "said go home", "."]
    assert texts(doc[1:4]._.children) == ["said", "go home"]
    assert texts(doc[2:4]._.children) == ["go", "home"]
    assert texts(doc[1:2]._.children) == []
    assert texts(doc[1:4]._.constituents) == ["said go home", "said", "go home", "go", "home"]
    assert doc[0:5]._.parent is None
    assert doc[1:4]._.parent == doc[0:5]
    assert doc[3]._.parent == doc[2:4]  # home is a unary ADVP: its parent is the VP
    assert doc[1]._.parent == doc[1:4]
    assert doc[0]._.parent == doc[0:5]


def test_extensions_non_constituents_and_unparsed_docs(doc):
    with pytest.raises(NonConstituentException, match="not a constituent"):
        _ = doc[0:2]._.labels
    with pytest.raises(NonConstituentException):
        _ = doc[1:3]._.parse_string
    unparsed = spacy.blank("en")("She said go home.")
    with pytest.raises(NotParsedError):
        _ = unparsed[0:2]._.labels
    assert issubclass(NotParsedError, ValueError)


def test_extensions_ignore_whitespace_at_span_edges():
    vocab = spacy.blank("en").vocab
    gold = tree_to_doc(
        vocab, Tree.from_string("(TOP (S (VP (VB Go) (ADVP (RB home))) (. .)))"), scheme="penn"
    )
    words = ["\n\n", "Go", " ", "home", ".", "\n"]
    doc = Doc(vocab, words=words, tags=["_SP", "VB", "_SP", "RB", ".", "_SP"])
    doc.spans["constituents"] = [
        Span(doc, 1, 5, label="S"),
        Span(doc, 1, 4, label="VP"),  # whitespace inside a span stays in it
        Span(doc, 3, 4, label="ADVP"),
    ]
    assert doc[:]._.labels == ("S",)  # the whole Doc, whitespace included
    assert doc[:]._.parse_string == gold[:]._.parse_string
    assert [span.text for span in doc[1:4]._.children] == ["Go", "home"]
    # Whitespace alone is no constituent, and no error either.
    for span in (doc[0:1], doc[5:6], doc[2:3]):
        assert span._.labels == span._.full_labels == span._.function_labels == ()
        assert span._.parse_string == ""
        assert list(span._.constituents) == list(span._.children) == []
    assert doc[0:1]._.parent is None and doc[5]._.parent is None  # outside every phrase
    assert doc[2:3]._.parent == doc[1:4]  # between "Go" and "home", inside the VP
    assert doc[2]._.labels == () and doc[2]._.parse_string == ""


def test_extensions_trim_whitespace_at_the_edges_of_group_spans():
    # Spans written by other tools may start or end on whitespace: they mean their words.
    vocab = spacy.blank("en").vocab
    doc = Doc(
        vocab,
        words=["\n", "Go", " ", "home", ".", "\n"],
        tags=["_SP", "VB", "_SP", "RB", ".", "_SP"],
    )
    doc.spans["constituents"] = [
        Span(doc, 0, 6, label="S"),
        Span(doc, 1, 3, label="VP"),  # "Go" and the space after it
        Span(doc, 5, 6, label="X"),  # whitespace only: dropped
    ]
    assert doc[1:5]._.labels == ("S",) and doc[:]._.labels == ("S",)
    assert doc[1:2]._.labels == ("VP",) and doc[1:3]._.labels == ("VP",)
    assert doc[5:6]._.labels == ()
    assert doc[:]._.parse_string == "(S (VP (VB Go)) (RB home) (. .))"
    assert [span.text for span in doc[:]._.children] == ["Go", "home", "."]
    assert doc[3]._.parent == doc[1:5]


def test_extensions_use_the_groups_label_scheme():
    vocab = spacy.blank("pt").vocab
    tree = Tree.from_string("(TOP (STA+fcl (SUBJ+np (H+prop Ana)) (P+v-fin (H+v-fin sorriu))))")
    doc = tree_to_doc(vocab, tree, scheme="floresta")
    assert doc[0:1]._.full_labels == ("SUBJ+np",)
    assert doc[0:1]._.labels == ("np",)
    assert doc[0:1]._.function_labels == ("SUBJ",)


def test_extensions_survive_docbin_and_follow_group_changes(doc):
    for store_user_data in (False, True):
        data = DocBin(docs=[doc], store_user_data=store_user_data).to_bytes()
        (copy,) = DocBin().from_bytes(data).get_docs(doc.vocab)
        assert copy[0:5]._.parse_string == doc[0:5]._.parse_string
    copy = Doc(doc.vocab).from_bytes(doc.to_bytes())
    assert copy[2:4]._.labels == ("SBAR", "S", "VP")
    copy.spans["constituents"] = list(copy.spans["constituents"])[:1]  # only the S left
    assert copy[0:5]._.labels == ("S",)
    with pytest.raises(NonConstituentException):
        _ = copy[2:4]._.labels


def test_extensions_leave_foreign_extensions_alone():
    # Another package (benepar) registered a name first: it is kept, with a warning.
    code = """
import warnings
import spacy
from spacy.tokens import Span
Span.set_extension("parse_string", getter=lambda span: "foreign")
nlp = spacy.blank("en")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nlp.add_pipe("lpcfg_parser")
assert any("W701" in str(w.message) for w in caught), caught
doc = nlp.make_doc("x y")
assert doc[:]._.parse_string == "foreign"
assert Span.has_extension("labels") and Span.has_extension("full_labels")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
