"""``spacy-lpcfg combine``: models trained apart joined into one model directory."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import defaults
from ..decode.registry import accepted_names, decoder_for, decoder_names
from .checks import check_model_dir, check_output_dir, refuse_overwrite
from .exits import fail, guarded
from .options import JSON_OPTION, QUIET_OPTION
from .output import summary


@guarded
def combine(
    model_dirs: list[Path] = typer.Argument(
        ..., help="Two or more trained models, then the output directory.", show_default=False
    ),
    decoder: str | None = typer.Option(
        None,
        "--decoder",
        help=f"How the models' parses combine: {', '.join(decoder_names('members'))} "
        "(the product of their bracket marginals, the expected recall of their mean: for "
        "spectral models, or dual decomposition; product and mbr name the first two). "
        f"Default: {decoder_for(defaults.MEMBER_DECODER, members=True).name}; models of one grammar structure (other "
        "seeds) become one ensemble, decoded by product_mbr unless a product is asked for.",
        show_default=False,
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Combine models of different languages or treebanks (refused otherwise).",
    ),
    as_json: bool = JSON_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Join models trained apart into one model directory that test, parse and add_pipe
    use like any other.

    The models may differ in binarisation, Markov orders, function tags kept or
    stripped, estimator and lexicon; they must come from the same treebank (label
    scheme). Brackets are chosen on categories from all models; function labels
    come from the models that keep them, or from a function labeller: the first
    input trained with --function-labeller lends its labeller (and --function-labels
    setting) to the combination.
    """
    from ..errors import GrammarError
    from ..grammar.model import ParsingModel, check_replaceable, combine_models

    *inputs, output = model_dirs
    if len(inputs) < 2:
        fail("combine needs at least two model directories and an output directory", 2)
    choices = accepted_names("members")[1:]  # "auto" aside: combine stores a decoder
    if decoder is not None and decoder not in choices:
        fail(f"--decoder must be one of {', '.join(choices)}, not {decoder!r}", 2)
    for model_dir in inputs:
        check_model_dir(model_dir)
    check_output_dir(output)
    refuse_overwrite(output, "the combined model", inputs, replaces_dir=True)
    try:
        check_replaceable(output)
        models = [ParsingModel.from_disk(model_dir) for model_dir in inputs]
        combined = combine_models(models, decoder, force=force)
        combined.to_disk(output)
    except GrammarError as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot write the model to {output}: {err.strerror or err}")
    kind = (
        f"{len(combined.parts)} models"
        if combined.members
        else f"one ensemble of {1 + len(combined.ensemble)} grammars"
    )
    line = f"combined into {kind} (decoder {combined.decoder}) -> {output}"
    payload = {"output": str(output), "models": len(combined.parts), "decoder": combined.decoder}
    summary(as_json, quiet, line, payload)
