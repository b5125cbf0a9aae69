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

MEMBER_PRUNE_THRESHOLD = 1e-4
"""An ensemble's members after the first parse the items whose posterior under the
first is above this (``decode.charts.member_charts``). ptb_sample dev, 8 clustering
members: the F1 of parsing every member over the pruning passes' items, twice as fast."""

MAX_LENGTH = 150
"""Sentences longer than this (in tokens) get a flat tree instead of a parse."""

DECODER = "auto"
"""``auto``: product_mbr for an ensemble, mbr for a signed grammar and for one with latent
states over collapsed unary chains (the default transforms), else max_rule (the treebank
PCFG; with ``collapse_unary=False``, whose chains MBR's one label per span would cut). On ptb_sample dev, mbr against max_rule:
8 split-merge seeds 86.64 against 86.22 (every seed higher; test 85.14 against 84.65),
a clustering grammar 87.47 against 86.93 (85.25 against 84.83 with function tags,
whose function labels gained too), INHERIT 81.45 against 80.16; the treebank PCFG
78.13 against 78.83 with function tags (79.50 against 77.37 without)."""

MEMBER_DECODER = "product"
"""How ``combine`` joins models trained apart (``decode.members``). On ptb_sample test,
a left- and a right-binarised clustering model (82.64 and 82.51 F1 alone): product
85.55, mbr 84.80."""

# Training defaults. The estimators, the Lexicon and TransformSpec take their default
# arguments from these, and so do the options of ``spacy-lpcfg train`` and the
# registered estimator functions of the spaCy config, which must not import the
# estimators (numba) to show them. ``tests/test_defaults.py`` compares them all.
# A measured configuration that differs from them is a recipe (``recipes.py``).

ESTIMATOR = "combined"
"""The estimator of a ``Recipe()`` that names none: Le Roux et al.'s four clustering
L-PCFGs (binarised left and right, function tags kept and stripped) decoded together.
``spacy-lpcfg train`` without options fits ``recipes.DEFAULT_RECIPE`` instead (the
product of split-merge seeds with a function labeller); ``mle`` is the treebank PCFG
baseline, fitted in seconds. (The spaCy component's default ``estimator`` block stays
the MLE one: a config says what it trains.)"""


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
    trains. ptb_sample dev 86.04 F1, test 85.17 with max_rule (mbr, the decoder auto picks:
    86.58, 85.67; Berkeley SM4: 86.01, 85.64); with the
    transforms of ``TransformDefaults`` 83.85 / 81.51. Given dev trees, the cycle kept is
    the best on at most 300 of them (evenly spaced): on all 273 of ptb_sample dev, cycles
    1 to 5 scored (max_rule) 75.03, 81.23, 86.12, 86.04, 85.75 (5 cycles keep cycle 3); parsing
    them took 3 to 9 s after each of cycles 1 to 4 and 37 s after cycle 5, 57 s of a
    250 s fit (a busy machine)."""

    n_cycles: int = 4
    em_iterations: int = 20
    merge_em_iterations: int = 10
    merge_fraction: float = 0.5
    split: str = "all"
    split_noise: float = 0.01
    smoothing: float = 0.01
    lexical_smoothing: float = 0.1
    select_cycle_on_dev: bool = True
    dev_sample: int = 300
    n_jobs: int = 1
    n_models: int = 3
    """Seeds of a product (``SeedProduct``, ``train --recipe split_merge_product``).
    ptb_sample dev / test F1 and speed against the Berkeley parser (median of six
    ``race.sh`` runs, BENCHMARKS.md "seed_products"): 1 seed 86.05 / 85.17 (max_rule;
    mbr, its decoder now: 86.58 / 85.67), 2 seeds
    88.52 / 87.07 at 2.35x, 3 seeds 88.71 / 87.43 at 2.18x, 4 seeds 88.66 / 87.31 at
    1.83x, 8 seeds 89.15 / 87.60 at 1.39x: 3 is the best on dev of the products that
    parse at least twice as fast as the Berkeley parser (since the latent kernels' split
    bitsets: 3 seeds 2.40x, 8 seeds 1.57x, "members")."""
    binarization: str = "right"
    h_markov: int | None = 0
    v_markov: int = 1
    keep_functions: bool = False


@dataclass(frozen=True)
class InheritDefaults:
    """``InheritEstimator`` (Dreyer & Eisner 2006's INHERIT model) over X-bar trees: 16
    feature values reached by cloning all from 2 (2, 4, 8, 16), 50 EM iterations per
    stage. ptb_sample dev F1 (max_rule), mean over seeds 0-3: 80.22 (79.19-81.41); without the
    cloning 79.26; with lexical_smoothing 0.1 79.65; 8 values 78.84 (not annealed
    77.76, rule smoothing 0.05 77.65); 32 values 81.10 on seeds 0-1 (against 80.79 for
    16) but parse 4 times slower with 8 times the expanded grammar."""

    n_states: int = 16
    clone_all: bool = True
    em_iterations: int = 50
    noise: float = 0.1
    smoothing: float = 0.01
    lexical_smoothing: float = 0.3


@dataclass(frozen=True)
class FunctionLabellerDefaults:
    """``FunctionLabeller`` (function tags put on parses by a logistic regression over
    phrase features): C = 1, 300 lbfgs iterations, features seen fewer than twice
    dropped. ptb_sample dev, tags of the gold brackets: 85.3 function F1."""

    C: float = 1.0
    max_iter: int = 300
    min_count: int = 2


FUNCTION_LABEL_SOURCES = ("auto", "grammar", "labeller")
FUNCTION_LABELS = "auto"
"""Whose function tags a model with a function labeller (``train --function-labeller``)
gives when its grammar keeps function tags too: "grammar" (its own; the labeller then
labels only grammars that strip them), "labeller", or "auto": the grammar's when a
latent grammar keeps them (clustering, spectral, split-merge, the four-way
combination), the labeller's over a treebank PCFG (MLE). Test F1 with full labels,
grammar's / labeller's (``benchmarks/bench_function_labels.py``): the four-way
combination 81.36 / 81.05 on ptb_sample, 69.59 / 68.61 floresta, 75.88 / 75.41
cess_esp, 70.29 / 69.61 icepahc; MLE 69.06 / 71.02, 61.91 / 63.78, 69.46 / 70.36,
58.57 / 62.20. ptb_sample dev, a clustering grammar (m = 16): 80.00 / 79.74."""


@dataclass(frozen=True)
class SearchDefaults:
    """``spacy-lpcfg optimize`` and ``LatentStateSearch`` (Narayan & Cohen 2016, Figure 2; docs/design/architecture.md, section 7):
    states per symbol from 1 to 32, coarse steps of 5 then +-1..4, a beam of 1, over the
    symbols with at least 100 training nodes, most frequent first; around it, the
    transforms tried (v = 1 or 2, function tags kept or stripped; right binarisation,
    h = 1) and a noisy ensemble of 8 members with the states found."""

    max_states: int = 32
    beam: int = 1
    coarse_step: int = 5
    max_symbols: int | None = None
    min_count: int = 100
    transforms: tuple[tuple[int, bool], ...] = ((1, False), (1, True), (2, False), (2, True))
    """(v_markov, keep_functions) pairs."""
    n_models: int = 8
    noise_scale: float = 0.3
    holdout: float = 0.2
    """The share of the training trees the search scores on (dev chooses the finalist)."""
    keep_default_within: float = 0.5
    """Dev F1 points a finalist must beat ``train``'s default recipe by to be chosen."""


@dataclass(frozen=True)
class Ceilings:
    """The largest value each numeric option takes, checked before any work starts, so
    that no option asks for unbounded memory, time or processes. Memory grows with the
    square of the states of a symbol and doubles with each split-merge cycle."""

    trees: int = 10_000_000
    """--limit, --dev-limit, --search-limit."""
    n_states: int = 64
    """Latent states of a symbol (--n-states, optimize --max-states)."""
    n_cycles: int = 6
    """Split-merge cycles: up to 64 states per symbol, as the Berkeley parser's SM6."""
    n_models: int = 32
    """Members of an ensemble or a product of seeds."""
    n_jobs: int = 64
    """Workers of one fit or search."""
    sentence_length: int = 1000
    """--max-length: longer sentences get a flat tree."""
    kbest: int = 1000
    """Trees of a k-best list (``Parser.kbest``, parse --kbest)."""
    markov: int = 100
    """--h-markov and --v-markov."""
    rare_threshold: int = 1_000_000
    beam: int = 64
    em_iterations: int = 10_000
    max_time: float = 30 * 24 * 3600.0
    """optimize --max-time: thirty days."""


CEILINGS = Ceilings()
TRANSFORM = TransformDefaults()
LEXICON = LexiconDefaults()
LATENT = LatentDefaults()
SPECTRAL = SpectralDefaults()
CLUSTERING = ClusteringDefaults()
NOISE = NoiseDefaults()
SPLIT_MERGE = SplitMergeDefaults()
INHERIT = InheritDefaults()
SEARCH = SearchDefaults()
FUNCTION_LABELLER = FunctionLabellerDefaults()
