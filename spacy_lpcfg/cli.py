"""The ``spacy-lpcfg`` command line (also ``python -m spacy_lpcfg``).

Thin wrappers over library functions: argument parsing, output formatting and
exit codes only. ``--json`` output is the only thing written to stdout;
progress and messages go to stderr. Heavy modules are imported inside the
commands so ``--help`` stays fast.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import typer

app = typer.Typer(
    name="spacy-lpcfg",
    help="Train, run and evaluate latent-variable PCFG constituency parsers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DATA_DIR_OPTION = typer.Option(
    None,
    "--data-dir",
    help="Treebank data directory (default: $SPACY_LPCFG_DATA).",
    show_default=False,
)


def _print_json(payload: dict) -> None:
    # NaN is not JSON: EVALB's "-nan" becomes null.
    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in payload.items()}
    sys.stdout.write(json.dumps(clean, indent=2, ensure_ascii=False) + "\n")


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def stats(
    corpus: str = typer.Argument(..., help="Corpus name (ptb_sample, icepahc, ...) or treebank path."),
    split: str | None = typer.Option(None, "--split", help="train, dev or test (default: all)."),
    data_dir: Path | None = DATA_DIR_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Treebank statistics: trees, tokens, vocabulary, labels, function tags, lengths."""
    from .corpora import open_treebank
    from .errors import DataNotFoundError, TreebankFormatError
    from .trees.normalize import NormalizeOptions
    from .trees.stats import treebank_stats

    # Read with empty elements and indices kept so they can be counted; the
    # statistics normalise before counting anything else.
    raw = NormalizeOptions(remove_empty=False, strip_indices=False)
    try:
        trees, scheme = open_treebank(corpus, split, data_dir=data_dir, options=raw)
        result = treebank_stats(trees, scheme)
    except (DataNotFoundError, TreebankFormatError, ValueError) as err:
        _fail(str(err))
    if as_json:
        _print_json(result)
        return
    for key, value in result.items():
        if isinstance(value, dict):
            top = sorted(value.items(), key=lambda kv: -kv[1])[:15]
            value = ", ".join(f"{k} {v}" for k, v in top) + (" ..." if len(value) > 15 else "")
        elif isinstance(value, float):
            value = f"{value:.2f}"
        typer.echo(f"{key:<32} {value}")


@app.command()
def evaluate(
    gold: Path = typer.Argument(..., exists=True, dir_okay=False, help="Gold trees, one per line."),
    test: Path = typer.Argument(..., exists=True, dir_okay=False, help="Parsed trees, one per line."),
    params: str = typer.Option("collins", "--params", help="collins, spmrl or a .prm file."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score parsed trees against gold trees with EVALB semantics (EVALB's output format)."""
    from .evaluation import evaluate_files, get_params

    try:
        result = evaluate_files(gold, test, get_params(params))
    except (OSError, ValueError) as err:
        _fail(str(err))
    for message in result.messages:
        typer.echo(message, err=True)
    if as_json:
        _print_json(result.to_dict())
    else:
        sys.stdout.write(result.format())
    if result.aborted:
        raise typer.Exit(1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
