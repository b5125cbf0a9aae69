"""Parsing in several processes: one parser per worker, sentences in order.

Results come back in input order, so a stream of sentences can be printed as it
is parsed. Given the caller's parser, on Linux the workers are forks of the
caller: they parse with its parser as it is, the model's arrays shared with it
(one copy in memory, not one per process), without starting an interpreter or
reading the model again (each still loads the compiled kernels from numba's
cache on its first sentence, as the caller would). Otherwise
(another system, threads running in the caller, no parser given) each worker is
a fresh interpreter (``spawn``) that loads the model, which with the kernels
from the numba cache takes a second or two: a large share of a short job.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
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
_HELD = {signal.SIGINT, signal.SIGTERM}  # blocked while workers are forked


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
    with parsing_processes(
        model_dir, n_process, parser_options, batch_size=batch_size, kbest=kbest
    ) as parse:
        yield from parse(sentences)


@contextmanager
def parsing_processes(
    model_dir: str | Path,
    n_process: int,
    parser_options: dict[str, Any],
    *,
    batch_size: int = BATCH_SIZE,
    kbest: int | None = None,
    parser: Any = None,
) -> Iterator[Callable[[Iterable[Sentence]], Iterator[str]]]:
    """Start the workers and give the function that parses sentences with them (as
    ``parse_in_processes``); they end with the block.

    parser (Parser | None): the caller's parser of ``model_dir`` with
        ``parser_options``, which forked workers use (module docstring).
    """
    # never more workers than CPUs: each parses on a core of its own
    n_process = max(1, min(n_process, os.cpu_count() or 1))
    if parser is not None and _can_fork():
        # A fork's arguments are not pickled: each worker, and any that replaces one,
        # starts with the caller's parser. Ctrl-C and SIGTERM wait (blocked) until a
        # new worker has set its own handlers: until then it has the caller's.
        context: Any = multiprocessing.get_context("fork")
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            pool = context.Pool(n_process, initializer=_forked, initargs=(parser, kbest))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    else:
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(
            n_process, initializer=_load, initargs=(str(model_dir), parser_options, kbest)
        )
    with pool:

        def parse(sentences: Iterable[Sentence]) -> Iterator[str]:
            for trees in pool.imap(_parse_batch, _batches(iter(sentences), batch_size)):
                yield from trees

        yield parse


def _can_fork() -> bool:
    """Whether workers can be forks of this process: Linux (elsewhere fork is missing
    or unsafe with the system's libraries) and no other thread running, whose locks a
    fork would copy held."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _batches(sentences: Iterator[Sentence], size: int) -> Iterator[list[Sentence]]:
    while batch := list(islice(sentences, size)):
        yield batch


def _forked(parser: Any, kbest: int | None) -> None:
    """A forked worker's start: the caller's parser, and a worker's signal handlers and
    warning filters instead of the caller's."""
    global _PARSER, _KBEST
    _PARSER, _KBEST = parser, kbest
    _worker_signals_and_warnings()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool ends its workers so
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def _worker_signals_and_warnings() -> None:
    # Ctrl-C reaches the whole process group: the caller handles it and ends the pool;
    # unknown tags are the caller's to report, once for the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.filterwarnings("ignore", message=re.escape("[LPCFG-W301]"))


def _load(model_dir: str, parser_options: dict[str, Any], kbest: int | None = None) -> None:
    global _PARSER, _KBEST, _LOAD_ERROR
    from ..grammar.model import ParsingModel
    from .parser import Parser

    _worker_signals_and_warnings()
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
