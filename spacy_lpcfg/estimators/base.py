"""The estimator contract, after scikit-learn (without depending on it).

An estimator's ``__init__`` only stores its keyword arguments, unchanged, under
their own names; ``get_params`` / ``set_params`` read and write them (nested
estimators with ``outer__inner`` names), ``clone`` rebuilds an unfitted copy
from them, and ``fit(trees, dev_trees=None)`` returns ``self`` with the learned
attributes ending in ``_``. ``check_is_fitted`` looks for those.

Each class declares what its parameters may be once, in ``_parameter_constraints``
(after scikit-learn), and ``validate_params`` checks them all before a fit, with one
message (E011) naming the parameter and what it expects. ``TreebankEstimator`` is
the base of the estimators that count a treebank: a ``transform`` and a ``lexicon``
(``LexiconSpec``) parameter, and the model a fit makes.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..defaults import CEILINGS
from ..errors import Errors
from ..grammar.lexicon import (
    LEXICON_SETTINGS,
    Lexicon,
    LexiconSpec,
    as_lexicon_spec,
    with_lexicon_settings,
)
from ..grammar.model import ParsingModel
from ..trees.transforms import TransformSpec

if TYPE_CHECKING:
    from ..grammar import LPCFG
    from ..grammar.model import Spectrum
    from .mle import RuleCounts


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (a ValueError and AttributeError, as in scikit-learn)."""


class BaseEstimator:
    """Base class of the estimators: parameters from the constructor signature.

    Subclasses declare every hyperparameter as a keyword argument with a
    default in ``__init__`` and store it as an attribute of the same name.
    """

    @classmethod
    def _get_param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        names = []
        for name, parameter in signature.parameters.items():
            if name == "self":
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs")
            names.append(name)
        return sorted(names)

    def _store_params(self, arguments: Mapping[str, Any]) -> None:
        """Store the constructor's arguments unchanged, each under its own name.

        ``__init__`` calls ``self._store_params(locals())`` first thing, so that
        no parameter of a long signature can be forgotten or altered on the way.

        arguments (Mapping[str, Any]): the locals of ``__init__``.
        """
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyperparameters, by name.

        deep (bool): also list the parameters of nested estimators as ``name__param``.
        RETURNS (dict[str, Any]): parameter name -> value.
        """
        params = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and isinstance(value, BaseEstimator):
                params.update({f"{name}__{k}": v for k, v in value.get_params().items()})
            params[name] = value
        return params

    def _settable(self) -> set[str]:
        """The names ``set_params`` takes: every parameter, deep and not."""
        return set(self.get_params(deep=True)) | set(self.get_params(deep=False))

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set hyperparameters (``name__param`` for nested estimators). RETURNS: self."""
        valid = self._settable()
        for name, value in self.get_params(deep=False).items():
            if isinstance(value, BaseEstimator):
                valid |= {f"{name}__{inner}" for inner in value._settable()}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    Errors.E402.format(
                        name=key, estimator=type(self).__name__, valid=", ".join(sorted(valid))
                    )
                )
            name, _, inner = key.partition("__")
            if inner:
                nested.setdefault(name, {})[inner] = value
            else:
                setattr(self, name, value)
        for name, inner_params in nested.items():
            getattr(self, name).set_params(**inner_params)
        return self

    def _shown_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(parameters, their defaults) as ``__repr__`` shows them."""
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(type(self).__init__).parameters.items()
        }
        return self.get_params(deep=False), defaults

    def __repr__(self) -> str:
        # Like scikit-learn, only the parameters that differ from their defaults.
        params, defaults = self._shown_params()
        changed = [
            f"{name}={value!r}"
            for name, value in sorted(params.items())
            if repr(value) != repr(defaults.get(name))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    # name -> what the parameter may be: a list of constraints, any of which it meets
    # (``Number``, ``Choice``, ``Bool``, ``States``, ``Instance``); ``validate_params``
    # reads those of the class and its bases.
    _parameter_constraints: ClassVar[dict[str, list[Constraint]]] = {}

    def _check_params(self) -> None:
        """Check the parameters before a fit (``validate_params``); subclasses add the
        checks that relate two parameters."""
        validate_params(self)


# What a fitted estimator holds of its training trees besides its model (the projected
# treebank, each node's state, the EM treebank and grammar): a member of a combination
# needs only its model, and K members would otherwise hold K copies of the treebank.
TRAINING_DATA = ("projected_", "states_", "treebank_", "em_grammar_")


def drop_training_data(estimator: Any) -> Any:
    """The fitted ``estimator`` without its ``TRAINING_DATA`` attributes. RETURNS: it."""
    for name in TRAINING_DATA:
        if hasattr(estimator, name):
            delattr(estimator, name)
    return estimator


def clone(estimator: Any) -> Any:
    """An unfitted estimator with the same parameters (deep-copied, estimators cloned).

    estimator (Any): an estimator, or a list / tuple / set / dict of them.
    RAISES RuntimeError: the constructor does not store its parameters unchanged.
    """
    if isinstance(estimator, (list, tuple, set, frozenset)):
        return type(estimator)(clone(item) for item in estimator)
    if isinstance(estimator, dict):
        return {key: clone(value) for key, value in estimator.items()}
    if not isinstance(estimator, BaseEstimator):
        return copy.deepcopy(estimator)
    params = {name: clone(value) for name, value in estimator.get_params(deep=False).items()}
    new = type(estimator)(**params)
    stored = new.get_params(deep=False)
    for name, value in params.items():
        if stored[name] is not value:
            raise RuntimeError(Errors.E403.format(estimator=type(estimator).__name__, name=name))
    return new


def check_is_fitted(estimator: BaseEstimator, attributes: list[str] | None = None) -> None:
    """Raise NotFittedError unless ``estimator`` has been fitted.

    attributes (list[str] | None): the fitted attributes to look for; None looks
        for any attribute whose name ends (but does not start) with "_".
    """
    if attributes is not None:
        fitted = all(hasattr(estimator, name) for name in attributes)
    else:
        fitted = any(name.endswith("_") and not name.startswith("__") for name in vars(estimator))
    if not fitted:
        raise NotFittedError(Errors.E401.format(name=type(estimator).__name__))


def check_random_state(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from an estimator's ``random_state``.

    seed (int | np.random.Generator | None): an int seeds a new generator
        (estimators default to 0, so that fits are reproducible); a Generator is
        used as it is; None draws fresh entropy (not reproducible).
    RETURNS (np.random.Generator): the generator.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise ValueError(Errors.E404.format(value=seed))


# Parameter constraints ----------------------------------------------------------------


class Constraint:
    """What a parameter may be: ``met(value)``, and ``expected``, for the message."""

    expected: str

    def met(self, value: Any) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Number(Constraint):
    """A number with ``low <= value < high`` (NaN fails; a bool is never a number).

    expected (str): what a valid value is, for the message ("an int >= 1").
    low (float): the smallest valid value.
    high (float | None): the first invalid value above it (None: no bound).
    integer (bool): only ints are valid (else any real number).
    """

    expected: str
    low: float
    high: float | None = None
    integer: bool = False

    def met(self, value: Any) -> bool:
        kinds = (int, np.integer) if self.integer else (int, float, np.integer, np.floating)
        return bool(
            isinstance(value, kinds)
            and not isinstance(value, bool)
            # written so that NaN fails too
            and self.low <= value
            and (self.high is None or value < self.high)
        )


@dataclass(frozen=True)
class Choice(Constraint):
    """One of ``choices``."""

    choices: tuple[Any, ...]

    @property
    def expected(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(map(str, self.choices))

    def met(self, value: Any) -> bool:
        return value in self.choices


@dataclass(frozen=True)
class Bool(Constraint):
    """A bool (numpy's too)."""

    expected: str = "a bool"

    def met(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class States(Constraint):
    """Latent states: an int from 1 to the ceiling, or a mapping of symbols to such ints."""

    expected: str = f"an int from 1 to {CEILINGS.n_states}, or a mapping of symbols to such ints"

    def met(self, value: Any) -> bool:
        return not _bad_states(value)


def int_range(low: int, high: int) -> Number:
    """An int from ``low`` to ``high``, both included."""
    return Number(f"an int from {low} to {high}", low=low, high=high + 1, integer=True)


def _bad_states(n_states: Any) -> list[Any]:
    values = n_states.values() if isinstance(n_states, Mapping) else [n_states]
    return [
        value
        for value in values
        if not (
            isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
            and 1 <= value <= CEILINGS.n_states
        )
    ]


def parameter_constraints(cls: type) -> dict[str, list[Constraint]]:
    """The constraints of a class and its bases (a subclass's replace its bases')."""
    constraints: dict[str, list[Constraint]] = {}
    for klass in reversed(cls.__mro__):
        constraints.update(vars(klass).get("_parameter_constraints", {}))
    return constraints


def validate_params(estimator: BaseEstimator) -> None:
    """Check every parameter the estimator's class constrains, in the order declared.

    RAISES ValueError: E011, naming the first parameter that meets none of its
        constraints and what it expects (for ``States``, the invalid value inside).
    """
    for name, constraints in parameter_constraints(type(estimator)).items():
        check_param(estimator, name, constraints)


def check_param(estimator: Any, name: str, constraints: list[Constraint]) -> None:
    """Raise ValueError (E011, naming the parameter) unless the value of ``name`` meets
    one of ``constraints``."""
    value = getattr(estimator, name)
    if any(constraint.met(value) for constraint in constraints):
        return
    if len(constraints) == 1 and isinstance(constraints[0], States):
        value = _bad_states(value)[0]  # the number at fault, in a mapping too
    expected = " or ".join(constraint.expected for constraint in constraints)
    raise ValueError(Errors.E011.format(value=value, name=name, expected=expected))


# One constraint at a time, for the checks that depend on another parameter.


def check_number(
    estimator: Any,
    name: str,
    expected: str,
    *,
    low: float,
    high: float | None = None,
    integer: bool = False,
) -> None:
    """``check_param`` with one ``Number``."""
    check_param(estimator, name, [Number(expected, low, high, integer)])


def check_choice(estimator: Any, name: str, choices: tuple[str, ...]) -> None:
    """``check_param`` with one ``Choice``."""
    check_param(estimator, name, [Choice(choices)])


# Estimators that count a treebank ------------------------------------------------------


def as_transform_spec(transform: TransformSpec | Mapping | None) -> TransformSpec:
    """A TransformSpec from an estimator's ``transform`` parameter (spec, dict or None)."""
    if transform is None:
        return TransformSpec()
    if isinstance(transform, TransformSpec):
        return transform
    if isinstance(transform, Mapping):
        return TransformSpec.from_dict(transform)
    expected = "a TransformSpec, a dict of its settings, or None"
    raise ValueError(Errors.E011.format(value=transform, name="transform", expected=expected))


class TreebankEstimator(BaseEstimator):
    """Base of the estimators that count a transformed treebank: what they share.

    Subclasses set ``name`` and take ``transform`` (TransformSpec | dict | None),
    ``lexicon`` (LexiconSpec | dict | None: the Lexicon's settings) and ``language``
    (the training data's, for the unknown-word signatures) in ``__init__``.

    The lexicon's settings also go by their own names, as the estimators took them
    before ``lexicon`` held them: ``MLEEstimator(rare_threshold=2)`` is
    ``MLEEstimator(lexicon=LexiconSpec(rare_threshold=2))``; ``set_params``, attribute
    reads and ``repr`` take them so, ``get_params(deep=True)`` and the parameters a
    model records (``json_params``) list them so, and models and checkpoints written
    before read the same.
    """

    name = ""

    transform: TransformSpec | Mapping | None
    lexicon: LexiconSpec | Mapping | None
    language: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = vars(cls).get("__init__")
        if init is not None and "lexicon" in inspect.signature(init).parameters:
            cls.__init__ = _folding_lexicon_settings(init)  # type: ignore[method-assign]

    def __getattr__(self, name: str) -> Any:
        # only for names that are not attributes: the lexicon's settings
        if name in LEXICON_SETTINGS and "lexicon" in self.__dict__:
            return getattr(as_lexicon_spec(self.__dict__["lexicon"]), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep)
        if deep and "lexicon" in params:
            params.update(as_lexicon_spec(params.pop("lexicon")).to_dict())
        return params

    def _settable(self) -> set[str]:
        return super()._settable() | set(LEXICON_SETTINGS)

    def set_params(self, **params: Any) -> BaseEstimator:
        settings = {name: params.pop(name) for name in LEXICON_SETTINGS if name in params}
        if "lexicon" in params:
            self.lexicon = params.pop("lexicon")
        if settings:
            self.lexicon = with_lexicon_settings(self.lexicon, settings)
        return super().set_params(**params)

    def _shown_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        params, defaults = super()._shown_params()
        if "lexicon" in params:  # the settings that differ, by their own names
            params.update(as_lexicon_spec(params.pop("lexicon")).to_dict())
            defaults.update(LexiconSpec().to_dict())
        return params, defaults

    def _check_params(self) -> None:
        self._make_lexicon()  # checks the lexicon's settings, first
        super()._check_params()

    def _make_lexicon(self) -> Lexicon:
        """An unfitted Lexicon with the estimator's settings (it checks them)."""
        return as_lexicon_spec(self.lexicon).lexicon(self.language)

    def _make_model(
        self,
        grammar: LPCFG,
        lexicon: Lexicon,
        spec: TransformSpec,
        counts: RuleCounts,
        *,
        extra_grammars: tuple[LPCFG, ...] = (),
        spectrum: Spectrum | None = None,
        **training: Any,
    ) -> ParsingModel:
        """The ParsingModel of a fit: the estimator's name and parameters, and the
        tree and word counts (plus ``training``) as training facts."""
        return ParsingModel(
            grammar,
            lexicon,
            spec,
            estimator=self.name,
            params=json_params(self),
            training={"trees": counts.n_trees, "words": counts.n_words, **training},
            extra_grammars=extra_grammars,
            spectrum=spectrum,
        )


def _folding_lexicon_settings(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` taking the lexicon's settings by their own names too (into ``lexicon``)."""

    default = inspect.signature(init).parameters["lexicon"].default

    @functools.wraps(init)  # inspect.signature still reads ``init``'s parameters
    def __init__(self: Any, *args: Any, **params: Any) -> None:
        settings = {name: params.pop(name) for name in LEXICON_SETTINGS if name in params}
        if settings:
            params["lexicon"] = with_lexicon_settings(params.get("lexicon", default), settings)
        init(self, *args, **params)

    return __init__


def json_params(estimator: BaseEstimator) -> dict[str, Any]:
    """The estimator's parameters as JSON data, as a model records them (objects with
    ``to_dict`` converted; a ``lexicon``'s settings by their own names, as before it
    held them, so that the records and checkpoints of earlier versions compare)."""
    params = estimator.get_params(deep=False)
    if isinstance(estimator, TreebankEstimator) and "lexicon" in params:
        # not a lexicon: the fit that would record it refuses it first
        with contextlib.suppress(ValueError):
            params.update(as_lexicon_spec(params.pop("lexicon")).to_dict())
    return {
        name: value.to_dict() if hasattr(value, "to_dict") else value
        for name, value in sorted(params.items())
    }
