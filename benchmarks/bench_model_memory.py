"""Memory and disk of trained models: the BENCHMARKS.md section "model_memory".

For each model directory, in a fresh process: its size on disk, the resident memory
that loading it adds (after the package's imports), what the same model held with
its binary weights dense in memory (as every grammar did before they were kept
sparse: the loaded resident memory plus, per grammar, the dense array's bytes minus
the sparse arrays'), and the peak resident memory of parsing the ptb_sample test
split with it (over the process after imports), with its F1; then the same parse in
another fresh process with every grammar's binary weights made dense first (the
kernels then read the dense arrays, as before).

    python benchmarks/bench_model_memory.py [LABEL=]MODEL_DIR... [--no-write]

With ``--train CORPUS...`` it measures training instead: ``spacy-lpcfg train CORPUS
DIR`` with no other option (the default recipe, the full train split) under
``/usr/bin/time -v``, one treebank after another, and reports the peak resident
memory, wall and CPU time of each; that table replaces the section's training table
and leaves the models table as it is. ``--optimize CORPUS [--optimize-options "..."]``
adds a row for ``spacy-lpcfg optimize CORPUS DIR OPTIONS`` to that table (its ceiling:
4 GB on the full train split); ``--rows FILE`` writes the table from the JSON lines
earlier runs printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_section  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model directories, optionally LABEL=DIR")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--dense", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--train", nargs="+", metavar="CORPUS", help="measure train instead")
    parser.add_argument("--optimize", metavar="CORPUS", help="and optimize on this treebank")
    parser.add_argument("--optimize-options", default="", help="optimize's options, one string")
    parser.add_argument(
        "--rows", type=Path, help="--train: write the table from these JSON lines instead"
    )
    parser.add_argument("--note", default="", help="a paragraph under the training table")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.dense)))
        return
    if args.optimize and not args.train:
        parser.error("--optimize adds a row to --train's table: give --train too")
    if args.train:
        if args.rows:  # rows printed by earlier --train runs (treebanks measured apart)
            lines = args.rows.read_text(encoding="utf-8").splitlines()
            found = {
                (row.get("command", "train"), row["corpus"]): row for row in map(json.loads, lines)
            }
            training = [found["train", corpus] for corpus in args.train]
            if args.optimize:
                training.append(found["optimize", args.optimize])
        else:
            training = [measure_training(corpus) for corpus in args.train]
            if args.optimize:
                options = args.optimize_options.split()
                training.append(measure_training(args.optimize, "optimize", options))
        body = training_report(training, args.note)
        print(body)
        if not args.no_write:
            write_section("model_memory", _with_training_table(body))
        return
    rows = []
    for given in args.models:
        label, _, model = given.rpartition("=")
        row = _child(model)
        row["label"] = label or Path(model).name
        row["dense_parse_peak_mb"] = _child(model, "--dense")["parse_peak_mb"]
        rows.append(row)
        print(rows[-1], flush=True)
    body = report(rows)
    print(body)
    if not args.no_write:
        write_section("model_memory", body)


def _child(model: str, *options: str) -> dict:
    command = [sys.executable, __file__, "--measure", model, *options]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(path: Path, dense: bool) -> dict:
    import resource

    from common import data_dir

    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.evaluation.parsing import evaluate
    from spacy_lpcfg.grammar.model import ParsingModel

    test = load_splits("ptb_sample", data_dir=data_dir())["test"]
    base = _rss_mb()
    model = ParsingModel.from_disk(path)
    loaded = _rss_mb() - base
    grammars = [grammar for part in model.parts for grammar in (part.grammar, *part.extra_grammars)]
    # what the sparse grammars would hold dense instead of their values and positions
    dense_loaded = (
        loaded
        + sum(
            g.binary_offsets[-1] * 8 - g.binary_sparse.nbytes for g in grammars if g.binary_sparse
        )
        / 2**20
    )
    if dense:  # as grammars were before they kept binary weights sparse
        for grammar in grammars:
            grammar.__dict__["binary_weights"] = grammar.binary_weights
            grammar.binary_sparse = None
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    scores = evaluate(Parser(model), test)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    still_sparse = all("binary_weights" not in vars(g) for g in grammars if g.binary_sparse)
    return {
        "model": str(path),
        "grammars": len(grammars),
        "disk_mb": sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20,
        "loaded_mb": loaded,
        "dense_loaded_mb": dense_loaded,
        "parse_peak_mb": max(peak, peak_before) - base,
        "f1": scores.fscore,
        "dense_never_built": still_sparse,
    }


TRAINING_HEADING = "### Training: peak memory of `spacy-lpcfg train CORPUS`"
GB = 10**9


def measure_training(corpus: str, command: str = "train", options: Sequence[str] = ()) -> dict:
    """``/usr/bin/time -v spacy-lpcfg COMMAND CORPUS DIR OPTIONS``: peak RSS, wall, CPU
    and the model's size on disk (``train``'s DIR, or ``optimize``'s DIR/model)."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory(prefix=f"bench-{command}-") as folder:
        output = Path(folder) / "out"
        run = ["/usr/bin/time", "-v", "spacy-lpcfg", command, corpus, str(output), *options]
        done = subprocess.run([*run, "--quiet"], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(run)} failed:\n{done.stderr[-2000:]}")
        model = output if command == "train" else output / "model"
        disk = sum(f.stat().st_size for f in model.rglob("*") if f.is_file())
    report = done.stderr

    def field(name: str) -> str:
        match = re.search(rf"{re.escape(name)}: (.+)", report)
        assert match, name
        return match.group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    row = {
        "command": command,
        "options": " ".join(options),
        "corpus": corpus,
        "peak_rss_bytes": int(field("Maximum resident set size (kbytes)")) * 1024,
        "wall_s": wall,
        "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "disk_bytes": disk,
        "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "",
    }
    print(json.dumps(row), flush=True)
    return row


def training_report(rows: list[dict], note: str = "") -> str:
    trains = [row for row in rows if row.get("command", "train") == "train"]
    searches = [row for row in rows if row.get("command") == "optimize"]
    invocation = "--train " + " ".join(row["corpus"] for row in trains)
    for row in searches:
        invocation += f" --optimize {row['corpus']}"
        invocation += f' --optimize-options "{row["options"]}"' if row["options"] else ""
    lines = [
        TRAINING_HEADING,
        "",
        f"`python benchmarks/bench_model_memory.py {invocation}`: `spacy-lpcfg train CORPUS "
        "DIR --quiet` with no other option (the default recipe: three split-merge seeds "
        "decoded as one product and a function labeller, fitted on the full train split) "
        "under `/usr/bin/time -v`, one after another"
        + (", and `spacy-lpcfg optimize` with the options shown" if searches else "")
        + ". Peak: its maximum resident set size; the issue's ceilings are 2 GB for `train`"
        + (" and 4 GB for `optimize`." if searches else "."),
        "",
        "| command | treebank | peak RSS GB | wall s | CPU s | model on disk MB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in trains + searches:
        command = row.get("command", "train")
        if row.get("options"):
            command += f" `{row['options']}`"
        lines.append(
            f"| {command} | {row['corpus']} | {row['peak_rss_bytes'] / GB:.2f} "
            f"| {row['wall_s']:.0f} | {row['cpu_s']:.0f} | {row['disk_bytes'] / 2**20:.0f} |"
        )
    if note:
        lines += ["", note]
    return "\n".join(lines)


def _with_training_table(table: str) -> str:
    """The section as it is (without the measured-on line write_section writes again),
    its training table replaced by ``table``."""
    import re

    from common import BENCHMARKS_MD

    text = BENCHMARKS_MD.read_text(encoding="utf-8")
    found = re.search(r"<!-- bench:model_memory -->\n(.*?)<!-- /bench:model_memory -->", text, re.S)
    body = found.group(1) if found else ""
    # the models table keeps the date and commit it was measured at; the section's own
    # line (an earlier training table's) is written again
    if "_Models table measured" in body:
        body = re.sub(r"^_Measured .*?_\n\n", "", body)
    else:
        body = re.sub(r"^_Measured (.*?)_\n", r"_Models table measured \1_\n", body)
    body = body.split(TRAINING_HEADING)[0].rstrip()
    return f"{body}\n\n{table}" if body else table


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def report(rows: list[dict]) -> str:
    lines = [
        "## Memory and disk of models",
        "",
        "`python benchmarks/bench_model_memory.py LABEL=MODEL...`, each model in a fresh "
        "process. Loaded: resident memory that `ParsingModel."
        "from_disk` adds after the imports. Dense: the same with the binary weights held "
        "dense, as every grammar held them before they were kept sparse. Parse peak: peak "
        "resident memory while parsing ptb_sample test (245 sentences), over the process "
        "after imports (numba's compiled kernels included, about 90 MB); dense: the same "
        "with every grammar's binary weights made dense before parsing.",
        "",
        "| model | grammars | disk MB | loaded MB | dense MB | loaded / dense | parse peak MB "
        "| dense parse peak MB | test F1 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['label']} | {row['grammars']} | {row['disk_mb']:.1f} "
            f"| {row['loaded_mb']:.0f} | {row['dense_loaded_mb']:.0f} "
            f"| {row['loaded_mb'] / row['dense_loaded_mb']:.2f} | {row['parse_peak_mb']:.0f} "
            f"| {row['dense_parse_peak_mb']:.0f} | {row['f1']:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
