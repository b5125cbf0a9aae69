"""Parsing in worker processes: trees in input order, as one process parses them, and a
worker that cannot load the model reports why instead of being replaced forever."""

from __future__ import annotations

import pytest

from spacy_lpcfg.decode import Parser
from spacy_lpcfg.decode.processes import parse_in_processes
from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator


@pytest.fixture(scope="module")
def model_dir(load_corpus, tmp_path_factory):
    path = tmp_path_factory.mktemp("processes") / "model"
    MLEEstimator().fit(load_corpus("ptb_sample", "train")[:200]).model_.to_disk(path)
    return path


def test_two_processes_parse_in_order_as_one(model_dir, load_corpus):
    from spacy_lpcfg.grammar import ParsingModel

    sentences = [tree.words() for tree in load_corpus("ptb_sample", "dev")[:21]]
    given = (
        [(words, None) for words in sentences[:10]] + [None] + [(w, None) for w in sentences[10:]]
    )
    found = list(parse_in_processes(model_dir, given, 2, {}, batch_size=3))
    parser = Parser(ParsingModel.from_disk(model_dir))
    expected = [parser.parse(words).tree.pformat() for words in sentences]
    assert found == [*expected[:10], "", *expected[10:]]


def test_a_worker_that_cannot_load_the_model_says_why(tmp_path):
    (tmp_path / "not_a_model").mkdir()
    with pytest.raises(GrammarError):
        list(parse_in_processes(tmp_path / "not_a_model", [(["a"], None)], 2, {}))
