"""``spacy-lpcfg convert``: treebank trees written as spaCy training data (.spacy)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from .checks import check_output_dir, corpus_inputs, refuse_overwrite
from .exits import fail, guarded
from .options import DATA_DIR_OPTION, JSON_OPTION, QUIET_OPTION, TREEBANK_ENCODING_OPTION
from .output import print_json


@guarded
def convert(
    corpus: str = typer.Argument(
        ..., help="Corpus name (ptb_sample, icepahc, ...) or treebank path."
    ),
    output_dir: Path = typer.Argument(..., help="Where to write the .spacy files."),
    split: str | None = typer.Option(
        None, "--split", help="Only this split of a named corpus (default: train, dev and test)."
    ),
    data_dir: Path | None = DATA_DIR_OPTION,
    functions: bool = typer.Option(True, "--functions/--no-functions", help="Keep function tags."),
    spans_key: str = typer.Option("constituents", "--spans-key", help="Span group key."),
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Write treebank trees as spaCy training data: OUTPUT_DIR/{train,dev,test}.spacy.

    One Doc per tree, with the treebank's tokens, POS tags in token.tag_ and the
    constituents in doc.spans[SPANS_KEY]. A treebank path gives OUTPUT_DIR/<name>.spacy.
    """
    from ..corpora import CORPORA, SPLITS, load_splits, open_treebank
    from ..errors import Errors
    from ..pipeline.readers import read_treebank, trees_to_docbin
    from ..trees.formats import FORMAT_ENCODINGS

    check_output_dir(output_dir)
    if corpus in CORPORA:
        scheme = CORPORA[corpus].scheme
        if encoding is not None:
            used = FORMAT_ENCODINGS[CORPORA[corpus].format]
            fail(Errors.E023.format(name=corpus, encoding=used))
        names = [split] if split else list(SPLITS)
    else:
        if corpus.endswith(".spacy"):
            fail(f"{corpus} is a .spacy file: it is spaCy training data already")
        names = [_convert_name(corpus)]
    inputs = corpus_inputs(corpus, data_dir)
    for name in names:
        refuse_overwrite(output_dir / f"{name}.spacy", "the spaCy data", inputs)
    try:
        if corpus in CORPORA:
            if split:  # one split (read_treebank checks its name)
                trees, _ = read_treebank(corpus, split, data_dir=data_dir, keep_functions=functions)
                outputs = {split: trees}
            else:  # all three, reading the corpus once
                outputs = load_splits(corpus, data_dir=data_dir, keep_functions=functions)
        else:
            trees, scheme = open_treebank(corpus, keep_functions=functions, encoding=encoding)
            outputs = {_convert_name(corpus): trees}
    except (OSError, ValueError) as err:  # missing data, bad files, bad trees
        fail(str(err))
    output_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, trees in outputs.items():
        target = output_dir / f"{name}.spacy"
        docbin = trees_to_docbin(trees, scheme, spans_key=spans_key)
        # Written beside the target and renamed: a failed or interrupted run leaves no
        # partial file.
        partial = target.with_name(f".{target.name}.partial")
        try:
            docbin.to_disk(partial)
            os.replace(partial, target)
        except BaseException as err:
            partial.unlink(missing_ok=True)
            if isinstance(err, OSError):
                fail(f"cannot write to {output_dir}: {err.strerror or err}")
            raise
        written[name] = {"trees": len(trees), "path": str(target)}
        if not as_json and not quiet:
            typer.echo(f"{len(trees)} trees -> {target}", err=True)
    if as_json:
        print_json({"outputs": written})


def _convert_name(corpus: str) -> str:
    """The name of the .spacy file ``convert`` writes for a treebank path."""
    return Path(corpus).name.split(".")[0] or "corpus"
