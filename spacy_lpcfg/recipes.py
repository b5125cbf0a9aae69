"""Training recipes: an estimator, its hyperparameters and the tree transforms, as code.

A ``Recipe`` holds what the options of ``spacy-lpcfg train`` choose. ``Recipe()``
is the defaults (``defaults.py``: the four-way combination); ``RECOMMENDED`` is the most
accurate recipe with function labels that trains in minutes, measured on ptb_sample
(BENCHMARKS.md "Latent estimators: ptb_sample test"). It is what
``train --recipe recommended`` fits, what the registered
``spacy_lpcfg.recommended_estimator.v1`` and
``spacy_lpcfg.recommended_transforms.v1`` give a spaCy config, and what
``projects/ptb_sample/configs/ensemble.cfg`` trains.

A recipe's values are the ones measured, written out rather than read from
``defaults.py``, so that a later change of those defaults does not change it (the
hyperparameters a recipe does not hold, such as kappa, are the estimators'
defaults). A better recipe is a new one (with ``.v2`` registered functions);
``.v1`` keeps building this one, so that a config trains the same model again.

This module is import-light (the CLI reads it at start-up): the estimators are
named by their registry (``estimators.registry``) and imported when one is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .defaults import ESTIMATOR, LATENT, LEXICON, NOISE, SPLIT_MERGE, TRANSFORM
from .errors import Errors
from .estimators.registry import estimator_entry, estimator_names

if TYPE_CHECKING:
    from .estimators.base import BaseEstimator
    from .trees.transforms import TransformSpec

TRANSFORM_SETTINGS = ("binarization", "h_markov", "v_markov", "keep_functions")


@dataclass(frozen=True)
class Recipe:
    """How to train a model: the estimator, the hyperparameters the CLI exposes, the
    transforms. Unset values are the defaults of ``defaults.py``.

    estimator (str): a registered estimator (``estimators.registry``): "mle",
        "spectral", "clustering", "split_merge", "clone_some", "inherit", "combined"
        (Le Roux et al.'s four clustering models, binarised left and right, function
        tags kept and stripped, decoded together; their transforms are fixed, and the
        recipe's give only h_markov, the label scheme and head rules), or one
        registered from outside the package.
    n_states (int | None): latent states per symbol; None: the estimator's default.
        (split_merge: the data decides; see n_cycles.)
    n_cycles (int | None): split-merge cycles; None: the estimator's default.
    n_models (int): 1: one model; more: a noisy ensemble of that many clustering
        models, or the product of that many split-merge grammars from seeds
        random_state, random_state + 1, ... (``SeedProduct``), decoded together.
    noise (str): the ensemble's noise: "dropout", "gaussian" or "multiplicative".
    noise_scale (float): dropout probability, or relative deviation of the noise.
    random_state (int | None): seed of the latent estimators and the noise.
    rare_threshold (int): words seen at most this often feed unknown-word classes.
    binarization (str), h_markov (int | None), v_markov (int), keep_functions (bool):
        the transforms (``TransformSpec``; h_markov None keeps every sibling).
    function_labeller (bool): also fit a function labeller on the same trees, which
        puts function tags (NP-SBJ) on the parses (``attach_function_labeller``).
    RAISES ValueError: an unknown estimator, or n_models > 1 with an estimator that
        has no ensembles (mle, spectral, inherit, combined).
    """

    estimator: str = ESTIMATOR
    n_states: int | None = None
    n_cycles: int | None = None
    n_models: int = 1
    noise: str = NOISE.noise
    noise_scale: float = NOISE.noise_scale
    random_state: int | None = LATENT.random_state
    rare_threshold: int = LEXICON.rare_threshold
    binarization: str = TRANSFORM.binarization
    h_markov: int | None = TRANSFORM.h_markov
    v_markov: int = TRANSFORM.v_markov
    keep_functions: bool = TRANSFORM.keep_functions
    function_labeller: bool = False

    def __post_init__(self):
        entry = estimator_entry(self.estimator)  # raises for an unknown name
        if (
            not isinstance(self.n_models, int)
            or isinstance(self.n_models, bool)
            or self.n_models < 1
        ):
            raise ValueError(
                Errors.E011.format(value=self.n_models, name="n_models", expected="an int >= 1")
            )
        if self.n_models > 1 and entry.ensemble is None:
            expected = "1, unless the estimator is " + " or ".join(estimator_names(ensemble=True))
            raise ValueError(
                Errors.E011.format(value=self.n_models, name="n_models", expected=expected)
            )

    def transforms(self) -> dict[str, Any]:
        """The component's ``transforms`` setting: the recipe's TransformSpec settings,
        with ``head_rules`` None (chosen for the training data's label scheme)."""
        return {**{name: getattr(self, name) for name in TRANSFORM_SETTINGS}, "head_rules": None}

    def transform_spec(
        self, scheme: str = "penn", language: str = LEXICON.language, head_rules: str | None = None
    ) -> TransformSpec:
        """The recipe's transforms for a treebank of ``scheme`` and ``language``.

        head_rules (str | None): None: ``transforms.default_head_rules``.
        RAISES ValueError: an invalid transform setting.
        """
        from .trees.transforms import TransformSpec, default_head_rules

        return TransformSpec(
            **{name: getattr(self, name) for name in TRANSFORM_SETTINGS},
            scheme=scheme,
            head_rules=head_rules or default_head_rules(scheme, language),
        )

    def make_estimator(
        self, transform: TransformSpec | None = None, language: str = LEXICON.language
    ) -> BaseEstimator:
        """The unfitted estimator of the recipe.

        transform (TransformSpec | None): the transforms; None: ``transform_spec()``
            (Penn trees; the spaCy component sets its own).
        language (str): the training data's language (unknown-word signatures).
        RETURNS (BaseEstimator): the registered estimator (an MLE, spectral, clustering,
            split-merge or INHERIT estimator...), or with ``n_models > 1`` its ensemble
            (a NoisyEnsemble of clustering estimators, a SeedProduct).
        """
        params: dict[str, Any] = {
            "transform": transform if transform is not None else self.transform_spec(),
            "language": language,
            "rare_threshold": self.rare_threshold,
        }
        # given to the estimators that take them; n_states and n_cycles None: their own
        # defaults, random_state None: fresh entropy
        optional = {"n_states": self.n_states, "n_cycles": self.n_cycles}
        optional = {name: value for name, value in optional.items() if value is not None}
        optional["random_state"] = self.random_state
        ensemble = {
            "noise": self.noise,
            "noise_scale": self.noise_scale,
            "random_state": self.random_state,
        }
        entry = estimator_entry(self.estimator)
        return entry.from_recipe(params, optional, self.n_models, ensemble)


RECOMMENDED = Recipe(
    estimator="clustering",
    n_states=16,
    n_models=8,
    noise="gaussian",
    noise_scale=0.3,
    random_state=0,
    rare_threshold=1,
    binarization="right",
    h_markov=1,
    v_markov=1,
    keep_functions=True,
)
"""8 noisy clustering L-PCFGs (Narayan & Cohen 2015: k-means latent states, m = 16,
gaussian noise 0.3 on the projections of one SVD) decoded together (decoder auto:
product_mbr), right binarisation, h = 1, no parent annotation (v = 1), function
tags kept (the parses carry NP-SBJ). Chosen on ptb_sample dev over 16 members and over
parent annotation (v = 2), which scored lower. With ``keep_functions=False`` its
brackets are more accurate, above the Berkeley parser's, but it gives no function
labels. Test F1, fit time and speed: BENCHMARKS.md "Latent estimators: ptb_sample test"."""

SPLIT_MERGE_RECIPE = Recipe(
    estimator="split_merge",
    binarization=SPLIT_MERGE.binarization,
    h_markov=SPLIT_MERGE.h_markov,
    v_markov=SPLIT_MERGE.v_markov,
    keep_functions=SPLIT_MERGE.keep_functions,
)
"""Split-merge EM over X-bar trees, as the Berkeley parser trains (``defaults.SPLIT_MERGE``);
what ``train --estimator split_merge`` fits unless transforms are given."""

SPLIT_MERGE_PRODUCT_RECIPE = replace(SPLIT_MERGE_RECIPE, n_models=SPLIT_MERGE.n_models)
"""The product of split-merge grammars from seeds 0, 1, 2 (``SeedProduct``): on ptb_sample
more accurate than the Berkeley parser and more than twice as fast (BENCHMARKS.md
"Products of split-merge seeds against the Berkeley parser (ptb_sample)";
``defaults.SplitMergeDefaults.n_models`` says why three); no function labels (X-bar
trees)."""

CLONE_SOME_RECIPE = replace(SPLIT_MERGE_RECIPE, estimator="clone_some")
"""Clone some (Dreyer & Eisner 2006) over X-bar trees: ``SplitMergeEstimator(split="some",
merge_fraction=0)``; what ``train --estimator clone_some`` fits unless transforms are given."""

INHERIT_RECIPE = replace(SPLIT_MERGE_RECIPE, estimator="inherit")
"""The INHERIT model (Dreyer & Eisner 2006) over X-bar trees (``defaults.INHERIT``); what
``train --estimator inherit`` fits unless transforms are given."""

DEFAULT_RECIPE = replace(SPLIT_MERGE_PRODUCT_RECIPE, function_labeller=True)
"""What ``spacy-lpcfg train`` fits without options: the product of split-merge grammars
from seeds 0, 1, 2 over X-bar trees, with a function labeller for the function tags.
Chosen on the four treebanks against the four-way combination (BENCHMARKS.md
"Defaults: candidate recipes on the four treebanks"): more accurate brackets, function
labels about as good, faster parsing."""

FOUR_WAY_RECIPE = Recipe(estimator="combined")
"""Le Roux et al.'s four clustering L-PCFGs (binarised left and right, function tags
kept and stripped) decoded together: ``train``'s default before ``DEFAULT_RECIPE``."""

RECIPES: dict[str, Recipe] = {
    "default": DEFAULT_RECIPE,
    "four_way": FOUR_WAY_RECIPE,
    "recommended": RECOMMENDED,
    "split_merge": SPLIT_MERGE_RECIPE,
    "split_merge_product": SPLIT_MERGE_PRODUCT_RECIPE,
    "clone_some": CLONE_SOME_RECIPE,
    "inherit": INHERIT_RECIPE,
}
"""Recipes by the name ``train --recipe`` takes."""


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``. RAISES ValueError: no such recipe."""
    if name not in RECIPES:
        expected = "one of " + ", ".join(RECIPES)
        raise ValueError(Errors.E011.format(value=name, name="recipe", expected=expected))
    return RECIPES[name]
