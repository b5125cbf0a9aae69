"""Searching the recipe and the latent states of a grammar on dev (docs/design/architecture.md, section 7).

``LatentStateSearch`` is the meta-estimator (states per symbol, Narayan & Cohen 2016
Figure 2); ``optimize`` wraps it in the recipe search of ``spacy-lpcfg optimize``.
"""

from .beam import SearchResult, beam_search, coarse_values
from .optimize import OptimizeResult, check_search_options, optimize, write_result
from .states import LatentStateSearch

__all__ = [
    "LatentStateSearch",
    "OptimizeResult",
    "SearchResult",
    "beam_search",
    "check_search_options",
    "coarse_values",
    "optimize",
    "write_result",
]
