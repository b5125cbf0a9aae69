"""Default settings shared by the library, the CLI and the spaCy component.

Each default lives here once; the parser, the command line options and the
component's config read it from here (the CLI without importing numba).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PRUNE_THRESHOLD = 3e-4
"""Posterior threshold of coarse-to-fine pruning. Chosen on ptb_sample dev and test
with the default pruning levels: about the F1 of the former 1e-5 at a fraction of its
parse time (BENCHMARKS.md "Parsing: speed and accuracy")."""

PRUNE_STATES = 4
"""A latent grammar with more states to a symbol is pruned once more before its own
pass: with runs of its states merged into this many (``chart.pruning``; 0: not).
Chosen with ``STATE_PRUNE_THRESHOLD`` on the dev splits of ptb_sample, cess_esp and
floresta against 2 and 8 states and other thresholds: the most accurate on all three,
and as fast on average as any setting that lost no F1 (BENCHMARKS.md "Pruning by
merged states")."""

STATE_PRUNE_THRESHOLD = PRUNE_THRESHOLD
"""The posterior threshold of the merged-states pass (``PRUNE_STATES``): the other
passes' (against 1e-4 and 1e-3, BENCHMARKS.md "Pruning by merged states")."""

STATE_ORDERED_ESTIMATORS = ("split_merge",)
"""Estimators whose grammars get the merged-states pass by default: split-merge numbers
the halves of a state next to each other, so runs of neighbours stand for the states
of an earlier cycle. A clustering grammar's states have no such order: on ptb_sample
dev the pass cost it speed at no gain in F1 (BENCHMARKS.md "Pruning by merged
states")."""

ENSEMBLE_PRUNE_THRESHOLD = 1e-4
"""An ensemble's grammars after the first parse the items whose posterior under the
first is above this (``decode.charts.ensemble_charts``). ptb_sample dev, 8 clustering
grammars: the F1 of parsing every grammar over the pruning passes' items, much faster
(BENCHMARKS.md "Ensembles and products: grammars pruned by the first")."""

MAX_LENGTH = 150
"""Sentences longer than this (in tokens) get a flat tree instead of a parse."""

DECODER = "auto"
"""``auto``: product_mbr for an ensemble, mbr for a signed grammar and for one with latent
states over collapsed unary chains (the default transforms), else max_rule (the treebank
PCFG; with ``collapse_unary=False``, whose chains MBR's one label per span would cut).
On ptb_sample dev mbr beats max_rule for every grammar with latent states (every
split-merge seed, on test too; a clustering grammar with or without function tags,
whose function labels gained too; INHERIT), while for the treebank PCFG it loses with
function tags and wins without (BENCHMARKS.md "Decoders of single grammars (ptb_sample)")."""

MEMBER_DECODER = "product"
"""How ``combine`` joins models trained apart (``decode.members``). On ptb_sample test,
a left- and a right-binarised clustering model together score well above either alone,
more so with product than with mbr (BENCHMARKS.md "Combined models: members trained
apart (ptb_sample)")."""

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
    explains each; word_smoothing 1.0 lost tagging accuracy on ptb_sample dev, see
    BENCHMARKS.md "POS tagging: the four corpora, before and after script-aware
    signatures" for the accuracy of these settings)."""

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
    """``SpectralEstimator``: m = 8 parses much faster than m = 16 on ptb_sample dev for
    a little less F1, and m = 32 scores below both (BENCHMARKS.md "Latent estimators: F1
    against m (ptb_sample dev)")."""

    n_states: int = 8
    lexical_smoothing: float = 1.0


@dataclass(frozen=True)
class ClusteringDefaults:
    """``ClusteringEstimator``: m = 16 was the best on ptb_sample dev, above m = 8 and
    m = 32 (BENCHMARKS.md "Latent estimators: F1 against m (ptb_sample dev)"); one
    k-means++ run of at most 100 iterations per symbol."""

    n_states: int = 16
    smoothing: float = 0.1
    lexical_smoothing: float = 0.1
    n_init: int = 1
    init: Literal["k-means++", "random"] = "k-means++"
    max_iter: int = 100


@dataclass(frozen=True)
class NoiseDefaults:
    """``NoisyEnsemble``: 8 members with gaussian noise 0.3, the best of those tried on
    ptb_sample dev (16 members, gaussian 0.6, dropout 0.2, multiplicative 0.5 lost;
    BENCHMARKS.md "Latent estimators: ptb_sample test")."""

    n_models: int = 8
    noise: Literal["dropout", "gaussian", "multiplicative"] = "gaussian"
    noise_scale: float = 0.3


@dataclass(frozen=True)
class SplitMergeDefaults:
    """``SplitMergeEstimator`` (Petrov et al. 2006): 4 split-merge cycles of 20 EM
    iterations, half the splits merged back, 10 smoothed iterations after each merge,
    over X-bar trees (h = 0, v = 1, function tags stripped), as the Berkeley parser
    trains. On ptb_sample one seed is about as accurate as the Berkeley parser's SM4
    grammar with mbr, the decoder auto picks (BENCHMARKS.md "Decoders of single grammars
    (ptb_sample)", "Split-merge EM against the Berkeley parser (ptb_sample)"); with the
    transforms of ``TransformDefaults`` it scores lower. Given dev trees, the cycle kept
    is the best on at most 300 of them (evenly spaced): on ptb_sample dev, F1 rises up to
    cycle 3 and no further (BENCHMARKS.md "Clone some, clone all, INHERIT and split-merge
    (ptb_sample dev)"; a fit of 5 cycles keeps cycle 3); parsing them after each cycle
    costs little beside the fit, most of it after the last and largest grammar."""

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
    3 is the best on ptb_sample dev of the products that parse at least twice as fast as
    the Berkeley parser: 2 seeds score lower, 4 and 8 parse slower than that (BENCHMARKS.md
    "Products of split-merge seeds against the Berkeley parser (ptb_sample)", "Ensembles
    and products: grammars pruned by the first")."""
    binarization: str = "right"
    h_markov: int | None = 0
    v_markov: int = 1
    keep_functions: bool = False


@dataclass(frozen=True)
class InheritDefaults:
    """``InheritEstimator`` (Dreyer & Eisner 2006's INHERIT model) over X-bar trees: 16
    feature values reached by cloning all from 2 (2, 4, 8, 16), 50 EM iterations per
    stage. On ptb_sample dev (max_rule, mean over seeds 0-3) this beat training without
    the cloning, lexical_smoothing 0.1 and 8 values (annealed or not, rule smoothing 0.05);
    32 values scored a little higher on two seeds but parse several times slower with 8
    times the expanded grammar (BENCHMARKS.md "Clone some, clone all, INHERIT and
    split-merge (ptb_sample dev)")."""

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
    dropped (BENCHMARKS.md "Function labels: the grammar's or the labeller's"), and at
    most ``max_parameters`` coefficients."""

    C: float = 1.0
    max_iter: int = 300
    min_count: int = 2
    max_parameters: int = 4_000_000
    """Classes x (features + 1) at most: rarer features are dropped until the model
    fits (a higher ``min_count``). L-BFGS holds about 240 bytes a coefficient (its ten
    correction pairs and its vectors), so this is about 1 GB. Only icepahc's labeller
    is over it with ``min_count`` 2 (203 x 43,746); dropping its features seen fewer
    than 5 times took its fit from 3.14 to 1.73 GB, and 91.09% of its test phrases
    labelled right on gold brackets to 91.11% (BENCHMARKS.md "Function labeller: its
    coefficient budget")."""


FUNCTION_LABEL_SOURCES = ("auto", "grammar", "labeller")
FUNCTION_LABELS = "auto"
"""Whose function tags a model with a function labeller (``train --function-labeller``)
gives when its grammar keeps function tags too: "grammar" (its own; the labeller then
labels only grammars that strip them), "labeller", or "auto": the grammar's when a
latent grammar keeps them (clustering, spectral, split-merge, the four-way
combination), the labeller's over a treebank PCFG (MLE). On the test F1 with full labels
of the four treebanks, the four-way combination's own tags beat the labeller's and the
labeller's beat the treebank PCFG's (BENCHMARKS.md "Function labels: the grammar's or the
labeller's"); on ptb_sample dev a clustering grammar's own were a little better too."""


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
    labeller_parameters: int = 1_000_000_000
    """FunctionLabeller's max_parameters: 240 GB of solver memory."""
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
