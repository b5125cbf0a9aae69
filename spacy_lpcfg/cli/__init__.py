"""The ``spacy-lpcfg`` command line (also ``python -m spacy_lpcfg``).

One module per command, each a thin wrapper over library functions: argument
parsing, checks before any work, output formatting and exit codes only. ``--json``
output is the only thing written to stdout; progress and messages go to stderr.
Heavy modules are imported inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import typer

from .combine import combine
from .convert import convert
from .evaluate import evaluate
from .optimize import optimize
from .parse import parse
from .plot import plot_app
from .render import render_command
from .stats import stats
from .test import test_command
from .train import train

app = typer.Typer(
    name="spacy-lpcfg",
    help="Train, run and evaluate latent-variable PCFG constituency parsers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        from ..about import __version__

        typer.echo(f"spacy-lpcfg {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Train, run and evaluate latent-variable PCFG constituency parsers."""
    from ..progress import log_progress_to_stderr

    log_progress_to_stderr()  # long steps in a log: a line every 30 s, with ETA


# In the order of `spacy-lpcfg --help` and of the reference page generated from it
# (typer lists the plot group after the commands).
app.command("stats")(stats)
app.command("evaluate")(evaluate)
app.command("convert")(convert)
app.command("train")(train)
app.command("combine")(combine)
app.command("parse")(parse)
app.command("test")(test_command)
app.command("render")(render_command)
app.command("optimize")(optimize)
app.add_typer(plot_app, name="plot")


def main() -> None:
    """The command line without the executable's signal set-up (``console.main``)."""
    app()
