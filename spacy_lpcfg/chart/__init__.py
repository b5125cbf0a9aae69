"""Chart algorithms: latent inside-outside and Viterbi over pruned charts, the dense
coarse pass that decides pruning, and the grammar-free span CKY.

Importing this package imports numba (the kernels are compiled on first use and
cached on disk).
"""

from .coarse import CoarsePosteriors, coarse_posteriors
from .inputs import MergedMask
from .inside_outside import AnchoredRules, ChartPosteriors, inside_outside
from .span_cky import SpanTree, span_cky
from .viterbi import Derivation, viterbi

__all__ = [
    "AnchoredRules",
    "ChartPosteriors",
    "CoarsePosteriors",
    "Derivation",
    "MergedMask",
    "SpanTree",
    "coarse_posteriors",
    "inside_outside",
    "span_cky",
    "viterbi",
]
