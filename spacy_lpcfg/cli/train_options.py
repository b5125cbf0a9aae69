"""train's options, declared here so that the command reads as what it does (the
shared ones are in ``options.py``)."""

from __future__ import annotations

import typer

from .. import defaults
from ..estimators.registry import estimator_names
from ..recipes import RECIPES
from ..training import BRACKETER_NAMES


def _recipe_options(recipe) -> str:
    """The options of train that give ``recipe`` (those that differ from the defaults)."""
    from dataclasses import fields

    from ..recipes import Recipe

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


TRAIN_OPTIONS = {
    "recipe": typer.Option(
        None,
        "--recipe",
        help="Train a recipe of spacy_lpcfg.recipes: "
        + "; ".join(f"{name} = {_recipe_options(chosen)}" for name, chosen in RECIPES.items())
        + ". Options given on the command line replace its values.",
        show_default=False,
    ),
    "estimator": typer.Option(
        None,
        "--estimator",
        show_default=False,
        help="Default: the recipe 'default' (the product of three split-merge grammars "
        "with a function labeller). Estimator: "
        + ", ".join(estimator_names())
        + "; unsupervised, from words and tags only: "
        + ", ".join(BRACKETER_NAMES),
    ),
    "split": typer.Option("train", "--split", help="Split of a named corpus to train on."),
    "binarization": typer.Option(
        defaults.TRANSFORM.binarization, "--binarization", help="right, left or head."
    ),
    "h_markov": typer.Option(
        defaults.TRANSFORM.h_markov, "--h-markov", help="Horizontal Markov order (-1: infinite)."
    ),
    "v_markov": typer.Option(
        defaults.TRANSFORM.v_markov, "--v-markov", help="Vertical Markov order (1: none)."
    ),
    "keep_functions": typer.Option(
        defaults.TRANSFORM.keep_functions, "--functions/--no-functions", help="Keep function tags."
    ),
    "head_rules": typer.Option(None, "--head-rules", help="collins, ppche, first, last."),
    "rare_threshold": typer.Option(
        defaults.LEXICON.rare_threshold,
        "--rare-threshold",
        help="Words seen at most this often feed unknown-word classes.",
    ),
    "n_states": typer.Option(
        None,
        "--n-states",
        help=f"Latent states per symbol (spectral: {defaults.SPECTRAL.n_states}, "
        f"clustering: {defaults.CLUSTERING.n_states}, inherit: {defaults.INHERIT.n_states}).",
    ),
    "random_state": typer.Option(
        defaults.LATENT.random_state,
        "--random-state",
        help="Seed (spectral, clustering, split_merge, inherit).",
    ),
    "n_cycles": typer.Option(
        None,
        "--n-cycles",
        help=f"Split-merge cycles (split_merge: {defaults.SPLIT_MERGE.n_cycles}).",
        show_default=False,
    ),
    "resume": typer.Option(
        False,
        "--resume",
        help="split_merge: go on from the last complete cycle of an interrupted run with "
        "the same trees and options (each cycle is checkpointed in .MODEL_DIR.checkpoints "
        "beside MODEL_DIR until the model is written).",
    ),
    "dev": typer.Option(
        None,
        "--dev",
        help="split_merge: a split of the named corpus (dev) or a treebank path; after each "
        f"cycle, parse up to {defaults.SPLIT_MERGE.dev_sample} of its trees and keep the "
        "cycle with the best F1.",
        show_default=False,
    ),
    "n_models": typer.Option(
        1,
        "--n-models",
        help="Models decoded together: noisy clustering models (clustering), or split-merge "
        "grammars from seeds RANDOM_STATE, RANDOM_STATE + 1... (split_merge, clone_some).",
    ),
    "n_jobs": typer.Option(
        1,
        "--n-jobs",
        help="split_merge: E-step workers (threads); with --n-models, seeds trained at "
        "once (one process each).",
    ),
    "noise": typer.Option(
        defaults.NOISE.noise,
        "--noise",
        help="Noise of --n-models: dropout, gaussian, multiplicative.",
    ),
    "noise_scale": typer.Option(
        defaults.NOISE.noise_scale,
        "--noise-scale",
        help="Dropout probability or relative noise deviation.",
    ),
    "function_labeller": typer.Option(
        None,
        "--function-labeller/--no-function-labeller",
        show_default=False,
        help="Also fit a function labeller (a logistic regression over each phrase's "
        "category, head, parent and siblings) on the same trees and save it with the "
        "model: parse, test and the spaCy component then put its function tags (NP-SBJ) "
        "on every parse; best with --no-functions (a grammar with fewer symbols). "
        "Default: the recipe's (the default recipe has one).",
    ),
    "function_labels": typer.Option(
        defaults.FUNCTION_LABELS,
        "--function-labels",
        help="With --function-labeller and a grammar that keeps function tags: whose tags "
        "the parses get: auto (a latent grammar's own, an MLE grammar's the labeller's), "
        "labeller or grammar (its own).",
    ),
    "as_json": typer.Option(False, "--json", help="Print a JSON summary."),
    "quiet": typer.Option(
        False, "--quiet", "-q", help="No progress bars and no summary line (errors still show)."
    ),
}
