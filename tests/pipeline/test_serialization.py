"""Saving, loading, copying and multiprocessing a pipeline with the lpcfg_parser."""

from __future__ import annotations

import os
import pickle

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from spacy_lpcfg.errors import GrammarError

TEXTS = [
    "The company said it will sell its stake.",
    "Investors bought more shares on Friday, traders said.",
    "Prices rose (slightly) in “heavy” trading.",
    "It fell.",
    "Mr. Vinken is chairman of Elsevier N.V., the Dutch publishing group.",
    "The index gained 3.5 points to 2,000 -- a record.",
]


def parses(docs) -> list:
    """Everything the parser writes: spans (label, offsets), attrs and tags."""
    out = []
    for doc in docs:
        group = doc.spans["constituents"]
        out.append(
            (
                [(span.label_, span.start, span.end) for span in group],
                dict(group.attrs),
                [token.tag_ for token in doc],
            )
        )
    return out


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    return spacy.load(ptb_pipeline_dir)


@pytest.fixture(scope="module")
def expected(nlp):
    return parses(nlp.pipe(TEXTS))


def test_serialization_to_disk_and_load_parse_identically(nlp, expected, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    assert sorted(os.listdir(tmp_path / "pipeline" / "lpcfg_parser")) == ["model"]
    assert parses(spacy.load(tmp_path / "pipeline").pipe(TEXTS)) == expected
    assert [parse for parse in parses(nlp(text) for text in TEXTS)] == expected  # __call__ == pipe


def test_serialization_bytes_round_trip(nlp, expected, ptb_pipeline_dir):
    data = nlp.to_bytes()
    fresh = spacy.blank("en")
    fresh.add_pipe("lpcfg_parser")
    assert parses(fresh.from_bytes(data).pipe(TEXTS)) == expected
    component = spacy.blank("en").add_pipe("lpcfg_parser")
    component.from_bytes(nlp.get_pipe("lpcfg_parser").to_bytes())
    assert component.parsing_model == nlp.get_pipe("lpcfg_parser").parsing_model


def test_serialization_keeps_settings_in_the_config_only(ptb_pipeline_dir, expected):
    # The component saves learned parameters only, so load-time config overrides win.
    overrides = {"components": {"lpcfg_parser": {"decoder": "viterbi", "write_tags": "never"}}}
    nlp = spacy.load(ptb_pipeline_dir, config=overrides)
    parser = nlp.get_pipe("lpcfg_parser")
    assert (parser.decoder, parser.write_tags) == ("viterbi", "never")
    assert all(not token.tag_ for token in nlp(TEXTS[0]))


def test_serialization_docbin_keeps_spans_and_getters(nlp):
    docs = list(nlp.pipe(TEXTS))
    for store_user_data in (False, True):
        data = DocBin(docs=docs, store_user_data=store_user_data).to_bytes()
        copies = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
        assert parses(copies) == parses(docs)
        assert [c[:]._.parse_string for c in copies] == [d[:]._.parse_string for d in docs]
    assert not any(doc.user_data for doc in docs)  # nothing but the span group is written
    copy = Doc(nlp.vocab).from_bytes(docs[2].to_bytes())
    assert copy[:]._.labels == docs[2][:]._.labels


def test_serialization_pickle_for_spawned_workers(nlp, expected):
    # Under the spawn start method nlp.pipe(n_process=2) pickles the whole pipeline.
    copy = pickle.loads(pickle.dumps(nlp))
    assert parses(copy.pipe(TEXTS)) == expected


@Language.component("lpcfg_test_record_pid")
def record_pid(doc: Doc) -> Doc:
    # Test helper: which process made this Doc (user_data travels back to the parent).
    doc.user_data["pid"] = os.getpid()
    return doc


def test_serialization_multiprocess_pipe_matches_single_process(ptb_pipeline_dir, expected):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("lpcfg_test_record_pid")
    docs = list(nlp.pipe(TEXTS, n_process=2, batch_size=2))
    workers = {doc.user_data["pid"] for doc in docs}
    assert os.getpid() not in workers and len(workers) >= 1  # really parsed in workers
    assert parses(docs) == expected
    assert [doc[:]._.parse_string for doc in docs] == [
        doc[:]._.parse_string for doc in spacy.load(ptb_pipeline_dir).pipe(TEXTS)
    ]


def test_serialization_corrupt_pipeline_directories_fail_clearly(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    model = tmp_path / "pipeline" / "lpcfg_parser" / "model"
    (model / "symbols.json").write_text("{not json", encoding="utf8")
    with pytest.raises(GrammarError, match="E124.*symbols.json"):
        spacy.load(tmp_path / "pipeline")
    (model / "symbols.json").unlink()
    with pytest.raises(GrammarError, match="E124.*missing file symbols.json"):
        spacy.load(tmp_path / "pipeline")
    with pytest.raises(GrammarError, match="E124"):
        spacy.blank("en").add_pipe("lpcfg_parser").from_bytes(b"\x81\xa5model\xc4\x03abc")
