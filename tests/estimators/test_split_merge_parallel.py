"""The E-step of split-merge EM in joblib threads, joblib processes that keep their
shards, and on a Dask cluster: every way gives the serial log-likelihoods."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from joblib import parallel_config

from spacy_lpcfg.estimators.em import (
    KINDS,
    ShardedTreebank,
    initial_grammar,
    split_grammar,
)
from spacy_lpcfg.estimators.em import shards as em_shards
from spacy_lpcfg.estimators.split_merge import SplitMergeEstimator

SETTINGS = {"n_cycles": 1, "em_iterations": 3, "merge_em_iterations": 2}


@pytest.fixture(scope="module")
def ptb_300(load_corpus):
    return load_corpus("ptb_sample", "train")[:300]


@pytest.fixture(scope="module")
def serial(ptb_300):
    return SplitMergeEstimator(**SETTINGS).fit(ptb_300)


@pytest.fixture(scope="module")
def split(serial):
    """A grammar with two states per symbol (noise: the states differ)."""
    treebank = serial.treebank_
    return split_grammar(treebank, initial_grammar(treebank), 0.5, np.random.default_rng(1))


def assert_same_log_likelihoods(fitted, serial):
    assert [(p.cycle, p.phase) for p in fitted.log_likelihoods_] == [
        (p.cycle, p.phase) for p in serial.log_likelihoods_
    ]
    for mine, theirs in zip(fitted.log_likelihoods_, serial.log_likelihoods_):
        np.testing.assert_allclose(mine.log_likelihoods, theirs.log_likelihoods, rtol=1e-9)


def assert_same_e_step(sharded, serial, grammar):
    one = ShardedTreebank(serial.treebank_, 1)
    expected, found = one.e_step(grammar), sharded.e_step(grammar)
    assert found.log_likelihood == pytest.approx(expected.log_likelihood, rel=1e-12)
    for kind in KINDS:
        np.testing.assert_allclose(found.counts[kind], expected.counts[kind], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(found.state_counts, expected.state_counts, rtol=1e-9)
    np.testing.assert_array_equal(sharded.token_posteriors(grammar), one.token_posteriors(grammar))


def test_threads_by_default(serial, split):
    with ShardedTreebank(serial.treebank_, 2) as sharded:
        assert sharded.backend == "threads" and len(sharded.shards) == 2
        assert_same_e_step(sharded, serial, split)
    assert sharded.backend == "serial"  # the workers are gone with the block


def test_worker_processes_keep_their_shards(serial, split, ptb_300):
    """Under a process backend the shards go to a store once; each pass sends the
    workers a few names (the shard, the grammar written once for all), not arrays."""
    with parallel_config(backend="loky"), ShardedTreebank(serial.treebank_, 2) as sharded:
        assert sharded.backend == "processes"
        runner = sharded._runner
        sent = []

        def recording(tasks):
            tasks = list(tasks)
            sent.extend(len(pickle.dumps(task)) for task in tasks)
            return parallel(tasks)

        parallel, runner.parallel = runner.parallel, recording
        assert_same_e_step(sharded, serial, split)
        runner.parallel = parallel
        shard_bytes = min(sum(a.nbytes for a in shard.values()) for shard in sharded.shards)
        assert len(sent) == 4 and shard_bytes > 100_000  # e_step, token posteriors: 2 each
        assert max(sent) < 2_000
        folder = Path(runner.store.folder)
        assert sorted(p.name for p in folder.iterdir()) == ["shard-0.npz", "shard-1.npz"]
    assert not folder.exists()  # the store goes with the block
    with parallel_config(backend="loky"):
        assert_same_log_likelihoods(SplitMergeEstimator(n_jobs=2, **SETTINGS).fit(ptb_300), serial)


def test_worker_shard_cache_reads_each_shard_once(tmp_path, serial):
    shards = em_shards.tree_shards(serial.treebank_, 2)
    store = em_shards.ShardStore(shards)
    try:
        first = em_shards._worker_shard(store.folder, 1)
        for name in em_shards.SHARD_ARRAYS:
            np.testing.assert_array_equal(first[name], shards[1][name])
        (Path(store.folder) / "shard-1.npz").unlink()
        assert em_shards._worker_shard(store.folder, 1) is first
        # another fit's store replaces the shards kept
        other = em_shards.ShardStore(shards)
        em_shards._worker_shard(other.folder, 0)
        assert list(em_shards._WORKER_SHARDS) == [
            em_shards.os.path.join(other.folder, "shard-0.npz")
        ]
        other.close()
    finally:
        store.close()
        em_shards._WORKER_SHARDS.clear()


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield cluster, client


def test_dask_e_step_gives_the_serial_log_likelihoods(cluster, serial, ptb_300):
    """A scheduler address, or joblib's Dask backend: the shards go to the workers once,
    one task per shard per pass; every EM iteration's log-likelihood is the serial one.
    The workers load the kernels from numba's cache, compiled by this process."""
    from joblib import parallel_config

    cluster, client = cluster
    by_address = SplitMergeEstimator(scheduler=cluster.scheduler_address, **SETTINGS)
    assert_same_log_likelihoods(by_address.fit(ptb_300), serial)
    assert "scheduler" not in by_address.model_.params  # where it ran is no part of it
    with parallel_config(backend="dask"):
        assert_same_log_likelihoods(SplitMergeEstimator(**SETTINGS).fit(ptb_300), serial)
    by_client = SplitMergeEstimator(scheduler=client, n_jobs=3, **SETTINGS)
    assert_same_log_likelihoods(by_client.fit(ptb_300), serial)

    def compilations():  # of the kernels the workers ran
        from spacy_lpcfg.estimators.em.kernels import inside_outside_nodes, merge_losses

        stats = [kernel.stats for kernel in (inside_outside_nodes, merge_losses)]
        return [(sum(s.cache_hits.values()), sum(s.cache_misses.values())) for s in stats]

    found = client.run(compilations)
    assert len(found) == 2
    assert all(hits >= 1 and misses == 0 for kernels in found.values() for hits, misses in kernels)


def test_dask_shards_are_scattered_once(cluster, serial, split):
    _, client = cluster
    with ShardedTreebank(serial.treebank_, 1, scheduler=client) as sharded:
        assert sharded.backend == "dask" and len(sharded.shards) == 2  # one per worker
        keys = {future.key for future in sharded._runner.remote}
        assert_same_e_step(sharded, serial, split)
        assert {future.key for future in sharded._runner.remote} == keys
        held = client.who_has([*sharded._runner.remote])
        assert set(held) == keys and all(len(workers) == 1 for workers in held.values())
