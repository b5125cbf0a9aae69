"""The latent-state search of Narayan & Cohen (2016, Figure 2) as a beam.

The symbols are taken one at a time, most frequent first. For each, every
assignment in the beam proposes coarse values for the symbol's number of states
(1, 5, 10, ... up to the largest allowed), the best ``beam`` assignments are kept,
then each proposes its value +-1..4 (the refinement), and again the best are kept.
Paper 000 runs this with a priority queue ordered by dev F1; here the beam moves
one symbol at a time, so that each step's candidates are independent and are
scored together (in parallel), and the search does the same evaluations in the same
order whatever runs them. Two choices of ours: an assignment competes with its own
proposals (a coarse step never makes the beam worse), and values beyond what the
data supports for a symbol (``caps``) are not proposed: they would fit the same
grammar again.

``beam_search`` knows nothing of grammars: it gets a function that scores a batch
of assignments, so that the tests check it against exhaustive search on score
functions of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import Errors

REFINE_OFFSETS = (-4, -3, -2, -1, 1, 2, 3, 4)
"""Paper 000's refinement: the coarse value +-1..4 (0 is the value itself, scored)."""

Assignment = dict[str, int]
ScoreBatch = Callable[[list[Assignment], dict], list[float | None]]
"""Scores assignments (dev F1), given the step's description for the trace; None for
an assignment not scored because the time budget ran out."""


@dataclass
class SearchResult:
    """What ``beam_search`` found.

    best (dict[str, int]): the best assignment of states to symbols.
    score (float): its score.
    beam (list[tuple[float, dict[str, int]]]): the final beam, best first.
    evaluations (int): assignments scored (each distinct one once).
    finished (bool): False when the time budget stopped the search early.
    """

    best: Assignment
    score: float
    beam: list[tuple[float, Assignment]] = field(default_factory=list)
    evaluations: int = 0
    finished: bool = True


def coarse_values(max_states: int, step: int = 5) -> list[int]:
    """Paper 000's coarse steps: 1, step, 2 step, ... up to ``max_states`` (included)."""
    values = [1, *range(step, max_states + 1, step)]
    if values[-1] != max_states:
        values.append(max_states)
    return values


def beam_search(
    symbols: Sequence[str],
    start: Mapping[str, int],
    caps: Mapping[str, int],
    score_batch: ScoreBatch,
    *,
    beam: int = 1,
    max_states: int = 32,
    coarse_step: int = 5,
    start_score: float | None = None,
) -> SearchResult:
    """Search the number of states of each symbol in turn (module docstring).

    symbols (Sequence[str]): the symbols to search, in order (most frequent first).
    start (Mapping[str, int]): the initial states of every symbol searched.
    caps (Mapping[str, int]): the most states each symbol can have.
    score_batch (ScoreBatch): scores assignments (higher is better).
    beam (int): assignments kept after each step.
    max_states (int): the largest coarse value.
    coarse_step (int): the distance between coarse values.
    start_score (float | None): the score of ``start`` if known.
    RETURNS (SearchResult): the best assignment found.
    """
    if beam < 1:
        raise ValueError(Errors.E011.format(name="beam", value=beam, expected="an int >= 1"))
    start = dict(start)
    evaluations = 0
    if start_score is None:
        (start_score,) = score_batch([start], {"phase": "start"})
        evaluations += 1
        if start_score is None:  # no time even for the start
            return SearchResult(start, float("-inf"), [], evaluations, finished=False)
    kept: list[tuple[float, Assignment]] = [(start_score, start)]
    known: dict[tuple, float] = {_key(start): start_score}  # every score so far
    coarse = coarse_values(max_states, coarse_step)
    for position, symbol in enumerate(symbols):
        for phase in ("coarse", "refine"):
            proposals: list[Assignment] = []
            seen = {_key(assignment) for _, assignment in kept}
            for _, assignment in kept:
                if phase == "coarse":
                    values = coarse
                else:
                    values = [assignment[symbol] + offset for offset in REFINE_OFFSETS]
                for value in values:
                    value = min(value, caps.get(symbol, max_states))
                    if value < 1:
                        continue
                    proposal = {**assignment, symbol: value}
                    if _key(proposal) not in seen:
                        seen.add(_key(proposal))
                        proposals.append(proposal)
            new = [a for a in proposals if _key(a) not in known]
            step = {"phase": phase, "symbol": symbol, "position": position}
            for assignment, score in zip(new, score_batch(new, step) if new else []):
                if score is not None:
                    known[_key(assignment)] = score
                    evaluations += 1
            scored = [(known[_key(a)], a) for a in proposals if _key(a) in known]
            # stable sort: among equal scores, the earlier assignment (the incumbent) wins
            kept = sorted(kept + scored, key=lambda item: -item[0])[:beam]
            if len(scored) < len(proposals):
                return SearchResult(kept[0][1], kept[0][0], kept, evaluations, finished=False)
    return SearchResult(kept[0][1], kept[0][0], kept, evaluations)


def _key(assignment: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(assignment.items()))
