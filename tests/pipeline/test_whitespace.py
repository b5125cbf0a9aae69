"""Whitespace tokens never break a parse (issue 11, item 1).

spaCy makes a token of extra whitespace ("Hello.   ", "\\n\\n" between
paragraphs, tabs) and the sentencizer often a sentence of it alone. Such
tokens are no words: the rest parses exactly as the text without them, a
whitespace-only sentence has no constituents, and every getter answers on it.
"""

from __future__ import annotations

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_lpcfg.pipeline import tree_to_doc

# Text with awkward whitespace -> the same text without it.
CASES = {
    "trailing spaces": ("Hello.   ", "Hello."),
    "trailing newline": ("The cat sat.\n", "The cat sat."),
    "leading whitespace": ("  \n The cat sat on the mat.", "The cat sat on the mat."),
    "paragraphs": (
        "The cat sat on the mat.\n\nThe dog ran away.\n\n\nIt was late.",
        "The cat sat on the mat. The dog ran away. It was late.",
    ),
    "tabs and double spaces": ("The\tcat  sat on\t\tthe mat .", "The cat sat on the mat ."),
    "space before paragraph": ("Stocks fell. \n\n Bonds rose.\n", "Stocks fell. Bonds rose."),
}
WHITESPACE_ONLY = ("\n", "   ", "\n\n\t ")
SPAN_GETTERS = ("labels", "full_labels", "function_labels", "parse_string", "parent")


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("sentencizer", first=True)
    return nlp


def word_parse(doc: Doc) -> dict:
    """The parse in terms of the Doc's words (non-whitespace tokens) only."""
    word_index = {}
    for token in doc:
        if not token.is_space:
            word_index[token.i] = len(word_index)
    return {
        "words": [token.text for token in doc if not token.is_space],
        "tags": [token.tag_ for token in doc if not token.is_space],
        "constituents": [
            (span.label_, word_index[span.start], word_index[span.end - 1] + 1)
            for span in doc.spans["constituents"]
        ],
        "sentences": [sent._.parse_string for sent in doc.sents if sent.text.strip()],
        "fallbacks": doc.spans["constituents"].attrs.get("fallbacks", []),
    }


def assert_whitespace_is_no_constituent(doc: Doc) -> None:
    group = doc.spans["constituents"]
    for span in group:
        assert not doc[span.start].is_space and not doc[span.end - 1].is_space, span
    for token in doc:
        if token.is_space:
            assert token.tag_ == ""
            assert token._.labels == token._.full_labels == token._.function_labels == ()
            assert token._.parse_string == ""
            parent = token._.parent  # the phrase around it, if any
            assert parent is None or parent.start < token.i < parent.end - 1
    for sent in doc.sents:
        for name in SPAN_GETTERS:  # never raises
            getattr(sent._, name)
        if not sent.text.strip():
            assert sent._.parse_string == "" and sent._.labels == ()
            assert list(sent._.constituents) == list(sent._.children) == []
            assert sent._.parent is None
            assert not [span for span in group if sent.start <= span.start < sent.end]
        else:
            assert sent._.labels, "a sentence of words is a phrase"
            assert sent._.parent is None
            constituents = list(sent._.constituents)
            assert constituents[0].text == sent.text.strip()
            assert all(not span.text[0].isspace() for span in constituents)
            assert [token.text for token in constituents if len(token) == 1] == [
                token.text for token in sent if not token.is_space
            ]


@pytest.mark.parametrize("case", list(CASES))
def test_whitespace_leaves_the_parse_of_the_words_unchanged(nlp, case):
    text, plain = CASES[case]
    doc = nlp(text)
    assert any(token.is_space for token in doc), "the case has a whitespace token"
    assert word_parse(doc) == word_parse(nlp(plain))
    assert_whitespace_is_no_constituent(doc)


def test_whitespace_only_sentences_have_no_constituents(nlp):
    doc = nlp("Hello.   ")
    sents = list(doc.sents)
    assert [sent.text for sent in sents] == ["Hello.", "  "]  # the sentencizer's doing
    assert sents[1]._.parse_string == "" and sents[1]._.labels == ()
    assert sents[0]._.parse_string.startswith("(")
    for text in WHITESPACE_ONLY:
        doc = nlp(text)
        group = doc.spans["constituents"]
        assert len(group) == 0 and group.attrs["lpcfg"] == 1
        assert doc[:]._.parse_string == "" and doc[:]._.labels == ()
        assert list(doc[:]._.constituents) == [] and doc[0]._.parent is None
    assert nlp("")[:]._.parse_string == ""


def test_whitespace_docs_survive_serialisation(nlp):
    texts = [text for text, _ in CASES.values()] + list(WHITESPACE_ONLY)
    docs = [nlp(text) for text in texts]
    for doc in docs:
        copy = Doc(nlp.vocab).from_bytes(doc.to_bytes())
        assert word_parse(copy) == word_parse(doc)
        assert [t._.parse_string for t in copy] == [t._.parse_string for t in doc]
    data = DocBin(docs=docs, store_user_data=False).to_bytes()
    copies = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    assert [word_parse(copy) for copy in copies] == [word_parse(doc) for doc in docs]


def test_whitespace_docs_through_nlp_pipe(nlp):
    texts = [text for text, _ in CASES.values()] + list(WHITESPACE_ONLY)
    expected = [word_parse(nlp(text)) for text in texts]
    for batch_size in (1, 3, 100):
        docs = list(nlp.pipe(texts, batch_size=batch_size, n_process=1))
        assert [word_parse(doc) for doc in docs] == expected


def test_whitespace_does_not_change_scores(ptb_pipeline_dir, ptb_small):
    # nlp.evaluate with predicted texts that differ from the reference in whitespace
    # only (spaCy aligns those) scores as the same texts without it.
    nlp = spacy.load(ptb_pipeline_dir)
    trees = ptb_small[1][:10]

    def examples(spaced: bool) -> list[Example]:
        out = []
        for tree in trees:
            words = tree.words()
            if spaced:
                words = ["\n"] + [w for word in words for w in (word, "\t")][:-1] + ["\n\n"]
            reference = tree_to_doc(nlp.vocab, tree, scheme="penn")
            out.append(Example(Doc(nlp.vocab, words=words), reference))
        return out

    plain, spaced = nlp.evaluate(examples(False)), nlp.evaluate(examples(True))
    assert plain["constituents_f"] > 0.3
    keys = [key for key in plain if key.startswith("constituents_")]
    assert {key: spaced[key] for key in keys} == {key: plain[key] for key in keys}
