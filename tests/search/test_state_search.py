"""LatentStateSearch on a slice of ptb_sample: scores, trace, resume, processes, Dask."""

from __future__ import annotations

import json

import pytest

from spacy_lpcfg.decode import Parser
from spacy_lpcfg.estimators import ClusteringEstimator
from spacy_lpcfg.evaluation.parsing import evaluate
from spacy_lpcfg.search import LatentStateSearch
from spacy_lpcfg.search.candidates import StateCandidates
from spacy_lpcfg.trees.transforms import TransformSpec

SETTINGS = {"max_states": 4, "coarse_step": 2, "max_symbols": 2, "min_count": 1}


@pytest.fixture(scope="module")
def data(load_corpus):
    train = list(load_corpus("ptb_sample", "train")[:400])
    dev = list(load_corpus("ptb_sample", "dev")[:40])
    return train, dev


def make_search(**options) -> LatentStateSearch:
    estimator = ClusteringEstimator(n_states=2, transform=TransformSpec(v_markov=1))
    return LatentStateSearch(estimator=estimator, **SETTINGS, **options)


@pytest.fixture(scope="module")
def serial(data, tmp_path_factory):
    trace = tmp_path_factory.mktemp("search") / "trace.jsonl"
    return make_search(trace=trace).fit(*data), trace


def scores(records):
    return [(r["stage"], r["candidate"], r["dev_f1"]) for r in records]


def test_the_search_keeps_the_best_candidate_and_its_model_scores_it(serial, data):
    search, _ = serial
    records = search.trace_
    assert records[0]["phase"] == "start" and records[0]["candidate"] == search.start_
    assert search.dev_f1_ == max(r["dev_f1"] for r in records)
    best = next(r for r in records if r["dev_f1"] == search.dev_f1_)
    assert best["candidate"] == search.assignment_
    # the model kept is the one scored: parsing dev again gives the same F1
    assert evaluate(Parser(search.model_), data[1]).fscore == search.dev_f1_
    for symbol, states in search.assignment_.items():  # k-means may use fewer clusters
        assert 1 <= search.n_states_.get(symbol, 1) <= states
    # every symbol searched got coarse and refined values, each scored once
    searched = [r["symbol"] for r in records[1:]]
    assert set(searched) == set(search.assignment_)
    keys = [json.dumps(r["candidate"], sort_keys=True) for r in records]
    assert len(keys) == len(set(keys))


def test_a_candidate_does_not_depend_on_what_was_scored_before(serial, data):
    search, _ = serial
    record = search.trace_[-1]
    fresh = StateCandidates(search.projected_, search._estimator(), data[1])
    assert fresh.score(record["candidate"])[0] == record["dev_f1"]


def test_resume_scores_nothing_again_and_ends_where_the_first_run_did(
    serial, data, monkeypatch, tmp_path
):
    search, first = serial
    trace = tmp_path / "trace.jsonl"
    lines = first.read_text().splitlines()
    # an interruption mid-line: the cut line is dropped, the rest is read
    trace.write_text("\n".join(lines[:-3]) + "\n" + lines[-3][:20])
    calls = []
    original = StateCandidates.score

    def counted(self, assignment):
        calls.append(assignment)
        return original(self, assignment)

    monkeypatch.setattr(StateCandidates, "score", counted)
    resumed = make_search(trace=trace, resume=True).fit(*data)
    assert len(calls) == 3  # the cut line and the two after it
    assert scores(resumed.trace_) == scores(search.trace_)
    assert resumed.assignment_ == search.assignment_


def test_an_interrupted_batch_keeps_what_was_scored(serial, data, monkeypatch, tmp_path):
    search, _ = serial
    trace = tmp_path / "trace.jsonl"
    original = StateCandidates.score
    calls = []

    def interrupted(self, assignment):
        calls.append(assignment)
        if len(calls) == 4:  # Ctrl-C in the middle of the first coarse batch
            raise KeyboardInterrupt
        return original(self, assignment)

    monkeypatch.setattr(StateCandidates, "score", interrupted)
    with pytest.raises(KeyboardInterrupt):
        make_search(trace=trace).fit(*data)
    kept = [json.loads(line) for line in trace.read_text().splitlines()[1:]]
    assert scores(kept) == scores(search.trace_[:3])  # the start and two of the batch
    monkeypatch.setattr(StateCandidates, "score", original)
    resumed = make_search(trace=trace, resume=True).fit(*data)
    assert scores(resumed.trace_) == scores(search.trace_)


def test_a_trace_of_another_search_is_refused(serial, data, tmp_path):
    _, trace = serial
    copy = tmp_path / "trace.jsonl"
    copy.write_text(trace.read_text())
    other = make_search(trace=copy, resume=True, beam=2)
    with pytest.raises(ValueError, match="another search"):
        other.fit(*data)
    copy.write_text(trace.read_text().splitlines()[0] + '\n{"stage": "states"}\n{}\n')
    with pytest.raises(ValueError, match="line 2"):
        make_search(trace=copy, resume=True).fit(*data)
    # a damaged line that is not the last is damage, not an interruption: refused
    lines = trace.read_text().splitlines()
    copy.write_text("\n".join([lines[0], lines[1][:10], *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match="line 2"):
        make_search(trace=copy, resume=True).fit(*data)
    assert copy.read_text().splitlines()[1] == lines[1][:10]  # and left as it was


def test_a_time_budget_keeps_the_best_so_far(data):
    search = make_search(max_time=1e-6).fit(*data)
    assert not search.finished_
    assert [r["phase"] for r in search.trace_] == ["start"]
    assert search.assignment_ == search.start_


def test_dev_trees_are_required(data):
    with pytest.raises(ValueError, match="dev tree"):
        make_search().fit(data[0])


def test_two_processes_score_as_one(serial, data):
    search, _ = serial
    parallel = make_search(n_jobs=2).fit(*data)
    assert scores(parallel.trace_) == scores(search.trace_)


def test_a_local_dask_cluster_scores_as_one_process(serial, data):
    distributed = pytest.importorskip("distributed")
    search, _ = serial
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        on_dask = make_search(scheduler=cluster.scheduler_address).fit(*data)
    assert scores(on_dask.trace_) == scores(search.trace_)
