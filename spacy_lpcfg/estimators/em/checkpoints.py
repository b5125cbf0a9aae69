"""Checkpoints of split-merge training: one per complete cycle, without pickle.

A checkpoint folder holds::

    checkpoint.json     format and version, the fingerprint of the training data
                        and parameters, the last complete cycle, the best cycle on
                        dev (if any), the random generator's state, the history
                        (log-likelihoods, dev F1, states per symbol, seconds) and
                        the SHA-256 of each cycle file it names
    cycle-NNN.npz       the grammar after cycle NNN: states per symbol, weights by
                        kind (emissions over training entries: the lexicon's part
                        of the state) and the expected count of each state

Every file is written beside its name and renamed into place after an fsync, and
``checkpoint.json`` only after the cycle file it names, so a run killed at any
moment leaves the previous complete checkpoint (or the new one) readable. The
cycle files that the index no longer names (all but the last and the best) are
removed after it is replaced. A checkpoint whose fingerprint differs (other
trees, dev trees or parameters) is refused with the differences named.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...errors import Errors
from ...trees.tree import Tree
from .treebank import KINDS

CHECKPOINT_FORMAT = "spacy-lpcfg split-merge checkpoint"
CHECKPOINT_VERSION = 1
INDEX = "checkpoint.json"
CYCLE_FILE = re.compile(r"cycle-(\d{3,})\.npz")
TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")


@dataclass
class CycleState:
    """The grammar at the end of a cycle.

    cycle (int): the cycle (0: the one-state grammar).
    n_states (np.ndarray): int64[n_symbols], latent states per symbol.
    weights (dict[str, np.ndarray]): kind -> float64 rule blocks (``EMGrammar``).
    state_counts (np.ndarray): float64[sum(n_states)], expected nodes per state under
        the grammar (its coarse grammar's frequencies).
    """

    cycle: int
    n_states: np.ndarray
    weights: dict[str, np.ndarray]
    state_counts: np.ndarray


@dataclass
class Checkpoint:
    """A complete checkpoint: the last cycle, the best one on dev and the record.

    last (CycleState): the grammar training goes on from.
    best (CycleState | None): the best cycle on dev so far (None without dev trees).
    random_state (dict): ``np.random.Generator.bit_generator.state`` after ``last``.
    history (dict): the estimator's ``history_`` so far.
    cycle_seconds (list[float]): training time of each cycle.
    """

    last: CycleState
    best: CycleState | None
    random_state: dict[str, Any]
    history: dict[str, Any]
    cycle_seconds: list[float]


def tree_fingerprint(trees: Iterable[Tree]) -> str:
    """SHA-256 of the trees' bracketed strings, one per line."""
    digest = hashlib.sha256()
    for tree in trees:
        digest.update(str(tree).encode("utf8"))
        digest.update(b"\n")
    return digest.hexdigest()


def array_fingerprint(*parts: Any) -> str:
    """SHA-256 of arrays (dtype, shape and bytes) and JSON-able values."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            array = np.ascontiguousarray(part)
            digest.update(f"{array.dtype.str}{array.shape}".encode())
            digest.update(array.tobytes())
        else:
            digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode("utf8"))
        digest.update(b"\0")
    return digest.hexdigest()


def generator_state(generator: np.random.Generator) -> dict[str, Any]:
    """The generator's state as JSON data (arrays as lists)."""
    return _jsonable(generator.bit_generator.state)


def restore_generator(state: Mapping[str, Any]) -> np.random.Generator:
    """A new generator in ``state`` (``generator_state``)."""
    bit_generator = getattr(np.random, state["bit_generator"])()
    state = dict(state)
    if isinstance(state.get("state"), dict) and "key" in state["state"]:  # MT19937
        state["state"] = {**state["state"], "key": np.asarray(state["state"]["key"], np.uint32)}
    bit_generator.state = state
    return np.random.Generator(bit_generator)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


class CheckpointFolder:
    """Reads and writes the checkpoints of one training run in ``folder``.

    folder (str | Path): created when the first checkpoint is written.
    fingerprint (dict): what the run is: {"treebank": hash, "dev": hash or None,
        "params": the parameters that shape training}; a checkpoint with another
        one is refused.
    """

    def __init__(self, folder: str | Path, fingerprint: Mapping[str, Any]):
        self.folder = Path(folder)
        self.fingerprint = json.loads(json.dumps(dict(fingerprint), sort_keys=True))

    @property
    def index(self) -> Path:
        return self.folder / INDEX

    def exists(self) -> bool:
        return self.index.is_file()

    def load(self) -> Checkpoint | None:
        """The checkpoint in the folder; None if there is none.

        RAISES ValueError: it is damaged, of a newer format, or of another run.
        """
        if not self.exists():
            return None
        record = self._read_index()
        found = record.get("fingerprint")
        if found != self.fingerprint:
            raise ValueError(
                Errors.E407.format(path=self.folder, detail=_differences(found, self.fingerprint))
            )
        try:
            cycle, best_cycle = int(record["cycle"]), record.get("best_cycle")
            random_state, history = dict(record["random_state"]), dict(record["history"])
            cycle_seconds = [float(seconds) for seconds in record["cycle_seconds"]]
        except (KeyError, TypeError, ValueError) as err:
            detail = f"{INDEX} lacks or garbles {err}"
            raise ValueError(Errors.E406.format(path=self.folder, detail=detail)) from None
        last = self._read_cycle(record, cycle)
        best = None if best_cycle is None else self._read_cycle(record, int(best_cycle))
        return Checkpoint(last, best, random_state, history, cycle_seconds)

    def _read_index(self) -> dict[str, Any]:
        try:
            record = json.loads(self.index.read_bytes().decode("utf8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(Errors.E406.format(path=self.folder, detail=str(err))) from None
        if not isinstance(record, dict) or record.get("format") != CHECKPOINT_FORMAT:
            detail = f"{INDEX} is not a split-merge checkpoint index"
            raise ValueError(Errors.E406.format(path=self.folder, detail=detail))
        version = record.get("format_version")
        if not isinstance(version, int) or version > CHECKPOINT_VERSION:
            raise ValueError(
                Errors.E408.format(path=self.folder, found=version, supported=CHECKPOINT_VERSION)
            )
        return record

    def _read_cycle(self, record: Mapping[str, Any], cycle: int) -> CycleState:
        def fail(detail: str) -> ValueError:
            return ValueError(Errors.E406.format(path=self.folder, detail=detail))

        entry = record.get("files", {}).get(str(cycle))
        if not isinstance(entry, dict) or not {"name", "sha256"} <= set(entry):
            raise fail(f"{INDEX} names no file for cycle {cycle}")
        try:
            data = (self.folder / entry["name"]).read_bytes()
        except OSError as err:
            raise fail(f"cannot read {entry['name']}: {err.strerror or err}") from None
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise fail(f"{entry['name']} does not match its checksum in {INDEX}")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return CycleState(
                    cycle,
                    arrays["n_states"].astype(np.int64),
                    {kind: arrays[f"weights_{kind}"] for kind in KINDS},
                    arrays["state_counts"],
                )
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as err:
            raise fail(f"{entry['name']}: {err}") from None

    def save(self, checkpoint: Checkpoint) -> None:
        """Write the checkpoint of a complete cycle (atomically; see the module docstring)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        files = {}
        for state in (checkpoint.last, checkpoint.best):
            if state is None or str(state.cycle) in files:
                continue
            name = f"cycle-{state.cycle:03d}.npz"
            if state is checkpoint.best and (self.folder / name).is_file():
                digest = self._existing_digest(name)  # written when it was the last
            else:
                digest = self._write_cycle(name, state)
            files[str(state.cycle)] = {"name": name, "sha256": digest}
        record = {
            "format": CHECKPOINT_FORMAT,
            "format_version": CHECKPOINT_VERSION,
            "fingerprint": self.fingerprint,
            "cycle": checkpoint.last.cycle,
            "best_cycle": None if checkpoint.best is None else checkpoint.best.cycle,
            "files": files,
            "random_state": _jsonable(checkpoint.random_state),
            "history": checkpoint.history,
            "cycle_seconds": list(checkpoint.cycle_seconds),
        }
        data = json.dumps(record, indent=1, ensure_ascii=False).encode("utf8")
        _write_atomic(self.index, data)
        kept = {entry["name"] for entry in files.values()}
        # the cycles no longer named, and the temporary files of killed writes
        self._remove(
            lambda name: (
                (CYCLE_FILE.fullmatch(name) is not None and name not in kept)
                or TEMPORARY.fullmatch(name) is not None
            )
        )

    def _existing_digest(self, name: str) -> str:
        """The SHA-256 that the current index gives ``name`` (checked when loaded)."""
        record = self._read_index()
        for entry in record.get("files", {}).values():
            if entry.get("name") == name:
                return str(entry["sha256"])
        return hashlib.sha256((self.folder / name).read_bytes()).hexdigest()

    def _write_cycle(self, name: str, state: CycleState) -> str:
        """Write a cycle's arrays, straight into the file (no archive of the grammar's
        size in memory, at the end of a cycle, while EM's arrays are still there).
        RETURNS (str): the file's SHA-256."""
        arrays: dict[str, Any] = {"n_states": np.asarray(state.n_states, dtype=np.int64)}
        arrays.update({f"weights_{kind}": state.weights[kind] for kind in KINDS})
        arrays["state_counts"] = state.state_counts
        return _write_atomic(self.folder / name, lambda file: np.savez(file, **arrays))

    def clear(self) -> None:
        """Remove the checkpoint files (and leftovers of killed writes); the folder
        itself and anything else in it stay."""
        self._remove(
            lambda name: (
                name == INDEX
                or CYCLE_FILE.fullmatch(name) is not None
                or TEMPORARY.fullmatch(name) is not None
            )
        )

    def _remove(self, chosen) -> None:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return
        # the index first: a run killed half-way through leaves no index naming lost files
        for name in sorted(names, key=lambda name: name != INDEX):
            if chosen(name):
                (self.folder / name).unlink(missing_ok=True)


def latest_cycle(folder: str | Path) -> int | None:
    """The last complete cycle checkpointed in ``folder`` (None: no checkpoint), for
    messages; the checkpoint is not checked."""
    try:
        record = json.loads((Path(folder) / INDEX).read_bytes().decode("utf8"))
        return int(record["cycle"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_atomic(path: Path, data: bytes | Callable[[BinaryIO], object]) -> str:
    """Write ``data`` (bytes, or a function that writes into the open file) to a
    temporary file beside ``path``, fsync it, rename it to ``path``.
    RETURNS (str): the SHA-256 of what was written."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "w+b") as file:
            if isinstance(data, bytes):
                file.write(data)
            else:
                data(file)
            file.flush()
            os.fsync(file.fileno())
            file.seek(0)
            digest = hashlib.sha256()
            while chunk := file.read(1 << 20):
                digest.update(chunk)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if os.name == "posix":  # the rename itself survives a crash once its folder is synced
        descriptor = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    return digest.hexdigest()


def _differences(found: Any, expected: Mapping[str, Any]) -> str:
    """What differs between a checkpoint's fingerprint and this run's, in words."""
    if not isinstance(found, dict):
        return "it has no fingerprint"
    parts = []
    if found.get("treebank") != expected.get("treebank"):
        parts.append("other training trees (or transforms)")
    if found.get("dev") != expected.get("dev"):
        parts.append("other dev trees")
    old, new = found.get("params") or {}, expected.get("params") or {}
    changed = sorted(name for name in set(old) | set(new) if old.get(name) != new.get(name))
    for name in changed:
        parts.append(f"{name} {old.get(name)!r} (now {new.get(name)!r})")
    return "; ".join(parts) or "another format of fingerprint"
