"""The search trace: one JSON line per candidate scored, and resuming from it.

The first line names the search (``fingerprint``: a hash of the training and dev
trees and of the settings); every other line is one scored candidate: its stage,
what it is (``candidate``), its dev F1, the seconds it took and the seconds since
the search started. Lines are flushed as they are written, so an interrupted
search loses at most the candidates being scored. Resuming reads the file back:
a candidate already in it is not scored again, and since the search is
deterministic it retraces its steps to where it stopped, then goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..errors import Errors
from ..trees.tree import Tree

# 2: decoder "auto" scores latent candidates with mbr (version 1 traces: max_rule), so
# the scores of the two cannot be ranked together.
TRACE_VERSION = 2


def fingerprint(train: Iterable[Tree], dev: Iterable[Tree], settings: Mapping[str, Any]) -> str:
    """A hash of the training trees, the dev trees and the search settings."""
    digest = hashlib.sha256(json.dumps(dict(settings), sort_keys=True).encode())
    for name, trees in (("train", train), ("dev", dev)):
        digest.update(name.encode())
        for tree in trees:
            digest.update(str(tree).encode())
            digest.update(b"\n")
    return digest.hexdigest()[:32]


def candidate_key(stage: str, candidate: Mapping[str, Any]) -> str:
    return stage + " " + json.dumps(dict(candidate), sort_keys=True)


class Trace:
    """The JSON-lines trace of a search, and the scores of earlier runs.

    path (Path | None): the trace file (None: keep the trace in memory only).
    fingerprint (str): what the search is; a file of another search is refused.
    resume (bool): read the candidates of an earlier run from ``path``; otherwise an
        existing file is replaced.
    RAISES ValueError: resuming from a file of another search, or a damaged file.
    """

    def __init__(self, path: Path | None, fingerprint: str, *, resume: bool = False):
        self.path = path
        self.fingerprint = fingerprint
        self.records: list[dict[str, Any]] = []
        self._scores: dict[str, tuple[float, float]] = {}
        self._start = time.perf_counter()
        self._offset = 0.0  # elapsed seconds of the earlier runs
        self._file: TextIO | None = None
        if path is not None and resume and path.exists():
            self._read(path)
            self._file = path.open("a", encoding="utf8")
        elif path is not None:
            self._file = path.open("w", encoding="utf8")
            self._write({"trace": TRACE_VERSION, "fingerprint": fingerprint})

    def _read(self, path: Path) -> None:
        try:
            with path.open(encoding="utf8") as file:
                lines = [(n, line) for n, line in enumerate(file, 1) if line.strip()]
        except UnicodeDecodeError:  # not a trace this program wrote
            raise ValueError(Errors.E601.format(path=path, version=TRACE_VERSION)) from None
        for position, (number, line) in enumerate(lines):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number > 1 and position == len(lines) - 1:
                    break  # the last line, cut by an interruption: the end of the trace
                record = None
            if number == 1:
                if not isinstance(record, dict) or record.get("trace") != TRACE_VERSION:
                    raise ValueError(Errors.E601.format(path=path, version=TRACE_VERSION))
                if record.get("fingerprint") != self.fingerprint:
                    raise ValueError(Errors.E602.format(path=path))
                continue
            if not isinstance(record, dict) or not {"stage", "candidate", "dev_f1"} <= set(record):
                raise ValueError(Errors.E603.format(path=path, line=number))
            self.records.append(record)
            key = candidate_key(record["stage"], record["candidate"])
            self._scores[key] = (float(record["dev_f1"]), float(record.get("seconds", 0.0)))
            self._offset = max(self._offset, float(record.get("elapsed", 0.0)))
        # a cut last line would make the appended lines unreadable: rewrite the file whole
        # (beside it, then in its place: an interruption leaves the old file or the new)
        partial = path.with_name(path.name + ".partial")
        with partial.open("w", encoding="utf8") as out:
            out.write(json.dumps({"trace": TRACE_VERSION, "fingerprint": self.fingerprint}))
            out.write("\n")
            for record in self.records:
                out.write(json.dumps(record) + "\n")
        os.replace(partial, path)

    @property
    def elapsed(self) -> float:
        """Seconds of search so far, earlier runs included."""
        return self._offset + time.perf_counter() - self._start

    def known(self, stage: str, candidate: Mapping[str, Any]) -> tuple[float, float] | None:
        """(dev F1, seconds) of a candidate scored before, or None."""
        return self._scores.get(candidate_key(stage, candidate))

    def add(
        self, stage: str, candidate: Mapping[str, Any], dev_f1: float, seconds: float, **extra
    ) -> None:
        """Record a scored candidate (and write its line)."""
        record = {
            "evaluation": len(self.records) + 1,
            "stage": stage,
            "candidate": dict(candidate),
            "dev_f1": float(dev_f1),  # exact: a resumed search ranks as the first run did
            "seconds": round(float(seconds), 3),
            "elapsed": round(self.elapsed, 3),
            **extra,
        }
        self.records.append(record)
        self._scores[candidate_key(stage, candidate)] = (record["dev_f1"], record["seconds"])
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
