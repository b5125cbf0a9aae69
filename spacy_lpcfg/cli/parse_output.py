"""How parse reads its input and writes its trees: line by line as they come, the
parser's unknown-tag warning once at the end; and parsing with a bracketer."""

from __future__ import annotations

import json
import re
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import typer

from .exits import fail
from .parsing import split_tokens


def print_trees(
    input_file: Path | None, encoding: str, tagged: bool, parse_all, as_json: bool = False
) -> None:
    """Print ``parse_all(sentences)``, one tree (or an empty line) per input line, as
    they come; a malformed or undecodable line stops the input there: the lines
    before it are printed, then the error."""
    from ..errors import TreebankFormatError
    from ..trees.formats.text import iter_lines

    name = str(input_file) if input_file else "stdin"
    stream = input_file.open("rb") if input_file else sys.stdin.buffer
    problems: list[str] = []

    def sentences():
        """(words, tags) per line, None for a line without words."""
        try:
            for number, line in enumerate(iter_lines(stream, encoding, name), 1):
                if not line.strip():
                    yield None
                    continue
                try:
                    yield split_tokens(line, tagged)
                except ValueError as err:
                    problems.append(f"{name}, line {number}, {err}")
                    return
        except (OSError, TreebankFormatError) as err:  # unreadable or undecodable input
            problems.append(str(err))

    lines = sentences()
    try:
        for tree in parse_all(lines):
            if as_json:
                tree = json.dumps({"tree": tree or None}, ensure_ascii=False)
            sys.stdout.write(tree + "\n")
            sys.stdout.flush()
    finally:
        lines.close()  # before its stream: the reader lets go of it first
        if input_file is not None:
            stream.close()
    if problems:
        fail(problems[0])


def bracketer_parse(model_dir: Path):
    """``parse`` with an unsupervised bracketer: one unlabelled tree per line."""
    from ..unsupervised import load_bracketer

    try:
        bracketer = load_bracketer(model_dir)
    except (OSError, ValueError) as err:
        fail(f"{model_dir}: not a readable bracketer ({err})")

    def parse_all(sentences):
        for sentence in sentences:
            if sentence is None:
                yield ""
                continue
            words, tags = sentence
            tokens = list(zip(words, tags)) if tags else words
            yield bracketer.predict([tokens])[0].pformat()

    return parse_all


def noting_tags(parser, sentences):
    """The sentences, their tags noted by ``parser`` for the end-of-run W301 warning."""
    for sentence in sentences:
        if sentence is not None and sentence[1] is not None:
            parser.note_unknown_tags(*sentence)
        yield sentence


@contextmanager
def unknown_tags_at_end(parser):
    """Hold back the parser's first unknown-tag warning (W301) during the block and
    report every such token once at its end."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=re.escape("[LPCFG-W301]"))
        yield
    _report_unknown_tags(parser)


def _report_unknown_tags(parser) -> None:
    """Print the parser's unknown-tag warning (W301) for a whole run, if there is one."""
    message = parser.unknown_tags_warning()
    if message:
        typer.echo(f"warning: {message}", err=True)
