"""The ``spacy-lpcfg`` executable (and ``python -m spacy_lpcfg``).

Signals are taken over before the command line is imported, so that Ctrl-C or
SIGTERM at any moment ends in one line: while it loads, while typer reads the
arguments (typer then exits 130 without a word, SIGTERM too), or in a command.
"""

from __future__ import annotations

import sys


def main() -> None:
    from .interrupts import handle_sigterm

    handle_sigterm()
    try:
        from .cli import app

        app()
    except KeyboardInterrupt as err:  # while loading
        _interrupted(err)
    except SystemExit as done:
        cause = _interruption(done)
        if cause is None:
            raise
        if getattr(cause, "reported", False):  # said once: exit, whatever comes now
            from .interrupts import ignore_further_signals

            ignore_further_signals()
            raise
        _interrupted(cause)


def _interruption(done: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM behind an exit, if there is one."""
    cause: BaseException | None = done
    while cause is not None and not isinstance(cause, KeyboardInterrupt):
        cause = cause.__cause__ or cause.__context__
    return cause


def _interrupted(err: KeyboardInterrupt) -> None:
    from .interrupts import Terminated, exit_status, ignore_further_signals

    what = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
    ignore_further_signals()
    sys.stderr.write(f"{what}: stopped before the end\n")
    sys.exit(exit_status(err))
