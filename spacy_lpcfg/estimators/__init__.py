"""Estimators: treebank (and later latent-state) grammars with a scikit-learn contract."""

from .base import BaseEstimator, NotFittedError, check_is_fitted, check_random_state, clone
from .clustering import ClusteringEstimator
from .combined import CombinedEstimator
from .inherit import InheritEstimator
from .mle import MLEEstimator, RuleCounts, count_rules
from .spectral import SpectralEstimator
from .split_merge import SplitMergeEstimator

__all__ = [
    "BaseEstimator",
    "ClusteringEstimator",
    "CombinedEstimator",
    "InheritEstimator",
    "MLEEstimator",
    "NotFittedError",
    "RuleCounts",
    "SpectralEstimator",
    "SplitMergeEstimator",
    "check_is_fitted",
    "check_random_state",
    "clone",
    "count_rules",
]
