"""The lpcfg_bracketer component: fitted from Docs' words and tags, brackets on Docs,
saved with the pipeline."""

from __future__ import annotations

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.pipeline.docs import tree_to_doc


@pytest.fixture(scope="module")
def examples(ptb_small):
    nlp = spacy.blank("en")
    return [
        Example(Doc(nlp.vocab, words=tree.words()), tree_to_doc(nlp.vocab, tree, scheme="penn"))
        for tree in ptb_small[0][:150]
    ]


@pytest.fixture(scope="module")
def nlp(examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_bracketer")
    nlp.initialize(lambda: examples)
    return nlp


def test_brackets_cover_each_sentence_and_skip_whitespace(nlp):
    doc = nlp("The cat sat on the mat.  The dog ran away.\n")
    group = doc.spans["brackets"]
    trees = group.attrs["trees"]
    sentences = [sent for sent in doc.sents if any(not t.is_space for t in sent)]
    assert len(trees) == len(sentences) == 2
    for sentence in sentences:
        words = [t for t in sentence if not t.is_space]
        inside = [s for s in group if s.start >= sentence.start and s.end <= sentence.end]
        assert any(s.start == words[0].i and s.end == words[-1].i + 1 for s in inside)
        assert all(s.label_ == "X" and not s[0].is_space and not s[-1].is_space for s in inside)
        # a binary tree over n words has n - 1 brackets (single words are not brackets)
        assert len(inside) == len(words) - 1


def test_the_bracketer_is_saved_with_the_pipeline(nlp, tmp_path):
    text = "Pierre Vinken will join the board as a director ."
    expected = nlp(text).spans["brackets"].attrs["trees"]
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded(text).spans["brackets"].attrs["trees"] == expected
    copy = spacy.blank("en")
    copy.add_pipe("sentencizer")
    copy.add_pipe("lpcfg_bracketer").from_bytes(nlp.get_pipe("lpcfg_bracketer").to_bytes())
    assert copy(text).spans["brackets"].attrs["trees"] == expected
    with pytest.raises(GrammarError):
        copy.get_pipe("lpcfg_bracketer").from_bytes(b"\x91\x01")


def test_a_baseline_method_and_bad_settings(examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_bracketer", config={"method": "right"})
    nlp.initialize(lambda: examples)
    doc = nlp("a b c")
    spans = [(span.start, span.end) for span in doc.spans["brackets"]]
    assert spans == [(0, 3), (1, 3)]
    with pytest.raises(ValueError, match="method"):
        spacy.blank("en").add_pipe("lpcfg_bracketer", config={"method": "oracle"})
    unfitted = spacy.blank("en")
    unfitted.add_pipe("lpcfg_bracketer")
    with pytest.raises(ValueError, match="initialize"):
        unfitted("a b")
