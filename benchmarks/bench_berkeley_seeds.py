"""The Berkeley parser's own seed-to-seed spread: the BENCHMARKS.md section "berkeley_seeds".

The shipped grammars (``../shared/tools/berkeley/grammars``) were trained with the
trainer's default seed, which its help calls good for English. To tell whether a
single split-merge grammar of ours trails Berkeley or only its luckiest seed,
this trains Berkeley's GrammarTrainer on the same data and settings as
``train.sh 4`` with other ``-randSeed`` values, parses the ptb_sample dev and test
splits with each grammar and scores them with ``spacy-lpcfg evaluate`` (EVALB,
collins), as ``race.sh`` does. Grammars are kept in ``--work`` and reused.

    python benchmarks/bench_berkeley_seeds.py [--seeds 1 2 3 4] [--work /tmp/bench_berkeley_seeds]
        [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_section  # noqa: E402

BERKELEY = Path(__file__).resolve().parents[2] / "shared" / "tools" / "berkeley"
JAR = BERKELEY / "BerkeleyParser-1.7.jar"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_berkeley_seeds"))
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in args.seeds:
        grammar = args.work / f"sm4_seed{seed}.gr"
        if not grammar.is_file():
            subprocess.run(
                ["java", "-Xmx8g", "-cp", str(JAR), "edu.berkeley.nlp.PCFGLA.GrammarTrainer",
                 "-path", str(BERKELEY / "data" / "wsj"), "-treebank", "WSJ", "-SMcycles", "4",
                 "-randSeed", str(seed), "-out", str(grammar)],
                check=True, capture_output=True,
            )  # fmt: skip
        row = {"seed": seed, **{split: _f1(grammar, split, args.work) for split in ("dev", "test")}}
        print(row, file=sys.stderr, flush=True)
        rows.append(row)
    body = report(rows, args)
    print(body)
    if not args.no_write:
        write_section("berkeley_seeds", body)


def _f1(grammar: Path, split: str, work: Path) -> float:
    tokens = BERKELEY / "data" / f"ptb_sample.{split}.tok"
    raw = work / f"{grammar.stem}.{split}.raw"
    subprocess.run(
        ["java", "-Xmx4g", "-cp", str(JAR), "edu.berkeley.nlp.PCFGLA.BerkeleyParser",
         "-gr", str(grammar), "-inputFile", str(tokens), "-outputFile", str(raw)],
        check=True, capture_output=True,
    )  # fmt: skip
    parsed = work / f"{grammar.stem}.{split}.out"
    # Berkeley's unlabelled root is TOP in the gold files (as race.sh relabels it)
    lines = raw.read_text(encoding="utf-8").splitlines()
    parsed.write_text(
        "".join(("(TOP " + line[2:] if line.startswith("( ") else line) + "\n" for line in lines),
        encoding="utf-8",
    )
    from spacy_lpcfg.evaluation.evalb import evaluate_files

    gold = BERKELEY / "data" / f"ptb_sample.{split}.gold"
    return evaluate_files(gold, parsed, "collins").summary().fscore


def report(rows: list[dict], args) -> str:
    lines = [
        "## The Berkeley parser's seeds (ptb_sample)",
        "",
        f"`python benchmarks/bench_berkeley_seeds.py --seeds {' '.join(map(str, args.seeds))}`: "
        "Berkeley's GrammarTrainer as `train.sh 4` with `-randSeed`, each grammar parsing "
        "the dev and test splits (EVALB F1, collins). The shipped SM4 grammar (`race.sh`) "
        'scores 86.01 dev / 85.64 test; our split-merge seeds 0-7 are in "split_merge".',
        "",
        "| Berkeley seed | dev F1 | test F1 |",
        "|---:|---:|---:|",
    ]
    lines += [f"| {row['seed']} | {row['dev']:.2f} | {row['test']:.2f} |" for row in rows]
    for split in ("dev", "test"):
        values = [row[split] for row in rows]
        lines.append(
            f"\n{split}: mean {statistics.mean(values):.2f}, "
            f"range {min(values):.2f}-{max(values):.2f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
