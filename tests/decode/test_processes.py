"""Parsing in worker processes: trees in input order, as one process parses them, and a
worker that cannot load the model reports why instead of being replaced forever."""

from __future__ import annotations

import json
import subprocess
import sys

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


# Run in a fresh interpreter: this one has threads (tqdm's monitor), and a process
# with threads never forks its workers.
FORKED = """
import json, sys
from spacy_lpcfg.decode import Parser
from spacy_lpcfg.decode import processes
from spacy_lpcfg.grammar import ParsingModel

parser = Parser(ParsingModel.from_disk(sys.argv[1]))
sentences = json.loads(sys.argv[3])
assert processes._can_fork()
with processes.parsing_processes(sys.argv[2], 2, {}, batch_size=2, parser=parser) as parse:
    found = list(parse([(words, None) for words in sentences]))
print(json.dumps({"found": found, "left": processes._PARSER is None}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forks on Linux")
def test_forked_workers_parse_with_the_callers_parser(model_dir, load_corpus, tmp_path):
    """Given the caller's parser, the workers are its forks: they never read the model
    directory (here one that holds no model), and parse as it does."""
    from spacy_lpcfg.grammar import ParsingModel

    sentences = [tree.words() for tree in load_corpus("ptb_sample", "dev")[:9]]
    (tmp_path / "not_a_model").mkdir()
    arguments = [str(model_dir), str(tmp_path / "not_a_model"), json.dumps(sentences)]
    run = subprocess.run(
        [sys.executable, "-c", FORKED, *arguments], capture_output=True, text=True, check=True
    )
    result = json.loads(run.stdout)
    parser = Parser(ParsingModel.from_disk(model_dir))
    assert result["found"] == [parser.parse(words).tree.pformat() for words in sentences]
    assert result["left"]  # the caller's module is left as it was
