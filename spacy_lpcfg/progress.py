"""Progress bars of long steps, and the one switch that silences them all.

Every long loop of the library goes through ``progress``: one tqdm bar per step,
named by ``desc``, on stderr. Bars nest (an ensemble's bar holds each member's
steps) and vanish when their step ends, so what stays on screen is the
command's own summary. tqdm shows them only when stderr is a terminal; in a log
or a pipe, a step that lasts longer than ``LOG_INTERVAL`` is reported instead by
lines of the ``spacy_lpcfg.progress`` logger (percentage, count, elapsed, ETA),
one every ``LOG_INTERVAL`` seconds, which the command line prints to stderr. ``quiet()`` hides them in a terminal too: the command line's
``--quiet``, or ``with quiet(): estimator.fit(trees)`` in Python. It is a
context variable, so it holds inside its ``with`` block only (and only in that
thread or task): no global setting to restore.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # tqdm is imported when a bar starts: importing stays cheap
    from tqdm import tqdm

_SHOWN: ContextVar[bool] = ContextVar("spacy_lpcfg_progress_shown", default=True)
LOGGER = logging.getLogger("spacy_lpcfg.progress")
LOG_INTERVAL = 30.0
"""Seconds between progress lines in a log (and before the first: short steps say nothing)."""
_LOG_FORMAT = (
    "{desc}: {percentage:3.0f}% ({n_fmt}/{total_fmt} {unit}), {elapsed} elapsed, ETA {remaining}"
)
_LOG_FORMAT_OPEN = "{desc}: {n_fmt} {unit}, {elapsed} elapsed"


class _LoggedProgress:
    """tqdm's interface for a log: a line of ``LOGGER`` every ``LOG_INTERVAL`` seconds
    (percentage, count, elapsed, ETA), none for a step shorter than that."""

    disable = False

    def __init__(self, iterable, desc: str, total: int | None, unit: str) -> None:
        self.iterable, self.desc, self.unit = iterable, desc, unit
        self.total = total if total is not None else getattr(iterable, "__len__", lambda: None)()
        self.n = 0
        self.start = self.last = time.monotonic()
        self.postfix = ""

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update()

    def __enter__(self) -> _LoggedProgress:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self.last >= LOG_INTERVAL:
            self.last = now
            LOGGER.info(self._line(now))

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **values: Any) -> None:
        values = {**(ordered_dict or {}), **values}
        self.postfix = ", ".join(f"{key}={value}" for key, value in values.items())

    def set_description_str(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def close(self) -> None:
        if self.last != self.start:  # it logged: say that it ended
            LOGGER.info(self._line(time.monotonic()))

    def _line(self, now: float) -> str:
        elapsed = now - self.start
        done = f"{self.n} {self.unit}"
        if self.total:
            share = min(self.n / self.total, 1.0)
            left = elapsed * (1 - share) / share if share else float("nan")
            eta = "?" if left != left else _clock(left)
            done = f"{100 * share:3.0f}% ({self.n}/{self.total} {self.unit}), ETA {eta}"
        extra = f" [{self.postfix}]" if self.postfix else ""
        return f"{self.desc}: {done}, {_clock(elapsed)} elapsed{extra}"


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


def log_progress_to_stderr() -> None:
    """Print ``LOGGER``'s lines to stderr when it is no terminal (the command line)."""
    if sys.stderr.isatty() or LOGGER.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False


@contextmanager
def quiet(silent: bool = True) -> Iterator[None]:
    """Hide (``silent``) or allow the progress bars started inside the block."""
    token = _SHOWN.set(not silent)
    try:
        yield
    finally:
        _SHOWN.reset(token)


def progress(
    iterable: Iterable | None = None,
    *,
    desc: str,
    total: int | None = None,
    unit: str = "it",
    **options: Any,
) -> tqdm:
    """A transient tqdm bar on stderr: shown on a terminal unless ``quiet()``.

    iterable (Iterable | None): what to iterate; None for a bar moved with ``update``
        (``with progress(desc=..., total=3, unit="step") as bar: ... bar.update()``).
    desc (str): the step, lowercase ("reading", "SVD", "k-means").
    total (int | None): the number of items (default: ``len(iterable)`` if it has one).
    options: other tqdm arguments (``bar_format``, ...).
    """
    from tqdm import tqdm

    in_a_log = "file" not in options and not sys.stderr.isatty()
    if _SHOWN.get() and in_a_log and LOGGER.isEnabledFor(logging.INFO):
        return _LoggedProgress(iterable, desc, total, unit)
    return tqdm(
        iterable,
        desc=desc,
        total=total,
        unit=unit,
        disable=None if _SHOWN.get() else True,  # None: only on a terminal
        leave=False,
        dynamic_ncols=True,
        **options,
    )
