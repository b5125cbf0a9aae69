"""Ctrl-C and SIGTERM between kernel calls, never inside one.

A numba kernel that calls back into Python (to build a constant, to allocate) runs
the pending signal handler there; the KeyboardInterrupt it raises is then reported
by numba as ``SystemError: CPUDispatcher(...) returned a result with an exception
set``, and every ``except KeyboardInterrupt`` clean-up path is skipped. Code that
runs kernels does so inside ``kernel_calls()``: a signal that arrives meanwhile is
recorded and delivered to its handler when the block ends, that is between two
sentences (``Parser.parse``) or two E-step passes, where Python code runs again.

SIGTERM is raised as ``Terminated``, a KeyboardInterrupt, by the command line
(``handle_sigterm``), so it takes the same clean-up paths and exits with 143.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_DEFERRED: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
_depth = 0  # nesting of kernel_calls in the main thread (only it receives signals)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be so that the same clean-up runs."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def handle_sigterm() -> None:
    """Raise SIGTERM as ``Terminated`` in the main thread (the command line's choice:
    a library leaves the process's handlers alone)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


def exit_status(error: BaseException) -> int:
    """The shell's exit status for an interruption: 128 + the signal's number."""
    return 128 + (signal.SIGTERM if isinstance(error, Terminated) else signal.SIGINT)


def ignore_further_signals() -> None:
    """Ignore SIGINT and SIGTERM from now on: the command line calls it once it has
    reported an interruption and is exiting with ``exit_status``, so that a second
    signal (or a late one still pending) cannot turn that exit into another
    interruption or a kill by the signal's default action."""
    if threading.current_thread() is threading.main_thread():
        for sig in _DEFERRED:
            signal.signal(sig, signal.SIG_IGN)


@contextmanager
def kernel_calls() -> Iterator[None]:
    """Hold back SIGINT and SIGTERM (those with a Python handler) while the block runs
    kernels; deliver the first that came when it ends without an error.

    Cheap enough to enter once per sentence (two ``sigaction`` calls per signal).
    Outside the main thread, or nested, it only translates numba's SystemError.
    """
    global _depth
    if _depth or threading.current_thread() is not threading.main_thread():
        with _translated():
            yield
        return
    pending: list[int] = []
    handlers: dict[int, Callable[[int, Any], Any]] = {}
    for sig in _DEFERRED:
        handler = signal.getsignal(sig)
        if callable(handler):
            handlers[sig] = handler
    for held in handlers:
        signal.signal(held, lambda signum, frame: pending.append(signum))
    _depth += 1
    try:
        with _translated():
            yield
    finally:
        _depth -= 1
        for held, previous in handlers.items():
            signal.signal(held, previous)
    if pending:
        handlers[pending[0]](pending[0], None)


@contextmanager
def _translated() -> Iterator[None]:
    """A KeyboardInterrupt that numba wrapped in a SystemError, unwrapped (kernels
    run in a thread that is not the main one cannot hold signals back)."""
    try:
        yield
    except SystemError as err:
        cause: BaseException | None = err
        while cause is not None and not isinstance(cause, KeyboardInterrupt):
            cause = cause.__cause__ or cause.__context__
        if cause is None:
            raise
        raise cause.with_traceback(None) from None
