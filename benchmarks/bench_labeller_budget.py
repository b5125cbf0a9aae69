"""The function labeller's coefficient budget: the BENCHMARKS.md section "labeller_budget".

For each treebank, the labeller fitted on the train split with the features seen
twice (``min_count`` 2, no budget) and as the default fits it (at most
``max_parameters`` coefficients, rarer features dropped until it fits), each in a
fresh process: features kept, CPU seconds of the fit, the process's peak resident
memory, and the share of the test split's phrases whose full label it gets right on
the gold brackets (function tags stripped, then put back by the labeller).

    python benchmarks/bench_labeller_budget.py [CORPUS...] [--rows FILE] [--no-write]

``--rows FILE`` writes the table from the JSON lines earlier runs printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_section  # noqa: E402

CORPORA = ("ptb_sample", "floresta", "cess_esp", "icepahc")
UNBOUNDED = 10**9  # CEILINGS.labeller_parameters: no budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", default=list(CORPORA))
    parser.add_argument("--measure", nargs=2, metavar=("CORPUS", "MAX_PARAMETERS"))
    parser.add_argument("--rows", type=Path, help="write the table from these JSON lines")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if args.measure:  # the child process
        print(json.dumps(measure(args.measure[0], int(args.measure[1]))))
        return
    if args.rows:
        rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines()]
    else:
        rows = [_child(corpus, budget) for corpus in args.corpora for budget in _budgets()]
    body = report([row for row in rows if row["corpus"] in args.corpora])
    print(body)
    if not args.no_write:
        write_section("labeller_budget", body)


def _budgets() -> tuple[int, int]:
    from spacy_lpcfg.defaults import FUNCTION_LABELLER

    return UNBOUNDED, FUNCTION_LABELLER.max_parameters


def _child(corpus: str, budget: int) -> dict:
    command = [sys.executable, __file__, "--measure", corpus, str(budget)]
    row = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
    print(json.dumps(row), flush=True)
    return row


def measure(corpus: str, budget: int) -> dict:
    import resource
    import time

    from spacy_lpcfg.corpora import get_corpus, load_split
    from spacy_lpcfg.estimators.function_labels import FunctionLabeller

    info = get_corpus(corpus)
    train, test = load_split(corpus, "train"), load_split(corpus, "test")
    start = time.process_time()
    labeller = FunctionLabeller(scheme=info.scheme, language=info.lang, max_parameters=budget)
    labeller.fit(train)
    seconds = time.process_time() - start
    right = total = 0
    for gold, labelled in zip(test, labeller.label(test)):
        gold_labels = [node.label for node in gold.subtrees() if node.children]
        labels = [node.label for node in labelled.subtrees() if node.children]
        right += sum(a == b for a, b in zip(gold_labels, labels))
        total += len(gold_labels)
    return {
        "corpus": corpus,
        "max_parameters": budget,
        "min_count": labeller.min_count_,
        "classes": len(labeller.tagger_.classes),
        "features": len(labeller.tagger_.features),
        "fit_cpu_s": round(seconds, 1),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
        "right": right,
        "phrases": total,
    }


def report(rows: list[dict]) -> str:
    lines = [
        "## Function labeller: its coefficient budget",
        "",
        "`python benchmarks/bench_labeller_budget.py`: per treebank, the function "
        "labeller fitted on the train split with every feature seen twice (no budget) "
        "and as the default fits it (at most `max_parameters` coefficients, 4 million: "
        "rarer features dropped until classes x (features + 1) fits), each in a fresh "
        "process. Peak: the process's maximum resident set size (the train and test "
        "trees included). Right: test phrases whose full label the labeller gets right on "
        "the gold brackets.",
        "",
        "| treebank | budget | min count | classes | features | fit CPU s | peak GB | right |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        budget = "none" if row["max_parameters"] >= UNBOUNDED else f"{row['max_parameters']:,}"
        lines.append(
            f"| {row['corpus']} | {budget} | {row['min_count']} | {row['classes']} "
            f"| {row['features']:,} | {row['fit_cpu_s']:.0f} | {row['peak_rss_gb']:.2f} "
            f"| {100 * row['right'] / row['phrases']:.3f}% ({row['right']:,}/{row['phrases']:,}) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
