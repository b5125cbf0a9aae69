"""The estimators by name: one registry that recipes, ``train``, the spaCy component
and the model record read.

Each entry is keyed by the estimator class's ``name`` (what a model records as its
estimator) or by a preset of one (``clone_some``: split-merge with other settings;
``combined``: the four-way combination). Targets are "module:attribute" strings
imported on first use, so reading the names (the CLI's help, a recipe's check) loads
neither numba nor the estimator modules, as ``decode.registry`` does for decoders.

An estimator written outside the package is added by ``register_estimator``, as a
class decorator or a call, or by an entry point in the group
``spacy_lpcfg_estimators`` (``toy = "my_package.toy:ToyEstimator"``), read when the
names are first asked for::

    @register_estimator
    class ToyEstimator(TreebankEstimator):
        name = "toy"
        ...

It then trains by name (``spacy-lpcfg train --estimator toy``, ``Recipe(estimator=
"toy")``) and in a spaCy config (``@misc = "spacy_lpcfg.estimator.v1"``, ``name =
"toy"``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import Errors

if TYPE_CHECKING:
    from .base import BaseEstimator

ENTRY_POINTS = "spacy_lpcfg_estimators"


@dataclass(frozen=True)
class EstimatorEntry:
    """A registered estimator.

    name (str): its name: the class's ``name``, or a preset's.
    target (Callable | str): the class (or a function returning an estimator), or
        "module:attribute" to import on first use.
    params (Mapping): constructor parameters of a preset (``clone_some``).
    ensemble (str | None): "module:Class" of what ``n_models > 1`` members of it make
        (``NoisyEnsemble``, ``SeedProduct``); None: one model only.
    checkpoints (bool): trained cycle by cycle: checkpoints, ``--resume``, ``--dev``
        (the cycle chosen on dev trees) and ``--n-jobs``.
    xbar (bool): ``train --estimator NAME`` without transforms fits the recipe of the
        same name, over X-bar trees.
    """

    name: str
    target: Callable[..., Any] | str
    params: Mapping[str, Any] = field(default_factory=dict)
    ensemble: str | None = None
    checkpoints: bool = False
    xbar: bool = False

    def resolve(self) -> Callable[..., Any]:
        """The class or function (imported now if registered as a string)."""
        return _import(self.target) if isinstance(self.target, str) else self.target

    def build(self, **params: Any) -> BaseEstimator:
        """An unfitted estimator: the preset's parameters, then ``params``."""
        return self.resolve()(**{**self.params, **params})

    def from_recipe(
        self,
        params: Mapping[str, Any],
        optional: Mapping[str, Any],
        n_models: int = 1,
        ensemble: Mapping[str, Any] | None = None,
    ) -> BaseEstimator:
        """The estimator a recipe asks for, from ``params`` and those of ``optional``
        it takes (a recipe's n_states means nothing to MLE); with ``n_models > 1``,
        that many of them as its ensemble, with those of ``ensemble`` that it takes
        (SeedProduct has no noise).
        """
        taken = accepted_params(self.resolve())
        estimator = self.build(**params, **{k: v for k, v in optional.items() if k in taken})
        if n_models == 1:
            return estimator
        if self.ensemble is None:  # Recipe refuses it first, with the message that says why
            raise ValueError(Errors.E011.format(value=n_models, name="n_models", expected="1"))
        wrapper = _import(self.ensemble)
        taken = accepted_params(wrapper)
        outer = {k: v for k, v in (ensemble or {}).items() if k in taken}
        return wrapper(estimator=estimator, n_models=n_models, **outer)


ESTIMATORS: dict[str, EstimatorEntry] = {}
"""Every registered estimator by name, in the order they were registered (the
built-in ones first); ``estimator_entry`` also reads the entry points."""


def register_estimator(
    target: Callable[..., Any] | str | None = None,
    *,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    ensemble: str | None = None,
    checkpoints: bool = False,
    xbar: bool = False,
) -> Any:
    """Register an estimator, as ``@register_estimator`` (or
    ``@register_estimator(checkpoints=True)``) over its class, or as a call.

    target (Callable | str | None): the class, or "module:Class"; None: a decorator.
    name (str | None): None: the class's ``name`` (required for a string target).
    The other arguments are ``EstimatorEntry``'s.
    RETURNS: the target (so that the decorator leaves the class as it is), or the
        decorator.
    RAISES ValueError: no name. A name registered again is replaced (as spaCy's
        registries do), so that a module reloaded registers its class again.
    """
    if target is None:
        return lambda cls: register_estimator(
            cls, name=name, params=params, ensemble=ensemble, checkpoints=checkpoints, xbar=xbar
        )
    if name is None:
        name = getattr(target, "name", None) if not isinstance(target, str) else None
    if not name or not isinstance(name, str):
        expected = "a name, given or the class's 'name' attribute"
        raise ValueError(Errors.E011.format(value=target, name="name", expected=expected))
    ESTIMATORS[name] = EstimatorEntry(name, target, dict(params or {}), ensemble, checkpoints, xbar)
    return target


def estimator_names(
    *, ensemble: bool | None = None, checkpoints: bool | None = None, xbar: bool | None = None
) -> tuple[str, ...]:
    """The registered names (the entry points' too), those with the flags given only."""
    _load_entry_points()
    wanted = {"ensemble": ensemble, "checkpoints": checkpoints, "xbar": xbar}
    return tuple(
        name
        for name, entry in ESTIMATORS.items()
        if all(
            value is None or bool(getattr(entry, flag)) == value for flag, value in wanted.items()
        )
    )


def estimator_entry(name: str) -> EstimatorEntry:
    """The entry registered as ``name``. RAISES ValueError: no such estimator."""
    if name not in ESTIMATORS:
        _load_entry_points()
    if name not in ESTIMATORS:
        expected = "one of " + ", ".join(estimator_names())
        raise ValueError(Errors.E011.format(value=name, name="estimator", expected=expected))
    return ESTIMATORS[name]


def get_estimator(name: str) -> Callable[..., Any]:
    """The class (or function) registered as ``name``, imported."""
    return estimator_entry(name).resolve()


def accepted_params(target: Callable[..., Any]) -> set[str]:
    """The keyword parameters a class's ``__init__`` (or a function) takes."""
    function = target.__init__ if inspect.isclass(target) else target
    return set(inspect.signature(function).parameters) - {"self"}


def _import(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


_entry_points_read = False


def _load_entry_points() -> None:
    """Register the estimators of the ``spacy_lpcfg_estimators`` entry points (their
    modules are imported when first built)."""
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINTS):
        if point.name not in ESTIMATORS:
            register_estimator(point.value, name=point.name)


# The package's own, as "module:Class" so that this module imports none of them.
_PACKAGE = "spacy_lpcfg.estimators."
register_estimator(_PACKAGE + "mle:MLEEstimator", name="mle")
register_estimator(_PACKAGE + "spectral:SpectralEstimator", name="spectral")
register_estimator(
    _PACKAGE + "clustering:ClusteringEstimator",
    name="clustering",
    ensemble=_PACKAGE + "noise:NoisyEnsemble",
)
register_estimator(
    _PACKAGE + "split_merge:SplitMergeEstimator",
    name="split_merge",
    ensemble=_PACKAGE + "seed_product:SeedProduct",
    checkpoints=True,
    xbar=True,
)
# Dreyer & Eisner's clone some: split-merge that splits only the symbols whose states
# diverge most and merges nothing back.
register_estimator(
    _PACKAGE + "split_merge:SplitMergeEstimator",
    name="clone_some",
    params={"split": "some", "merge_fraction": 0.0},
    ensemble=_PACKAGE + "seed_product:SeedProduct",
    checkpoints=True,
    xbar=True,
)
register_estimator(_PACKAGE + "inherit:InheritEstimator", name="inherit", xbar=True)
# Le Roux et al.'s four clustering models, each on its own transforms, decoded together.
register_estimator(_PACKAGE + "combined:four_way_estimator", name="combined")
