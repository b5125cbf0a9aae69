"""Fuzzing the ``lpcfg_parser`` spaCy component: random text (whitespace runs, newlines,
emoji, combining marks, brackets, control characters), with and without a
sentencizer; then the Doc extensions and ``Doc.to_bytes``/``from_bytes``.

Any text parses. Each sentence with a word is a constituent whose
``parse_string`` reads back to its tokens (PTB escapes), every span of the
group has labels, and a Doc read back from its bytes says the same.
"""

from __future__ import annotations

import re

import pytest
from fuzz_support import TOKEN_PIECES, WHITESPACE, fuzz, outcome
from hypothesis import given
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_lpcfg.trees.brackets import escape_word, parse_tree, unescape_word

PIECES = st.one_of(
    TOKEN_PIECES,
    WHITESPACE,
    st.sampled_from(["\n", "\n\n", "\r\n", " \n ", ". ", "! ", "? ", "Hello", "world", "n't"]),
    st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=4),
)
DOC_TEXT = st.lists(PIECES, max_size=25).map("".join)


def _sentences(doc: Doc):
    return list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]


def _check_parse_string(span, text: str) -> None:
    """``parse_string`` reads back to the span's word tokens, escaped as PTB writes them."""
    words = [token.text for token in span if not token.is_space]
    read = parse_tree(text).words()
    assert read == [escape_word(word) for word in words]
    for word, written in zip(words, read):
        if "-" not in word and not re.search(r"\s", word):
            assert unescape_word(written) == word


def _describe(doc: Doc) -> list:
    """Everything the extensions say about a Doc, to compare two copies."""
    out = []
    for sentence in _sentences(doc):
        if all(token.is_space for token in sentence):
            continue  # whitespace-only sentences: test_whitespace_only_sentence below
        out.append(sentence._.parse_string)
        for span in sentence._.constituents:
            out.append((span.start, span.end, span._.labels, span._.full_labels))
    out.append([(s.start, s.end, s.label_) for s in doc.spans["constituents"]])
    out.append([token.tag_ for token in doc])
    return out


def _check_doc(doc: Doc) -> None:
    group = doc.spans["constituents"]
    assert group.attrs.get("lpcfg")
    for token in doc:
        assert token.is_space or token.tag_, f"no tag on {token.text!r}"
    for sentence in _sentences(doc):
        if all(token.is_space for token in sentence):
            continue
        text = sentence._.parse_string
        _check_parse_string(sentence, text)
        assert isinstance(sentence._.labels, tuple)
        for span in sentence._.constituents:
            assert sentence.start <= span.start < span.end <= sentence.end
            list(span._.children)
            parent = span._.parent
            assert parent is None or parent.start <= span.start < span.end <= parent.end
    for span in group:
        assert span._.labels and span._.full_labels
        _check_parse_string(span, span._.parse_string)


@fuzz(150)
@given(text=DOC_TEXT, sentences=st.booleans())
def test_component_parses_any_text(nlp_whole_doc, nlp_sentences, text, sentences):
    nlp = nlp_sentences if sentences else nlp_whole_doc
    doc, error = outcome(nlp, text)
    assert error is None, f"any text must parse: {error!r}"
    assert doc.text == text
    _check_doc(doc)
    copy = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    _check_doc(copy)
    assert _describe(copy) == _describe(doc)


@fuzz(10)
@given(texts=st.lists(DOC_TEXT, max_size=6))
def test_component_pipe(nlp_sentences, texts):
    docs = list(nlp_sentences.pipe(texts, batch_size=2))
    assert [doc.text for doc in docs] == texts
    for doc in docs:
        _check_doc(doc)


@pytest.mark.parametrize("text", ["Hello.  \n", "Hi. \n\n Bye. \n", "  ", "\n\n"])
def test_whitespace_only_sentence(nlp_sentences, text):
    doc = nlp_sentences(text)
    blank = [sent for sent in doc.sents if all(token.is_space for token in sent)]
    assert blank
    for sentence in blank:
        assert sentence._.parse_string == ""
        assert sentence._.labels == ()
        assert list(sentence._.constituents) == []
