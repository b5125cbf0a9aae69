"""Estimators: treebank (and later latent-state) grammars with a scikit-learn contract."""

from .base import BaseEstimator, NotFittedError, check_is_fitted, check_random_state, clone
from .mle import MLEEstimator, RuleCounts, count_rules

__all__ = [
    "BaseEstimator",
    "MLEEstimator",
    "NotFittedError",
    "RuleCounts",
    "check_is_fitted",
    "check_random_state",
    "clone",
    "count_rules",
]
