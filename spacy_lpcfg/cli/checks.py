"""Checks a command makes before any work: counts within their ranges, inputs that
exist, outputs that can be written and that would destroy no input."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..defaults import CEILINGS
from .exits import fail


def check_count(value: int | None, option: str, low: int, high: int | float) -> None:
    """Fail (exit 2, before any work) unless ``low <= value <= high``; None passes."""
    if value is not None and not low <= value <= high:
        fail(f"{option} must be from {low} to {high}, not {value}", 2)


def check_limit(limit: int | None, option: str = "--limit") -> None:
    if limit is not None and not 1 <= limit <= CEILINGS.trees:
        fail(
            f"{option} must be from 1 to {CEILINGS.trees}, not {limit} (leave it out to use "
            "every tree)"
        )


def check_input_file(path: Path) -> None:
    """Fail (one line, before any work) unless ``path`` is a readable file."""
    if not path.exists():
        fail(f"{path}: no such file")
    if path.is_dir():
        fail(f"{path} is a directory: give a file")
    if not os.access(path, os.R_OK):
        fail(f"{path}: permission denied")


def check_model_dir(model_dir: Path) -> None:
    """Fail at once (before reading any input) when there is no model directory."""
    if not model_dir.is_dir():
        fail(f"{model_dir}: no such model directory (train one with 'spacy-lpcfg train')")


def check_output_file(path: Path, what: str) -> None:
    """Fail before any work when ``what`` could not be written to the file ``path``."""
    where = f"cannot write {what} to {path}"
    if path.is_dir():
        fail(f"{where}: it is a directory")
    if not path.parent.is_dir():
        fail(f"{where}: there is no directory {path.parent}")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        fail(f"{where}: permission denied")


def check_output_dir(path: Path) -> None:
    """Fail before any work when ``path`` cannot be (made) a writable directory."""
    if path.exists() and not path.is_dir():
        fail(f"cannot write to {path}: it is a file, not a directory")
    existing = next(folder for folder in (path, *path.absolute().parents) if folder.exists())
    if not existing.is_dir():
        fail(f"cannot create {path}: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        fail(f"cannot write to {path}: permission denied in {existing}")


def corpus_inputs(corpus: str, data_dir: Path | None) -> list[Path]:
    """The files or folders a corpus argument reads: the named corpus's folder in the
    data directory, or the treebank path."""
    from ..corpora import CORPORA, resolve_data_dir
    from ..errors import DataNotFoundError

    if corpus in CORPORA:
        try:
            return [resolve_data_dir(data_dir) / corpus]
        except DataNotFoundError:
            return []  # nothing to protect: reading will fail with its own message
    return [Path(corpus)]


def refuse_overwrite(
    output: Path, what: str, inputs: Iterable[Path | None] = (), replaces_dir: bool = False
) -> None:
    """Fail before any work when writing ``what`` to ``output`` could destroy an input:
    ``output`` is an input file, or lies inside an input folder (a model directory, a
    treebank folder); ``replaces_dir``: ``output`` is a folder written anew, which must
    hold no input either."""
    target = output.resolve()
    for source in inputs:
        if source is None or not source.exists():
            continue
        resolved = source.resolve()
        if _same(output, source):
            fail(f"cannot write {what} to {output}: that would overwrite the input {source}")
        if source.is_dir() and _inside(target, resolved):
            fail(f"cannot write {what} to {output}: it lies in the input folder {source}")
        if replaces_dir and _inside(resolved, target):
            fail(f"cannot write {what} to {output}: it holds the input {source}")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _same(output: Path, source: Path) -> bool:
    """Whether two paths name one file (through a symbolic or a hard link too)."""
    try:
        return output.resolve() == source.resolve() or output.samefile(source)
    except OSError:  # one of them does not exist
        return False
