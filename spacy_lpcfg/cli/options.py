"""Options that several commands share, declared once so that they read the same."""

from __future__ import annotations

import typer

from .. import defaults
from ..decode.registry import decoder_names

DATA_DIR_OPTION = typer.Option(
    None,
    "--data-dir",
    help="Treebank data directory (default: $SPACY_LPCFG_DATA).",
    show_default=False,
)
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object (a summary).")
QUIET_OPTION = typer.Option(False, "--quiet", "-q", help="No summary line (errors still show).")
TREEBANK_ENCODING_OPTION = typer.Option(
    None,
    "--encoding",
    help="Encoding of a treebank path's files (default: UTF-8; Floresta and CESS-ESP "
    "files: latin-1). Named corpora are read in their own.",
    show_default=False,
)
LANGUAGE_OPTION = typer.Option(
    None,
    "--language",
    help=f"Language code (default: corpus's, else {defaults.LEXICON.language}).",
)
TRAIN_LIMIT_OPTION = typer.Option(
    None, "--limit", help="Train on the first N (>= 1) trees only.", show_default=False
)

# The decoding options of parse, test and render.
PARSER_OPTIONS = {
    "decoder": typer.Option(
        defaults.DECODER,
        "--decoder",
        help=f"A grammar: {', '.join(decoder_names('grammar'))}; an ensemble also "
        f"{', '.join(decoder_names('ensemble'))}; a model with members (combine): "
        f"{', '.join(decoder_names('members'))}. auto: the decoder stored with the model, "
        "else product_mbr for an ensemble, mbr for a latent or spectral model (unary "
        "chains collapsed), else max_rule.",
    ),
    "threshold": typer.Option(
        defaults.PRUNE_THRESHOLD, "--prune-threshold", help="Posterior threshold of pruning."
    ),
    "max_length": typer.Option(
        defaults.MAX_LENGTH, "--max-length", help="Longer sentences get a flat tree."
    ),
    "ensemble_threshold": typer.Option(
        defaults.ENSEMBLE_PRUNE_THRESHOLD,
        "--ensemble-threshold",
        help="Ensembles: grammars after the first parse the items whose posterior under "
        "the first is above this (0: all parse the pruning passes' items).",
    ),
}
