"""Code written for benepar runs unchanged with lpcfg_parser in its place.

The examples are those of benepar's README ("Usage with spaCy"): ``parse_string``,
``labels``, ``children``, ``constituents``, ``parent``, the exception, and an
``nltk.Tree`` of the parse. Then benepar and lpcfg_parser side by side: a fake
benepar module registers its getters under the same names, as benepar does.
"""

from __future__ import annotations

import sys
import types

import pytest
import spacy
from spacy.tokens import Span, Token

from spacy_lpcfg.errors import NonConstituentException
from spacy_lpcfg.pipeline.extensions import (
    BENEPAR_EXTENSIONS,
    SPAN_GETTERS,
    TOKEN_GETTERS,
    install_extensions,
)

TEXT = "The time for action is now. It's never too late to do something."


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("sentencizer", first=True)
    return nlp


def test_benepar_readme_examples_run_unchanged(nlp):
    doc = nlp(TEXT)
    sent = list(doc.sents)[0]
    parse = sent._.parse_string
    assert parse.startswith("(S ") and "-SBJ" not in parse  # categories, as benepar writes
    assert sent._.labels == ("S",)
    first = list(sent._.children)[0]
    assert first.text == "The time for action"
    assert first._.labels == ("NP",) and first._.full_labels == ("NP-SBJ",)
    assert first._.function_labels == ("SBJ",)
    assert first._.parent == sent
    constituents = list(sent._.constituents)
    assert constituents[0] == sent and first in constituents
    assert [t.text for t in doc if t._.parent is not None][:2] == ["The", "time"]


def test_nltk_tree_of_a_sentence(nlp):
    pytest.importorskip("nltk")
    import spacy_lpcfg

    sent = list(nlp(TEXT).sents)[0]
    tree = spacy_lpcfg.to_nltk(sent)
    assert tree.label() == "S" and tree.leaves() == [t.text for t in sent]
    assert sent._.tree == tree
    assert [st.label() for st in tree.subtrees()][:2] == ["S", "NP"]


def test_function_tags_in_parse_string_on_request(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir, config={
        "components": {"lpcfg_parser": {"parse_string_labels": "full"}}})  # fmt: skip
    doc = nlp("The time for action is now .")
    assert "(NP-SBJ " in doc[:]._.parse_string


def test_a_span_that_is_no_constituent_raises_benepars_exception(nlp, monkeypatch):
    """``except benepar.NonConstituentException`` catches ours when benepar is loaded."""
    doc = nlp(TEXT)
    with pytest.raises(NonConstituentException):
        _ = doc[1:3]._.labels
    theirs = type("NonConstituentException", (Exception,), {})
    fake = types.ModuleType(BENEPAR_EXTENSIONS)
    fake.NonConstituentException = theirs
    monkeypatch.setitem(sys.modules, BENEPAR_EXTENSIONS, fake)
    with pytest.raises(theirs):
        _ = doc[1:3]._.labels
    with pytest.raises(NonConstituentException):
        _ = doc[1:3]._.parse_string


def test_benepar_imported_later_takes_the_bare_names_and_both_work(nlp, monkeypatch, tmp_path):
    """benepar registers its getters when its module is imported; spaCy refuses a name
    taken: ours step aside, and stay as ._.lpcfg_<name>."""
    package = tmp_path / "benepar" / "integrations"
    package.mkdir(parents=True)
    (tmp_path / "benepar" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "spacy_extensions.py").write_text(
        "from spacy.tokens import Span\n"
        "class NonConstituentException(Exception):\n    pass\n"
        "Span.set_extension('parse_string', getter=lambda span: 'benepar')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import benepar.integrations.spacy_extensions  # noqa: F401

        sent = list(nlp(TEXT).sents)[0]
        assert sent._.parse_string == "benepar"
        assert sent._.lpcfg_parse_string.startswith("(S ")
        assert sent._.lpcfg_labels == ("S",)
        assert sent._.full_labels == ("S",)  # a name benepar does not use stays ours
    finally:
        Span.remove_extension("parse_string")  # benepar's fake
        for name in [m for m in sys.modules if m == "benepar" or m.startswith("benepar.")]:
            del sys.modules[name]
        install_extensions()
    assert Span.get_extension("parse_string")[2] is SPAN_GETTERS["parse_string"]
    assert Token.get_extension("parse_string")[2] is TOKEN_GETTERS["parse_string"]
