"""``spacy-lpcfg parse``: tokenised sentences parsed, one tree per line."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from pathlib import Path

import typer

from ..defaults import CEILINGS
from .checks import check_count, check_input_file, check_model_dir
from .exits import fail, guarded
from .options import PARSER_OPTIONS
from .parse_output import bracketer_parse, noting_tags, print_trees, unknown_tags_at_end
from .parsing import installed_pipeline_model, load_parser, parser_options


@guarded
def parse(
    model_dir: Path = typer.Argument(
        ..., help="A trained model, or an installed pipeline package (en_lpcfg_ptb_sample)."
    ),
    input_file: Path | None = typer.Argument(
        None,
        help="Tokenised text, one sentence per line (default: stdin).",
        show_default=False,
    ),
    tagged: bool = typer.Option(
        False, "--tagged", help="Tokens are word/TAG (split at the last '/'): tags constrain."
    ),
    encoding: str = typer.Option(
        "utf-8", "--encoding", help="Input encoding (a UTF-8 byte-order mark is ignored)."
    ),
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
    ensemble_threshold: float = PARSER_OPTIONS["ensemble_threshold"],
    n_process: int = typer.Option(
        1,
        "--n-process",
        help="Parse in this many processes (output in input order); at most the CPUs "
        "and, for a file, its lines.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help='One JSON object per line: {"tree": "(TOP ...)"} (null: no words).'
    ),
    kbest: int | None = typer.Option(
        None,
        "--kbest",
        help="The K best trees of each sentence, as the Berkeley parser's -kbest writes "
        "them: K lines 'score<TAB>tree', then an empty line (viterbi, max_rule and "
        "variational decoders of single grammars).",
        show_default=False,
    ),
) -> None:
    """Parse tokenised sentences (one per line) and print one Penn-bracketed tree per line.

    Words holding brackets are written with the Penn Treebank escapes (f(x) ->
    f-LRB-x-RRB-), control characters as their code point (ESC -> -U+001B-), so that
    no tree can move a terminal's cursor; spacy_lpcfg.trees.brackets.unescape_word
    reads both back.
    """
    from ..trees.formats.text import check_encoding

    model_dir = installed_pipeline_model(model_dir)
    check_model_dir(model_dir)
    if input_file is not None:
        check_input_file(input_file)
        _refuse_stdout_to(input_file)
    try:
        check_encoding(encoding)
    except ValueError as err:
        fail(str(err))
    if n_process < 1:
        fail(f"--n-process must be at least 1, not {n_process}", 2)
    check_count(kbest, "--kbest", 1, CEILINGS.kbest)
    if kbest is not None and as_json:
        fail("--kbest writes its own format: leave out --json", 2)
    n_process = _processes(n_process, input_file)
    if (model_dir / "bracketer.json").is_file():  # train --estimator spectral_unsup...
        print_trees(input_file, encoding, tagged, bracketer_parse(model_dir), as_json)
        return
    options = parser_options(decoder, threshold, max_length, ensemble_threshold=ensemble_threshold)
    parser = load_parser(model_dir, options)
    if kbest is not None:
        try:
            parser.check_kbest(kbest)  # before any input is read
        except ValueError as err:
            fail(str(err), 2)
    with ExitStack() as workers:
        parse_all = None
        if n_process > 1:
            from ..decode.processes import parsing_processes

            parse_all = workers.enter_context(
                parsing_processes(model_dir, n_process, options, kbest=kbest, parser=parser)
            )

        def trees(sentences):
            if parse_all is not None:  # the workers' warnings are muted: noted here
                return parse_all(noting_tags(parser, sentences))
            return ("" if one is None else _one_parse(parser, one, kbest) for one in sentences)

        with unknown_tags_at_end(parser):  # tags the grammar lacks: one warning, at the end
            print_trees(input_file, encoding, tagged, trees, as_json)


def _one_parse(parser, sentence, kbest: int | None) -> str:
    """One tree, or with ``kbest`` the k-best block (``decode.kbest.format_kbest``)."""
    if kbest is None:
        return parser.parse(*sentence).tree.pformat()
    from ..decode.kbest import format_kbest

    return format_kbest(parser.kbest(*sentence, k=kbest)).rstrip("\n") + "\n"


def _refuse_stdout_to(input_file: Path) -> None:
    """Fail when standard output is the input file (``parse m in.txt >> in.txt`` would
    read its own trees back without end)."""
    try:
        same = os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(input_file))
    except (OSError, ValueError, AttributeError):  # no real stdout (a test runner)
        return
    if same:
        fail(f"standard output is the input file {input_file}: write the trees elsewhere")


def _processes(n_process: int, input_file: Path | None) -> int:
    """``--n-process`` capped at the CPUs this process may use and at a file's lines
    (each worker is an interpreter of its own), with a note when capped."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    capped = min(n_process, cpus or 1)
    if input_file is not None and capped > 1:
        with input_file.open("rb") as lines:
            capped = min(capped, max(1, sum(1 for line in lines if line.strip())))
    if capped < n_process:
        typer.echo(f"note: parsing in {capped} processes, not {n_process}", err=True)
    return capped
