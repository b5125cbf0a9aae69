"""The E-step of EM over shards of the treebank, here or in workers.

The treebank is cut into runs of whole trees (``tree_shards``); ``shard_pass``
runs the inside-outside kernels (``kernels``) over one shard and the E-step
adds up the shards' counts. ``ShardedTreebank`` chooses where the shards run,
and sends each of them to its worker once per fit, not once per EM iteration:

* ``n_jobs == 1``: in this process.
* ``n_jobs > 1``: joblib, in threads unless a process backend is configured
  (``joblib.parallel_config(backend="loky")``). The kernels release the GIL, so
  threads run in parallel on the shards and the grammar as they are, without
  copies. Worker processes read their shards once from a temporary folder
  (``ShardStore``) and keep them (``_worker_shard``); each iteration writes the
  grammar there once for all of them.
* Dask: with ``joblib.parallel_config(backend="dask")`` active or a
  ``scheduler`` (address or ``distributed.Client``) given, the shards are
  scattered to the workers once; each iteration scatters the grammar and
  submits one task per shard, which Dask runs where its shard is.

The sum of the shards' log-likelihoods and counts differs from one pass over
the whole treebank by rounding only. The kernels are compiled with
``cache=True``: a worker process loads them from numba's cache on disk.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ...errors import Errors
from ...interrupts import kernel_calls
from .grammar import EMGrammar
from .treebank import KINDS, EMTreebank

SHARD_ARRAYS = ("symbol", "left", "right", "is_root", "node_rule")


class EStep(NamedTuple):
    """What an E-step returns.

    log_likelihood (float): of the gold trees under the grammar.
    counts (dict[str, np.ndarray]): expected counts, laid out like the weights.
    state_counts (np.ndarray): float64[sum(n_states)], expected nodes per symbol state.
    """

    log_likelihood: float
    counts: dict[str, np.ndarray]
    state_counts: np.ndarray


def tree_shards(treebank: EMTreebank, n_shards: int) -> list[dict[str, np.ndarray]]:
    """The node arrays of ``n_shards`` runs of whole trees with about as many nodes
    each, children re-numbered within the shard."""
    nodes = treebank.nodes
    roots = np.flatnonzero(nodes.parent < 0)
    cuts = np.searchsorted(roots, np.linspace(0, len(nodes), n_shards + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], roots[np.minimum(cuts, len(roots) - 1)], [len(nodes)]]))
    shards = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        left, right = nodes.left[lo:hi], nodes.right[lo:hi]
        shards.append(
            {
                "symbol": nodes.symbol[lo:hi],
                "left": np.where(left >= 0, left - lo, -1),
                "right": np.where(right >= 0, right - lo, -1),
                "is_root": nodes.parent[lo:hi] < 0,
                "node_rule": treebank.node_rule[lo:hi],
            }
        )
    return shards


def shard_pass(
    shard: Mapping[str, np.ndarray],
    n_states: np.ndarray,
    weights: Mapping[str, np.ndarray],
    offsets: Mapping[str, np.ndarray],
    *,
    pair_share: np.ndarray | None = None,
    tokens: bool = False,
):
    """Inside-outside over one shard.

    pair_share (np.ndarray | None): given, RETURNS the merge losses of the shard's nodes
        (``kernels.merge_losses``) instead of counts.
    tokens (bool): RETURNS the posteriors over the states of each leaf (flat, node order).
    RETURNS (EStep): otherwise.
    """
    from .kernels import inside_outside_nodes, leaf_posteriors, merge_losses

    state_start = np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)
    result = inside_outside_nodes(
        shard["symbol"],
        shard["left"],
        shard["right"],
        shard["is_root"],
        shard["node_rule"],
        n_states,
        state_start,
        offsets["binary"],
        weights["binary"],
        offsets["unary"],
        weights["unary"],
        offsets["lexical"],
        weights["lexical"],
        pair_share is None and not tokens,  # counts only for an E-step
    )
    inside, outside, _, _, log_likelihood, binary, unary, lexical, state_counts = result
    if pair_share is not None:
        is_split = n_states % 2 == 0  # right after a split: every symbol but TOP
        return merge_losses(
            shard["symbol"], n_states, state_start, is_split, inside, outside, pair_share
        )
    if tokens:
        return leaf_posteriors(
            shard["symbol"], shard["left"], shard["right"], n_states, inside, outside
        )
    return EStep(
        log_likelihood, {"binary": binary, "unary": unary, "lexical": lexical}, state_counts
    )


# What a pass needs of the grammar: (n_states, weights by kind, offsets by kind).
GrammarArgs = tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]


class ShardedTreebank:
    """Runs ``shard_pass`` over the shards of a treebank: here, in joblib threads or
    processes, or on Dask workers (see the module docstring).

    treebank (EMTreebank): the training nodes.
    n_jobs (int): joblib workers (1: this process, unless Dask is chosen); with Dask,
        the number of shards (1: one per worker thread of the cluster).
    scheduler (str | Any | None): a Dask scheduler address ("tcp://host:8786") or a
        ``distributed.Client``: the E-step runs on its workers.

    As a context manager it keeps its workers (and their shards) for all its passes;
    outside one, each pass starts and stops them.
    """

    def __init__(self, treebank: EMTreebank, n_jobs: int = 1, scheduler: Any = None):
        self.treebank = treebank
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self.shards = tree_shards(treebank, n_jobs)
        self._runner: _JoblibRunner | _DaskRunner | None = None

    @property
    def backend(self) -> str:
        """Where the passes run: "serial", "threads", "processes" or "dask"."""
        return "serial" if self._runner is None else self._runner.backend

    def __enter__(self) -> ShardedTreebank:
        client = _dask_client(self.scheduler)
        if client is not None:
            self._runner = _DaskRunner(self.treebank, self.n_jobs, *client)
            self.shards = self._runner.shards
        elif self.n_jobs > 1:
            self._runner = _JoblibRunner(self.shards, self.n_jobs)
        return self

    def __exit__(self, *exc_info) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            runner.close()

    def _map(self, grammar: EMGrammar, **options) -> list:
        offsets = {kind: grammar.offsets(self.treebank, kind) for kind in KINDS}
        args: GrammarArgs = (grammar.n_states, grammar.weights, offsets)
        with kernel_calls():  # Ctrl-C between passes, never inside a kernel
            if self._runner is not None:
                return self._runner.map(args, options)
            if self.n_jobs == 1 and self.scheduler is None and _active_dask_client() is None:
                return [shard_pass(shard, *args, **options) for shard in self.shards]
            with self:  # workers for this pass only
                assert self._runner is not None  # n_jobs > 1 or Dask
                return self._runner.map(args, options)

    def e_step(self, grammar: EMGrammar) -> EStep:
        """Expected counts and log-likelihood over the whole treebank."""
        parts = self._map(grammar)
        if len(parts) == 1:
            return parts[0]
        return EStep(
            float(sum(part.log_likelihood for part in parts)),
            {kind: _total(part.counts[kind] for part in parts) for kind in KINDS},
            _total(part.state_counts for part in parts),
        )

    def merge_losses(self, grammar: EMGrammar, state_counts: np.ndarray) -> np.ndarray:
        """float64[sum(n_states)]: the approximate change of log-likelihood of merging
        each pair (2k, 2k + 1), at its first state."""
        n_states = grammar.n_states
        symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
        state = np.arange(len(state_counts))
        local = state - grammar.state_start[symbol_of_state]
        partner = np.where(local % 2 == 0, state + 1, state - 1)  # pairs (2k, 2k + 1)
        partner = np.where(n_states[symbol_of_state] % 2 == 0, partner, state)
        pair_total = state_counts + state_counts[partner]
        share = np.divide(
            state_counts, pair_total, out=np.full_like(state_counts, 0.5), where=pair_total > 0
        )
        return _total(self._map(grammar, pair_share=share))

    def token_posteriors(self, grammar: EMGrammar) -> np.ndarray:
        """float64: each token's posterior over its tag's states, token after token."""
        return np.concatenate(self._map(grammar, tokens=True))


def _total(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """The sum of arrays, added in place into the first (each shard's arrays are its
    own: no copy the size of the weights)."""
    arrays = iter(arrays)
    total = next(arrays)
    for array in arrays:
        total += array
    return total


# joblib: threads, or processes that keep their shards -----------------------------------


class _JoblibRunner:
    """One ``joblib.Parallel`` for all the passes of a fit (starting one per pass
    doubled the time of an E-step)."""

    def __init__(self, shards: list[dict[str, np.ndarray]], n_jobs: int):
        from joblib import Parallel
        from joblib.parallel import get_active_backend

        self.shards = shards
        # threads unless a process backend is configured: what Parallel(prefer=...) picks
        backend, _ = get_active_backend(prefer="threads")
        shared = getattr(backend, "supports_sharedmem", False)
        self.backend = "threads" if shared else "processes"
        self.store = None if shared else ShardStore(shards)
        try:
            self.parallel = Parallel(n_jobs=n_jobs, prefer="threads").__enter__()
        except BaseException:
            self.close()
            raise

    def map(self, args: GrammarArgs, options: dict[str, Any]) -> list:
        from joblib import delayed

        if self.store is None:
            return self.parallel(delayed(shard_pass)(s, *args, **options) for s in self.shards)
        grammar = self.store.put_grammar(args)
        try:
            return self.parallel(
                delayed(_stored_pass)(self.store.folder, i, grammar, options)
                for i in range(len(self.shards))
            )
        finally:
            os.unlink(grammar)

    def close(self) -> None:
        parallel = getattr(self, "parallel", None)
        if parallel is not None:
            parallel.__exit__(None, None, None)
        if self.store is not None:
            self.store.close()


class ShardStore:
    """The shards of a fit in a temporary folder, for worker processes to read once.

    shards (list[dict[str, np.ndarray]]): ``tree_shards``; shard i is ``shard-i.npz``.
    The folder is in shared memory (/dev/shm) when it is large enough, as joblib's
    own temporary files are; ``close`` removes it.
    """

    def __init__(self, shards: list[dict[str, np.ndarray]]):
        self.folder = tempfile.mkdtemp(prefix="spacy-lpcfg-shards-", dir=_shared_memory())
        self._grammars = 0
        try:
            for i, shard in enumerate(shards):
                arrays: dict[str, Any] = dict(shard)
                np.savez(os.path.join(self.folder, f"shard-{i}.npz"), **arrays)
        except BaseException:
            self.close()
            raise

    def put_grammar(self, args: GrammarArgs) -> str:
        """Write a pass's grammar once for all workers; RETURNS its path."""
        n_states, weights, offsets = args
        self._grammars += 1
        path = os.path.join(self.folder, f"grammar-{self._grammars}.npz")
        arrays: dict[str, Any] = {"n_states": n_states}
        for kind in KINDS:
            arrays[f"weights_{kind}"], arrays[f"offsets_{kind}"] = weights[kind], offsets[kind]
        np.savez(path, **arrays)
        return path

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _shared_memory() -> str | None:
    """/dev/shm if it holds at least 2 GB (joblib's rule for its memmaps), else None."""
    try:
        stats = os.statvfs("/dev/shm")
    except (OSError, AttributeError):
        return None
    return "/dev/shm" if stats.f_bsize * stats.f_bavail >= 2e9 else None


# The shards a worker process has read, by path: one fit's at a time.
_WORKER_SHARDS: dict[str, dict[str, np.ndarray]] = {}


def _worker_shard(folder: str, index: int) -> dict[str, np.ndarray]:
    """Shard ``index`` of the store ``folder``, read from disk the first time only."""
    path = os.path.join(folder, f"shard-{index}.npz")
    shard = _WORKER_SHARDS.get(path)
    if shard is None:
        if any(os.path.dirname(known) != folder for known in _WORKER_SHARDS):
            _WORKER_SHARDS.clear()  # an earlier fit's
        with np.load(path) as data:
            shard = {name: data[name] for name in SHARD_ARRAYS}
        _WORKER_SHARDS[path] = shard
    return shard


def _stored_pass(folder: str, index: int, grammar: str, options: dict[str, Any]):
    """``shard_pass`` in a worker process, over a stored shard and grammar."""
    with np.load(grammar) as data:
        weights = {kind: data[f"weights_{kind}"] for kind in KINDS}
        offsets = {kind: data[f"offsets_{kind}"] for kind in KINDS}
        n_states = data["n_states"]
    return shard_pass(_worker_shard(folder, index), n_states, weights, offsets, **options)


# Dask: shards scattered once, one task per shard per pass ---------------------------------


def _active_dask_client() -> Any:
    """The client of an active ``joblib.parallel_config(backend="dask")``, else None."""
    import sys

    if "distributed" not in sys.modules:  # no client can exist: skip importing joblib
        return None
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    return getattr(backend, "client", None)


def _dask_client(scheduler: Any) -> tuple[Any, bool] | None:
    """(client, whether it is ours to close) of ``scheduler`` or of an active joblib
    Dask backend; None: no Dask."""
    if scheduler is None:
        client = _active_dask_client()
        return None if client is None else (client, False)
    if isinstance(scheduler, str):
        try:
            from distributed import Client
        except ImportError:
            raise ValueError(Errors.E412) from None
        return Client(scheduler, set_as_default=False), True
    return scheduler, False


class _DaskRunner:
    backend = "dask"

    def __init__(self, treebank: EMTreebank, n_jobs: int, client: Any, owned: bool):
        self.client, self.owned = client, owned
        try:
            n_shards = n_jobs if n_jobs > 1 else max(1, sum(client.nthreads().values()))
            self.shards = tree_shards(treebank, n_shards)
            self.remote = client.scatter(self.shards, hash=False)
        except BaseException:
            self.close()
            raise

    def map(self, args: GrammarArgs, options: dict[str, Any]) -> list:
        (grammar,) = self.client.scatter([args], broadcast=True, hash=False)
        futures = [
            self.client.submit(_remote_pass, shard, grammar, options, pure=False)
            for shard in self.remote
        ]
        try:
            return self.client.gather(futures)
        finally:
            self.client.cancel([*futures, grammar])

    def close(self) -> None:
        remote = getattr(self, "remote", None)
        try:
            if remote:
                self.client.cancel(remote)
        finally:
            if self.owned:
                self.client.close()


def _remote_pass(shard: dict[str, np.ndarray], args: GrammarArgs, options: dict[str, Any]):
    return shard_pass(shard, *args, **options)
