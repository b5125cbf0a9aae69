"""Estimators as registered config functions, for the component's ``estimator`` block.

Each function takes an estimator's hyperparameters and returns it unfitted::

    [components.lpcfg_parser.estimator]
    @misc = "spacy_lpcfg.MLEEstimator.v1"
    rare_threshold = 1

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

The type hints are checked when the config is resolved. Adding an
estimator is one more function here and its entry point in setup.cfg
(``spacy_misc``); the component does not change. The estimator modules are
imported when a function runs, not when spaCy loads the entry points.
"""

from typing import TYPE_CHECKING, Any, Literal

from spacy.util import registry

if TYPE_CHECKING:
    from ..estimators import ClusteringEstimator, MLEEstimator, SpectralEstimator
    from ..estimators.noise import NoisyEnsemble


@registry.misc("spacy_lpcfg.MLEEstimator.v1")
def make_mle_estimator(
    rare_threshold: int = 1,
    signature: str = "auto",
    suffix_length: int = 3,
    open_class_threshold: int = 5,
    smooth_threshold: int = 10,
    word_smoothing: float = 0.1,
    signature_smoothing: float = 1.0,
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
# decoder "auto" (the default) decodes it with "mbr", the others with "max_rule".


@registry.misc("spacy_lpcfg.SpectralEstimator.v1")
def make_spectral_estimator(
    n_states: int | dict[str, int] = 8,
    kappa: float = 5.0,
    word_threshold: int = 5,
    min_count_per_state: float = 5.0,
    singular_value_threshold: float = 1e-3,
    lexical_smoothing: float = 1.0,
    random_state: int | None = 0,
    rare_threshold: int = 1,
    signature: str = "auto",
    suffix_length: int = 3,
    open_class_threshold: int = 5,
    smooth_threshold: int = 10,
    word_smoothing: float = 0.1,
    signature_smoothing: float = 1.0,
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
    n_states: int | dict[str, int] = 16,
    kappa: float = 5.0,
    word_threshold: int = 5,
    min_count_per_state: float = 5.0,
    singular_value_threshold: float = 1e-3,
    smoothing: float = 0.1,
    lexical_smoothing: float = 0.1,
    n_init: int = 1,
    init: Literal["k-means++", "random"] = "k-means++",
    max_iter: int = 100,
    random_state: int | None = 0,
    rare_threshold: int = 1,
    signature: str = "auto",
    suffix_length: int = 3,
    open_class_threshold: int = 5,
    smooth_threshold: int = 10,
    word_smoothing: float = 0.1,
    signature_smoothing: float = 1.0,
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


@registry.misc("spacy_lpcfg.NoisyEnsemble.v1")
def make_noisy_ensemble(
    estimator: Any = None,
    n_models: int = 8,
    noise: Literal["dropout", "gaussian", "multiplicative"] = "gaussian",
    noise_scale: float = 0.3,
    random_state: int | None = 0,
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
        (with 0.3, the best of those tried on the PTB sample dev set, BENCHMARKS.md).
    noise_scale (float): dropout probability, or standard deviation of the noise
        relative to the projections. Defaults to 0.3.
    random_state (int | None): seeds the SVD, the noise and k-means (it replaces the
        member's seed).
    RETURNS (NoisyEnsemble): the unfitted ensemble.
    RAISES ValueError: ``estimator`` is not a ClusteringEstimator.
    """
    from ..errors import Errors
    from ..estimators import ClusteringEstimator
    from ..estimators.noise import NoisyEnsemble

    if estimator is None:
        # an explicit member, so that the component can set its transform and language
        estimator = ClusteringEstimator()
    if not isinstance(estimator, ClusteringEstimator):
        expected = 'a ClusteringEstimator (@misc = "spacy_lpcfg.ClusteringEstimator.v1")'
        raise ValueError(Errors.E012.format(value=estimator, name="estimator", expected=expected))
    return NoisyEnsemble(
        estimator=estimator,
        n_models=n_models,
        noise=noise,
        noise_scale=noise_scale,
        random_state=random_state,
    )
