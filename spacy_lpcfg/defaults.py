"""Default settings shared by the library, the CLI and the spaCy component.

Each default lives here once; the parser, the command line options and the
component's config read it from here (the CLI without importing numba).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PRUNE_THRESHOLD = 3e-4
"""Posterior threshold of coarse-to-fine pruning. Chosen on ptb_sample dev and test
with the default pruning levels: the F1 of 1e-5 (within 0.1 on average), 2.5 times
faster."""

MAX_LENGTH = 150
"""Sentences longer than this (in tokens) get a flat tree instead of a parse."""

DECODER = "auto"
"""``auto``: product_mbr for an ensemble, mbr for a spectral model, else max_rule."""

MEMBER_DECODER = "product"
"""How ``combine`` joins models trained apart (``decode.members``). On ptb_sample test,
a left- and a right-binarised clustering model (82.64 and 82.51 F1 alone): product
85.55, mbr 84.80."""

# Training defaults. The estimators, the Lexicon and TransformSpec take their default
# arguments from these, and so do the options of ``spacy-lpcfg train`` and the
# registered estimator functions of the spaCy config, which must not import the
# estimators (numba) to show them. ``tests/test_defaults.py`` compares them all.
# A measured configuration that differs from them is a recipe (``recipes.py``).

ESTIMATOR = "mle"
"""The estimator of ``spacy-lpcfg train`` and of the component: the treebank PCFG (the
baseline, fitted in seconds). ``recipes.RECOMMENDED`` is the accurate one."""


@dataclass(frozen=True)
class TransformDefaults:
    """``TransformSpec``'s settings that the CLI and the component expose (its docstring
    says why): right binarisation, Klein & Manning's h = 1, v = 2, function tags kept."""

    binarization: str = "right"
    h_markov: int | None = 1
    v_markov: int = 2
    keep_functions: bool = True


@dataclass(frozen=True)
class LexiconDefaults:
    """The ``Lexicon``'s parameters, which every estimator takes too (its docstring
    explains each; word_smoothing 1.0 lost 0.6 points of tagging accuracy on ptb_sample
    dev)."""

    signature: str = "auto"
    language: str = "en"
    suffix_length: int = 3
    rare_threshold: int = 1
    open_class_threshold: int = 5
    smooth_threshold: int = 10
    word_smoothing: float = 0.1
    signature_smoothing: float = 1.0


@dataclass(frozen=True)
class LatentDefaults:
    """What the spectral and clustering estimators (and noisy ensembles) share: feature
    scaling, the caps on the states of a symbol and the seed (fits are reproducible)."""

    kappa: float = 5.0
    word_threshold: int = 5
    min_count_per_state: float = 5.0
    singular_value_threshold: float = 1e-3
    random_state: int | None = 0


@dataclass(frozen=True)
class SpectralDefaults:
    """``SpectralEstimator``: m = 8 parses 1.75 times as fast as m = 16 on ptb_sample dev
    for 1 F1 less (82.84 against 83.88; m = 32: 82.46; BENCHMARKS.md)."""

    n_states: int = 8
    lexical_smoothing: float = 1.0


@dataclass(frozen=True)
class ClusteringDefaults:
    """``ClusteringEstimator``: m = 16 was the best on ptb_sample dev (85.40 F1; m = 8:
    85.25, m = 32: 84.96; BENCHMARKS.md); one k-means++ run of at most 100 iterations
    per symbol."""

    n_states: int = 16
    smoothing: float = 0.1
    lexical_smoothing: float = 0.1
    n_init: int = 1
    init: Literal["k-means++", "random"] = "k-means++"
    max_iter: int = 100


@dataclass(frozen=True)
class NoiseDefaults:
    """``NoisyEnsemble``: 8 members with gaussian noise 0.3, the best of those tried on
    ptb_sample dev (16 members, gaussian 0.6, dropout 0.2, multiplicative 0.5 lost)."""

    n_models: int = 8
    noise: Literal["dropout", "gaussian", "multiplicative"] = "gaussian"
    noise_scale: float = 0.3


@dataclass(frozen=True)
class SplitMergeDefaults:
    """``SplitMergeEstimator`` (Petrov et al. 2006): 4 split-merge cycles of 20 EM
    iterations, half the splits merged back, 10 smoothed iterations after each merge,
    over X-bar trees (h = 0, v = 1, function tags stripped), as the Berkeley parser
    trains. ptb_sample dev 86.04 F1, test 85.17 (Berkeley SM4: 86.01, 85.64); with the
    transforms of ``TransformDefaults`` 83.85 / 81.51."""

    n_cycles: int = 4
    em_iterations: int = 20
    merge_em_iterations: int = 10
    merge_fraction: float = 0.5
    split_noise: float = 0.01
    smoothing: float = 0.01
    lexical_smoothing: float = 0.1
    n_jobs: int = 1
    binarization: str = "right"
    h_markov: int | None = 0
    v_markov: int = 1
    keep_functions: bool = False


TRANSFORM = TransformDefaults()
LEXICON = LexiconDefaults()
LATENT = LatentDefaults()
SPECTRAL = SpectralDefaults()
CLUSTERING = ClusteringDefaults()
NOISE = NoiseDefaults()
SPLIT_MERGE = SplitMergeDefaults()
