"""The beam search over states per symbol, against exhaustive search on score tables."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spacy_lpcfg.search.beam import beam_search, coarse_values


def table_scorer(table: dict, calls: list):
    """Scores assignments from a table keyed by their values in symbol order."""

    def score(assignments, step):
        calls.append([dict(a) for a in assignments])
        return [table[tuple(a[s] for s in sorted(a))] for a in assignments]

    return score


def test_coarse_values_are_paper_000s_steps():
    assert coarse_values(32) == [1, 5, 10, 15, 20, 25, 30, 32]
    assert coarse_values(20) == [1, 5, 10, 15, 20]
    assert coarse_values(9, step=4) == [1, 4, 8, 9]


@pytest.mark.parametrize("seed", range(5))
def test_a_beam_as_wide_as_the_space_finds_the_exhaustive_optimum(seed):
    # coarse 1, 5, 9 and +-4 around them reach every value of 1..9: with a beam that
    # keeps everything, the search is exhaustive, whatever the interactions
    rng = np.random.default_rng(seed)
    symbols = ["A", "B"]
    table = {values: float(rng.normal()) for values in itertools.product(range(1, 10), repeat=2)}
    calls: list = []
    result = beam_search(
        symbols,
        {"A": 3, "B": 3},
        {"A": 9, "B": 9},
        table_scorer(table, calls),
        beam=1000,
        max_states=9,
        coarse_step=5,
    )
    best_values = max(table, key=table.__getitem__)
    assert result.score == table[best_values]
    assert (result.best["A"], result.best["B"]) == best_values
    scored = [tuple(sorted(a.items())) for batch in calls for a in batch]
    assert len(scored) == len(set(scored)) == result.evaluations  # nothing scored twice


@pytest.mark.parametrize("seed", range(5))
def test_beam_one_finds_the_optimum_of_a_separable_unimodal_score(seed):
    # score = sum of per-symbol concave terms: the greedy coordinate search is exact
    rng = np.random.default_rng(seed)
    peaks = {"A": int(rng.integers(1, 21)), "B": int(rng.integers(1, 21)), "C": 7}

    def score(assignments, step):
        return [-sum((a[s] - peaks[s]) ** 2 for s in peaks) for a in assignments]

    result = beam_search(list(peaks), {s: 16 for s in peaks}, {}, score, max_states=20)
    assert result.best == peaks
    assert result.score == 0 and result.finished


def test_values_beyond_a_cap_are_not_proposed_and_the_incumbent_survives_a_bad_step():
    calls: list = []

    def score(assignments, step):
        calls.append((step, [dict(a) for a in assignments]))
        return [10.0 if a["A"] == 3 else 1.0 for a in assignments]  # only the start is good

    result = beam_search(["A"], {"A": 3}, {"A": 6}, score, max_states=32)
    assert result.best == {"A": 3} and result.score == 10.0
    proposed = [a["A"] for step, batch in calls for a in batch if step["phase"] != "start"]
    assert max(proposed) == 6  # 10, 15, ... 32 are capped to 6, proposed once
    assert sorted(proposed) == [1, 2, 4, 5, 6]  # refinement around 3, without 3 itself


def test_a_budget_that_runs_out_keeps_the_best_so_far():
    batches = []

    def score(assignments, step):
        batches.append(step)
        if len(batches) > 2:  # the time is up after the start and one batch
            return [None] * len(assignments)
        return [float(a["A"]) for a in assignments]

    result = beam_search(["A", "B"], {"A": 2, "B": 2}, {}, score, max_states=10)
    assert not result.finished
    assert result.best == {"A": 10, "B": 2} and result.score == 10.0


def test_a_bad_beam_is_refused():
    with pytest.raises(ValueError, match="beam"):
        beam_search(["A"], {"A": 1}, {}, lambda a, s: [0.0] * len(a), beam=0)


def test_a_trace_of_an_older_version_is_refused(tmp_path):
    """Version 1 traces scored latent candidates with max_rule, which cannot be ranked
    with the mbr scores of this version."""
    import json

    from spacy_lpcfg.search.trace import TRACE_VERSION, Trace

    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({"trace": 1, "fingerprint": "f"}) + "\n", encoding="utf8")
    with pytest.raises(ValueError, match=rf"E601.*version {TRACE_VERSION}"):
        Trace(path, "f", resume=True)
    path.write_text(json.dumps({"trace": TRACE_VERSION, "fingerprint": "f"}) + "\n")
    assert Trace(path, "f", resume=True).records == []
