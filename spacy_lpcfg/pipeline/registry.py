"""Estimators as registered config functions, for the component's ``estimator`` block.

Each function takes an estimator's hyperparameters and returns it unfitted::

    [components.lpcfg_parser.estimator]
    @misc = "spacy_lpcfg.MLEEstimator.v1"
    rare_threshold = 2

The component owns two parameters every estimator has: ``transform`` (from its
``transforms`` setting and the label scheme of the training data) and
``language`` (``nlp.lang``), so the functions leave them out. It sets them on
nested estimators too (``estimator__transform``), such as the members of
``spacy_lpcfg.NoisyEnsemble.v1``, given as a block of their own::

    [components.lpcfg_parser.estimator]
    @misc = "spacy_lpcfg.NoisyEnsemble.v1"
    n_models = 8

    [components.lpcfg_parser.estimator.estimator]
    @misc = "spacy_lpcfg.ClusteringEstimator.v1"
    n_states = 16

The functions' defaults are the estimators' own (``spacy_lpcfg.defaults``), so an
empty block is the estimator's defaults. The recommended recipe
(``spacy_lpcfg.recipes``) is named rather than written out:
``spacy_lpcfg.recommended_estimator.v1`` and ``spacy_lpcfg.recommended_transforms.v1``.

Every registered estimator (``spacy_lpcfg.estimators.registry``), one written
outside the package too, is also built by name with ``spacy_lpcfg.estimator.v1``,
its parameters in a ``params`` block and the lexicon's settings in a ``lexicon``
block::

    [components.lpcfg_parser.estimator]
    @misc = "spacy_lpcfg.estimator.v1"
    name = "clustering"

    [components.lpcfg_parser.estimator.params]
    n_states = 8

    [components.lpcfg_parser.estimator.lexicon]
    rare_threshold = 2

The named functions below take the lexicon's settings flat, as the configs
written before ``lexicon`` held them (and the configs of pipelines made from a
model directory, ``pipeline.described``). The type hints are
checked when the config is resolved. The estimator modules are imported when a
function runs, not when spaCy loads the entry points.
"""

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from spacy.util import registry

from ..defaults import (
    CLUSTERING,
    FUNCTION_LABELLER,
    INHERIT,
    LATENT,
    LEXICON,
    NOISE,
    SPECTRAL,
    SPLIT_MERGE,
)
from ..recipes import RECOMMENDED

if TYPE_CHECKING:
    from ..estimators import ClusteringEstimator, MLEEstimator, SpectralEstimator
    from ..estimators.base import BaseEstimator
    from ..estimators.combined import CombinedEstimator
    from ..estimators.function_labels import FunctionLabeller
    from ..estimators.inherit import InheritEstimator
    from ..estimators.noise import NoisyEnsemble
    from ..estimators.seed_product import SeedProduct
    from ..estimators.split_merge import SplitMergeEstimator


@registry.misc("spacy_lpcfg.estimator.v1")
def make_estimator(
    name: str,
    params: dict[str, Any] | None = None,
    lexicon: dict[str, Any] | None = None,
) -> "BaseEstimator":
    """The estimator registered as ``name`` (``spacy_lpcfg.estimators.registry``).

    name (str): "mle", "spectral", "clustering", "split_merge", "clone_some",
        "inherit", "combined", or a name registered from outside the package.
    params (dict | None): its parameters (None: its defaults).
    lexicon (dict | None): the lexicon's settings (``LexiconSpec``), for an estimator
        that takes ``lexicon``.
    RETURNS (BaseEstimator): the unfitted estimator.
    RAISES ValueError: no estimator of that name.
    """
    from ..estimators.registry import estimator_entry

    given = dict(params or {})
    if lexicon is not None:
        given["lexicon"] = dict(lexicon)
    return estimator_entry(name).build(**given)


@registry.misc("spacy_lpcfg.MLEEstimator.v1")
def make_mle_estimator(
    rare_threshold: int = LEXICON.rare_threshold,
    signature: str = LEXICON.signature,
    suffix_length: int = LEXICON.suffix_length,
    open_class_threshold: int = LEXICON.open_class_threshold,
    smooth_threshold: int = LEXICON.smooth_threshold,
    word_smoothing: float = LEXICON.word_smoothing,
    signature_smoothing: float = LEXICON.signature_smoothing,
) -> "MLEEstimator":
    """The treebank PCFG (relative frequencies, one state per symbol).

    The arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (MLEEstimator): the unfitted estimator.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators import MLEEstimator

    return MLEEstimator(**params)


# The latent estimators. ``n_states`` is one number for every symbol or a table
# from the (transformed) grammar's symbol names to numbers, unlisted symbols
# getting one state, e.g. ``[components.lpcfg_parser.estimator.n_states]`` with
# ``NP = 16``; the data caps it either way (``min_count_per_state``,
# ``singular_value_threshold``). A spectral grammar is signed: the component's
# decoder "auto" (the default) decodes it with "mbr", as it does the other latent
# grammars (over collapsed unary chains; ``decode.parser.default_decoder``).


@registry.misc("spacy_lpcfg.SpectralEstimator.v1")
def make_spectral_estimator(
    n_states: int | dict[str, int] = SPECTRAL.n_states,
    kappa: float = LATENT.kappa,
    word_threshold: int = LATENT.word_threshold,
    min_count_per_state: float = LATENT.min_count_per_state,
    singular_value_threshold: float = LATENT.singular_value_threshold,
    lexical_smoothing: float = SPECTRAL.lexical_smoothing,
    random_state: int | None = LATENT.random_state,
    rare_threshold: int = LEXICON.rare_threshold,
    signature: str = LEXICON.signature,
    suffix_length: int = LEXICON.suffix_length,
    open_class_threshold: int = LEXICON.open_class_threshold,
    smooth_threshold: int = LEXICON.smooth_threshold,
    word_smoothing: float = LEXICON.word_smoothing,
    signature_smoothing: float = LEXICON.signature_smoothing,
) -> "SpectralEstimator":
    """The spectral L-PCFG of Cohen et al. (signed tensor parameters from projections).

    n_states (int | dict[str, int]): latent states per symbol. Defaults to 8.
    kappa (float): feature-scaling pseudo-count.
    word_threshold (int): words this frequent are their own word class in features.
    min_count_per_state (float): a symbol gets at most count / this states.
    singular_value_threshold (float): and at most as many states as singular values
        above this fraction of its largest.
    lexical_smoothing (float): pseudo-tokens of the tag's mean in each word's estimate.
    random_state (int | None): seeds the randomized SVDs (None: not reproducible).
    The other arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (SpectralEstimator): the unfitted estimator.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators import SpectralEstimator

    return SpectralEstimator(**params)


@registry.misc("spacy_lpcfg.ClusteringEstimator.v1")
def make_clustering_estimator(
    n_states: int | dict[str, int] = CLUSTERING.n_states,
    kappa: float = LATENT.kappa,
    word_threshold: int = LATENT.word_threshold,
    min_count_per_state: float = LATENT.min_count_per_state,
    singular_value_threshold: float = LATENT.singular_value_threshold,
    smoothing: float = CLUSTERING.smoothing,
    lexical_smoothing: float = CLUSTERING.lexical_smoothing,
    n_init: int = CLUSTERING.n_init,
    init: Literal["k-means++", "random"] = CLUSTERING.init,
    max_iter: int = CLUSTERING.max_iter,
    random_state: int | None = LATENT.random_state,
    rare_threshold: int = LEXICON.rare_threshold,
    signature: str = LEXICON.signature,
    suffix_length: int = LEXICON.suffix_length,
    open_class_threshold: int = LEXICON.open_class_threshold,
    smooth_threshold: int = LEXICON.smooth_threshold,
    word_smoothing: float = LEXICON.word_smoothing,
    signature_smoothing: float = LEXICON.signature_smoothing,
) -> "ClusteringEstimator":
    """The clustering L-PCFG of Narayan & Cohen (k-means states on projections, counts).

    n_states (int | dict[str, int]): latent states per symbol. Defaults to 16.
    kappa, word_threshold, min_count_per_state, singular_value_threshold: as for
        ``spacy_lpcfg.SpectralEstimator.v1``.
    smoothing (float): weight of the state-less parent in each rule distribution.
    lexical_smoothing (float): weight of the tag's state-less emissions in each
        state's emissions.
    n_init (int): k-means restarts per symbol.
    init (str): k-means initialisation, "k-means++" or "random".
    max_iter (int): k-means iterations per run.
    random_state (int | None): seeds the SVDs and k-means (None: not reproducible).
    The other arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (ClusteringEstimator): the unfitted estimator.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators import ClusteringEstimator

    return ClusteringEstimator(**params)


@registry.misc("spacy_lpcfg.SplitMergeEstimator.v1")
def make_split_merge_estimator(
    n_cycles: int = SPLIT_MERGE.n_cycles,
    em_iterations: int = SPLIT_MERGE.em_iterations,
    merge_em_iterations: int = SPLIT_MERGE.merge_em_iterations,
    merge_fraction: float = SPLIT_MERGE.merge_fraction,
    split: str = SPLIT_MERGE.split,
    split_noise: float = SPLIT_MERGE.split_noise,
    smoothing: float = SPLIT_MERGE.smoothing,
    lexical_smoothing: float = SPLIT_MERGE.lexical_smoothing,
    n_jobs: int = SPLIT_MERGE.n_jobs,
    random_state: int | None = LATENT.random_state,
    rare_threshold: int = LEXICON.rare_threshold,
    signature: str = LEXICON.signature,
    suffix_length: int = LEXICON.suffix_length,
    open_class_threshold: int = LEXICON.open_class_threshold,
    smooth_threshold: int = LEXICON.smooth_threshold,
    word_smoothing: float = LEXICON.word_smoothing,
    signature_smoothing: float = LEXICON.signature_smoothing,
) -> "SplitMergeEstimator":
    """Split-merge EM (Petrov et al. 2006): each cycle splits every symbol's states in
    two, runs EM on the gold trees, merges back the splits that helped least, smooths.
    Its transforms are the component's ``transforms`` setting; the Berkeley parser's
    (and this estimator's own default) are X-bar: ``h_markov = 0``, ``v_markov = 1``,
    ``keep_functions = false``.

    n_cycles (int): split-merge cycles. Defaults to 4.
    em_iterations, merge_em_iterations (int): EM iterations after each split and merge.
    merge_fraction (float): the fraction of the new splits merged back.
    split (str): "all" symbols each cycle, or "some" (Dreyer & Eisner's clone some:
        those whose sibling states diverge most; with ``merge_fraction = 0``).
    split_noise (float): relative noise that breaks the symmetry of a split.
    smoothing, lexical_smoothing (float): weight of the mean over a symbol's states.
    n_jobs (int): processes of the E-step.
    random_state (int | None): seeds the split noise.
    The other arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (SplitMergeEstimator): the unfitted estimator.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators import SplitMergeEstimator

    return SplitMergeEstimator(**params)


@registry.misc("spacy_lpcfg.InheritEstimator.v1")
def make_inherit_estimator(
    n_states: int = INHERIT.n_states,
    clone_all: bool = INHERIT.clone_all,
    em_iterations: int = INHERIT.em_iterations,
    noise: float = INHERIT.noise,
    smoothing: float = INHERIT.smoothing,
    lexical_smoothing: float = INHERIT.lexical_smoothing,
    random_state: int | None = LATENT.random_state,
    rare_threshold: int = LEXICON.rare_threshold,
    signature: str = LEXICON.signature,
    suffix_length: int = LEXICON.suffix_length,
    open_class_threshold: int = LEXICON.open_class_threshold,
    smooth_threshold: int = LEXICON.smooth_threshold,
    word_smoothing: float = LEXICON.word_smoothing,
    signature_smoothing: float = LEXICON.signature_smoothing,
) -> "InheritEstimator":
    """The INHERIT model (Dreyer & Eisner 2006): one latent feature per symbol, passed
    to neither, either or both children by a pattern per rule, or drawn afresh; EM
    on the gold trees. Its transforms are the component's ``transforms`` setting
    (X-bar, as for split-merge, is the estimator's own default).

    n_states (int): the feature's values.
    clone_all (bool): anneal: start EM with 2 values (3 for 12...) and clone every
        value in two after each stage until there are ``n_states``.
    em_iterations (int): EM iterations of each stage.
    noise (float): relative noise on the initial weights.
    smoothing, lexical_smoothing (float): weight of the mean over a symbol's states.
    random_state (int | None): seeds the noise.
    The other arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (InheritEstimator): the unfitted estimator.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators.inherit import InheritEstimator

    return InheritEstimator(**params)


@registry.misc("spacy_lpcfg.NoisyEnsemble.v1")
def make_noisy_ensemble(
    estimator: Any = None,
    n_models: int = NOISE.n_models,
    noise: Literal["dropout", "gaussian", "multiplicative"] = NOISE.noise,
    noise_scale: float = NOISE.noise_scale,
    random_state: int | None = LATENT.random_state,
) -> "NoisyEnsemble":
    """Noisy clustering models from one SVD (Narayan & Cohen 2015), fitted together.

    The members' settings are a nested block::

        [components.lpcfg_parser.estimator.estimator]
        @misc = "spacy_lpcfg.ClusteringEstimator.v1"
        n_states = 16

    The component sets the members' ``transform`` and ``language``. The model
    stores every member; with ``decoder = "auto"`` the parser decodes them
    together (``product_mbr``), pruned once per sentence.

    estimator (ClusteringEstimator | None): the members' settings (None:
        ``spacy_lpcfg.ClusteringEstimator.v1``'s defaults).
    n_models (int): the number of members. Defaults to 8.
    noise (str): "dropout", "gaussian" or "multiplicative". Defaults to "gaussian"
        (with 0.3, the best of those tried on the PTB sample dev set, BENCHMARKS.md
        "Latent estimators: ptb_sample test").
    noise_scale (float): dropout probability, or standard deviation of the noise
        relative to the projections. Defaults to 0.3.
    random_state (int | None): seeds the SVD, the noise and k-means (it replaces the
        member's seed).
    RETURNS (NoisyEnsemble): the unfitted ensemble.
    RAISES ValueError: ``estimator`` is not a ClusteringEstimator.
    """
    from ..estimators import ClusteringEstimator
    from ..estimators.noise import NoisyEnsemble

    return NoisyEnsemble(
        estimator=_member_estimator(estimator, ClusteringEstimator),
        n_models=n_models,
        noise=noise,
        noise_scale=noise_scale,
        random_state=random_state,
    )


@registry.misc("spacy_lpcfg.FunctionLabeller.v1")
def make_function_labeller(
    C: float = FUNCTION_LABELLER.C,
    max_iter: int = FUNCTION_LABELLER.max_iter,
    min_count: int = FUNCTION_LABELLER.min_count,
    max_parameters: int = FUNCTION_LABELLER.max_parameters,
) -> "FunctionLabeller":
    """The component's ``function_labeller`` with other settings than ``true``'s::

        [components.lpcfg_parser.function_labeller]
        @misc = "spacy_lpcfg.FunctionLabeller.v1"
        C = 0.5

    A logistic regression over features of each phrase (its category, head, parent
    and siblings) that puts function tags on the parses; the component sets its label
    scheme and language from the training data.

    C (float): inverse regularisation strength.
    max_iter (int): iterations of the solver.
    min_count (int): features seen fewer times in training are dropped.
    max_parameters (int): at most this many coefficients; rarer features are dropped
        until the model fits (the solver's memory grows with them).
    RETURNS (FunctionLabeller): the unfitted labeller.
    """
    params = dict(locals())  # the arguments, before the import adds a name
    from ..estimators.function_labels import FunctionLabeller

    return FunctionLabeller(**params)


# The recommended recipe (``spacy_lpcfg.recipes.RECOMMENDED``), named in a config
# instead of written out. The estimator and the transforms are two settings of the
# component, so a config names both:
#
#     [components.lpcfg_parser.estimator]
#     @misc = "spacy_lpcfg.recommended_estimator.v1"
#
#     [components.lpcfg_parser.transforms]
#     @misc = "spacy_lpcfg.recommended_transforms.v1"
#
# A better recipe gets .v2 functions: these keep building this one.


@registry.misc("spacy_lpcfg.CombinedEstimator.v1")
def make_combined_estimator(
    *estimators: Any,
    member_transforms: list[dict[str, Any]],
    decoder: str | None = None,
) -> "CombinedEstimator":
    """Estimators fitted apart on their own transforms and decoded together (what
    ``spacy-lpcfg combine`` does with models trained apart). The component's
    ``transforms`` give the settings the members do not (label scheme, head rules...).
    The members are positional, one block each under ``*`` (as in thinc's
    ``chain.v1``)::

        [components.lpcfg_parser.estimator]
        @misc = "spacy_lpcfg.CombinedEstimator.v1"
        member_transforms = [{"binarization": "right"}, {"binarization": "left"}]

        [components.lpcfg_parser.estimator.*.right]
        @misc = "spacy_lpcfg.ClusteringEstimator.v1"

        [components.lpcfg_parser.estimator.*.left]
        @misc = "spacy_lpcfg.ClusteringEstimator.v1"

    estimators (Any): the members' estimators, in order.
    member_transforms (list[dict]): per member, binarization / h_markov / v_markov /
        keep_functions.
    decoder (str | None): "product" (the default), "mbr" or "dual".
    RETURNS (CombinedEstimator): the unfitted estimator.
    """
    from ..estimators import CombinedEstimator

    return CombinedEstimator(
        estimators=list(estimators), member_transforms=list(member_transforms), decoder=decoder
    )


@registry.misc("spacy_lpcfg.four_way_estimator.v1")
def make_four_way_estimator(
    n_states: int = CLUSTERING.n_states,
    random_state: int | None = LATENT.random_state,
    decoder: str | None = None,
) -> "CombinedEstimator":
    """Le Roux et al. (2013)'s four settings as clustering L-PCFGs (m = 16): binarised
    right and left, function tags kept (v_markov 2) and stripped (v_markov 1), combined
    (``estimators.combined.FOUR_SETTINGS``): the most accurate model with function
    labels on the PTB sample (BENCHMARKS.md "Combined models: members trained apart
    (ptb_sample)", "Function labels: the grammar's or the labeller's").

    n_states (int): latent states per symbol of every member.
    random_state (int | None): seeds every member's SVD and k-means.
    decoder (str | None): how the members combine; None: product.
    RETURNS (CombinedEstimator): the unfitted estimator.
    """
    from ..estimators.combined import four_way_estimator

    return four_way_estimator(n_states, random_state, decoder)


@registry.misc("spacy_lpcfg.recommended_estimator.v1")
def make_recommended_estimator(
    random_state: int | None = RECOMMENDED.random_state,
) -> "BaseEstimator":
    """The recommended recipe's estimator: 8 noisy clustering L-PCFGs with 16 latent
    states, gaussian noise 0.3 (``spacy_lpcfg.recipes.RECOMMENDED`` says what it
    scored). Pair it with ``spacy_lpcfg.recommended_transforms.v1``.

    random_state (int | None): seeds the SVD, the noise and k-means.
    RETURNS (NoisyEnsemble): the unfitted ensemble.
    """
    return replace(RECOMMENDED, random_state=random_state).make_estimator()


@registry.misc("spacy_lpcfg.recommended_transforms.v1")
def make_recommended_transforms(
    keep_functions: bool = RECOMMENDED.keep_functions,
) -> dict[str, Any]:
    """The recommended recipe's transforms, for the component's ``transforms``: right
    binarisation, h_markov 1, v_markov 1 (no parent annotation), function tags kept;
    head rules follow the training data.

    keep_functions (bool): keep function tags (NP-SBJ in the parses). False: more
        accurate brackets on ptb_sample test, no function labels (BENCHMARKS.md
        "Latent estimators: ptb_sample test").
    RETURNS (dict[str, Any]): the TransformSpec settings.
    """
    return replace(RECOMMENDED, keep_functions=keep_functions).transforms()


@registry.misc("spacy_lpcfg.SeedProduct.v1")
def make_seed_product(
    estimator: Any = None,
    n_models: int = SPLIT_MERGE.n_models,
    n_jobs: int = 1,
    random_state: int | None = LATENT.random_state,
) -> "SeedProduct":
    """Split-merge grammars from seeds random_state, random_state + 1, ... decoded as one
    product (Petrov 2010): on ptb_sample, 3 seeds score well above one in test F1
    (BENCHMARKS.md "Products of split-merge seeds against the Berkeley parser
    (ptb_sample)").

    Every seed's settings are a nested block (the component sets their ``transform``
    and ``language``; the Berkeley parser's are X-bar, see
    ``spacy_lpcfg.SplitMergeEstimator.v1``)::

        [components.lpcfg_parser.estimator.estimator]
        @misc = "spacy_lpcfg.SplitMergeEstimator.v1"

    estimator (SplitMergeEstimator | None): every seed's settings (None:
        ``spacy_lpcfg.SplitMergeEstimator.v1``'s defaults).
    n_models (int): seeds. Defaults to 3.
    n_jobs (int): seeds trained at once, one process each.
    random_state (int | None): the first seed (it replaces the member's).
    RETURNS (SeedProduct): the unfitted estimator.
    RAISES ValueError: ``estimator`` is not a SplitMergeEstimator.
    """
    from ..estimators import SplitMergeEstimator
    from ..estimators.seed_product import SeedProduct

    member = _member_estimator(estimator, SplitMergeEstimator)
    return SeedProduct(
        estimator=member, n_models=n_models, n_jobs=n_jobs, random_state=random_state
    )


def _member_estimator(estimator: Any, kind: type) -> Any:
    """An ensemble's member settings: ``estimator`` if it is a ``kind``, or ``kind()``
    for None (explicit, so that the component can set its transform and language).
    RAISES ValueError: another estimator."""
    from ..errors import Errors

    if estimator is None:
        return kind()
    if not isinstance(estimator, kind):
        expected = f'a {kind.__name__} (@misc = "spacy_lpcfg.{kind.__name__}.v1")'
        raise ValueError(Errors.E011.format(value=estimator, name="estimator", expected=expected))
    return estimator
