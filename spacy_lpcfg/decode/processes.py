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

BATCH_SIZE = 32  # sentences per task: large enough to hide the transfer, small for order

# A sentence: (words, tags or None); None for a line without words (printed empty).
Sentence = tuple[Sequence[str], Sequence[str | None] | None] | None

_PARSER: Any = None  # the worker's parser (set by _load)
_KBEST: int | None = None  # trees per sentence, for k-best lists (set by _load)


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
    global _PARSER, _KBEST
    from ..grammar.model import ParsingModel
    from .parser import Parser

    # Ctrl-C reaches the whole process group: the caller handles it and ends the pool;
    # unknown tags are the caller's to report, once for the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.filterwarnings("ignore", message=re.escape("[LPCFG-W010]"))
    _PARSER = Parser(ParsingModel.from_disk(model_dir), **parser_options)
    _KBEST = kbest


def _parse_batch(batch: list[Sentence]) -> list[str]:
    if _KBEST is not None:
        from .kbest import format_kbest

        return [
            "" if sentence is None else format_kbest(_PARSER.kbest(*sentence, k=_KBEST))
            for sentence in batch
        ]
    return [
        "" if sentence is None else _PARSER.parse(*sentence).tree.pformat() for sentence in batch
    ]
