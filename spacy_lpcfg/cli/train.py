"""``spacy-lpcfg train``: a grammar (or an unsupervised bracketer) trained on a
treebank and saved; the work is ``spacy_lpcfg.training.train``."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import typer

from .. import defaults
from ..estimators.registry import estimator_entry, estimator_names
from ..training import BRACKETER_NAMES, checkpoint_dir, checkpointed_cycles
from .bracketer import train_bracketer
from .checks import check_limit, check_output_dir, corpus_inputs, refuse_overwrite
from .exits import fail, guarded, input_errors, interrupted
from .options import DATA_DIR_OPTION, LANGUAGE_OPTION, TRAIN_LIMIT_OPTION, TREEBANK_ENCODING_OPTION
from .output import print_json
from .train_options import TRAIN_OPTIONS
from .train_recipe import check_training_numbers, training_recipe


@guarded
def train(
    ctx: typer.Context,
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    model_dir: Path = typer.Argument(..., file_okay=False, help="Where to write the model."),
    recipe: str | None = TRAIN_OPTIONS["recipe"],
    estimator: str | None = TRAIN_OPTIONS["estimator"],
    split: str = TRAIN_OPTIONS["split"],
    data_dir: Path | None = DATA_DIR_OPTION,
    encoding: str | None = TREEBANK_ENCODING_OPTION,
    limit: int | None = TRAIN_LIMIT_OPTION,
    binarization: str = TRAIN_OPTIONS["binarization"],
    h_markov: int = TRAIN_OPTIONS["h_markov"],
    v_markov: int = TRAIN_OPTIONS["v_markov"],
    keep_functions: bool = TRAIN_OPTIONS["keep_functions"],
    head_rules: str | None = TRAIN_OPTIONS["head_rules"],
    language: str | None = LANGUAGE_OPTION,
    rare_threshold: int = TRAIN_OPTIONS["rare_threshold"],
    n_states: int | None = TRAIN_OPTIONS["n_states"],
    random_state: int = TRAIN_OPTIONS["random_state"],
    n_cycles: int | None = TRAIN_OPTIONS["n_cycles"],
    resume: bool = TRAIN_OPTIONS["resume"],
    dev: str | None = TRAIN_OPTIONS["dev"],
    n_models: int = TRAIN_OPTIONS["n_models"],
    n_jobs: int = TRAIN_OPTIONS["n_jobs"],
    noise: str = TRAIN_OPTIONS["noise"],
    noise_scale: float = TRAIN_OPTIONS["noise_scale"],
    function_labeller: bool | None = TRAIN_OPTIONS["function_labeller"],
    function_labels: str = TRAIN_OPTIONS["function_labels"],
    as_json: bool = TRAIN_OPTIONS["as_json"],
    quiet: bool = TRAIN_OPTIONS["quiet"],
) -> None:
    """Train a grammar on a treebank and save the model directory.

    Progress bars show on a terminal (stderr), one per step. Interrupted (Ctrl-C),
    it exits with code 130 and leaves MODEL_DIR as it was.
    """
    from ..errors import GrammarError
    from ..grammar.model import check_replaceable
    from ..progress import quiet as quiet_bars
    from ..training import train as train_model

    # Everything that can fail fails before the work starts.
    check_limit(limit)
    check_training_numbers(
        h_markov=h_markov, v_markov=v_markov, rare_threshold=rare_threshold, n_states=n_states,
        n_cycles=n_cycles, n_models=n_models, n_jobs=n_jobs, random_state=random_state,
    )  # fmt: skip
    inputs = [*corpus_inputs(corpus, data_dir), *(corpus_inputs(dev, data_dir) if dev else [])]
    refuse_overwrite(model_dir, "the model", inputs, replaces_dir=True)
    if function_labels not in defaults.FUNCTION_LABEL_SOURCES:
        choices = ", ".join(defaults.FUNCTION_LABEL_SOURCES)
        fail(f"--function-labels must be one of {choices}, not {function_labels!r}", 2)
    if function_labeller and ctx.params["estimator"] in BRACKETER_NAMES:
        fail("--function-labeller needs a grammar: the bracketers have no labels", 2)
    by_cycle = " and ".join(estimator_names(checkpoints=True))  # trained cycle by cycle
    if ctx.params["estimator"] in BRACKETER_NAMES:
        if n_jobs != 1:
            fail(f"--n-jobs is an option of --estimator {by_cycle}", 2)
        train_bracketer(
            ctx.params["estimator"], corpus, model_dir, split, data_dir, encoding, limit, quiet
        )
        return
    chosen = training_recipe(ctx, recipe)
    checkpoints = estimator_entry(chosen.estimator).checkpoints
    if (resume or dev is not None) and not checkpoints:
        fail(f"--resume and --dev are options of --estimator {by_cycle}", 2)
    if n_jobs != 1 and not checkpoints:
        fail(f"--n-jobs is an option of --estimator {by_cycle}", 2)
    check_output_dir(model_dir)
    try:
        check_replaceable(model_dir)  # a directory that is not a model is never replaced
    except GrammarError as err:
        fail(str(err))
    try:
        with quiet_bars(quiet):
            trained = train_model(
                chosen,
                corpus,
                model_dir,
                split=split,
                data_dir=data_dir,
                encoding=encoding,
                limit=limit,
                language=language,
                head_rules=head_rules,
                n_jobs=n_jobs,
                dev=dev,
                resume=resume,
                function_labeller=function_labeller,
                function_labels=function_labels,
                note=None if quiet else functools.partial(typer.echo, err=True),
            )
    except KeyboardInterrupt as err:
        # to_disk cleans up after itself: the previous model (if any) is untouched
        hint = None
        if checkpoints:
            hint = functools.partial(_resume_hint, model_dir, chosen.n_models)
        interrupted(err, f"no model written, {model_dir} is as it was", hint)
    except input_errors() as err:
        fail(str(err))
    except OSError as err:  # writing the model (reading errors are the ones above)
        fail(f"cannot write the model to {model_dir}: {err.strerror or err}")
    model, grammar, seconds = trained.model, trained.model.grammar, trained.seconds
    summary = {
        "model_dir": str(model_dir),
        "estimator": chosen.estimator,
        "recipe": recipe,
        "n_models": chosen.n_models,
        "members": len(model.parts),  # models trained apart and decoded together
        "trees": trained.trees,
        "symbols": grammar.n_symbols,
        "binary_rules": len(grammar.binary_rules),
        "unary_rules": len(grammar.unary_rules),
        "lexical_rules": len(grammar.lexical_rules),
        "function_labeller": model.labeller is not None,
        "seconds": round(seconds, 3),
    }
    if as_json:
        print_json(summary)
    elif not quiet:
        typer.echo(
            f"trained {chosen.estimator} on {trained.trees} trees in {seconds:.1f} s: "
            + (f"{len(model.parts)} models, the first with " if len(model.parts) > 1 else "")
            + f"{grammar.n_symbols} symbols, {len(grammar.binary_rules)} binary and "
            f"{len(grammar.unary_rules)} unary rules"
            f"{', a function labeller' if model.labeller else ''}"
            f"{_no_labeller_note(chosen.function_labeller, model)} -> {model_dir}",
            err=True,
        )


def _no_labeller_note(wanted: bool, model) -> str:
    return ", no function labeller (no function tags in the trees)" if wanted and not (
        model.labeller) else ""  # fmt: skip


def _resume_hint(model_dir: Path, n_models: int) -> None:
    """After Ctrl-C: which cycle is checkpointed and how to go on."""
    folder = checkpoint_dir(model_dir)
    cycles = checkpointed_cycles(folder, n_models)
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
