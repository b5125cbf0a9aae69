"""Diverse clustering models from one SVD, by noise (Narayan & Cohen 2015).

Each model clusters noisy projections, so the K models annotate the treebank
differently and make different errors, which decoding them jointly averages
out (``decode.product``). The SVD is computed once; per model, the noise is:

``dropout``         each scaled feature of each node is dropped with
                    probability ``noise_scale`` before projecting with the
                    shared ``U`` and ``V Sigma^-1`` (needs the kept factors);
``gaussian``        ``y + noise_scale * r_a * e`` with ``e ~ N(0, 1)`` per
                    entry and ``r_a`` the root mean square of symbol ``a``'s
                    entries (likewise ``z``): additive noise at a fixed
                    signal-to-noise ratio;
``multiplicative``  ``y * (1 + noise_scale * e)``, likewise ``z``.

Every model also gets its own k-means seed. All share the rules, symbols and
vocabulary, so they can be decoded together: the ensemble's ``model_`` holds
model 0 as its grammar, its coarse grammar as ``extra_grammars[0]``
(``training["coarse_grammar"]``, pruning once for all members) and the other
members after it, listed in ``training["ensemble"]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import numpy as np

from ..defaults import CEILINGS, LATENT, NOISE
from ..errors import Errors
from ..grammar.model import ENSEMBLE, ParsingModel
from ..progress import progress
from ..trees.tree import Tree
from .base import Choice, check_number, clone, int_range, json_params
from .clustering import ClusteringEstimator
from .latent import ProjectedTreebank, ProjectingEstimator
from .projections import Projections, SymbolFactors

NOISES = ("dropout", "gaussian", "multiplicative")
# "member 3/8:  25%|██▌       | [00:12<00:36]": the description counts the members
MEMBER_BAR = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"


class NoisyEnsemble(ProjectingEstimator):
    """K clustering models that differ by noise on one shared SVD.

    estimator (ClusteringEstimator | None): the settings of every member. Defaults to
        ClusteringEstimator().
    n_models (int): K. Defaults to 8.
    noise (str): "dropout", "gaussian" or "multiplicative". Defaults to "gaussian"
        (with 0.3, the best of those tried on the PTB sample dev set: BENCHMARKS.md
        "Latent estimators: ptb_sample test").
    noise_scale (float): dropout probability, or standard deviation of the noise
        relative to the projections. Defaults to 0.3.
    random_state (int | np.random.Generator | None): seeds the SVD, the noise and k-means.

    Fitted attributes: ``estimators_`` (the K fitted ClusteringEstimators, sharing
    one ``projected_``), ``grammars_`` (their LPCFGs), ``model_`` (ParsingModel:
    member 0, with its coarse grammar and the other members as extra grammars).
    """

    name = "noisy_clustering"
    _parameter_constraints = {
        "noise": [Choice(NOISES)],
        "n_models": [int_range(1, CEILINGS.n_models)],
    }

    estimator: ClusteringEstimator | None
    n_models: int
    noise: str
    noise_scale: float

    def __init__(
        self,
        *,
        estimator: ClusteringEstimator | None = None,
        n_models: int = NOISE.n_models,
        noise: str = NOISE.noise,
        noise_scale: float = NOISE.noise_scale,
        random_state: int | np.random.Generator | None = LATENT.random_state,
    ):
        self._store_params(locals())

    def fit_projected(
        self, projected: ProjectedTreebank, *, random_state: np.random.Generator | None = None
    ) -> NoisyEnsemble:
        """Fit the members from a projected treebank (with factors for dropout).

        random_state (np.random.Generator | None): for the noise and k-means; defaults
            to the ensemble's ``random_state``.
        RETURNS (NoisyEnsemble): self.
        """
        self._check_params()
        random_state = self._fit_random_state(random_state)
        estimators = []
        # each member's k-means and counting bars show nested under this one
        n = self.n_models
        members = progress(range(n), desc=f"member 1/{n}", unit="member", bar_format=MEMBER_BAR)
        for index in members:
            members.set_description_str(f"member {index + 1}/{n}")
            member = self._member()
            wanted = member._n_states(projected)
            noisy = noisy_projections(
                projected.projections.truncated(wanted), self.noise, self.noise_scale, random_state
            )
            estimators.append(
                member.fit_states(projected, *member._cluster(noisy, wanted, random_state))
            )
        first = estimators[0].model_
        self.estimators_ = estimators
        self.grammars_ = [member.grammar_ for member in estimators]
        # extra grammars: member 0's coarse grammar (pruning), then members 1 .. K-1
        self.model_ = ParsingModel(
            self.grammars_[0],
            first.lexicon,
            first.transform,
            estimator=self.name,
            params={**json_params(self), "estimator": json_params(estimators[0])},
            training={**first.training, ENSEMBLE: list(range(1, self.n_models))},
            extra_grammars=(*first.extra_grammars, *self.grammars_[1:]),
            spectrum=first.spectrum,  # the members share one SVD
        )
        return self

    def _member(self) -> ClusteringEstimator:
        return ClusteringEstimator() if self.estimator is None else clone(self.estimator)

    def _project(self, trees: Iterable[Tree], random_state: np.random.Generator):
        """Project the treebank once for every member (keeping the features for dropout)."""
        member = self._member()
        member._check_params()
        return member._project(trees, random_state, keep_factors=self.noise == "dropout")

    def _check_params(self) -> None:
        if self.estimator is not None and not isinstance(self.estimator, ClusteringEstimator):
            expected = "a ClusteringEstimator"
            raise ValueError(
                Errors.E011.format(value=self.estimator, name="estimator", expected=expected)
            )
        super()._check_params()
        # its bound depends on the noise
        upper = 1.0 if self.noise == "dropout" else np.inf
        check_number(self, "noise_scale", f"0 <= scale < {upper}", low=0.0, high=upper)


def noisy_projections(
    projections: Projections, noise: str, scale: float, random_state: np.random.Generator
) -> Projections:
    """A copy of the projections with noise (module docstring) on every symbol's y and z.

    RAISES ValueError: dropout on projections fitted without their factors.
    """
    if noise == "dropout" and projections.factors is None:
        detail = "dropout needs the features: project with keep_factors=True"
        raise ValueError(Errors.E029.format(what="noisy projections", detail=detail))
    inside, outside = [], []
    for a, (y, z) in enumerate(zip(projections.inside, projections.outside)):
        if y.size == 0:
            inside.append(y)
            outside.append(z)
        elif noise == "dropout":
            # checked above; symbols with projections have their factors
            factors = cast("tuple[SymbolFactors, ...]", projections.factors)[a]
            inside.append(
                _dropout(factors.inside_features, scale, random_state) @ factors.inside_map
            )
            outside.append(
                _dropout(factors.outside_features, scale, random_state) @ factors.outside_map
            )
        elif noise == "gaussian":
            inside.append(y + scale * _rms(y) * random_state.standard_normal(y.shape))
            outside.append(z + scale * _rms(z) * random_state.standard_normal(z.shape))
        else:
            inside.append(y * (1 + scale * random_state.standard_normal(y.shape)))
            outside.append(z * (1 + scale * random_state.standard_normal(z.shape)))
    return Projections(
        projections.order,
        projections.offsets,
        projections.row,
        projections.singular_values,
        tuple(inside),
        tuple(outside),
        projections.factors,
    )


def _dropout(features, probability: float, random_state: np.random.Generator):
    """The sparse features with each stored value zeroed with the given probability."""
    dropped = features.copy()
    dropped.data = dropped.data * (random_state.random(len(dropped.data)) >= probability)
    return dropped


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values**2)))
