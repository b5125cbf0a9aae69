"""Estimators: treebank (and later latent-state) grammars with a scikit-learn contract.

``registry`` names every estimator (``ESTIMATORS``, ``register_estimator``,
``get_estimator``); ``base`` holds the contract they follow. The names below load
on first use, so that reading the registry (the CLI's help) imports no estimator
module and no numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        BaseEstimator,
        NotFittedError,
        TreebankEstimator,
        check_is_fitted,
        check_random_state,
        clone,
    )
    from .clustering import ClusteringEstimator
    from .combined import CombinedEstimator
    from .inherit import InheritEstimator
    from .mle import MLEEstimator, RuleCounts, count_rules
    from .registry import ESTIMATORS, get_estimator, register_estimator
    from .spectral import SpectralEstimator
    from .split_merge import SplitMergeEstimator

# name -> the module that defines it
_MODULES = {
    "BaseEstimator": "base",
    "NotFittedError": "base",
    "TreebankEstimator": "base",
    "check_is_fitted": "base",
    "check_random_state": "base",
    "clone": "base",
    "ClusteringEstimator": "clustering",
    "CombinedEstimator": "combined",
    "InheritEstimator": "inherit",
    "MLEEstimator": "mle",
    "RuleCounts": "mle",
    "count_rules": "mle",
    "ESTIMATORS": "registry",
    "get_estimator": "registry",
    "register_estimator": "registry",
    "SpectralEstimator": "spectral",
    "SplitMergeEstimator": "split_merge",
}

__all__ = [
    "ESTIMATORS",
    "BaseEstimator",
    "ClusteringEstimator",
    "CombinedEstimator",
    "InheritEstimator",
    "MLEEstimator",
    "NotFittedError",
    "RuleCounts",
    "SpectralEstimator",
    "SplitMergeEstimator",
    "TreebankEstimator",
    "check_is_fitted",
    "check_random_state",
    "clone",
    "count_rules",
    "get_estimator",
    "register_estimator",
]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)
