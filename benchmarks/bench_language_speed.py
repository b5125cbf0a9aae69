"""Parse speed on cess_esp and icepahc against ptb_sample: the BENCHMARKS.md section
"language_speed".

The Berkeley parser has grammars for ptb_sample only, so speed on the other treebanks
is reported as sentences (and words) per second and as the ratio to the same kind of
model on ptb_sample test, measured in the same run: a ratio near 1 means the speed
ratio to Berkeley measured on ptb_sample (``race.sh``, BENCHMARKS.md "members") carries
over. Kinds: one clustering grammar (m = 16, v = 1, function tags stripped: what
``race.sh`` races), trained into ``--work`` unless there, and the most accurate model
of each treebank given as ``--accurate CORPUS=DIR`` (optimize's). Tests: ptb_sample and
cess_esp test, icepahc every k-th test tree (``--icepahc-limit``); speed is the median
of ``--runs`` runs, one process, after a warm-up sentence.

    python benchmarks/bench_language_speed.py [--accurate ptb_sample=DIR ...] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

CORPORA = ("ptb_sample", "cess_esp", "icepahc")
SINGLE = ["--estimator", "clustering", "--n-states", "16", "--v-markov", "1", "--no-functions"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_language_speed"))
    parser.add_argument("--accurate", action="append", default=[], help="CORPUS=MODEL_DIR")
    parser.add_argument("--icepahc-limit", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import load_splits, spread
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.grammar.model import ParsingModel

    models = {("one clustering grammar", corpus): args.work / corpus for corpus in CORPORA}
    for given in args.accurate:
        corpus, _, path = given.partition("=")
        models[("most accurate", corpus)] = Path(path)
    for (kind, corpus), path in models.items():
        if kind == "one clustering grammar" and not path.is_dir():
            command = ["spacy-lpcfg", "train", corpus, str(path), *SINGLE, "-q"]
            subprocess.run(command + ["--data-dir", str(data_dir())], check=True)
    tests = {}
    for corpus in CORPORA:
        trees = load_splits(corpus, data_dir=data_dir())["test"]
        tests[corpus] = spread(trees, args.icepahc_limit) if corpus == "icepahc" else trees
    results = {}
    for key, path in models.items():
        parser_ = Parser(ParsingModel.from_disk(path))
        test = tests[key[1]]
        runs = [evaluate(parser_, test) for _ in range(args.runs)]
        seconds = statistics.median(run.seconds for run in runs)
        words = sum(len(tree.words()) for tree in test)
        results[key] = (runs[0].fscore, len(test), words, seconds)
        print(key, results[key], file=sys.stderr, flush=True)
    body = report(results, args)
    print(body)
    if not args.no_write:
        write_section("language_speed", body)


def report(results: dict, args) -> str:
    lines = [
        "## Parse speed on other treebanks, against ptb_sample",
        "",
        "`python benchmarks/bench_language_speed.py"
        + "".join(f" --accurate {given}" for given in args.accurate)
        + f" --runs {args.runs}`: one process, median of {args.runs} runs; test splits "
        f"(icepahc: about {args.icepahc_limit} trees spread over it). Ratio: sentences/s (words/s) "
        "over the same kind of model's on ptb_sample test in this run.",
        "",
        "| model | treebank | test trees (mean words) | F1 | sentences/s | words/s "
        "| ratio to ptb_sample, sentences (words) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (kind, corpus), (f1, n, words, seconds) in results.items():
        base = results.get((kind, "ptb_sample"))
        ratio = ""
        if base is not None:
            ratio = f"{(n / seconds) / (base[1] / base[3]):.2f} ({(words / seconds) / (base[2] / base[3]):.2f})"
        lines.append(
            f"| {kind} | {corpus} | {n} ({words / n:.1f}) | {f1:.2f} | {n / seconds:.1f} "
            f"| {words / seconds:.0f} | {ratio} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
