"""``spacy-lpcfg stats``: a treebank's statistics."""

from __future__ import annotations

from pathlib import Path

import typer

from .exits import fail, guarded
from .options import DATA_DIR_OPTION, TREEBANK_ENCODING_OPTION
from .output import print_json


@guarded
def stats(
    corpus: str = typer.Argument(
        ..., help="Corpus name (ptb_sample, icepahc, ...) or treebank path."
    ),
    split: str | None = typer.Option(None, "--split", help="train, dev or test (default: all)."),
    data_dir: Path | None = DATA_DIR_OPTION,
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Treebank statistics: trees, tokens, vocabulary, labels, function tags, lengths."""
    from ..corpora import open_treebank
    from ..trees.normalize import NormalizeOptions
    from ..trees.stats import treebank_stats

    # Read with empty elements and indices kept so they can be counted; the
    # statistics normalise before counting anything else.
    raw = NormalizeOptions(remove_empty=False, strip_indices=False)
    try:
        trees, scheme = open_treebank(
            corpus, split, data_dir=data_dir, options=raw, encoding=encoding
        )
        result = treebank_stats(trees, scheme)
    except (OSError, ValueError) as err:  # missing data, bad files (TreebankFormatError)
        fail(str(err))
    if as_json:
        print_json(result)
        return
    for key, value in result.items():
        if isinstance(value, dict):
            top = sorted(value.items(), key=lambda kv: -kv[1])[:15]
            value = ", ".join(f"{k} {v}" for k, v in top) + (" ..." if len(value) > 15 else "")
        elif isinstance(value, float):
            value = f"{value:.2f}"
        typer.echo(f"{key:<32} {value}")
