"""How a command ends when it cannot go on: one ``error:`` line and its exit code, one
line after Ctrl-C or SIGTERM, and ``guarded``, every command's last line of defence."""

from __future__ import annotations

import functools
import os
import sys
from typing import NoReturn

import typer

from ..interrupts import Terminated, exit_status


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def interrupted(err: KeyboardInterrupt, message: str, then=None) -> NoReturn:
    """End the command after Ctrl-C (exit 130) or SIGTERM (143) with one line (and
    what ``then()`` says, such as how to resume)."""
    what = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
    typer.echo(f"{what}: {message}", err=True)
    if then is not None:
        then()
    err.reported = True  # type: ignore[attr-defined]  # console.main: said once
    raise typer.Exit(exit_status(err))


def guarded(command):
    """Every command's last line of defence: Ctrl-C and SIGTERM end it with one line
    and 130/143, an error writing the output (a full disk, a closed pipe) with one
    ``error:`` line; commands with more to say catch these first."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            command(*args, **kwargs)
            sys.stdout.flush()  # here, not at exit, where a failed flush is a traceback
        except KeyboardInterrupt as err:
            interrupted(err, "stopped before the end")
        except BrokenPipeError:  # `| head`: the reader has all it wants
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except OSError as err:
            where = f" ({err.filename})" if err.filename else " (standard output)"
            fail(f"cannot write the output{where}: {err.strerror or err}")

    return run


def input_errors() -> tuple[type[Exception], ...]:
    """The errors that come from the user's data or options (reading, transforming,
    fitting), which a command reports in one line."""
    from ..errors import DataNotFoundError, GrammarError, TransformError, TreebankFormatError

    return (DataNotFoundError, TreebankFormatError, TransformError, GrammarError, ValueError)
