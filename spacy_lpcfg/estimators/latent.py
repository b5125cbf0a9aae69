"""What the spectral and clustering estimators share: the projected treebank.

``project_treebank`` runs the expensive, estimator-independent part of both
(docs/design/architecture.md, 6.1-6.3): transform the trees, count their rules, lay the nodes
out as arrays, extract and scale features, and decompose every symbol's
cross-covariance at the largest rank wanted. ``ProjectedTreebank`` keeps the
result, so that models with other numbers of states (or noisy copies, see
``noise.py``) are estimated from it without redoing any of this.
``ProjectingEstimator`` is the two-step ``fit`` (project, then
``fit_projected``) and ``LatentEstimator`` the parameters, checks and fitted
attributes that the spectral and clustering estimators share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..defaults import LATENT
from ..grammar import LPCFG
from ..grammar.lexicon import Lexicon
from ..grammar.model import COARSE_GRAMMAR, Spectrum
from ..trees.nodes import TreebankNodes, flatten, node_rules
from ..trees.transforms import TransformSpec, transform_treebank
from ..trees.tree import Tree
from .base import (
    BaseEstimator,
    Number,
    States,
    TreebankEstimator,
    as_transform_spec,
    check_random_state,
)
from .features import INSIDE_TEMPLATES, OUTSIDE_TEMPLATES, node_features
from .mle import RuleCounts, count_rules
from .projections import Projections, fit_projections, requested_states, state_caps


@dataclass(frozen=True)
class ProjectedTreebank:
    """A transformed treebank with its rules and the projections of its nodes.

    spec (TransformSpec): the transforms applied.
    counts (RuleCounts): rule and token counts, and the symbol table.
    nodes (TreebankNodes): every node.
    binary_rule, unary_rule (np.ndarray): int64[N], each node's row in
        ``counts.binary_rules`` / ``counts.unary_rules`` (-1 for none).
    projections (Projections): the per-symbol SVDs and node projections.
    """

    spec: TransformSpec
    counts: RuleCounts
    nodes: TreebankNodes
    binary_rule: np.ndarray
    unary_rule: np.ndarray
    projections: Projections

    def n_states(
        self,
        requested: int | Mapping[str, int],
        *,
        min_count_per_state: float,
        singular_value_threshold: float,
    ) -> np.ndarray:
        """int64[n_symbols]: the states per symbol: those requested, capped by the
        data (``projections.state_caps``) and by the rank computed."""
        wanted = requested_states(requested, self.counts.symbols)
        caps = state_caps(
            self.projections.counts,
            self.projections.singular_values,
            min_count_per_state=min_count_per_state,
            singular_value_threshold=singular_value_threshold,
        )
        states = np.minimum(np.minimum(wanted, caps), np.maximum(self.projections.rank, 1))
        states[self.counts.symbols.root] = 1
        return states


def project_treebank(
    trees: Iterable[Tree],
    spec: TransformSpec,
    max_states: int | Mapping[str, int],
    *,
    word_threshold: int = LATENT.word_threshold,
    kappa: float = LATENT.kappa,
    min_count_per_state: float = 1.0,
    inside_templates: Iterable[str] = INSIDE_TEMPLATES,
    outside_templates: Iterable[str] = OUTSIDE_TEMPLATES,
    keep_factors: bool = False,
    random_state: np.random.Generator,
) -> ProjectedTreebank:
    """Transform, flatten, featurise and decompose a treebank.

    trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
    spec (TransformSpec): the transforms.
    max_states (int | Mapping[str, int]): the largest number of states any model
        will use per symbol; the SVDs are computed at that rank.
    word_threshold, inside_templates, outside_templates: see ``features.node_features``.
    kappa (float): feature-scaling pseudo-count (``projections``).
    min_count_per_state (float): also cap the rank at count / min_count_per_state.
    keep_factors (bool): keep the scaled features and projection matrices (``noise.py``).
    random_state (np.random.Generator): for the randomized SVDs.
    RETURNS (ProjectedTreebank): the result.
    """
    spec, transformed = transform_treebank(trees, spec)  # marks phrases that are also tags
    counts = count_rules(transformed, total=len(transformed))
    nodes = flatten(transformed, counts.symbols, total=len(transformed))
    del transformed
    binary_rule, unary_rule = node_rules(nodes, counts.binary_rules, counts.unary_rules)
    rule_key = np.where(binary_rule >= 0, binary_rule, len(counts.binary_rules) + unary_rule)
    features = node_features(
        nodes,
        rule_key,
        word_threshold=word_threshold,
        inside_templates=inside_templates,
        outside_templates=outside_templates,
    )
    symbol_counts = np.bincount(nodes.symbol, minlength=len(counts.symbols))
    rank = np.minimum(
        requested_states(max_states, counts.symbols),
        np.maximum(1, symbol_counts // max(min_count_per_state, 1e-12)).astype(np.int64),
    )
    projections = fit_projections(
        nodes, features, rank, kappa=kappa, keep_factors=keep_factors, random_state=random_state
    )
    return ProjectedTreebank(spec, counts, nodes, binary_rule, unary_rule, projections)


class ProjectingEstimator(BaseEstimator):
    """Base of the estimators fitted in two steps: project the treebank (features and
    SVDs, the expensive part), then estimate from the projections with
    ``fit_projected``, which other fits can call on the same ProjectedTreebank.

    Subclasses have a ``random_state`` parameter, declare their constraints, and define
    ``_project(trees, random_state)`` and ``fit_projected(projected, *, random_state)``.
    """

    random_state: int | np.random.Generator | None

    if TYPE_CHECKING:  # the subclasses' methods, declared for the type checker only

        def _project(
            self, trees: Iterable[Tree], random_state: np.random.Generator
        ) -> ProjectedTreebank: ...

        def fit_projected(
            self, projected: ProjectedTreebank, *, random_state: np.random.Generator | None = None
        ) -> Any: ...

    def fit(self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None):
        """Fit the grammar.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): not used.
        RETURNS: self.
        """
        self._check_params()  # before the long part
        random_state = check_random_state(self.random_state)
        projected = self._project(trees, random_state)
        return self.fit_projected(projected, random_state=random_state)

    def _fit_random_state(self, random_state: np.random.Generator | None) -> np.random.Generator:
        """The generator of ``fit_projected``: the one ``fit`` passes on (so that the
        SVD and what follows draw from one stream), else one from ``random_state``."""
        return check_random_state(self.random_state if random_state is None else random_state)


class LatentEstimator(TreebankEstimator, ProjectingEstimator):
    """Base of the estimators that start from a ProjectedTreebank (parameters and helpers).

    Subclasses define ``__init__`` with the shared parameters below (plus their own)
    and ``fit_projected``.

    n_states (int | Mapping[str, int]): latent states per symbol (a mapping from
        symbol names; unlisted symbols get 1), capped by the data.
    transform (TransformSpec | dict | None): tree transforms. Defaults to TransformSpec()
        (parent annotation, which every treebank supports; clustering did better without
        it on the PTB sample dev set: BENCHMARKS.md "Latent estimators: ptb_sample test").
    kappa (float): feature-scaling pseudo-count (Cohen et al. 2013). Defaults to 5.
    word_threshold (int): words this frequent are their own word class in features.
    min_count_per_state (float): a symbol gets at most count / this states.
    singular_value_threshold (float): and no more states than singular values above
        this fraction of its largest.
    random_state (int | np.random.Generator | None): seeds the SVDs (and k-means).
    lexicon (LexiconSpec | dict | None), language (str): as for MLEEstimator.

    Fitted attributes (besides each subclass's own): ``grammar_`` (LPCFG),
    ``coarse_grammar_`` (the one-state LPCFG the parser prunes with,
    ``extra_grammars[0]`` of ``model_``), ``lexicon_``, ``model_`` (ParsingModel),
    ``n_states_`` (dict symbol -> states, symbols with more than one),
    ``singular_values_`` (dict symbol -> float64[k], also in ``model_.spectrum``)
    and ``projected_`` (ProjectedTreebank, to estimate other sizes with ``fit_projected``).
    """

    n_states: int | Mapping[str, int]
    transform: TransformSpec | Mapping | None
    kappa: float
    word_threshold: int
    min_count_per_state: float
    singular_value_threshold: float
    random_state: int | np.random.Generator | None

    _parameter_constraints = {
        "n_states": [States()],
        "kappa": [Number("a number >= 0", low=0.0)],
        "word_threshold": [Number("an int >= 1", low=1, integer=True)],
        "min_count_per_state": [Number("a number > 0", low=1e-12)],
        "singular_value_threshold": [Number("0 <= t < 1", low=0.0, high=1.0)],
    }

    def _project(
        self,
        trees: Iterable[Tree],
        random_state: np.random.Generator,
        *,
        keep_factors: bool = False,
    ) -> ProjectedTreebank:
        return project_treebank(
            trees,
            as_transform_spec(self.transform),
            self.n_states,
            word_threshold=self.word_threshold,
            kappa=self.kappa,
            min_count_per_state=self.min_count_per_state,
            keep_factors=keep_factors,
            random_state=random_state,
        )

    def _n_states(self, projected: ProjectedTreebank) -> np.ndarray:
        return projected.n_states(
            self.n_states,
            min_count_per_state=self.min_count_per_state,
            singular_value_threshold=self.singular_value_threshold,
        )

    def _set_fitted(
        self,
        projected: ProjectedTreebank,
        n_states: np.ndarray,
        grammar: LPCFG,
        coarse_grammar: LPCFG,
        lexicon: Lexicon,
    ) -> None:
        """Set the fitted attributes of the class docstring, ``model_`` last."""
        symbols = projected.counts.symbols
        self.grammar_ = grammar
        self.coarse_grammar_ = coarse_grammar
        self.lexicon_ = lexicon
        self.n_states_ = {symbols.name(a): int(m) for a, m in enumerate(n_states) if m > 1}
        decomposed = [
            a for a, values in enumerate(projected.projections.singular_values) if len(values)
        ]
        self.singular_values_ = {
            symbols.name(a): projected.projections.singular_values[a] for a in decomposed
        }
        self.projected_ = projected
        node_counts = projected.projections.counts
        spectrum = Spectrum(
            self.singular_values_, {symbols.name(a): int(node_counts[a]) for a in decomposed}
        )
        self.model_ = self._make_model(
            grammar,
            lexicon,
            projected.spec,
            projected.counts,
            extra_grammars=(coarse_grammar,),
            spectrum=spectrum,
            **{COARSE_GRAMMAR: 0},
        )
