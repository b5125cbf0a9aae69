"""Where candidates are scored: this process, joblib processes or a Dask cluster.

The candidates' shared state (the projected treebank, the dev trees, the k-means
cache) goes to each worker once: to loky processes (joblib's) through the pool's
initializer, to Dask workers by one broadcast ``scatter``. A batch is then a list
of assignments, and a result is a (dev F1, seconds) pair per assignment, in the
batch's order; scores do not depend on the worker (``candidates``), so every way
of running gives the serial search's results.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import Errors
from .candidates import StateCandidates

Score = tuple[float, float]

_INSTALLED: list[StateCandidates] = []  # the candidates of this worker process


def _install(candidates: StateCandidates) -> None:
    _INSTALLED[:] = [candidates]


def _score_installed(assignment: dict[str, int]) -> Score:
    return _INSTALLED[0].score(assignment)


def _score_with(candidates: StateCandidates, assignment: dict[str, int]) -> Score:
    return candidates.score(assignment)


def distributed_client() -> Any:
    """``distributed.Client``. RAISES ValueError: the ``dask`` extra is not installed (E412)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(Errors.E412) from None
    return Client


def connect(scheduler: Any):
    """A ``distributed.Client`` of a scheduler address (a Client is returned as it is).

    RAISES ValueError: the scheduler cannot be reached (E606).
    """
    Client = distributed_client()
    if isinstance(scheduler, Client):
        return scheduler
    try:
        return Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as err:
        raise ValueError(Errors.E606.format(address=scheduler, error=err)) from None


class Workers:
    """Scores batches of assignments.

    candidates (StateCandidates): what is scored.
    n_jobs (int): processes on this machine (1: this process).
    scheduler (str | Any | None): a Dask scheduler address ("tcp://host:8786") or a
        ``distributed.Client``; then the Dask workers score and ``n_jobs`` is ignored.
    Use as a context manager (the processes or the client connection close at the end).
    """

    def __init__(self, candidates: StateCandidates, *, n_jobs: int = 1, scheduler: Any = None):
        self.candidates = candidates
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self._pool: Any = None
        self._client: Any = None
        self._owns_client = False
        self._remote: Any = None

    def __enter__(self) -> Workers:
        if self.scheduler is not None:
            self._client = connect(self.scheduler)
            self._owns_client = self._client is not self.scheduler
            try:
                self._remote = self._client.scatter(self.candidates, broadcast=True)
            except BaseException:
                self.__exit__(None, None, None)
                raise
        elif self.n_jobs > 1:
            from joblib.externals.loky import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                max_workers=self.n_jobs, initializer=_install, initargs=(self.candidates,)
            )
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._client is not None:
            if self._remote is not None:
                self._client.cancel(self._remote)
            if self._owns_client:
                self._client.close()
            self._client = None

    def score(
        self, assignments: Sequence[dict[str, int]], deadline: float | None = None
    ) -> Iterator[Score]:
        """(dev F1, seconds) of each assignment, in order, each as soon as it and those
        before it are scored (so that a caller can write them as they come). In this
        process, no assignment is started after ``deadline`` (``time.perf_counter``);
        the processes and the cluster get the whole batch at once."""
        if self._client is not None:
            futures = [
                self._client.submit(_score_with, self._remote, assignment, pure=False)
                for assignment in assignments
            ]
            for future in futures:
                yield future.result()
        elif self._pool is not None:
            yield from self._pool.map(_score_installed, assignments)
        else:
            for assignment in assignments:
                if deadline is not None and time.perf_counter() >= deadline:
                    return
                yield self.candidates.score(assignment)
