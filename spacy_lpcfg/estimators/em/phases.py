"""The record of EM training: the log-likelihoods of each phase (``EMPhase``), as the
estimator keeps them and as a history (JSON) records them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple


class EMPhase(NamedTuple):
    """The log-likelihoods of one EM phase: of the grammar that starts it, then after
    each M-step.

    cycle (int): 1-based split-merge cycle.
    phase (str): "split" (EM after splitting) or "merge" (smoothed EM after merging).
    log_likelihoods (tuple[float, ...]): of the training trees.
    """

    cycle: int
    phase: str
    log_likelihoods: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """The phase as a history records it (``history["log_likelihoods"]``)."""
        return {
            "cycle": self.cycle,
            "phase": self.phase,
            "values": [float(v) for v in self.log_likelihoods],
        }


def phases_of(records: Iterable[Mapping[str, Any]]) -> list[EMPhase]:
    """The phases of a history's ``"log_likelihoods"`` (``EMPhase.to_dict``)."""
    return [
        EMPhase(record["cycle"], record["phase"], tuple(record["values"])) for record in records
    ]
