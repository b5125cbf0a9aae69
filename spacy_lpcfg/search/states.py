"""``LatentStateSearch``: the number of latent states per symbol, chosen on dev.

A meta-estimator over the clustering estimator (Narayan & Cohen 2016, Figure 2; docs/design/architecture.md, section 7):
``fit(trees, dev_trees)`` projects the treebank once at ``max_states``, starts
from the estimator's states, searches the symbols most frequent first
(``beam.beam_search``) scoring each candidate by EVALB F1 on the dev trees, and
keeps the best grammar. Candidates run in joblib processes (``n_jobs``) or on a
Dask cluster (``scheduler``) with the serial search's results; ``trace`` writes
every candidate to a JSON-lines file that ``resume`` picks up after an
interruption; ``max_time`` stops scoring and keeps the best found so far.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..defaults import CEILINGS, SEARCH
from ..errors import Errors
from ..estimators.base import (
    BaseEstimator,
    as_transform_spec,
    check_number,
    check_random_state,
    clone,
)
from ..estimators.clustering import ClusteringEstimator
from ..estimators.latent import ProjectedTreebank
from ..trees.tree import Tree
from .beam import Assignment, beam_search
from .candidates import StateCandidates
from .trace import Trace, fingerprint
from .workers import Workers

STAGE = "states"


class LatentStateSearch(BaseEstimator):
    """Clustering L-PCFG whose states per symbol are searched on dev.

    estimator (ClusteringEstimator | None): the clustering settings and transforms;
        its ``n_states`` is where the search starts. Defaults to ClusteringEstimator().
    max_states (int): the most states a symbol may get (the SVDs' rank).
    beam (int): assignments kept at each step (Narayan & Cohen's k).
    coarse_step (int): the coarse values are 1, coarse_step, 2 coarse_step, ...
    max_symbols (int | None): search the most frequent symbols only (None: all).
    min_count (int): symbols with fewer training nodes keep the estimator's states.
    decoder (str): the parser's decoder when scoring.
    n_jobs (int): joblib processes scoring candidates.
    scheduler (str | distributed.Client | None): a Dask scheduler address (or a
        client); the Dask workers score instead.
    max_time (float | None): seconds after which no candidate is started.
    trace (str | Path | None): the JSON-lines trace file.
    resume (bool): go on from the trace of an interrupted search.
    random_state (int | None): seeds the SVDs and k-means.
    scheme (str): the dev trees' label scheme.

    Fitted attributes: ``n_states_`` (dict symbol -> states, symbols with more than
    one), ``assignment_`` (the searched symbols' states), ``start_`` (their states
    at the start), ``dev_f1_``,
    ``best_estimator_`` (the fitted ClusteringEstimator), ``model_``,
    ``trace_`` (the trace's records), ``finished_`` (False if ``max_time`` stopped
    the search), ``projected_``.
    """

    name = "state_search"

    estimator: ClusteringEstimator | None
    max_states: int
    beam: int
    coarse_step: int
    max_symbols: int | None
    min_count: int
    decoder: str
    n_jobs: int
    scheduler: Any
    max_time: float | None
    trace: str | Path | None
    resume: bool
    random_state: int
    scheme: str

    def __init__(
        self,
        *,
        estimator: ClusteringEstimator | None = None,
        max_states: int = SEARCH.max_states,
        beam: int = SEARCH.beam,
        coarse_step: int = SEARCH.coarse_step,
        max_symbols: int | None = SEARCH.max_symbols,
        min_count: int = SEARCH.min_count,
        decoder: str = "auto",
        n_jobs: int = 1,
        scheduler: Any = None,
        max_time: float | None = None,
        trace: str | Path | None = None,
        resume: bool = False,
        random_state: int | None = 0,
        scheme: str = "penn",
    ):
        self._store_params(locals())

    def _estimator(self) -> ClusteringEstimator:
        return clone(self.estimator) if self.estimator is not None else ClusteringEstimator()

    def _check_params(self) -> None:
        ceilings = {
            "max_states": CEILINGS.n_states,
            "beam": CEILINGS.beam,
            "n_jobs": CEILINGS.n_jobs,
            "coarse_step": CEILINGS.n_states,
        }
        for name in ("max_states", "beam", "coarse_step", "min_count", "n_jobs"):
            top = ceilings.get(name)
            expected = "an int >= 1" if top is None else f"an int from 1 to {top}"
            high = None if top is None else top + 1
            check_number(self, name, expected, low=1, high=high, integer=True)
        if self.max_symbols is not None:
            check_number(self, "max_symbols", "an int >= 0 or None", low=0, integer=True)
        if self.max_time is not None:
            seconds = CEILINGS.max_time
            expected = f"a number of seconds > 0 and <= {seconds:.0f}"
            check_number(self, "max_time", expected, low=1e-9, high=seconds + 1e-9)
        if not isinstance(self.random_state, int) or isinstance(self.random_state, bool):
            expected = "an int (the search's candidates are seeded from it)"
            raise ValueError(
                Errors.E011.format(name="random_state", value=self.random_state, expected=expected)
            )

    def project(self, trees: Iterable[Tree]) -> ProjectedTreebank:
        """The training treebank projected at ``max_states`` (for ``fit_projected``)."""
        # the estimator's projection, at the rank of the most states a candidate asks for
        estimator = self._estimator()
        estimator.set_params(n_states=self.max_states)
        return estimator._project(trees, check_random_state(self.random_state))

    def candidates(self, projected: ProjectedTreebank, dev: Sequence[Tree]) -> StateCandidates:
        """The search's candidates: its clustering settings, seed and decoder over a
        projected treebank (``project``), scored on ``dev``."""
        return StateCandidates(
            projected,
            self._estimator(),
            list(dev),
            scheme=self.scheme,
            seed=self.random_state,
            decoder=self.decoder,
        )

    def fit(self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None):
        """Project the training trees, then search (``fit_projected``).

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree]): the dev trees the candidates are scored on.
        RETURNS: self.
        """
        self._check_params()
        if dev_trees is None:
            raise ValueError(Errors.E604)
        trees = list(trees)
        return self.fit_projected(self.project(trees), list(dev_trees), train=trees)

    def fit_projected(
        self,
        projected: ProjectedTreebank,
        dev_trees: Sequence[Tree],
        *,
        train: Sequence[Tree] | None = None,
        trace: Trace | None = None,
    ) -> LatentStateSearch:
        """Search from a projected treebank (``project``).

        train (Sequence[Tree] | None): the training trees, for the trace's fingerprint
            (without them a resumed trace is only matched on dev and the settings).
        trace (Trace | None): a trace to add the candidates to (``optimize``'s, which
            it keeps open) instead of the ``trace`` file.
        RETURNS (LatentStateSearch): self.
        """
        self._check_params()
        if not dev_trees:
            raise ValueError(Errors.E604)
        candidates = self.candidates(projected, dev_trees)
        symbols = candidates.symbols_by_frequency(self.min_count)[: self.max_symbols]
        caps = candidates.caps
        start_states = candidates.n_states({})
        names = projected.counts.symbols
        start = {name: int(start_states[names.index(name)]) for name in symbols}
        own_trace = trace is None
        if trace is None:
            trace = Trace(
                Path(self.trace) if self.trace is not None else None,
                fingerprint(train or (), dev_trees, self._settings()),
                resume=self.resume,
            )
        deadline = None if self.max_time is None else time.perf_counter() + self.max_time
        try:
            with Workers(candidates, n_jobs=self.n_jobs, scheduler=self.scheduler) as workers:

                def score_batch(assignments: list[Assignment], step: dict) -> list[float | None]:
                    return _score_batch(workers, trace, assignments, step, deadline)

                result = beam_search(
                    symbols,
                    start,
                    caps,
                    score_batch,
                    beam=self.beam,
                    max_states=self.max_states,
                    coarse_step=self.coarse_step,
                )
        finally:
            if own_trace:
                trace.close()
        self.start_ = start
        self.assignment_ = result.best
        self.dev_f1_ = result.score
        self.finished_ = result.finished
        self.trace_ = trace.records
        self.best_estimator_ = candidates.fit(result.best)
        self.model_ = self.best_estimator_.model_
        self.n_states_ = dict(self.best_estimator_.n_states_)
        self.projected_ = projected
        return self

    def _settings(self) -> dict[str, Any]:
        estimator = self._estimator().get_params()
        estimator["transform"] = as_transform_spec(estimator["transform"]).to_dict()
        params = {
            name: value
            for name, value in self.get_params(deep=False).items()
            if name not in ("estimator", "n_jobs", "scheduler", "max_time", "trace", "resume")
        }
        return {"estimator": estimator, **params}


def _score_batch(
    workers: Workers,
    trace: Trace,
    assignments: list[Assignment],
    step: dict,
    deadline: float | None,
) -> list[float | None]:
    """Score what the trace does not know yet (none once past the deadline)."""
    known = [trace.known(STAGE, assignment) for assignment in assignments]
    missing = [i for i, score in enumerate(known) if score is None]
    if step["phase"] == "start":  # the start is scored whatever the time
        deadline = None
    if missing and deadline is not None and time.perf_counter() >= deadline:
        return [None if score is None else score[0] for score in known]
    batch = workers.score([assignments[i] for i in missing], deadline)
    for i, (f1, seconds) in zip(missing, batch):  # each written as soon as it is scored
        trace.add(STAGE, assignments[i], f1, seconds, **step)
        known[i] = (f1, seconds)
    return [None if score is None else score[0] for score in known]
