"""``spacy-lpcfg render``: trees drawn as SVG pictures on one HTML page."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

import typer

from ..defaults import CEILINGS
from .checks import check_count, check_output_file, refuse_overwrite
from .exits import fail, guarded
from .options import JSON_OPTION, PARSER_OPTIONS, QUIET_OPTION
from .output import summary
from .parsing import load_parser, parser_options, split_tokens


@guarded
def render_command(
    input_path: Path | None = typer.Argument(
        None,
        exists=True,
        help="Bracketed trees (one per line, as 'parse' and 'test --output' write them) or a "
        "treebank file or directory; with --model, tokenised text, one sentence per line. "
        "Default: stdin.",
        show_default=False,
        metavar="INPUT",
    ),
    output: Path = typer.Option(
        ..., "--output", "-o", dir_okay=False, help="HTML page to write ('-': standard output)."
    ),
    model_dir: Path | None = typer.Option(
        None, "--model", exists=True, file_okay=False, help="Parse the text with this model."
    ),
    tagged: bool = typer.Option(
        False, "--tagged", help="With --model: tokens are word/TAG (split at the last '/')."
    ),
    encoding: str | None = typer.Option(
        None, "--encoding", help="Input encoding (default: UTF-8, or a treebank format's own)."
    ),
    scheme: str | None = typer.Option(
        None, "--scheme", help="Label notation: penn, floresta or cess (default: the input's)."
    ),
    title: str | None = typer.Option(None, "--title", help="Page title (default: input name)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N trees."),
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
    as_json: bool = JSON_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Draw constituency trees as SVG pictures on one HTML page, each under its sentence.

    Long sentences make wide trees: the page scrolls them sideways.
    """
    from ..pictures import html_page, render_trees
    from ..trees.labels import SCHEMES

    if scheme is not None and scheme not in SCHEMES:
        fail(f"--scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    check_count(limit, "--limit", 1, CEILINGS.trees)
    to_stdout = str(output) == "-"
    if to_stdout and as_json:
        fail("-o - writes the page to standard output: --json has no room there", 2)
    if not to_stdout:
        check_output_file(output, "the page")
        refuse_overwrite(output, "the page", [input_path, model_dir])
    name = str(input_path) if input_path else "stdin"
    if input_path is not None and model_dir is not None and input_path.is_dir():
        fail(f"{name} is a directory: with --model, give a text file")
    if model_dir is None:
        trees, scheme = _bracketed_trees(input_path, encoding, scheme, limit)
        captions = [" ".join(tree.words()) for tree in trees]
    else:
        parser = load_parser(model_dir, parser_options(decoder, threshold, max_length))
        scheme = scheme or parser.model.label_scheme
        trees, captions = [], []
        text = _decode_input(input_path, encoding or "utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if limit and len(trees) >= limit:
                break
            try:
                words, tags = split_tokens(line, tagged)
            except ValueError as err:
                fail(f"{name}, line {number}, {err}")
            trees.append(parser.parse(words, tags).tree)
            captions.append(" ".join(words))
    if not trees:
        fail(f"no trees in {name}")
    pictures = []
    for number, (tree, caption) in enumerate(zip(trees, captions), 1):
        try:
            pictures.append((render_trees(tree, scheme=scheme), caption))
        except ValueError as err:
            fail(f"{name}, tree {number}: {err}")
    page = html_page(pictures, title=title or f"Constituency trees: {name}")
    if to_stdout:
        sys.stdout.write(page)
        return
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as err:
        fail(f"cannot write the page to {output}: {err.strerror or err}")
    summary(as_json, quiet, f"{len(pictures)} tree(s) -> {output}",
             {"trees": len(pictures), "output": str(output)})  # fmt: skip


def _decode_input(path: Path | None, encoding: str) -> str:
    """The text of a file (or stdin); a decoding error names file, line and column."""
    from ..trees.formats.text import decode_text, read_text

    try:
        if path is not None:
            return read_text(path, encoding)
        return decode_text(sys.stdin.buffer.read(), encoding, "stdin")
    except ValueError as err:  # TreebankFormatError, unknown encoding
        fail(str(err))


def _bracketed_trees(path: Path | None, encoding: str | None, scheme: str | None, limit):
    """``(trees, scheme)`` from a treebank file or directory, or bracketed trees on stdin."""
    from ..trees.brackets import iter_raw_trees, raw_to_tree
    from ..trees.formats.reader import TreebankReader
    from ..trees.normalize import normalize

    try:
        if path is not None:
            reader = TreebankReader(path, encoding=encoding)
            return list(islice(reader, limit)), scheme or reader.scheme
        text = _decode_input(None, encoding or "utf-8")
        trees = []
        for raw, line in iter_raw_trees(text, path="stdin"):
            tree = normalize(raw_to_tree(raw, path="stdin", line=line), scheme or "penn")
            if tree is not None:
                trees.append(tree)
            if limit and len(trees) >= limit:
                break
        return trees, scheme or "penn"
    except ValueError as err:  # TreebankFormatError, unknown encoding
        fail(str(err))
