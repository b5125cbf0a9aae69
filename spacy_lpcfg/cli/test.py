"""``spacy-lpcfg test``: a treebank split parsed from its gold tokens and scored."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import typer

from ..trees import Tree
from .checks import check_limit, check_model_dir, check_output_file, corpus_inputs, refuse_overwrite
from .exits import fail, guarded
from .options import DATA_DIR_OPTION, PARSER_OPTIONS, TREEBANK_ENCODING_OPTION
from .output import print_json
from .parsing import load_parser, parser_options


@guarded
def test_command(
    model_dir: Path = typer.Argument(..., help="A trained model."),
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    split: str = typer.Option("test", "--split", help="Split of a named corpus."),
    data_dir: Path | None = DATA_DIR_OPTION,
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
    ensemble_threshold: float = PARSER_OPTIONS["ensemble_threshold"],
    params: str = typer.Option(
        "collins", "--params", help="EVALB parameters: collins, spmrl or a .prm file."
    ),
    output: Path | None = typer.Option(
        None, "--output", help="Also write the parses here, one per line."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N (>= 1) sentences."),
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Parse a treebank split from its gold tokens (no gold tags) and score it with EVALB.

    EVALB's figures count categories (the corpus's function tags stripped); the last
    line gives the F1 with full labels (NP-SBJ) too (spacy_lpcfg.evaluate).
    """
    from ..corpora import open_treebank
    from ..evaluation import evaluate, get_params

    # Everything that can fail fails before the parsing starts.
    check_limit(limit)
    check_model_dir(model_dir)
    if output is not None:
        check_output_file(output, "the parses")
        params_file = Path(params) if params not in ("collins", "spmrl") else None
        inputs = [model_dir, params_file, *corpus_inputs(corpus, data_dir)]
        refuse_overwrite(output, "the parses", inputs)
    parser = load_parser(
        model_dir,
        parser_options(decoder, threshold, max_length, ensemble_threshold=ensemble_threshold),
    )
    try:
        # Penn brackets are every treebank's exchange format: a file of them holds the
        # model's labels (SUBJ+np for a Floresta model), read and scored as such.
        bracket_scheme = parser.model.label_scheme
        gold, scheme = open_treebank(
            corpus, split, data_dir=data_dir, encoding=encoding, bracket_scheme=bracket_scheme
        )
        evalb = get_params(params)
    except (OSError, ValueError) as err:  # missing data, bad files, bad parameters
        fail(str(err))
    gold = gold[:limit]
    scores = evaluate(parser, gold, scheme=scheme, params=evalb, progress=True)
    if as_json:
        print_json(scores.to_dict())
    else:
        sys.stdout.write(scores.evalb.format())
        typer.echo(
            f"{len(gold)} sentences in {scores.seconds:.1f} s "
            f"({len(gold) / cast(float, scores.seconds):.1f}/s), fallbacks: {dict(scores.fallbacks) or 0}; "
            f"F1 with function labels {scores.function_fscore:.2f}",
            err=True,
        )
        if scores.dual is not None:
            sentences, certificates, iterations = scores.dual
            typer.echo(
                f"dual decomposition: certificates for {certificates} of {sentences} "
                f"sentences, {iterations / sentences:.1f} iterations on average",
                err=True,
            )
    trees = cast("list[Tree]", scores.parses)  # evaluate's parses are all trees
    if output is not None:  # after the scores are out, so a late failure loses nothing
        try:
            output.write_text("".join(tree.pformat() + "\n" for tree in trees), encoding="utf-8")
        except OSError as err:
            fail(f"cannot write the parses to {output}: {err.strerror or err}")
