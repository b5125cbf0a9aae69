"""What train's options choose: each number within its range, and the Recipe of the
recipe named (``--recipe``) with the options given on the command line."""

from __future__ import annotations

import typer

from ..defaults import CEILINGS
from ..estimators.registry import estimator_names
from .checks import check_count
from .exits import fail


def check_training_numbers(**values: int | None) -> None:
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
        check_count(value, f"--{name.replace('_', '-')}", *ranges[name])


def training_recipe(ctx: typer.Context, name: str | None):
    """The Recipe of train's options: the recipe called ``name`` (None: the defaults,
    ``Recipe()``) with the options given on the command line replacing its values
    (the options are named as the recipe's fields)."""
    from dataclasses import fields, replace

    from ..recipes import DEFAULT_RECIPE, Recipe, get_recipe

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
        if name is None and given.get("estimator") in estimator_names(xbar=True):
            name = given["estimator"]  # its own transforms (X-bar), unless options say otherwise
        if name is not None:
            base = get_recipe(name)
        else:  # without options, the default recipe; an estimator alone: its defaults
            base = Recipe() if "estimator" in given else DEFAULT_RECIPE
        if given.get("n_models", base.n_models) > 1 and given.get(
            "estimator", base.estimator
        ) not in estimator_names(ensemble=True):
            fail(f"--n-models needs --estimator {' or '.join(estimator_names(ensemble=True))}")
        own = [f"--{n.replace('_', '-')}" for n in ("binarization", "v_markov") if n in given]
        own += ["--functions/--no-functions"] if "keep_functions" in given else []
        if own and given.get("estimator", base.estimator) == "combined":
            fail(
                f"{', '.join(own)} set the transforms of one model; the four-way combination "
                "(train's default) gives each of its members its own: add --estimator mle, "
                "clustering, spectral or split_merge to train one model"
            )
        return replace(base, **given)
    except ValueError as err:  # an unknown recipe or estimator
        fail(str(err))


# The unsupervised bracketers (``unsupervised.BRACKETERS``, named here so that the CLI
