"""Progress bars of long steps, and the one switch that silences them all.

Every long loop of the library goes through ``progress``: one tqdm bar per step,
named by ``desc``, on stderr. Bars nest (an ensemble's bar holds each member's
steps) and vanish when their step ends, so what stays on screen is the
command's own summary. tqdm shows them only when stderr is a terminal, never
in logs or pipes. ``quiet()`` hides them in a terminal too: the command line's
``--quiet``, or ``with quiet(): estimator.fit(trees)`` in Python. It is a
context variable, so it holds inside its ``with`` block only (and only in that
thread or task): no global setting to restore.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # tqdm is imported when a bar starts: importing stays cheap
    from tqdm import tqdm

_SHOWN: ContextVar[bool] = ContextVar("spacy_lpcfg_progress_shown", default=True)


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
