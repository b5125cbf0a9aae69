"""Which recipe `train` should use without options: candidates on all four treebanks.

For each treebank and candidate recipe, `spacy-lpcfg train` on the train split (under
`/usr/bin/time -v`: wall, CPU, peak RSS), then the model parses the test split (or
about --test-limit of its trees, spread over it) from its tokens: EVALB F1 on
categories, F1 with function labels, sentences/s, fallbacks.

    python benchmarks/bench_defaults.py --work /tmp/bench_defaults [--write]

Trained models are kept in --work and reused when the script runs again (delete a
model folder to retrain it); --write rewrites the "defaults" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from common import data_dir, write_section

CANDIDATES = {
    "four-way": ["--estimator", "combined"],
    "product+labeller": ["--recipe", "split_merge_product", "--function-labeller"],
}
TREEBANKS = ("ptb_sample", "cess_esp", "floresta", "icepahc")


def train(corpus: str, name: str, folder: Path, n_jobs: int) -> dict:
    """Train (unless done before) and return the training record."""
    record = folder.with_suffix(".train.json")
    if record.exists() and (folder / "cfg.json").exists():
        return json.loads(record.read_text())
    options = CANDIDATES[name] + (["--n-jobs", str(n_jobs)] if "product" in name else [])
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "spacy_lpcfg", "train", corpus,
               str(folder), "--data-dir", str(data_dir()), "-q", *options]  # fmt: skip
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{corpus} {name}: {run.stderr[-2000:]}")
    wall = time.perf_counter() - start

    def field(label: str) -> float:
        return float(re.search(rf"{label}: ([\d.:]+)", run.stderr).group(1))

    result = {
        "wall_s": round(wall, 1),
        "cpu_s": round(field("User time \\(seconds\\)") + field("System time \\(seconds\\)"), 1),
        "peak_rss_gb": round(field("Maximum resident set size \\(kbytes\\)") / 2**20, 2),
    }
    record.write_text(json.dumps(result))
    return result


def test(corpus: str, folder: Path, limit: int | None) -> dict:
    """Parse the test split (spread to about ``limit`` trees) and score it."""
    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import CORPORA, open_treebank, spread
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.grammar.model import ParsingModel

    gold, _ = open_treebank(corpus, "test", data_dir=data_dir())
    gold = spread(gold, limit)
    parser = Parser(ParsingModel.from_disk(folder))
    parser.parse(["warm", "up", "."])  # compile outside the timing
    scores = evaluate(parser, gold, scheme=CORPORA[corpus].scheme)
    figures = scores.to_dict()
    return {
        "sentences": len(gold),
        "f1": figures["bracketing_fscore"],
        "function_f1": figures["labelled_function_fscore"],
        "sentences_per_s": figures["sentences_per_second"],
        "fallbacks": figures["fallbacks"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_defaults"))
    parser.add_argument("--treebanks", nargs="+", default=list(TREEBANKS))
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    parser.add_argument("--test-limit", type=int, default=1000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results = json.loads((args.work / "results.json").read_text()) if (
        args.work / "results.json").exists() else {}  # fmt: skip
    for corpus in args.treebanks:
        for name in args.candidates:
            folder = args.work / corpus / name.replace("+", "_")
            folder.parent.mkdir(parents=True, exist_ok=True)
            row = {"treebank": corpus, "candidate": name, **train(corpus, name, folder,
                                                                   args.n_jobs)}  # fmt: skip
            row.update(test(corpus, folder, args.test_limit))
            results[f"{corpus}/{name}"] = row
            (args.work / "results.json").write_text(json.dumps(results, indent=1))
            print(json.dumps(row), flush=True)
    if args.write:
        write_section("defaults", table(results, args.test_limit))


def table(results: dict, limit: int) -> str:
    lines = [
        "## Defaults: candidate recipes on the four treebanks",
        "",
        f"`python benchmarks/bench_defaults.py --test-limit {limit} --write`: each candidate "
        "trained by `spacy-lpcfg train` on the train split (seeds of a product in 2 "
        "processes), scored on the test split (at most "
        f"{limit} trees spread over it), one process. F1: EVALB COLLINS on categories; "
        "function F1: full labels (NP-SBJ).",
        "",
        "| treebank | candidate | test trees | F1 | F1 with function labels | sentences/s "
        "| fallbacks | train wall s | train CPU s | peak RSS GB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results.values():
        lines.append(
            f"| {row['treebank']} | {row['candidate']} | {row['sentences']} | {row['f1']:.2f} "
            f"| {row['function_f1']:.2f} | {row['sentences_per_s']:.1f} | {row['fallbacks']} "
            f"| {row['wall_s']:.0f} | {row['cpu_s']:.0f} | {row['peak_rss_gb']:.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
