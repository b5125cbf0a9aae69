"""Score numbers of latent states per symbol by dev F1, re-estimating only what changes.

A ``StateCandidates`` holds what every candidate shares: the treebank projected
once at the largest rank the search may ask for (features, SVDs), the dev trees
and the clustering settings. A candidate changes the states of one symbol at a
time, so the k-means clustering of each (symbol, number of states) is computed
once and kept: a candidate re-clusters only the symbol it changes, then counts the
annotated rules (whole-treebank numpy steps, about a second on ptb_sample) and parses
dev. Each symbol's k-means seed comes from the search's seed and the symbol alone,
so a candidate's grammar does not depend on which candidates came before it or on
which process scores it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..decode import Parser
from ..estimators.base import clone
from ..estimators.clustering import ClusteringEstimator, cluster_symbol
from ..estimators.latent import ProjectedTreebank
from ..evaluation.parsing import evaluate
from ..grammar.model import ParsingModel
from ..progress import quiet
from ..trees.tree import Tree


@dataclass
class StateCandidates:
    """Dev F1 of clustering L-PCFGs that differ in their states per symbol.

    projected (ProjectedTreebank): the training treebank, projected at a rank at least
        the largest number of states to be scored.
    estimator (ClusteringEstimator): the clustering settings (its ``n_states`` is
        the number of states of the symbols a candidate does not name).
    dev (Sequence[Tree]): the dev trees (treebank labels).
    scheme (str): their label scheme.
    seed (int): the k-means seeds derive from it.
    decoder (str): the parser's decoder.
    """

    projected: ProjectedTreebank
    estimator: ClusteringEstimator
    dev: Sequence[Tree]
    scheme: str = "penn"
    seed: int = 0
    decoder: str = "auto"
    _labels: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def caps(self) -> dict[str, int]:
        """The most states each symbol can have (the data's cap, the rank computed)."""
        symbols = self.projected.counts.symbols
        most = self._capped(np.full(len(symbols), np.iinfo(np.int32).max, dtype=np.int64))
        return {symbols.name(a): int(m) for a, m in enumerate(most)}

    def symbols_by_frequency(self, min_count: int = 1) -> list[str]:
        """The symbols that can have more than one state, most frequent first."""
        symbols = self.projected.counts.symbols
        counts = self.projected.projections.counts
        caps = self.caps
        order = sorted(range(len(symbols)), key=lambda a: (-counts[a], a))
        return [
            symbols.name(a) for a in order if counts[a] >= min_count and caps[symbols.name(a)] > 1
        ]

    def n_states(self, assignment: Mapping[str, int]) -> np.ndarray:
        """int64[n_symbols]: the states asked for, the estimator's ``n_states`` for the
        symbols ``assignment`` does not name, capped by the data."""
        symbols = self.projected.counts.symbols
        default = self.estimator.n_states
        if isinstance(default, Mapping):
            wanted = np.ones(len(symbols), dtype=np.int64)
            for name, value in default.items():
                wanted[symbols.index(name)] = int(value)
        else:
            wanted = np.full(len(symbols), int(default), dtype=np.int64)
        for name, value in assignment.items():
            wanted[symbols.index(name)] = int(value)
        return self._capped(wanted)

    def _capped(self, wanted: np.ndarray) -> np.ndarray:
        return self.projected.n_states(
            {name: int(m) for name, m in zip(self.projected.counts.symbols.names, wanted)},
            min_count_per_state=self.estimator.min_count_per_state,
            singular_value_threshold=self.estimator.singular_value_threshold,
        )

    def fit(self, assignment: Mapping[str, int]) -> ClusteringEstimator:
        """The fitted clustering estimator of an assignment (its ``model_`` parses)."""
        from threadpoolctl import threadpool_limits

        wanted = self.n_states(assignment)
        projections = self.projected.projections
        states = np.zeros(len(projections.order), dtype=np.int64)
        used = np.ones(len(wanted), dtype=np.int64)
        with threadpool_limits(limits=1):  # as cluster_nodes: small symbols, one thread
            for a in np.flatnonzero(wanted > 1):
                labels = self._symbol_states(int(a), int(wanted[a]))
                states[projections.nodes_of(int(a))] = labels
                used[a] = int(labels.max()) + 1 if len(labels) else 1
        with quiet():
            return clone(self.estimator).fit_states(self.projected, states, used)

    def _symbol_states(self, symbol: int, k: int) -> np.ndarray:
        key = (symbol, k)
        if key not in self._labels:
            # kept for every (symbol, k) tried: the smallest integer type holds them
            self._labels[key] = cluster_symbol(
                self.projected.projections,
                symbol,
                k,
                n_init=self.estimator.n_init,
                init=self.estimator.init,
                max_iter=self.estimator.max_iter,
                seed=symbol_seed(self.seed, symbol),
            ).astype(np.min_scalar_type(k))
        return self._labels[key]

    def model(self, assignment: Mapping[str, int]) -> ParsingModel:
        """The parsing model of an assignment."""
        return self.fit(assignment).model_

    def score(self, assignment: Mapping[str, int]) -> tuple[float, float]:
        """Dev F1 (EVALB, categories) of an assignment, and the seconds it took."""
        start = time.perf_counter()
        model = self.model(assignment)
        with quiet():
            scores = evaluate(Parser(model, decoder=self.decoder), self.dev, scheme=self.scheme)
        return scores.fscore, time.perf_counter() - start


def symbol_seed(seed: int, symbol: int) -> int:
    """The k-means seed of a symbol: from the search's seed and the symbol alone."""
    return int(np.random.SeedSequence([seed, symbol]).generate_state(1)[0] >> 1)
