"""Throughput with 1 and 2 processes: the BENCHMARKS.md section "processes".

`spacy-lpcfg parse MODEL FILE --n-process N` and `nlp.pipe(texts, n_process=N)`
(sentencizer + lpcfg_parser) over the ptb_sample test sentences repeated
``--repeat-text`` times, wall clock including the workers' start-up (model load,
numba cache), median of ``--runs`` runs. A clustering model (m = 16, CLI
defaults) is trained into ``--work`` unless present.

    python benchmarks/bench_processes.py [--model DIR] [--repeat-text 8] [--runs 3] [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a model directory")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_processes"))
    parser.add_argument("--repeat-text", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="nlp.pipe's batch_size (default: the pipeline's, 1000)",
    )
    parser.add_argument("--only", choices=("parse", "nlp.pipe"), default=None)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from spacy_lpcfg.corpora import load_splits

    model = args.model or args.work / "clustering"
    if not model.is_dir():
        subprocess.run(
            ["spacy-lpcfg", "train", "ptb_sample", str(model), "--estimator", "clustering", "-q"],
            check=True,
        )
    sentences = [
        " ".join(tree.words()) for tree in load_splits("ptb_sample", data_dir=data_dir())["test"]
    ]
    sentences *= args.repeat_text
    args.work.mkdir(parents=True, exist_ok=True)
    text_file = args.work / "sentences.txt"
    text_file.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    rows = []
    for n_process in (1, 2) if args.only != "nlp.pipe" else ():
        command = [
            "spacy-lpcfg",
            "parse",
            str(model),
            str(text_file),
            "--n-process",
            str(n_process),
        ]
        rows.append(("parse", n_process, _median(args.runs, lambda c=command: _run(c))))
    for n_process in (1, 2) if args.only != "parse" else ():
        seconds = _median(
            args.runs, lambda n=n_process: _pipe(model, sentences, n, args.batch_size)
        )
        rows.append(("nlp.pipe", n_process, seconds))
    body = report(rows, args, len(sentences), model)
    print(body)
    if not args.no_write:
        write_section("processes", body)


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def _pipe(model: Path, texts: list[str], n_process: int, batch_size: int | None) -> None:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"model": str(model)})
    for _ in nlp.pipe(texts, n_process=n_process, batch_size=batch_size):
        pass


def _median(runs: int, job) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(rows, args, n_sentences: int, model: Path) -> str:
    batch = args.batch_size or "the pipeline's (1000)"
    lines = [
        "## Throughput: one and two processes",
        "",
        "`python benchmarks/bench_processes.py"
        + (f" --model {args.model}" if args.model else "")
        + f" --repeat-text {args.repeat_text} --runs {args.runs}"
        + (f" --batch-size {args.batch_size}" if args.batch_size else "")
        + f"`: {n_sentences:,} sentences (ptb_sample test, repeated), model "
        f"`{model.name}`; `nlp.pipe` (sentencizer + lpcfg_parser) with batch_size "
        f"{batch}; wall clock with start-up (model read, numba kernels loaded from the "
        f"cache), median of {args.runs} runs.",
        "",
        "| how | processes | seconds | sentences/s | speed-up |",
        "|---|---:|---:|---:|---:|",
    ]
    base = {}
    for how, n_process, seconds in rows:
        base.setdefault(how, seconds)
        lines.append(
            f"| {how} | {n_process} | {seconds:.1f} | {n_sentences / seconds:.1f} "
            f"| {base[how] / seconds:.2f}x |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
