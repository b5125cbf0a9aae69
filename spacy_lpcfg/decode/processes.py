"""Parsing in several processes: one parser per worker, sentences in order.

Each worker (``spawn``: no state shared with the caller) loads the model once
and parses batches of sentences; results come back in input order, so a stream
of sentences can be printed as it is parsed. Worth it for many sentences:
loading a model and compiling (from the numba cache) takes a second or two per
worker.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import warnings
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

# Sentences per task: a task's transfer costs far less than parsing 8 sentences, and
# small tasks keep the workers busy to the end (the last one finishes at most one
# small task after the others).
BATCH_SIZE = 8

# A sentence: (words, tags or None); None for a line without words (printed empty).
Sentence = tuple[Sequence[str], Sequence[str | None] | None] | None

_PARSER: Any = None  # the worker's parser (set by _load)
_KBEST: int | None = None  # trees per sentence, for k-best lists (set by _load)
_LOAD_ERROR: BaseException | None = None  # why _load failed: raised by every task


def parse_in_processes(
    model_dir: str | Path,
    sentences: Iterable[Sentence],
    n_process: int,
    parser_options: dict[str, Any],
    *,
    batch_size: int = BATCH_SIZE,
    kbest: int | None = None,
) -> Iterator[str]:
    """The bracketed tree of each sentence (``""`` for None), in order; with ``kbest``,
    its k-best list instead (``Parser.kbest``, written by ``decode.kbest.format_kbest``).

    model_dir (str | Path): the model directory each worker loads.
    sentences (Iterable[Sentence]): read lazily, as workers become free.
    n_process (int): the number of worker processes (>= 2).
    parser_options (dict): keyword arguments of ``Parser``.
    """
    # each worker is an interpreter of its own: never more of them than CPUs
    n_process = max(1, min(n_process, os.cpu_count() or 1))
    context = multiprocessing.get_context("spawn")
    batches = _batches(iter(sentences), batch_size)
    with context.Pool(
        n_process, initializer=_load, initargs=(str(model_dir), parser_options, kbest)
    ) as pool:
        for trees in pool.imap(_parse_batch, batches):
            yield from trees


def _batches(sentences: Iterator[Sentence], size: int) -> Iterator[list[Sentence]]:
    while batch := list(islice(sentences, size)):
        yield batch


def _load(model_dir: str, parser_options: dict[str, Any], kbest: int | None = None) -> None:
    global _PARSER, _KBEST, _LOAD_ERROR
    from ..grammar.model import ParsingModel
    from .parser import Parser

    # Ctrl-C reaches the whole process group: the caller handles it and ends the pool;
    # unknown tags are the caller's to report, once for the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.filterwarnings("ignore", message=re.escape("[LPCFG-W301]"))
    try:
        _PARSER = Parser(ParsingModel.from_disk(model_dir), **parser_options)
    except Exception as error:  # a pool replaces a worker whose initializer fails, forever:
        _LOAD_ERROR = error  # its tasks report the error instead
    _KBEST = kbest


def _parse_batch(batch: list[Sentence]) -> list[str]:
    if _LOAD_ERROR is not None:
        raise _LOAD_ERROR
    if _KBEST is not None:
        from .kbest import format_kbest

        return [
            "" if sentence is None else format_kbest(_PARSER.kbest(*sentence, k=_KBEST))
            for sentence in batch
        ]
    return [
        "" if sentence is None else _PARSER.parse(*sentence).tree.pformat() for sentence in batch
    ]
