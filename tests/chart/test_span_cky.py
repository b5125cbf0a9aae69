"""span_cky against enumeration of every binary bracketing."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.chart import span_cky


def _bracketings(i: int, j: int) -> list[list[tuple[int, int]]]:
    if j - i == 1:
        return [[(i, j)]]
    return [
        [(i, j)] + left + right
        for k in range(i + 1, j)
        for left in _bracketings(i, k)
        for right in _bracketings(k, j)
    ]


def _brute_force(scores, allowed):
    n = scores.shape[0] - 1
    best = max(
        (t for t in _bracketings(0, n) if all(allowed[i, j] for i, j in t)),
        key=lambda t: sum(scores[i, j].max() for i, j in t),
        default=None,
    )
    return best


@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("seed", range(3))
def test_span_cky_matches_enumeration(n, seed):
    scores = np.random.default_rng(seed).normal(size=(n + 1, n + 1, 3))
    result = span_cky(scores)
    best = _brute_force(scores, np.ones((n + 1, n + 1), dtype=bool))
    assert list(zip(result.starts.tolist(), result.ends.tolist())) == best
    assert np.isclose(result.score, sum(scores[i, j].max() for i, j in best))
    assert result.labels.tolist() == [int(scores[i, j].argmax()) for i, j in best]


@pytest.mark.parametrize("seed", range(5))
def test_span_cky_forbidden_and_forced(seed):
    n = 6
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n + 1, n + 1, 2))
    forbidden = np.zeros((n + 1, n + 1), dtype=bool)
    forbidden[1, 4] = forbidden[0, 2] = True
    forced = np.zeros((n + 1, n + 1), dtype=bool)
    forced[2, 5] = True
    result = span_cky(scores, forbidden=forbidden, forced=forced)
    spans = list(zip(result.starts.tolist(), result.ends.tolist()))
    assert (2, 5) in spans and (1, 4) not in spans and (0, 2) not in spans
    allowed = ~forbidden
    for i in range(n + 1):
        for j in range(i + 1, n + 1):
            allowed[i, j] &= not (i < 2 < j < 5 or 2 < i < 5 < j)
    assert spans == _brute_force(scores, allowed)


def test_span_cky_impossible_constraints_give_no_tree():
    forbidden = np.zeros((4, 4), dtype=bool)
    forbidden[0, 3] = True
    result = span_cky(np.zeros((4, 4, 1)), forbidden=forbidden)
    assert not result.has_tree and result.score == -np.inf


def test_span_cky_rejects_crossing_forced_spans_and_bad_shapes():
    forced = np.zeros((5, 5), dtype=bool)
    forced[0, 2] = forced[1, 3] = True
    with pytest.raises(ValueError, match="E204"):
        span_cky(np.zeros((5, 5, 1)), forced=forced)
    with pytest.raises(ValueError, match="E203"):
        span_cky(np.zeros((5, 4, 1)))
    with pytest.raises(ValueError, match="E203"):
        span_cky(np.zeros((1, 1, 1)))
