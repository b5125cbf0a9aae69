"""``spacy-lpcfg evaluate``: parsed trees scored against gold trees, as EVALB does, or
as unlabelled brackets (unsupervised parsing)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..defaults import CEILINGS
from .checks import check_count, check_input_file
from .exits import fail, guarded
from .output import print_json


@guarded
def evaluate(
    gold: Path = typer.Argument(..., help="Gold trees, one per line."),
    test: Path = typer.Argument(..., help="Parsed trees, one per line."),
    params: str = typer.Option("collins", "--params", help="collins, spmrl or a .prm file."),
    encoding: str | None = typer.Option(
        None,
        "--encoding",
        help="Encoding of both files (default: words compare byte for byte, as in EVALB; "
        "a UTF-8 byte-order mark is ignored).",
        show_default=False,
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    unlabeled: bool = typer.Option(
        False,
        "--unlabeled",
        help="Unlabelled bracketing as in unsupervised parsing: punctuation removed, "
        "without the sentence span and single words, micro and per-sentence figures.",
    ),
    max_length: int | None = typer.Option(
        None,
        "--max-length",
        help="With --unlabeled: only sentences of at most N words without punctuation (10: WSJ10).",
        show_default=False,
    ),
) -> None:
    """Score parsed trees against gold trees with EVALB semantics (EVALB's output format)."""
    from ..evaluation import evaluate_files, get_params

    check_input_file(gold)
    check_input_file(test)
    if max_length is not None and not unlabeled:
        fail("--max-length is an option of --unlabeled scoring (EVALB's own cut-off is in "
              "its parameter file: --params)", 2)  # fmt: skip
    check_count(max_length, "--max-length", 1, CEILINGS.sentence_length)
    if unlabeled:
        _evaluate_unlabeled(gold, test, encoding or "utf-8", max_length, as_json)
        return
    try:
        result = evaluate_files(gold, test, get_params(params), encoding=encoding)
    except (OSError, ValueError) as err:  # unreadable or undecodable files, bad parameters
        fail(str(err))
    for message in result.messages:
        typer.echo(message, err=True)
    if as_json:
        print_json(result.to_dict())
    else:
        sys.stdout.write(result.format())
    if result.aborted:
        raise typer.Exit(1)


def _evaluate_unlabeled(
    gold: Path, test: Path, encoding: str, max_length: int | None, as_json: bool
) -> None:
    from dataclasses import asdict

    from ..evaluation.unlabeled import unlabeled_scores
    from ..trees.brackets import parse_tree
    from ..trees.formats.text import read_text

    trees = []
    for path in (gold, test):
        try:
            # lines end at "\n" only, as EVALB reads them (not at \x1c-\x1f, \x85...)
            text = read_text(path, encoding).replace("\r\n", "\n")
            lines = [line for line in text.split("\n") if line.strip()]
            found = []
            for number, line in enumerate(lines, 1):
                try:
                    found.append(parse_tree(line))
                except ValueError as err:
                    fail(f"{path}, tree {number}: {err}")
        except (OSError, ValueError) as err:
            fail(str(err))
        trees.append(found)
    if len(trees[0]) != len(trees[1]):
        fail(f"{gold} has {len(trees[0])} trees, {test} has {len(trees[1])}")
    try:
        scores = unlabeled_scores(trees[0], trees[1], max_length=max_length)
    except ValueError as err:  # other words in a pair of trees
        fail(str(err))
    if as_json:
        print_json(asdict(scores))
        return
    bound = "all sentences" if max_length is None else f"sentences of <= {max_length} words"
    typer.echo(f"unlabelled brackets, {bound} ({scores.n_sentences} scored)")
    typer.echo(
        f"micro         P {scores.precision:6.2f}  R {scores.recall:6.2f}  F1 {scores.f1:6.2f}"
    )
    typer.echo(
        f"per sentence  P {scores.sentence_precision:6.2f}  R {scores.sentence_recall:6.2f}  "
        f"F1 {scores.sentence_f1:6.2f}"
    )
