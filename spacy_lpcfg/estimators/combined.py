"""Several estimators over differently transformed trees, fitted apart and combined.

The estimator form of ``spacy-lpcfg combine``: each member is fitted on the same
trees under its own transform settings (binarisation, Markov orders, function
tags kept or stripped) laid over the shared ``transform`` (the label scheme and
head rules of the data, which the spaCy component sets), and the fitted models
are joined by ``grammar.model.combine_models``. With the four settings of Le
Roux et al. (2013), clustering models binarised left and right with and without
function tags, this is our most accurate model with function labels on the PTB
sample (BENCHMARKS.md "Combined models: members trained apart (ptb_sample)").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..defaults import CLUSTERING, LATENT, LEXICON
from ..errors import Errors
from ..grammar.model import combine_models
from ..memory import release_freed_memory
from ..progress import progress
from ..trees.transforms import TransformSpec
from ..trees.tree import Tree
from .base import BaseEstimator, as_transform_spec, clone, drop_training_data

MEMBER_SETTINGS = ("binarization", "h_markov", "v_markov", "keep_functions")
FOUR_SETTINGS = (
    {"binarization": "right", "v_markov": 2, "keep_functions": True},
    {"binarization": "left", "v_markov": 2, "keep_functions": True},
    {"binarization": "right", "v_markov": 1, "keep_functions": False},
    {"binarization": "left", "v_markov": 1, "keep_functions": False},
)
"""Le Roux et al. (2013)'s four settings, with the Markov orders measured best for each
(parent annotation helps the grammars that keep function tags, BENCHMARKS.md)."""


class CombinedEstimator(BaseEstimator):
    """Members fitted apart on their own transforms, decoded together.

    estimators (Sequence[BaseEstimator]): the members' estimators (cloned at fit).
    member_transforms (Sequence[Mapping]): per member, ``TransformSpec`` settings of
        ``MEMBER_SETTINGS`` laid over ``transform``; as many as ``estimators``.
    decoder (str | None): how the members combine (``combine_models``). Defaults to
        its default (product).
    transform (TransformSpec | dict | None): the shared settings (label scheme, head
        rules, the settings a member does not give).
    language (str): the training data's language, for every member's lexicon.

    Fitted attributes: ``estimators_`` (the fitted members, without what they held of
        the training trees: ``base.drop_training_data``), ``model_`` (ParsingModel
    with the members).
    """

    transform: TransformSpec | Mapping | None
    estimators: Sequence[BaseEstimator]
    member_transforms: Sequence[Mapping[str, Any]]
    decoder: str | None
    language: str

    def __init__(
        self,
        *,
        estimators: Sequence[BaseEstimator] = (),
        member_transforms: Sequence[Mapping[str, Any]] = (),
        decoder: str | None = None,
        transform: TransformSpec | Mapping | None = None,
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    def _check_params(self) -> None:
        if len(self.estimators) < 2 or len(self.estimators) != len(self.member_transforms):
            raise ValueError(
                Errors.E011.format(
                    name="estimators",
                    value=f"{len(self.estimators)} estimators, "
                    f"{len(self.member_transforms)} member transforms",
                    expected="at least two estimators and one member_transforms entry each",
                )
            )
        for settings in self.member_transforms:
            unknown = sorted(set(settings) - set(MEMBER_SETTINGS))
            if unknown:
                raise ValueError(
                    Errors.E011.format(
                        name="member_transforms",
                        value=", ".join(unknown),
                        expected="settings among " + ", ".join(MEMBER_SETTINGS),
                    )
                )

    def member_specs(self) -> list[TransformSpec]:
        """Each member's TransformSpec: ``transform`` with the member's settings."""
        base = as_transform_spec(self.transform)
        return [replace(base, **dict(settings)) for settings in self.member_transforms]

    def fit(
        self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None
    ) -> CombinedEstimator:
        """Fit every member on ``trees`` and combine them. RETURNS: self."""
        self._check_params()
        specs = self.member_specs()
        trees = list(trees)
        members = []
        for estimator, spec in progress(
            list(zip(self.estimators, specs)), desc="members", unit="model"
        ):
            member = clone(estimator)
            member.set_params(transform=spec, language=self.language)
            members.append(drop_training_data(member.fit(trees)))
            release_freed_memory()  # the member's projection, before the next one's
        self.estimators_ = members
        self.model_ = combine_models([member.model_ for member in members], self.decoder)
        return self


def four_way_estimator(
    n_states: int = CLUSTERING.n_states,
    random_state: int | None = LATENT.random_state,
    decoder: str | None = None,
    *,
    transform: TransformSpec | Mapping | None = None,
    language: str = LEXICON.language,
    **member_params: Any,
) -> CombinedEstimator:
    """Le Roux et al. (2013)'s four settings as clustering L-PCFGs (``FOUR_SETTINGS``):
    binarised right and left, function tags kept (v = 2) and stripped (v = 1), combined.

    n_states (int): latent states per symbol of every member.
    random_state (int | None): seeds every member's SVD and k-means.
    decoder (str | None): how the members combine; None: product.
    transform (TransformSpec | dict | None): the settings the members share (label
        scheme, head rules...).
    language (str): the training data's language, for every member's lexicon.
    member_params: other ClusteringEstimator parameters of every member (rare_threshold...).
    RETURNS (CombinedEstimator): the unfitted estimator.
    """
    from .clustering import ClusteringEstimator

    members = [
        ClusteringEstimator(
            n_states=n_states, random_state=random_state, language=language, **member_params
        )
        for _ in FOUR_SETTINGS
    ]
    return CombinedEstimator(
        estimators=members,
        member_transforms=[dict(s) for s in FOUR_SETTINGS],
        decoder=decoder,
        transform=transform,
        language=language,
    )
