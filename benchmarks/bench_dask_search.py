"""The latent-state search on a Dask cluster: one process, then 1 and 2 workers.

Usage: python benchmarks/bench_dask_search.py [--limit 1500] [--dev-limit 150] [--runs 3] [--write]

``optimize``'s state search (``LatentStateSearch``: clustering grammars scored on dev
trees, one candidate per task) on the first ``limit`` ptb_sample training trees,
scored on ``dev-limit`` dev trees, run in this process and on a
``dask.distributed.LocalCluster`` of 1 and of 2 single-threaded worker processes
(``scheduler=`` the cluster's address, as ``spacy-lpcfg optimize --scheduler`` passes
it). Each figure is the median wall time of ``runs`` searches, the cluster started
before the clock. Every run must choose the same states with the same dev F1 as the
run in this process. The speed-up of 2 workers over 1 is what a second core gives.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine, write_section  # noqa: E402

SETTINGS = {"max_states": 8, "coarse_step": 2, "max_symbols": 6, "min_count": 1}


def search(train, dev, scheduler=None):
    from spacy_lpcfg.estimators import ClusteringEstimator
    from spacy_lpcfg.search import LatentStateSearch
    from spacy_lpcfg.trees.transforms import TransformSpec

    estimator = ClusteringEstimator(n_states=4, transform=TransformSpec(v_markov=1))
    started = time.perf_counter()
    fitted = LatentStateSearch(estimator=estimator, scheduler=scheduler, **SETTINGS).fit(train, dev)
    return time.perf_counter() - started, fitted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=1500)
    parser.add_argument("--dev-limit", type=int, default=150)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()

    import distributed

    from spacy_lpcfg.corpora import load_split

    train = load_split("ptb_sample", "train", data_dir=data_dir())[: args.limit]
    dev = load_split("ptb_sample", "dev", data_dir=data_dir())[: args.dev_limit]
    search(train[:50], dev[:5])  # compile the kernels here once (the workers load them)
    rows: dict[str, list[float]] = {}
    reference = None
    for run in range(args.runs):
        for name, workers in (("one process", 0), ("Dask, 1 worker", 1), ("Dask, 2 workers", 2)):
            if workers:
                with distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=None,
                ) as cluster:  # fmt: skip
                    seconds, fitted = search(train, dev, cluster.scheduler_address)
            else:
                seconds, fitted = search(train, dev)
            found = (fitted.assignment_, fitted.dev_f1_, len(fitted.trace_))
            reference = reference or found
            if found != reference:
                sys.exit(f"{name} chose {found}, one process {reference}")
            rows.setdefault(name, []).append(seconds)
            print(f"run {run + 1}: {name}: {seconds:.1f} s", flush=True)

    medians = {name: statistics.median(times) for name, times in rows.items()}
    one_worker = medians["Dask, 1 worker"]
    lines = [
        "| run | workers | wall s (median) | speed-up over 1 worker |",
        "|---|---:|---:|---:|",
    ]
    for name, seconds in medians.items():
        workers = {"one process": "-", "Dask, 1 worker": "1", "Dask, 2 workers": "2"}[name]
        lines.append(f"| {name} | {workers} | {seconds:.1f} | {one_worker / seconds:.2f}x |")
    table = "\n".join(lines)
    print(table)
    assignment, dev_f1, candidates = reference
    body = (
        "## Dask: the state search on 1 and 2 workers\n\n"
        f"`python benchmarks/bench_dask_search.py --limit {args.limit} --dev-limit "
        f"{args.dev_limit} --runs {args.runs} --write` on {machine()}: `optimize`'s state "
        f"search (`LatentStateSearch`, {SETTINGS}, clustering grammars from 4 states, "
        f"v_markov 1) on the first {args.limit} ptb_sample training trees, scored on "
        f"{args.dev_limit} dev trees: {candidates} candidates scored, dev F1 {dev_f1:.2f}, "
        "in this process and on a `dask.distributed.LocalCluster` of single-threaded worker "
        "processes (`scheduler=` its address, as `optimize --scheduler` passes it). Every "
        f"run chose the same states with the same dev F1. Median of {args.runs} runs; the "
        "cluster is started before the clock.\n\n" + table + "\n"
    )
    if args.write:
        write_section("dask_search", body)


if __name__ == "__main__":
    main()
