"""The estimator contract, after scikit-learn (without depending on it).

An estimator's ``__init__`` only stores its keyword arguments, unchanged, under
their own names; ``get_params`` / ``set_params`` read and write them (nested
estimators with ``outer__inner`` names), ``clone`` rebuilds an unfitted copy
from them, and ``fit(trees, dev_trees=None)`` returns ``self`` with the learned
attributes ending in ``_``. ``check_is_fitted`` looks for those.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..defaults import CEILINGS
from ..errors import Errors


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

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set hyperparameters (``name__param`` for nested estimators). RETURNS: self."""
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    Errors.E212.format(
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

    def __repr__(self) -> str:
        # Like scikit-learn, only the parameters that differ from their defaults.
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(type(self).__init__).parameters.items()
        }
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if repr(value) != repr(defaults.get(name))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"


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
            raise RuntimeError(Errors.E213.format(estimator=type(estimator).__name__, name=name))
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
        raise NotFittedError(Errors.E211.format(name=type(estimator).__name__))


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
    raise ValueError(Errors.E214.format(value=seed))


def check_number(
    estimator: BaseEstimator,
    name: str,
    expected: str,
    *,
    low: float,
    high: float | None = None,
    integer: bool = False,
) -> None:
    """Raise ValueError (naming the parameter) unless ``low <= value < high``.

    estimator (BaseEstimator): the estimator whose parameter ``name`` is checked.
    expected (str): what a valid value is, for the message.
    low (float): the smallest valid value.
    high (float | None): the first invalid value above it (None: no bound).
    integer (bool): only ints are valid (else any real number; never a bool).
    """
    value = getattr(estimator, name)
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    valid = (
        isinstance(value, kinds)
        and not isinstance(value, bool)
        # written so that NaN fails too
        and low <= value
        and (high is None or value < high)
    )
    if not valid:
        raise ValueError(Errors.E012.format(value=value, name=name, expected=expected))


def check_states(n_states: Any) -> None:
    """Raise ValueError unless ``n_states`` is an int from 1 to the ceiling, or a mapping
    of symbols to such ints (the latent estimators' ``n_states``)."""
    top = CEILINGS.n_states
    values = n_states.values() if isinstance(n_states, Mapping) else [n_states]
    for value in values:
        valid = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not (valid and 1 <= value <= top):
            expected = f"an int from 1 to {top}, or a mapping of symbols to such ints"
            raise ValueError(Errors.E012.format(value=value, name="n_states", expected=expected))


def check_bool(estimator: BaseEstimator, name: str) -> None:
    """Raise ValueError (naming the parameter) unless its value is a bool."""
    value = getattr(estimator, name)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(Errors.E012.format(value=value, name=name, expected="a bool"))


def check_choice(estimator: BaseEstimator, name: str, choices: tuple[str, ...]) -> None:
    """Raise ValueError (naming the parameter) unless its value is one of ``choices``."""
    value = getattr(estimator, name)
    if value not in choices:
        expected = "one of " + ", ".join(choices)
        raise ValueError(Errors.E012.format(value=value, name=name, expected=expected))
