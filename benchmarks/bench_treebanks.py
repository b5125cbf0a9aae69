"""Reading, normalising and binarising whole treebanks (issue: foundation, target < 60 s for IcePaHC).

Usage: python benchmarks/bench_treebanks.py [--repeat 3] [--no-write]
Each corpus is timed in a fresh subprocess (so caches and the garbage
collector start cold, as for a user), ``repeat`` times; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

CORPORA = {"ptb_sample": "penn", "icepahc": "penn", "floresta": "floresta", "cess_esp": "cess"}

# Runs in a subprocess: prints one JSON line of timings.
WORKER = r"""
import json, sys, time, resource
from spacy_lpcfg.corpora import load_split
from spacy_lpcfg.trees.transforms import TransformPipeline, TransformSpec
corpus, scheme, data = sys.argv[1:4]
t0 = time.perf_counter()
trees = load_split(corpus, None, data_dir=data)
t1 = time.perf_counter()
pipeline = TransformPipeline(TransformSpec(scheme=scheme))
binarised = pipeline.apply_all(trees)
t2 = time.perf_counter()
restored = pipeline.invert_all(binarised)
t3 = time.perf_counter()
assert restored == trees
print(json.dumps({
    "trees": len(trees), "tokens": sum(t.n_words for t in trees),
    "read": t1 - t0, "binarise": t2 - t1, "invert": t3 - t2,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run_once(corpus: str, scheme: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", WORKER, corpus, scheme, str(data_dir())],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    for corpus, scheme in CORPORA.items():
        runs = [run_once(corpus, scheme) for _ in range(args.repeat)]
        read = median([r["read"] for r in runs])
        binarise = median([r["binarise"] for r in runs])
        invert = median([r["invert"] for r in runs])
        peak = median([r["peak_mb"] for r in runs])
        rows.append(
            f"| {corpus} | {runs[0]['trees']:,} | {runs[0]['tokens']:,} | {read:.1f} | "
            f"{binarise:.1f} | {read + binarise:.1f} | {invert:.1f} | {peak:,.0f} |"
        )
        print(rows[-1], file=sys.stderr)
    body = (
        "## Treebanks: read + normalise + binarise\n\n"
        f"`python benchmarks/bench_treebanks.py --repeat {args.repeat}`: whole corpus, "
        "one process, cold start; read = parse files + remove empty elements + strip "
        "indices (function tags kept); binarise = default `TransformSpec` (right, h=1, "
        "v=2, unary collapse); invert checks the round trip. Median of "
        f"{args.repeat} runs, seconds. Target: IcePaHC read + binarise under 60 s.\n\n"
        "| corpus | trees | tokens | read s | binarise s | read + binarise s | invert s | "
        "peak RSS MB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
    )
    if not args.no_write:
        write_section("treebanks", body)
    print(body)


if __name__ == "__main__":
    main()
