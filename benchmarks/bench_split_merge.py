"""Split-merge EM against the Berkeley parser: the BENCHMARKS.md section "split_merge".

In one run: the Berkeley trainer (``../shared/tools/berkeley/train.sh 4``) and ours
(``SplitMergeEstimator``, defaults: 4 cycles over X-bar trees) on the ptb_sample
train split, CPU seconds and peak memory, each in its own process; then dev and test
F1 of every seed alone and of their product (``combine_models``: one ensemble,
product_mbr), and ``race.sh`` on the test split for the speed ratio. Grammars are
kept in ``--work`` and reused when present (delete it to time the training again).

    python benchmarks/bench_split_merge.py [--seeds 8] [--work /tmp/bench_split_merge]
        [--no-berkeley] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

BERKELEY = Path(__file__).resolve().parents[2] / "shared" / "tools" / "berkeley"
TIME_FORMAT = "%e %U %S %M"  # wall, user, system seconds, peak RSS KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_split_merge"))
    parser.add_argument("--no-berkeley", action="store_true", help="skip train.sh and race.sh")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    berkeley = None if args.no_berkeley else _berkeley_training()
    training = {seed: _train(args.work, seed) for seed in range(args.seeds)}
    scores = _scores(args.work, args.seeds)
    race = None if args.no_berkeley else _race(args.work)
    body = report(args, berkeley, training, scores, race)
    print(body)
    if not args.no_write:
        write_section("split_merge", body)


def _berkeley_training() -> dict:
    out = subprocess.run(
        ["bash", str(BERKELEY / "train.sh"), "4"], check=True, capture_output=True, text=True
    ).stdout
    wall, cpu, rss = re.search(r"wall (\d+) s, CPU (\d+) s, peak RSS (\d+) MB", out).groups()
    return {"wall": float(wall), "cpu": float(cpu), "rss_mb": float(rss)}


def _train(work: Path, seed: int) -> dict | None:
    """Train one seed in a fresh process (its own peak memory); None when reused."""
    model = work / f"seed{seed}"
    if model.is_dir():
        return None
    times = work / f"seed{seed}.time"
    command = [
        "/usr/bin/time", "-f", TIME_FORMAT, "-o", str(times),
        "spacy-lpcfg", "train", "ptb_sample", str(model), "--estimator", "split_merge",
        "--random-state", str(seed), "--data-dir", str(data_dir()), "-q",
    ]  # fmt: skip
    subprocess.run(command, check=True)
    wall, user, system, rss = times.read_text().split()
    return {"wall": float(wall), "cpu": float(user) + float(system), "rss_mb": int(rss) / 1024}


def _scores(work: Path, seeds: int) -> dict:
    """F1 on dev and test, every seed alone and the product (also saved as a model)."""
    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.grammar.model import ParsingModel, combine_models

    splits = load_splits("ptb_sample", data_dir=data_dir(), keep_functions=False)
    models = [ParsingModel.from_disk(work / f"seed{seed}") for seed in range(seeds)]
    product = combine_models(models)
    product.to_disk(work / "product")
    rows = {}
    for name, model in [*((f"seed {i}", m) for i, m in enumerate(models)), ("product", product)]:
        rows[name] = {
            split: round(evaluate(Parser(model), splits[split]).fscore, 2)
            for split in ("dev", "test")
        }
        print(json.dumps({name: rows[name]}), file=sys.stderr, flush=True)
    return rows


def _race(work: Path) -> str:
    command = ["bash", str(BERKELEY / "race.sh"), str(work / "seed0"), str(work / "product")]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def report(args, berkeley, training, scores, race) -> str:
    lines = [
        "## Split-merge EM against the Berkeley parser (ptb_sample)",
        "",
        f"`python benchmarks/bench_split_merge.py --seeds {args.seeds}`: the Berkeley trainer "
        "(`train.sh 4`, its WSJ settings) and `spacy-lpcfg train --estimator split_merge` "
        "(4 cycles, X-bar trees) on the train split, one process each, in the same run; "
        "F1 on categories (EVALB); the product joins the seeds with `combine` (one ensemble, "
        "product_mbr).",
        "",
    ]
    timed = [row for row in training.values() if row is not None]
    if berkeley is not None or timed:
        lines += ["| trainer | wall s | CPU s | peak RSS MB |", "|---|---:|---:|---:|"]
        if berkeley is not None:
            lines.append(
                f"| Berkeley SM4 | {berkeley['wall']:.0f} | {berkeley['cpu']:.0f} "
                f"| {berkeley['rss_mb']:.0f} |"
            )
        for seed, row in training.items():
            if row is not None:
                lines.append(
                    f"| split_merge, seed {seed} | {row['wall']:.0f} | {row['cpu']:.0f} "
                    f"| {row['rss_mb']:.0f} |"
                )
        lines.append("")
    lines += ["| grammar | dev F1 | test F1 |", "|---|---:|---:|"]
    for name, row in scores.items():
        lines.append(f"| {name} | {row['dev']:.2f} | {row['test']:.2f} |")
    if race:
        lines += ["", "`race.sh` (test split, one run):", "", "```", race, "```"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
