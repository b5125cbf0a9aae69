"""The ``spacy-lpcfg`` command line (also ``python -m spacy_lpcfg``).

Thin wrappers over library functions: argument parsing, output formatting and
exit codes only. ``--json`` output is the only thing written to stdout;
progress and messages go to stderr. Heavy modules are imported inside the
commands so ``--help`` stays fast.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import sys
import warnings
from collections.abc import Iterable
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import NoReturn

import typer

from . import defaults
from .defaults import CEILINGS
from .errors import excerpt
from .interrupts import Terminated, exit_status
from .recipes import (
    ENSEMBLE_ESTIMATORS,
    ESTIMATORS,
    RECIPES,
    SPLIT_MERGE_ESTIMATORS,
    XBAR_ESTIMATORS,
)

app = typer.Typer(
    name="spacy-lpcfg",
    help="Train, run and evaluate latent-variable PCFG constituency parsers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        from .about import __version__

        typer.echo(f"spacy-lpcfg {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Train, run and evaluate latent-variable PCFG constituency parsers."""
    from .progress import log_progress_to_stderr

    log_progress_to_stderr()  # long steps in a log: a line every 30 s, with ETA


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


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _interrupted(err: KeyboardInterrupt, message: str, then=None) -> NoReturn:
    """End the command after Ctrl-C (exit 130) or SIGTERM (143) with one line (and
    what ``then()`` says, such as how to resume)."""
    what = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
    typer.echo(f"{what}: {message}", err=True)
    if then is not None:
        then()
    err.reported = True  # type: ignore[attr-defined]  # console.main: said once
    raise typer.Exit(exit_status(err))


def guarded(command):
    """Every command's last line of defence: Ctrl-C and SIGTERM end it with one line
    and 130/143, an error writing the output (a full disk, a closed pipe) with one
    ``error:`` line; commands with more to say catch these first."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            command(*args, **kwargs)
            sys.stdout.flush()  # here, not at exit, where a failed flush is a traceback
        except KeyboardInterrupt as err:
            _interrupted(err, "stopped before the end")
        except BrokenPipeError:  # `| head`: the reader has all it wants
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except OSError as err:
            where = f" ({err.filename})" if err.filename else " (standard output)"
            _fail(f"cannot write the output{where}: {err.strerror or err}")

    return run


def _check_count(value: int | None, option: str, low: int, high: int | float) -> None:
    """Fail (exit 2, before any work) unless ``low <= value <= high``; None passes."""
    if value is not None and not low <= value <= high:
        _fail(f"{option} must be from {low} to {high}, not {value}", 2)


def _corpus_inputs(corpus: str, data_dir: Path | None) -> list[Path]:
    """The files or folders a corpus argument reads: the named corpus's folder in the
    data directory, or the treebank path."""
    from .corpora import CORPORA, resolve_data_dir
    from .errors import DataNotFoundError

    if corpus in CORPORA:
        try:
            return [resolve_data_dir(data_dir) / corpus]
        except DataNotFoundError:
            return []  # nothing to protect: reading will fail with its own message
    return [Path(corpus)]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _same(output: Path, source: Path) -> bool:
    """Whether two paths name one file (through a symbolic or a hard link too)."""
    try:
        return output.resolve() == source.resolve() or output.samefile(source)
    except OSError:  # one of them does not exist
        return False


def _refuse_overwrite(
    output: Path, what: str, inputs: Iterable[Path | None] = (), replaces_dir: bool = False
) -> None:
    """Fail before any work when writing ``what`` to ``output`` could destroy an input:
    ``output`` is an input file, or lies inside an input folder (a model directory, a
    treebank folder); ``replaces_dir``: ``output`` is a folder written anew, which must
    hold no input either."""
    target = output.resolve()
    for source in inputs:
        if source is None or not source.exists():
            continue
        resolved = source.resolve()
        if _same(output, source):
            _fail(f"cannot write {what} to {output}: that would overwrite the input {source}")
        if source.is_dir() and _inside(target, resolved):
            _fail(f"cannot write {what} to {output}: it lies in the input folder {source}")
        if replaces_dir and _inside(resolved, target):
            _fail(f"cannot write {what} to {output}: it holds the input {source}")


JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object (a summary).")
QUIET_OPTION = typer.Option(False, "--quiet", "-q", help="No summary line (errors still show).")


def _summary(as_json: bool, quiet: bool, line: str, payload: dict) -> None:
    """A command's end: its JSON object on stdout, or its line on stderr (not quiet)."""
    if as_json:
        _print_json(payload)
    elif not quiet:
        typer.echo(line, err=True)


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


def _training_language(corpus: str, language: str | None) -> str:
    """``--language``, else the named corpus's language, else the default."""
    from .corpora import CORPORA

    if language:
        return language
    return CORPORA[corpus].lang if corpus in CORPORA else defaults.LEXICON.language


def _check_input_file(path: Path) -> None:
    """Fail (one line, before any work) unless ``path`` is a readable file."""
    if not path.exists():
        _fail(f"{path}: no such file")
    if path.is_dir():
        _fail(f"{path} is a directory: give a file")
    if not os.access(path, os.R_OK):
        _fail(f"{path}: permission denied")


def _check_output_file(path: Path, what: str) -> None:
    """Fail before any work when ``what`` could not be written to the file ``path``."""
    where = f"cannot write {what} to {path}"
    if path.is_dir():
        _fail(f"{where}: it is a directory")
    if not path.parent.is_dir():
        _fail(f"{where}: there is no directory {path.parent}")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        _fail(f"{where}: permission denied")


def _check_output_dir(path: Path) -> None:
    """Fail before any work when ``path`` cannot be (made) a writable directory."""
    if path.exists() and not path.is_dir():
        _fail(f"cannot write to {path}: it is a file, not a directory")
    existing = next(folder for folder in (path, *path.absolute().parents) if folder.exists())
    if not existing.is_dir():
        _fail(f"cannot create {path}: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        _fail(f"cannot write to {path}: permission denied in {existing}")


def _check_limit(limit: int | None, option: str = "--limit") -> None:
    if limit is not None and not 1 <= limit <= CEILINGS.trees:
        _fail(
            f"{option} must be from 1 to {CEILINGS.trees}, not {limit} (leave it out to use "
            "every tree)"
        )


@app.command()
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
    from .corpora import open_treebank
    from .trees.normalize import NormalizeOptions
    from .trees.stats import treebank_stats

    # Read with empty elements and indices kept so they can be counted; the
    # statistics normalise before counting anything else.
    raw = NormalizeOptions(remove_empty=False, strip_indices=False)
    try:
        trees, scheme = open_treebank(
            corpus, split, data_dir=data_dir, options=raw, encoding=encoding
        )
        result = treebank_stats(trees, scheme)
    except (OSError, ValueError) as err:  # missing data, bad files (TreebankFormatError)
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
    from .evaluation import evaluate_files, get_params

    _check_input_file(gold)
    _check_input_file(test)
    if max_length is not None and not unlabeled:
        _fail("--max-length is an option of --unlabeled scoring (EVALB's own cut-off is in "
              "its parameter file: --params)", 2)  # fmt: skip
    _check_count(max_length, "--max-length", 1, CEILINGS.sentence_length)
    if unlabeled:
        _evaluate_unlabeled(gold, test, encoding or "utf-8", max_length, as_json)
        return
    try:
        result = evaluate_files(gold, test, get_params(params), encoding=encoding)
    except (OSError, ValueError) as err:  # unreadable or undecodable files, bad parameters
        _fail(str(err))
    for message in result.messages:
        typer.echo(message, err=True)
    if as_json:
        _print_json(result.to_dict())
    else:
        sys.stdout.write(result.format())
    if result.aborted:
        raise typer.Exit(1)


def _evaluate_unlabeled(
    gold: Path, test: Path, encoding: str, max_length: int | None, as_json: bool
) -> None:
    from dataclasses import asdict

    from .evaluation.unlabeled import unlabeled_scores
    from .trees.brackets import parse_tree
    from .trees.formats.text import read_text

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
                    _fail(f"{path}, tree {number}: {err}")
        except (OSError, ValueError) as err:
            _fail(str(err))
        trees.append(found)
    if len(trees[0]) != len(trees[1]):
        _fail(f"{gold} has {len(trees[0])} trees, {test} has {len(trees[1])}")
    try:
        scores = unlabeled_scores(trees[0], trees[1], max_length=max_length)
    except ValueError as err:  # other words in a pair of trees
        _fail(str(err))
    if as_json:
        _print_json(asdict(scores))
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


@app.command()
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
    from .corpora import CORPORA, SPLITS, load_splits, open_treebank
    from .errors import Errors
    from .pipeline.readers import read_treebank, trees_to_docbin
    from .trees.formats import FORMAT_ENCODINGS

    _check_output_dir(output_dir)
    if corpus in CORPORA:
        scheme = CORPORA[corpus].scheme
        if encoding is not None:
            used = FORMAT_ENCODINGS[CORPORA[corpus].format]
            _fail(Errors.E024.format(name=corpus, encoding=used))
        names = [split] if split else list(SPLITS)
    else:
        if corpus.endswith(".spacy"):
            _fail(f"{corpus} is a .spacy file: it is spaCy training data already")
        names = [_convert_name(corpus)]
    inputs = _corpus_inputs(corpus, data_dir)
    for name in names:
        _refuse_overwrite(output_dir / f"{name}.spacy", "the spaCy data", inputs)
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
        _fail(str(err))
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
                _fail(f"cannot write to {output_dir}: {err.strerror or err}")
            raise
        written[name] = {"trees": len(trees), "path": str(target)}
        if not as_json and not quiet:
            typer.echo(f"{len(trees)} trees -> {target}", err=True)
    if as_json:
        _print_json({"outputs": written})


def _convert_name(corpus: str) -> str:
    """The name of the .spacy file ``convert`` writes for a treebank path."""
    return Path(corpus).name.split(".")[0] or "corpus"


def _recipe_options(recipe) -> str:
    """The options of train that give ``recipe`` (those that differ from the defaults)."""
    from dataclasses import fields

    from .recipes import Recipe

    options = []
    for field in fields(Recipe):
        value = getattr(recipe, field.name)
        if value == getattr(Recipe(), field.name):
            continue
        if field.name == "keep_functions":
            options.append("--functions" if value else "--no-functions")
        elif field.name == "function_labeller":
            options.append("--function-labeller" if value else "--no-function-labeller")
        else:
            value = -1 if field.name == "h_markov" and value is None else value
            options.append(f"--{field.name.replace('_', '-')} {value}")
    return " ".join(options)


def _training_recipe(ctx: typer.Context, name: str | None):
    """The Recipe of train's options: the recipe called ``name`` (None: the defaults,
    ``Recipe()``) with the options given on the command line replacing its values
    (the options are named as the recipe's fields)."""
    from dataclasses import fields, replace

    from .recipes import DEFAULT_RECIPE, Recipe, get_recipe

    # by the source's name: typer brings its own copy of click's ParameterSource
    sources = {field.name: ctx.get_parameter_source(field.name) for field in fields(Recipe)}
    given = {
        name: ctx.params[name]
        for name, source in sources.items()
        if source is not None and source.name != "DEFAULT"
    }
    if "h_markov" in given and given["h_markov"] < 0:
        given["h_markov"] = None  # infinite
    try:
        if name is None and given.get("estimator") in XBAR_ESTIMATORS:
            name = given["estimator"]  # its own transforms (X-bar), unless options say otherwise
        if name is not None:
            base = get_recipe(name)
        else:  # without options, the default recipe; an estimator alone: its defaults
            base = Recipe() if "estimator" in given else DEFAULT_RECIPE
        if (
            given.get("n_models", base.n_models) > 1
            and given.get("estimator", base.estimator) not in ENSEMBLE_ESTIMATORS
        ):
            _fail(f"--n-models needs --estimator {' or '.join(ENSEMBLE_ESTIMATORS)}")
        own = [f"--{n.replace('_', '-')}" for n in ("binarization", "v_markov") if n in given]
        own += ["--functions/--no-functions"] if "keep_functions" in given else []
        if own and given.get("estimator", base.estimator) == "combined":
            _fail(
                f"{', '.join(own)} set the transforms of one model; the four-way combination "
                "(train's default) gives each of its members its own: add --estimator mle, "
                "clustering, spectral or split_merge to train one model"
            )
        return replace(base, **given)
    except ValueError as err:  # an unknown recipe or estimator
        _fail(str(err))


# The unsupervised bracketers (``unsupervised.BRACKETERS``, named here so that the CLI
# starts without importing them): trained on the words and tags of the trees only.
BRACKETER_NAMES = ("spectral_unsup", "ccm", "right", "left", "random")


def _train_bracketer(
    name: str,
    corpus: str,
    model_dir: Path,
    split: str,
    data_dir: Path | None,
    encoding: str | None,
    limit: int | None,
    quiet: bool,
) -> None:
    """``train --estimator ccm`` (CCM started from the spectral trees), ``spectral_unsup``
    or a baseline: learn from the sentences' words and POS tags (no brackets are read)
    and save the bracketer."""
    import time

    from .errors import DataNotFoundError, TreebankFormatError
    from .progress import quiet as quiet_bars
    from .unsupervised import BRACKETERS, save_bracketer

    _check_output_dir(model_dir)
    if (
        model_dir.exists()
        and any(model_dir.iterdir())
        and not (model_dir / "bracketer.json").exists()
    ):
        _fail(f"{model_dir} is a non-empty directory that is not a bracketer: not replaced")
    try:
        with quiet_bars(quiet):
            trees, _ = _read_training_trees(corpus, split, data_dir, encoding, limit)
            start = time.perf_counter()
            model = BRACKETERS[name]().fit(trees)
            save_bracketer(model, model_dir)
    except (DataNotFoundError, TreebankFormatError, ValueError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write the bracketer to {model_dir}: {err.strerror or err}")
    if not quiet:
        typer.echo(
            f"trained {name} on the words and tags of {len(trees)} sentences in "
            f"{time.perf_counter() - start:.1f} s -> {model_dir}",
            err=True,
        )


def _read_training_trees(
    corpus: str, split: str, data_dir: Path | None, encoding: str | None, limit: int | None
):
    """``(trees, scheme)``: the first ``limit`` trees (None: all) of a corpus split or a
    treebank path, streamed under a "reading" bar, so that --limit reads only those."""
    from .corpora import CORPORA, iter_corpus, open_treebank
    from .progress import progress
    from .trees.formats import TreebankReader

    if corpus in CORPORA and encoding is None:
        stream, scheme = iter_corpus(corpus, split, data_dir=data_dir), CORPORA[corpus].scheme
    elif corpus not in CORPORA and Path(corpus).exists():
        reader = TreebankReader(corpus, encoding=encoding)
        stream, scheme = reader, reader.scheme
    else:  # not readable as asked: open_treebank raises the error that says why
        trees, scheme = open_treebank(corpus, split, data_dir=data_dir, encoding=encoding)
        return trees[:limit], scheme
    # a comprehension, not list(): a bar's length (the limit) would be taken as a size hint
    trees = [
        tree for tree in progress(islice(stream, limit), desc="reading", total=limit, unit="tree")
    ]
    if not trees:  # open_treebank names the reason (a file without trees)
        return open_treebank(corpus, split, data_dir=data_dir, encoding=encoding)
    return trees, scheme


def _input_errors() -> tuple[type[Exception], ...]:
    """The errors that come from the user's data or options (reading, transforming,
    fitting), which a command reports in one line."""
    from .errors import DataNotFoundError, GrammarError, TransformError, TreebankFormatError

    return (DataNotFoundError, TreebankFormatError, TransformError, GrammarError, ValueError)


def _report_unknown_tags(parser) -> None:
    """Print the parser's unknown-tag warning (W010) for a whole run, if there is one."""
    message = parser.unknown_tags_warning()
    if message:
        typer.echo(f"warning: {message}", err=True)


@contextmanager
def _unknown_tags_at_end(parser):
    """Hold back the parser's first unknown-tag warning (W010) during the block and
    report every such token once at its end."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=re.escape("[LPCFG-W010]"))
        yield
    _report_unknown_tags(parser)


def _labeller_wanted(asked: bool | None, trees, scheme: str) -> bool:
    """A labeller that the recipe brings (not ``--function-labeller``) is left out for
    a treebank without function tags (the summary says so): nothing to learn."""
    from .estimators.function_labels import has_function_tags

    return bool(asked) or has_function_tags(trees, scheme)


def _no_labeller_note(wanted: bool, model) -> str:
    return ", no function labeller (no function tags in the trees)" if wanted and not (
        model.labeller) else ""  # fmt: skip


def _check_training_numbers(**values: int | None) -> None:
    """train's numeric options, each within its documented range (exit 2)."""
    ranges = {
        "h_markov": (-1, CEILINGS.markov),  # -1: infinite
        "v_markov": (1, CEILINGS.markov),
        "rare_threshold": (0, CEILINGS.rare_threshold),
        "n_states": (1, CEILINGS.n_states),
        "n_cycles": (0, CEILINGS.n_cycles),
        "n_models": (1, CEILINGS.n_models),
        "n_jobs": (1, CEILINGS.n_jobs),
        "random_state": (0, 2**32 - 1),  # numpy's seeds
    }
    for name, value in values.items():
        _check_count(value, f"--{name.replace('_', '-')}", *ranges[name])


def _checkpoint_dir(model_dir: Path) -> Path:
    """Where train keeps split-merge checkpoints: beside MODEL_DIR (``to_disk`` replaces
    MODEL_DIR whole), under a name its clean-up of stale leftovers never matches."""
    model_dir = model_dir.absolute()
    return model_dir.parent / f".{model_dir.name}.checkpoints"


def _read_dev(dev: str, corpus: str, data_dir: Path | None, encoding: str | None):
    """--dev: a split of the named corpus, else a treebank path."""
    from .corpora import CORPORA, SPLITS

    if corpus in CORPORA and dev in SPLITS:
        return _read_training_trees(corpus, dev, data_dir, encoding, None)[0]
    return _read_training_trees(dev, "dev", data_dir, encoding, None)[0]


def _fit_split_merge(
    fitter, trees, dev_trees, model_dir: Path, resume: bool, scheme: str, quiet: bool
):
    """Fit with a checkpoint per cycle (and the cycle chosen on dev trees by EVALB F1)."""
    from .decode import Parser
    from .evaluation.parsing import f1_scorer

    folder = _checkpoint_dir(model_dir)
    n_models = fitter.get_params().get("n_models", 1)
    if resume and not quiet:
        cycles = _checkpointed_cycles(folder, n_models)
        if n_models > 1:
            where = "the seeds from " + ", ".join(
                f"{seed}: cycle {cycle}" if cycle else f"{seed}: the start"
                for seed, cycle in cycles.items()
            )
        else:
            cycle = next(iter(cycles.values()))
            where = f"from cycle {cycle}" if cycle else "from the start: no checkpoint"
        typer.echo(f"resuming {where} ({folder})", err=True)

    fitter.set_params(checkpoint_dir=str(folder))
    return fitter.fit(trees, dev_trees, resume=resume, dev_scorer=f1_scorer(Parser, scheme)).model_


def _checkpointed_cycles(folder: Path, n_models: int) -> dict[str, int | None]:
    """The last complete cycle in a checkpoint folder (by its name), or for a product
    (``n_models`` > 1) in each of its seeds' folders (``seed0``...); None: none complete."""
    from .estimators.checkpoints import latest_cycle
    from .estimators.seed_product import SEED_FOLDER

    if n_models == 1:
        return {folder.name: latest_cycle(folder)}
    seeds = [SEED_FOLDER.format(k) for k in range(n_models)]
    return {seed: latest_cycle(folder / seed) for seed in seeds}


def _resume_hint(model_dir: Path, n_models: int) -> None:
    """After Ctrl-C: which cycle is checkpointed and how to go on."""
    folder = _checkpoint_dir(model_dir)
    cycles = _checkpointed_cycles(folder, n_models)
    if all(cycle is None for cycle in cycles.values()):
        typer.echo("no split-merge cycle was complete: nothing to resume", err=True)
        return
    if n_models > 1:
        done = ", ".join(f"{name}: {cycle or 'none'}" for name, cycle in cycles.items())
        what = f"the last complete cycles ({done}) are"
    else:
        what = f"cycle {cycles[folder.name]} is"
    command = " ".join(sys.argv[1:]) if sys.argv[1:2] == ["train"] else "train ..."
    resume = "" if "--resume" in sys.argv else " --resume"
    typer.echo(
        f"{what} checkpointed in {folder}; go on from there with: spacy-lpcfg {command}{resume}",
        err=True,
    )


@app.command()
@guarded
def train(
    ctx: typer.Context,
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    model_dir: Path = typer.Argument(..., file_okay=False, help="Where to write the model."),
    recipe: str | None = typer.Option(
        None,
        "--recipe",
        help="Train a recipe of spacy_lpcfg.recipes: "
        + "; ".join(f"{name} = {_recipe_options(chosen)}" for name, chosen in RECIPES.items())
        + ". Options given on the command line replace its values.",
        show_default=False,
    ),
    estimator: str | None = typer.Option(
        None,
        "--estimator",
        show_default=False,
        help="Default: the recipe 'default' (the product of three split-merge grammars "
        "with a function labeller). Estimator: "
        + ", ".join(ESTIMATORS)
        + "; unsupervised, from words and tags only: "
        + ", ".join(BRACKETER_NAMES),
    ),
    split: str = typer.Option("train", "--split", help="Split of a named corpus to train on."),
    data_dir: Path | None = DATA_DIR_OPTION,
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    limit: int | None = TRAIN_LIMIT_OPTION,
    binarization: str = typer.Option(
        defaults.TRANSFORM.binarization, "--binarization", help="right, left or head."
    ),
    h_markov: int = typer.Option(
        defaults.TRANSFORM.h_markov, "--h-markov", help="Horizontal Markov order (-1: infinite)."
    ),
    v_markov: int = typer.Option(
        defaults.TRANSFORM.v_markov, "--v-markov", help="Vertical Markov order (1: none)."
    ),
    keep_functions: bool = typer.Option(
        defaults.TRANSFORM.keep_functions, "--functions/--no-functions", help="Keep function tags."
    ),
    head_rules: str | None = typer.Option(
        None, "--head-rules", help="collins, ppche, first, last."
    ),
    language: str | None = LANGUAGE_OPTION,
    rare_threshold: int = typer.Option(
        defaults.LEXICON.rare_threshold,
        "--rare-threshold",
        help="Words seen at most this often feed unknown-word classes.",
    ),
    n_states: int | None = typer.Option(
        None,
        "--n-states",
        help=f"Latent states per symbol (spectral: {defaults.SPECTRAL.n_states}, "
        f"clustering: {defaults.CLUSTERING.n_states}, inherit: {defaults.INHERIT.n_states}).",
    ),
    random_state: int = typer.Option(
        defaults.LATENT.random_state,
        "--random-state",
        help="Seed (spectral, clustering, split_merge, inherit).",
    ),
    n_cycles: int | None = typer.Option(
        None,
        "--n-cycles",
        help=f"Split-merge cycles (split_merge: {defaults.SPLIT_MERGE.n_cycles}).",
        show_default=False,
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="split_merge: go on from the last complete cycle of an interrupted run with "
        "the same trees and options (each cycle is checkpointed in .MODEL_DIR.checkpoints "
        "beside MODEL_DIR until the model is written).",
    ),
    dev: str | None = typer.Option(
        None,
        "--dev",
        help="split_merge: a split of the named corpus (dev) or a treebank path; after each "
        f"cycle, parse up to {defaults.SPLIT_MERGE.dev_sample} of its trees and keep the "
        "cycle with the best F1.",
        show_default=False,
    ),
    n_models: int = typer.Option(
        1,
        "--n-models",
        help="Models decoded together: noisy clustering models (clustering), or split-merge "
        "grammars from seeds RANDOM_STATE, RANDOM_STATE + 1... (split_merge, clone_some).",
    ),
    n_jobs: int = typer.Option(
        1,
        "--n-jobs",
        help="split_merge: E-step workers (threads); with --n-models, seeds trained at "
        "once (one process each).",
    ),
    noise: str = typer.Option(
        defaults.NOISE.noise,
        "--noise",
        help="Noise of --n-models: dropout, gaussian, multiplicative.",
    ),
    noise_scale: float = typer.Option(
        defaults.NOISE.noise_scale,
        "--noise-scale",
        help="Dropout probability or relative noise deviation.",
    ),
    function_labeller: bool | None = typer.Option(
        None,
        "--function-labeller/--no-function-labeller",
        show_default=False,
        help="Also fit a function labeller (a logistic regression over each phrase's "
        "category, head, parent and siblings) on the same trees and save it with the "
        "model: parse, test and the spaCy component then put its function tags (NP-SBJ) "
        "on every parse; best with --no-functions (a grammar with fewer symbols). "
        "Default: the recipe's (the default recipe has one).",
    ),
    function_labels: str = typer.Option(
        defaults.FUNCTION_LABELS,
        "--function-labels",
        help="With --function-labeller and a grammar that keeps function tags: whose tags "
        "the parses get: auto (a latent grammar's own, an MLE grammar's the labeller's), "
        "labeller or grammar (its own).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bars and no summary line (errors still show)."
    ),
) -> None:
    """Train a grammar on a treebank and save the model directory.

    Progress bars show on a terminal (stderr), one per step. Interrupted (Ctrl-C),
    it exits with code 130 and leaves MODEL_DIR as it was.
    """
    import time

    from .errors import GrammarError
    from .grammar.model import _check_replaceable, treebank_name
    from .progress import quiet as quiet_bars

    # Everything that can fail fails before the work starts.
    _check_limit(limit)
    _check_training_numbers(
        h_markov=h_markov, v_markov=v_markov, rare_threshold=rare_threshold, n_states=n_states,
        n_cycles=n_cycles, n_models=n_models, n_jobs=n_jobs, random_state=random_state,
    )  # fmt: skip
    inputs = [*_corpus_inputs(corpus, data_dir), *(_corpus_inputs(dev, data_dir) if dev else [])]
    _refuse_overwrite(model_dir, "the model", inputs, replaces_dir=True)
    if function_labels not in defaults.FUNCTION_LABEL_SOURCES:
        choices = ", ".join(defaults.FUNCTION_LABEL_SOURCES)
        _fail(f"--function-labels must be one of {choices}, not {function_labels!r}", 2)
    if function_labeller and ctx.params["estimator"] in BRACKETER_NAMES:
        _fail("--function-labeller needs a grammar: the bracketers have no labels", 2)
    if ctx.params["estimator"] in BRACKETER_NAMES:
        if n_jobs != 1:
            _fail("--n-jobs is an option of --estimator split_merge and clone_some", 2)
        _train_bracketer(
            ctx.params["estimator"], corpus, model_dir, split, data_dir, encoding, limit, quiet
        )
        return
    chosen = _training_recipe(ctx, recipe)
    if (resume or dev is not None) and chosen.estimator not in SPLIT_MERGE_ESTIMATORS:
        _fail("--resume and --dev are options of --estimator split_merge and clone_some", 2)
    if n_jobs != 1 and chosen.estimator not in SPLIT_MERGE_ESTIMATORS:
        _fail("--n-jobs is an option of --estimator split_merge and clone_some", 2)
    _check_output_dir(model_dir)
    try:
        _check_replaceable(model_dir)  # a directory that is not a model is never replaced
    except GrammarError as err:
        _fail(str(err))
    language = _training_language(corpus, language)
    try:
        with quiet_bars(quiet):
            trees, scheme = _read_training_trees(corpus, split, data_dir, encoding, limit)
            spec = chosen.transform_spec(scheme, language, head_rules)
            fitter = chosen.make_estimator(spec, language)
            if chosen.estimator in SPLIT_MERGE_ESTIMATORS:
                fitter.set_params(n_jobs=n_jobs)
            start = time.perf_counter()
            if chosen.estimator in SPLIT_MERGE_ESTIMATORS:
                dev_trees = None if dev is None else _read_dev(dev, corpus, data_dir, encoding)
                model = _fit_split_merge(fitter, trees, dev_trees, model_dir, resume, scheme, quiet)
            else:
                model = fitter.fit(trees).model_
            if chosen.function_labeller and _labeller_wanted(function_labeller, trees, scheme):
                from .estimators.function_labels import attach_function_labeller

                model = attach_function_labeller(model, trees, function_labels=function_labels)
            seconds = time.perf_counter() - start
            model = model.with_treebank(treebank_name(corpus))  # combine compares it
            model.to_disk(model_dir)
            shutil.rmtree(_checkpoint_dir(model_dir), ignore_errors=True)
    except KeyboardInterrupt as err:
        # to_disk cleans up after itself: the previous model (if any) is untouched
        hint = None
        if chosen.estimator in SPLIT_MERGE_ESTIMATORS:
            hint = functools.partial(_resume_hint, model_dir, chosen.n_models)
        _interrupted(err, f"no model written, {model_dir} is as it was", hint)
    except _input_errors() as err:
        _fail(str(err))
    except OSError as err:  # writing the model (reading errors are the ones above)
        _fail(f"cannot write the model to {model_dir}: {err.strerror or err}")
    grammar = model.grammar
    summary = {
        "model_dir": str(model_dir),
        "estimator": chosen.estimator,
        "recipe": recipe,
        "n_models": chosen.n_models,
        "members": len(model.parts),  # models trained apart and decoded together
        "trees": len(trees),
        "symbols": grammar.n_symbols,
        "binary_rules": len(grammar.binary_rules),
        "unary_rules": len(grammar.unary_rules),
        "lexical_rules": len(grammar.lexical_rules),
        "function_labeller": model.labeller is not None,
        "seconds": round(seconds, 3),
    }
    if as_json:
        _print_json(summary)
    elif not quiet:
        typer.echo(
            f"trained {chosen.estimator} on {len(trees)} trees in {seconds:.1f} s: "
            + (f"{len(model.parts)} models, the first with " if len(model.parts) > 1 else "")
            + f"{grammar.n_symbols} symbols, {len(grammar.binary_rules)} binary and "
            f"{len(grammar.unary_rules)} unary rules"
            f"{', a function labeller' if model.labeller else ''}"
            f"{_no_labeller_note(chosen.function_labeller, model)} -> {model_dir}",
            err=True,
        )


@app.command()
@guarded
def combine(
    model_dirs: list[Path] = typer.Argument(
        ..., help="Two or more trained models, then the output directory.", show_default=False
    ),
    decoder: str | None = typer.Option(
        None,
        "--decoder",
        help="How the models' parses combine: product (of their bracket marginals), mbr "
        "(expected recall of their mean; for spectral models) or dual (dual decomposition). "
        f"Default: {defaults.MEMBER_DECODER}, or mbr for models of one grammar structure "
        "(other seeds), which become one ensemble.",
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
    from .decode.members import MEMBER_DECODERS
    from .errors import GrammarError
    from .grammar.model import ParsingModel, _check_replaceable, combine_models

    *inputs, output = model_dirs
    if len(inputs) < 2:
        _fail("combine needs at least two model directories and an output directory", 2)
    if decoder is not None and decoder not in MEMBER_DECODERS:
        _fail(f"--decoder must be one of {', '.join(MEMBER_DECODERS)}, not {decoder!r}", 2)
    for model_dir in inputs:
        _check_model_dir(model_dir)
    _check_output_dir(output)
    _refuse_overwrite(output, "the combined model", inputs, replaces_dir=True)
    try:
        _check_replaceable(output)
        models = [ParsingModel.from_disk(model_dir) for model_dir in inputs]
        combined = combine_models(models, decoder, force=force)
        combined.to_disk(output)
    except GrammarError as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write the model to {output}: {err.strerror or err}")
    kind = (
        f"{len(combined.parts)} models"
        if combined.members
        else f"one ensemble of {1 + len(combined.training['ensemble'])} grammars"
    )
    line = f"combined into {kind} (decoder {combined.decoder}) -> {output}"
    payload = {"output": str(output), "models": len(combined.parts), "decoder": combined.decoder}
    _summary(as_json, quiet, line, payload)


PARSER_OPTIONS = {
    "decoder": typer.Option(
        defaults.DECODER,
        "--decoder",
        help="max_rule, variational, viterbi, mbr, product or product_mbr (ensembles); "
        "auto: product_mbr for an ensemble, mbr for a latent or spectral model (unary "
        "chains collapsed), else max_rule.",
    ),
    "threshold": typer.Option(
        defaults.PRUNE_THRESHOLD, "--prune-threshold", help="Posterior threshold of pruning."
    ),
    "max_length": typer.Option(
        defaults.MAX_LENGTH, "--max-length", help="Longer sentences get a flat tree."
    ),
    "member_threshold": typer.Option(
        defaults.MEMBER_PRUNE_THRESHOLD,
        "--member-threshold",
        help="Ensembles: members after the first parse the items whose posterior under "
        "the first is above this (0: all parse the pruning passes' items).",
    ),
}


def _load_parser(
    model_dir: Path,
    decoder: str,
    threshold: float,
    max_length: int,
    use_tags: str = "auto",
    member_threshold: float = defaults.MEMBER_PRUNE_THRESHOLD,
):
    from .decode.parser import Parser
    from .errors import GrammarError
    from .grammar.model import ParsingModel

    try:
        model = ParsingModel.from_disk(model_dir)
        return Parser(
            model,
            decoder=decoder,
            prune_threshold=threshold,
            member_threshold=member_threshold,
            max_length=max_length,
            use_tags=use_tags,
        )
    except (GrammarError, OSError, ValueError) as err:
        _fail(str(err))


def _check_model_dir(model_dir: Path) -> None:
    """Fail at once (before reading any input) when there is no model directory."""
    if not model_dir.is_dir():
        _fail(f"{model_dir}: no such model directory (train one with 'spacy-lpcfg train')")


def _installed_pipeline_model(name: Path) -> Path:
    """The model of an installed pipeline package named ``name`` (``en_lpcfg_ptb_sample``,
    as ``spacy.load`` takes it) when no such path exists, else ``name``. The compiled
    kernels such a package ships (``kernels/``, projects/pipelines) seed numba's cache,
    as importing the package would (without importing spaCy, which that costs), sparing
    the first parse compiling. An installed package is code, trusted as its import is."""
    import importlib.util

    from . import kernel_cache

    text = str(name)
    if name.exists() or not text.isidentifier():
        return name
    try:
        spec = importlib.util.find_spec(text)
    except (ImportError, ValueError):
        return name
    folders = [] if spec is None else list(spec.submodule_search_locations or ())
    models = sorted(Path(folders[0]).glob("*/lpcfg_parser/model")) if folders else []
    if len(models) != 1:
        return name
    for kernels in sorted(Path(folders[0]).glob("*/kernels")):
        kernel_cache.seed(kernels)
    return models[0]


def _split_tokens(line: str, tagged: bool) -> tuple[list[str], list[str] | None]:
    """The words of a line of input, and with ``tagged`` the tags of its word/TAG tokens
    (split at the last "/"). RAISES ValueError: a token without a word or tag (its
    column and a short excerpt in the message)."""
    tokens = line.split()
    if not tagged:
        return tokens, None
    pairs = [token.rpartition("/") for token in tokens]
    for position, (token, (word, sep, tag)) in enumerate(zip(tokens, pairs)):
        if not (sep and word and tag):
            column = _token_column(line, position)
            raise ValueError(
                f"column {column}: token {excerpt(token)} is not of the form word/TAG "
                "(with --tagged, every token is)"
            )
    return [word for word, _, _ in pairs], [tag for _, _, tag in pairs]


def _token_column(line: str, position: int) -> int:
    """The 1-based column of the whitespace-separated token number ``position``."""
    return next(islice(re.finditer(r"\S+", line), position, None)).start() + 1


@app.command()
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
    member_threshold: float = PARSER_OPTIONS["member_threshold"],
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
    from .trees.formats.text import check_encoding

    model_dir = _installed_pipeline_model(model_dir)
    _check_model_dir(model_dir)
    if input_file is not None:
        _check_input_file(input_file)
        _refuse_stdout_to(input_file)
    try:
        check_encoding(encoding)
    except ValueError as err:
        _fail(str(err))
    if n_process < 1:
        _fail(f"--n-process must be at least 1, not {n_process}", 2)
    _check_count(kbest, "--kbest", 1, CEILINGS.kbest)
    if kbest is not None and as_json:
        _fail("--kbest writes its own format: leave out --json", 2)
    n_process = _processes(n_process, input_file)
    if (model_dir / "bracketer.json").is_file():  # train --estimator spectral_unsup...
        _print_trees(input_file, encoding, tagged, _bracketer_parse(model_dir), as_json)
        return
    parser = _load_parser(
        model_dir, decoder, threshold, max_length, member_threshold=member_threshold
    )
    if kbest is not None:
        try:
            parser.check_kbest(kbest)  # before any input is read
        except ValueError as err:
            _fail(str(err), 2)
    if n_process > 1:
        from .decode.processes import parse_in_processes

        options = {
            "decoder": decoder,
            "prune_threshold": threshold,
            "member_threshold": member_threshold,
            "max_length": max_length,
        }
        with _unknown_tags_at_end(parser):  # noted here: the workers' warnings are muted
            _print_trees(
                input_file,
                encoding,
                tagged,
                lambda sentences: parse_in_processes(
                    model_dir, _noting_tags(parser, sentences), n_process, options, kbest=kbest
                ),
                as_json,
            )
        return
    with _unknown_tags_at_end(parser):  # tags the grammar lacks: one warning, at the end
        _print_trees(
            input_file,
            encoding,
            tagged,
            lambda sentences: (
                "" if sentence is None else _one_parse(parser, sentence, kbest)
                for sentence in sentences
            ),
            as_json,
        )


def _one_parse(parser, sentence, kbest: int | None) -> str:
    """One tree, or with ``kbest`` the k-best block (``decode.kbest.format_kbest``)."""
    if kbest is None:
        return parser.parse(*sentence).tree.pformat()
    from .decode.kbest import format_kbest

    return format_kbest(parser.kbest(*sentence, k=kbest)).rstrip("\n") + "\n"


def _refuse_stdout_to(input_file: Path) -> None:
    """Fail when standard output is the input file (``parse m in.txt >> in.txt`` would
    read its own trees back without end)."""
    try:
        same = os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(input_file))
    except (OSError, ValueError, AttributeError):  # no real stdout (a test runner)
        return
    if same:
        _fail(f"standard output is the input file {input_file}: write the trees elsewhere")


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


def _noting_tags(parser, sentences):
    """The sentences, their tags noted by ``parser`` for the end-of-run W010 warning."""
    for sentence in sentences:
        if sentence is not None and sentence[1] is not None:
            parser.note_unknown_tags(*sentence)
        yield sentence


def _print_trees(
    input_file: Path | None, encoding: str, tagged: bool, parse_all, as_json: bool = False
) -> None:
    """Print ``parse_all(sentences)``, one tree (or an empty line) per input line, as
    they come; a malformed or undecodable line stops the input there: the lines
    before it are printed, then the error."""
    from .errors import TreebankFormatError
    from .trees.formats.text import iter_lines

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
                    yield _split_tokens(line, tagged)
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
        _fail(problems[0])


def _bracketer_parse(model_dir: Path):
    """``parse`` with an unsupervised bracketer: one unlabelled tree per line."""
    from .unsupervised import load_bracketer

    try:
        bracketer = load_bracketer(model_dir)
    except (OSError, ValueError) as err:
        _fail(f"{model_dir}: not a readable bracketer ({err})")

    def parse_all(sentences):
        for sentence in sentences:
            if sentence is None:
                yield ""
                continue
            words, tags = sentence
            tokens = list(zip(words, tags)) if tags else words
            yield bracketer.predict([tokens])[0].pformat()

    return parse_all


@app.command("test")
@guarded
def test_command(
    model_dir: Path = typer.Argument(..., help="A trained model."),
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    split: str = typer.Option("test", "--split", help="Split of a named corpus."),
    data_dir: Path | None = DATA_DIR_OPTION,
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
    member_threshold: float = PARSER_OPTIONS["member_threshold"],
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
    from .corpora import open_treebank
    from .evaluation import evaluate, get_params

    # Everything that can fail fails before the parsing starts.
    _check_limit(limit)
    _check_model_dir(model_dir)
    if output is not None:
        _check_output_file(output, "the parses")
        params_file = Path(params) if params not in ("collins", "spmrl") else None
        inputs = [model_dir, params_file, *_corpus_inputs(corpus, data_dir)]
        _refuse_overwrite(output, "the parses", inputs)
    try:
        gold, scheme = open_treebank(corpus, split, data_dir=data_dir, encoding=encoding)
        evalb = get_params(params)
    except (OSError, ValueError) as err:  # missing data, bad files, bad parameters
        _fail(str(err))
    gold = gold[:limit]
    parser = _load_parser(
        model_dir, decoder, threshold, max_length, member_threshold=member_threshold
    )
    scores = evaluate(parser, gold, scheme=scheme, params=evalb, progress=True)
    if as_json:
        _print_json(scores.to_dict())
    else:
        sys.stdout.write(scores.evalb.format())
        typer.echo(
            f"{len(gold)} sentences in {scores.seconds:.1f} s "
            f"({len(gold) / scores.seconds:.1f}/s), fallbacks: {dict(scores.fallbacks) or 0}; "
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
    trees = scores.parses
    if output is not None:  # after the scores are out, so a late failure loses nothing
        try:
            output.write_text("".join(tree.pformat() + "\n" for tree in trees), encoding="utf-8")
        except OSError as err:
            _fail(f"cannot write the parses to {output}: {err.strerror or err}")


plot_app = typer.Typer(
    help="Draw figures of trained models (needs matplotlib, the package's 'plot' extra).",
    no_args_is_help=True,
)
app.add_typer(plot_app, name="plot")


@plot_app.command("spectrum")
@guarded
def plot_spectrum(
    model_dir: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="A spectral or clustering model."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="PNG file to write, outside MODEL_DIR (default: MODEL_DIR-spectrum.png beside it).",
    ),
    symbols: str = typer.Option(
        "12", "--symbols", help="How many symbols (most training nodes first), or names, a,b,c."
    ),
    normalise: bool = typer.Option(
        True, "--normalise/--no-normalise", help="Divide each symbol's values by its largest."
    ),
) -> None:
    """Plot the singular values of each symbol's SVD (log scale) to a PNG file.

    One line per symbol: where its values fall off, more latent states stop helping.
    """
    from .errors import GrammarError
    from .grammar.model import read_spectrum
    from .plots import plot_spectrum as draw_spectrum

    chosen = int(symbols) if symbols.strip().isdigit() else [s for s in symbols.split(",") if s]
    output = output or _beside(model_dir, "spectrum.png")
    _refuse_overwrite(output, "the figure", [model_dir])
    try:
        spectrum = read_spectrum(model_dir)
        if spectrum is None:
            _fail(
                f"{model_dir} has no singular-value spectrum (spectrum.npz): only models of "
                "the latent estimators (--estimator spectral or clustering) have one"
            )
        written = draw_spectrum(spectrum, output, symbols=chosen, normalise=normalise)
    except (GrammarError, ImportError, ValueError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write {output}: {err.strerror or err}")
    typer.echo(f"spectrum of {len(spectrum)} symbols -> {written}", err=True)


def _beside(folder: Path, name: str) -> Path:
    """A default output file next to ``folder``, never in it: FOLDER-NAME."""
    folder = folder.absolute()
    return folder.parent / f"{folder.name}-{name}"


@plot_app.command("training")
@guarded
def plot_training(
    model_dir: Path = typer.Argument(
        ...,
        help="A split_merge or inherit model, or the checkpoint folder of a training run "
        "(also found beside MODEL_DIR while 'train' has not written it yet).",
    ),
    output_argument: Path | None = typer.Argument(
        None, metavar="[OUTPUT]", help="PNG file to write (or --output)."
    ),
    output_option: Path | None = typer.Option(
        None,
        "--output",
        help="PNG file to write, outside MODEL_DIR (default: MODEL_DIR-training.png beside it).",
    ),
    symbols: str = typer.Option(
        "12", "--symbols", help="How many symbols (most states first), or names, a,b,c."
    ),
) -> None:
    """Plot a split-merge (or INHERIT) training: log-likelihood per EM iteration, dev F1
    per cycle (and the cycle kept), latent states per symbol per cycle, to a PNG file."""
    from .errors import GrammarError
    from .plots import plot_training as draw_training
    from .plots import read_training_history

    if output_argument is not None and output_option is not None:
        _fail("give the PNG file once: as OUTPUT or as --output", 2)
    chosen = int(symbols) if symbols.strip().isdigit() else [s for s in symbols.split(",") if s]
    source = model_dir
    if not model_dir.exists() and _checkpoint_dir(model_dir).is_dir():
        source = _checkpoint_dir(model_dir)  # a run in progress: its cycles so far
    output = output_argument or output_option or _beside(model_dir, "training.png")
    _refuse_overwrite(output, "the figure", [model_dir, source])
    try:
        history = read_training_history(source)
        written = draw_training(history, output, symbols=chosen)
    except (GrammarError, ImportError, ValueError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write {output}: {err.strerror or err}")
    cycles = len(history["n_states"])
    seeds = _product_seeds(source)
    which = f"{source}, the first of its {seeds} seeds" if seeds > 1 else str(source)
    typer.echo(f"training history of {cycles} cycles ({which}) -> {written}", err=True)


def _product_seeds(model_dir: Path) -> int:
    """How many grammars a model decodes as one ensemble (a product of seeds; 1 for a
    checkpoint folder or a single grammar)."""
    from .grammar.model import CFG, ENSEMBLE, _read_cfg, _read_file

    try:
        training = _read_cfg(_read_file(model_dir, CFG), model_dir)["training"]
        return 1 + len(training.get(ENSEMBLE, ()))
    except (OSError, ValueError, KeyError, TypeError):
        return 1


def _decode_input(path: Path | None, encoding: str) -> str:
    """The text of a file (or stdin); a decoding error names file, line and column."""
    from .trees.formats.text import decode_text, read_text

    try:
        if path is not None:
            return read_text(path, encoding)
        return decode_text(sys.stdin.buffer.read(), encoding, "stdin")
    except ValueError as err:  # TreebankFormatError, unknown encoding
        _fail(str(err))


def _bracketed_trees(path: Path | None, encoding: str | None, scheme: str | None, limit):
    """``(trees, scheme)`` from a treebank file or directory, or bracketed trees on stdin."""
    from .trees.brackets import iter_raw_trees, raw_to_tree
    from .trees.formats.reader import TreebankReader
    from .trees.normalize import normalize

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
        _fail(str(err))


@app.command("render")
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
    from .pictures import html_page, render_trees
    from .trees.labels import SCHEMES

    if scheme is not None and scheme not in SCHEMES:
        _fail(f"--scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    _check_count(limit, "--limit", 1, CEILINGS.trees)
    to_stdout = str(output) == "-"
    if to_stdout and as_json:
        _fail("-o - writes the page to standard output: --json has no room there", 2)
    if not to_stdout:
        _check_output_file(output, "the page")
        _refuse_overwrite(output, "the page", [input_path, model_dir])
    name = str(input_path) if input_path else "stdin"
    if input_path is not None and model_dir is not None and input_path.is_dir():
        _fail(f"{name} is a directory: with --model, give a text file")
    if model_dir is None:
        trees, scheme = _bracketed_trees(input_path, encoding, scheme, limit)
        captions = [" ".join(tree.words()) for tree in trees]
    else:
        parser = _load_parser(model_dir, decoder, threshold, max_length)
        scheme = scheme or parser.model.label_scheme
        trees, captions = [], []
        text = _decode_input(input_path, encoding or "utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if limit and len(trees) >= limit:
                break
            try:
                words, tags = _split_tokens(line, tagged)
            except ValueError as err:
                _fail(f"{name}, line {number}, {err}")
            trees.append(parser.parse(words, tags).tree)
            captions.append(" ".join(words))
    if not trees:
        _fail(f"no trees in {name}")
    pictures = []
    for number, (tree, caption) in enumerate(zip(trees, captions), 1):
        try:
            pictures.append((render_trees(tree, scheme=scheme), caption))
        except ValueError as err:
            _fail(f"{name}, tree {number}: {err}")
    page = html_page(pictures, title=title or f"Constituency trees: {name}")
    if to_stdout:
        sys.stdout.write(page)
        return
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as err:
        _fail(f"cannot write the page to {output}: {err.strerror or err}")
    _summary(as_json, quiet, f"{len(pictures)} tree(s) -> {output}",
             {"trees": len(pictures), "output": str(output)})  # fmt: skip


@app.command()
@guarded
def optimize(
    corpus: str = typer.Argument(..., help="Corpus name or treebank path (the training trees)."),
    output_dir: Path = typer.Argument(
        ..., file_okay=False, help="Where the model, recipe.json and the trace go."
    ),
    dev: str | None = typer.Option(
        None,
        "--dev",
        help="Dev treebank path (default: the corpus's dev split).",
        show_default=False,
    ),
    split: str = typer.Option("train", "--split", help="Split of a named corpus to train on."),
    dev_split: str = typer.Option("dev", "--dev-split", help="Split of a named corpus for dev."),
    data_dir: Path | None = DATA_DIR_OPTION,
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    limit: int | None = TRAIN_LIMIT_OPTION,
    dev_limit: int | None = typer.Option(
        None,
        "--dev-limit",
        help="Score on about N (>= 1) dev trees spread over the split only.",
        show_default=False,
    ),
    holdout: float = typer.Option(
        defaults.SEARCH.holdout,
        "--holdout",
        help="Share of the training trees the search scores on (0: score on dev).",
    ),
    search_limit: int | None = typer.Option(
        None,
        "--search-limit",
        help="Search on about N training trees spread over the treebank, then fit the "
        "chosen model on all (for large treebanks).",
        show_default=False,
    ),
    language: str | None = LANGUAGE_OPTION,
    max_states: int = typer.Option(
        defaults.SEARCH.max_states, "--max-states", help="Most latent states of a symbol."
    ),
    beam: int = typer.Option(defaults.SEARCH.beam, "--beam", help="Beam size of the search."),
    max_symbols: int | None = typer.Option(
        defaults.SEARCH.max_symbols,
        "--max-symbols",
        help="Search the N most frequent symbols only (default: all with --min-count nodes).",
        show_default=False,
    ),
    min_count: int = typer.Option(
        defaults.SEARCH.min_count, "--min-count", help="Search symbols with this many nodes."
    ),
    n_models: int = typer.Option(
        defaults.SEARCH.n_models, "--n-models", help="Members of the ensembles tried (1: none)."
    ),
    n_jobs: int = typer.Option(1, "--n-jobs", help="Processes scoring candidates."),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        help="Dask scheduler address (tcp://host:8786): score candidates on its workers.",
        show_default=False,
    ),
    max_time: float | None = typer.Option(
        None,
        "--max-time",
        help="Seconds for the whole search; then the best so far is kept.",
        show_default=False,
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Go on from OUTPUT_DIR/trace.jsonl of an interrupted run."
    ),
    random_state: int = typer.Option(defaults.LATENT.random_state, "--random-state"),
    as_json: bool = typer.Option(False, "--json", help="Print the recipe as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars, no summary."),
) -> None:
    """Search the recipe and the latent states per symbol on dev, and write the best model.

    Tries the transforms (v = 1/2, function tags kept/stripped), searches the states of
    each frequent symbol (Narayan & Cohen 2016), then noisy ensembles; every candidate
    is scored by dev F1 and written to OUTPUT_DIR/trace.jsonl. OUTPUT_DIR/model is the
    best model (function tags restored by a labeller if its grammar strips them),
    OUTPUT_DIR/recipe.json what was chosen. Interrupted (Ctrl-C), run it again with
    --resume: what was scored is not scored again.
    """
    from .corpora import CORPORA, open_treebank, spread
    from .grammar.model import treebank_name
    from .progress import quiet as quiet_bars
    from .search import check_search_options, write_result
    from .search import optimize as run_search

    for value, option in ((limit, "--limit"), (dev_limit, "--dev-limit"),
                          (search_limit, "--search-limit")):  # fmt: skip
        _check_limit(value, option)
    try:
        check_search_options(
            max_states=max_states, beam=beam, min_count=min_count, n_models=n_models,
            n_jobs=n_jobs, max_time=max_time, holdout=holdout, max_symbols=max_symbols,
        )  # fmt: skip
    except ValueError as err:
        _fail(str(err))
    _check_output_dir(output_dir)
    if dev is None and corpus not in CORPORA:
        _fail("a treebank path has no dev split: give the dev trees with --dev PATH")
    _refuse_search_overwrite(
        output_dir, [*_corpus_inputs(corpus, data_dir), *([Path(dev)] if dev else [])]
    )
    language = _training_language(corpus, language)
    try:
        with quiet_bars(quiet):
            trees, scheme = _read_training_trees(corpus, split, data_dir, encoding, limit)
            if dev is None:
                gold, _ = open_treebank(corpus, dev_split, data_dir=data_dir, encoding=encoding)
            else:
                gold, _ = open_treebank(dev, None, encoding=encoding)
            result = run_search(
                trees,
                spread(gold, dev_limit),
                scheme=scheme,
                language=language,
                max_states=max_states,
                beam=beam,
                max_symbols=max_symbols,
                min_count=min_count,
                n_models=n_models,
                n_jobs=n_jobs,
                scheduler=scheduler,
                max_time=max_time,
                output_dir=output_dir,
                resume=resume,
                random_state=random_state,
                holdout=holdout,
                search_limit=search_limit,
            )
            result.model = result.model.with_treebank(treebank_name(corpus))
            write_result(result, output_dir)
    except KeyboardInterrupt as err:
        _interrupted(
            err,
            f"the candidates scored are in {output_dir}/trace.jsonl; "
            "run the same command with --resume to go on",
        )
    except _input_errors() as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write to {output_dir}: {err.strerror or err}")
    recipe = result.recipe
    if as_json:
        _print_json(recipe)
    elif not quiet:
        typer.echo(
            f"optimized in {recipe['seconds']:.0f} s ({recipe['evaluations']} candidates"
            f"{'' if result.finished else ', the state search stopped by --max-time'}): "
            f"{recipe['model']['kind']} model, dev F1 {recipe['dev_f1']:.2f}, transforms "
            f"{recipe['transform']} -> {output_dir}/model",
            err=True,
        )


def _refuse_search_overwrite(output_dir: Path, inputs: list[Path]) -> None:
    """optimize writes OUTPUT_DIR/model anew and its recipe, trace and figure: none of
    them may be, or hold, an input, nor OUTPUT_DIR lie in an input folder."""
    from .search.optimize import MODEL_DIR, PLOT_FILE, RECIPE_FILE, TRACE_FILE

    _refuse_overwrite(output_dir / MODEL_DIR, "the model", inputs, replaces_dir=True)
    for name in (RECIPE_FILE, TRACE_FILE, PLOT_FILE):
        _refuse_overwrite(output_dir / name, "the search's results", inputs)


def main() -> None:
    """The command line without the executable's signal set-up (``console.main``)."""
    app()
