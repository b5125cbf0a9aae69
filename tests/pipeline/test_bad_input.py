"""Awkward input for the lpcfg_parser: clear errors or documented fallbacks, never a crash."""

from __future__ import annotations

import pytest
import spacy

from spacy_lpcfg.trees import Tree


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("sentencizer", first=True)
    return nlp


def test_bad_input_empty_and_whitespace_only_docs(nlp):
    for text in ("", "   ", "\n\n\t "):
        doc = nlp(text)
        group = doc.spans["constituents"]
        assert len(group) == 0 and group.attrs["lpcfg"] == 1  # parsed: nothing to parse


def test_bad_input_whitespace_tokens_are_not_leaves(nlp):
    doc = nlp("The  cat\n\nsat   on the mat .\n")
    assert any(token.is_space for token in doc)
    tree = Tree.from_string(f"(TOP {doc[:]._.parse_string})")  # edges trimmed
    assert tree.words() == [token.text for token in doc if not token.is_space]
    assert all(
        not doc[span.start].is_space and not doc[span.end - 1].is_space
        for span in doc.spans["constituents"]
    )
    assert all(token.tag_ == "" for token in doc if token.is_space)


def test_bad_input_one_token_sentence(nlp):
    doc = nlp("Hello")
    root = doc.spans["constituents"][0]
    assert (root.start, root.end) == (0, 1) and doc[0].tag_
    assert doc[0]._.labels and doc[0]._.parent is None
    assert doc[:]._.parse_string.startswith(f"({root.label_} ")


def test_bad_input_sentence_longer_than_max_length_gets_a_flat_tree(nlp):
    words = " ".join(["the", "old", "man", "saw", "a", "dog", "and", "a", "cat"] * 45)  # 405
    doc = nlp(words)
    assert len(doc) == 405 and len(list(doc.sents)) == 1
    group = doc.spans["constituents"]
    assert group.attrs["fallbacks"] == [[0, "too_long"]]
    assert [(span.start, span.end) for span in group] == [(0, 405)]  # one flat phrase
    assert all(token.tag_ for token in doc)


def test_bad_input_emoji_and_other_scripts(nlp):
    doc = nlp("I ❤️ naïve café résumés 🎉🎉 ... Ελληνικά 中文 ！")
    tree = Tree.from_string(f"(TOP {doc[:]._.parse_string})")
    assert tree.words() == [token.text for token in doc if not token.is_space]
    assert all(token.tag_ for token in doc if not token.is_space)


def test_bad_input_constrain_without_tags_is_a_clear_error(ptb_pipeline_dir):
    nlp = spacy.load(
        ptb_pipeline_dir, config={"components": {"lpcfg_parser": {"use_tags": "constrain"}}}
    )
    with pytest.raises(ValueError, match="constrain"):
        nlp("No tags here .")


def test_bad_input_error_handler_gets_failing_batches(ptb_pipeline_dir):
    nlp = spacy.load(
        ptb_pipeline_dir, config={"components": {"lpcfg_parser": {"missing_sentences": "error"}}}
    )
    failures = []
    nlp.get_pipe("lpcfg_parser").set_error_handler(
        lambda name, component, docs, error: failures.append((name, len(docs), type(error)))
    )
    assert list(nlp.pipe(["Two words", "More words here"], batch_size=1)) == []
    assert failures == [("lpcfg_parser", 1, ValueError)] * 2
    assert nlp("One") is not None  # a one-token Doc has its sentence boundary
