"""``spacy-lpcfg optimize``: the recipe and latent states searched on dev trees."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import defaults
from ..training import read_training_trees, training_language
from .checks import check_limit, check_output_dir, corpus_inputs, refuse_overwrite
from .exits import fail, guarded, input_errors, interrupted
from .options import DATA_DIR_OPTION, LANGUAGE_OPTION, TRAIN_LIMIT_OPTION, TREEBANK_ENCODING_OPTION
from .output import print_json


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
    from ..corpora import CORPORA, open_treebank, spread
    from ..grammar.model import treebank_name
    from ..progress import quiet as quiet_bars
    from ..search import check_search_options, write_result
    from ..search import optimize as run_search

    for value, option in ((limit, "--limit"), (dev_limit, "--dev-limit"),
                          (search_limit, "--search-limit")):  # fmt: skip
        check_limit(value, option)
    try:
        check_search_options(
            max_states=max_states, beam=beam, min_count=min_count, n_models=n_models,
            n_jobs=n_jobs, max_time=max_time, holdout=holdout, max_symbols=max_symbols,
        )  # fmt: skip
    except ValueError as err:
        fail(str(err))
    check_output_dir(output_dir)
    if dev is None and corpus not in CORPORA:
        fail("a treebank path has no dev split: give the dev trees with --dev PATH")
    _refuse_search_overwrite(
        output_dir, [*corpus_inputs(corpus, data_dir), *([Path(dev)] if dev else [])]
    )
    language = training_language(corpus, language)
    try:
        with quiet_bars(quiet):
            trees, scheme = read_training_trees(corpus, split, data_dir, encoding, limit)
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
        interrupted(
            err,
            f"the candidates scored are in {output_dir}/trace.jsonl; "
            "run the same command with --resume to go on",
        )
    except input_errors() as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot write to {output_dir}: {err.strerror or err}")
    recipe = result.recipe
    if as_json:
        print_json(recipe)
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
    from ..search.optimize import (
        DEFAULT_CHECKPOINTS,
        FINALISTS,
        MODEL_DIR,
        PLOT_FILE,
        RECIPE_FILE,
        TRACE_FILE,
    )

    refuse_overwrite(output_dir / MODEL_DIR, "the model", inputs, replaces_dir=True)
    refuse_overwrite(
        output_dir / DEFAULT_CHECKPOINTS, "the default finalist's checkpoints", inputs,
        replaces_dir=True,
    )  # fmt: skip
    refuse_overwrite(output_dir / FINALISTS, "the finalists set aside", inputs, replaces_dir=True)
    for name in (RECIPE_FILE, TRACE_FILE, PLOT_FILE):
        refuse_overwrite(output_dir / name, "the search's results", inputs)
