"""The scikit-learn estimator contract of the bracketers: ``estimators.base``'s, with
its checks as methods (the bracketers' code reads them as ``self.check_...``)."""

from __future__ import annotations

from ..estimators.base import BaseEstimator, NotFittedError
from ..estimators.base import check_choice as _check_choice
from ..estimators.base import check_is_fitted as _check_is_fitted
from ..estimators.base import check_number as _check_number

__all__ = ["NotFittedError", "Params"]


class Params(BaseEstimator):
    """Hyperparameters from the constructor signature, with the package's checks."""

    def check_is_fitted(self, attribute: str) -> None:
        """Raise NotFittedError unless ``attribute`` (a fitted attribute) exists."""
        _check_is_fitted(self, [attribute])

    def check_number(
        self,
        name: str,
        expected: str,
        *,
        low: float,
        high: float | None = None,
        integer: bool = False,
    ) -> None:
        """Raise ValueError (E011, naming the parameter) unless ``low <= value < high``."""
        _check_number(self, name, expected, low=low, high=high, integer=integer)

    def check_choice(self, name: str, choices: tuple[str, ...]) -> None:
        """Raise ValueError (E011) unless the parameter's value is one of ``choices``."""
        _check_choice(self, name, choices)
