"""Scores on Docs: each constituent's posterior (``Span._.score``, ``Span._.scores``,
the group's ``attrs["scores"]``) and each sentence's log-likelihood
(``Span._.log_likelihood``) are the parser's own, travel with the Doc, and are None
where the model gives none."""

from __future__ import annotations

import math

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_lpcfg.errors import NonConstituentException
from spacy_lpcfg.pipeline.docs import tree_constituents

TEXT = "The cat sat on the mat.  \n\nThen it slept."


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("sentencizer", first=True)
    return nlp


def test_scores_are_the_parsers_own(nlp):
    doc = nlp(TEXT)
    parser = nlp.get_pipe("lpcfg_parser")
    sentences = list(doc.sents)
    assert len(sentences) == 2
    for sent in sentences:
        tokens = [token for token in sent if not token.is_space]
        words = parser.normalizer([token.text for token in tokens])
        parse = parser.parser.parse(words)
        assert sent._.log_likelihood == pytest.approx(parse.log_likelihood)
        assert parse.log_likelihood < 0
        offsets = [t.i for t in tokens]
        expected = {
            (label, offsets[start], offsets[end - 1] + 1): posterior
            for label, start, end, posterior in parse.span_posteriors
        }
        assert len(expected) == len(tree_constituents(parse.tree))
        for span in doc.spans["constituents"]:
            if span.start >= sent.start and span.end <= sent.end:
                key = (span.label_, span.start, span.end)
                assert span._.score == pytest.approx(expected.pop(key))
                assert 0.0 <= span._.score <= 1.0 + 1e-9
        assert not expected


def test_scores_follow_the_labels_of_a_unary_chain(nlp):
    doc = nlp(TEXT)
    group = doc.spans["constituents"]
    for span in group:
        bare = doc[span.start : span.end]
        position = bare._.full_labels.index(span.label_)
        assert bare._.scores[position] == span._.score
        assert len(bare._.scores) == len(bare._.labels)
    assert group.attrs["scores"] == [span._.score for span in group]


def test_words_and_other_spans(nlp):
    doc = nlp(TEXT)
    first = next(iter(doc.sents))
    assert doc[1:2]._.scores == () and doc[1:2]._.score is None  # a word under no chain
    assert doc[1:3]._.log_likelihood is None  # not a sentence
    with pytest.raises(NonConstituentException):
        _ = doc[1:3]._.score
    assert first._.log_likelihood is not None


def test_scores_travel_with_the_doc(nlp):
    doc = nlp(TEXT)
    docs = DocBin(docs=[doc]).to_bytes()
    (copy,) = DocBin().from_bytes(docs).get_docs(nlp.vocab)
    assert [s._.score for s in copy.spans["constituents"]] == [
        s._.score for s in doc.spans["constituents"]
    ]
    assert [s._.log_likelihood for s in copy.sents] == [s._.log_likelihood for s in doc.sents]
    assert Doc(nlp.vocab).from_bytes(doc.to_bytes()).spans["constituents"].attrs == (
        doc.spans["constituents"].attrs
    )


def test_a_fallback_parse_has_no_scores(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir, config={"components": {"lpcfg_parser": {"max_length": 3}}})
    doc = nlp("The cat sat on the mat .")
    group = doc.spans["constituents"]
    assert group.attrs["fallbacks"] and "scores" not in group.attrs
    assert doc[:]._.log_likelihood is None
    assert all(span._.score is None for span in group)


def test_a_changed_group_gives_no_scores_rather_than_wrong_ones(nlp):
    doc = nlp(TEXT)
    group = doc.spans["constituents"]
    group.append(Span(doc, 0, 1, label="X"))
    assert all(span._.score is None for span in group)
    assert math.isfinite(next(iter(doc.sents))._.log_likelihood)  # sentences stay known
