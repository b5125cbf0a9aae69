"""Cold start: a fresh process that loads a model and parses its first sentence.

Usage: python benchmarks/bench_cold_start.py [--model DIR] [--runs 3] [--write]

Four timings, each the median of ``runs`` fresh processes (wall and CPU seconds of
the whole process, interpreter start included):

* CLI: ``echo SENTENCE | spacy-lpcfg parse MODEL``;
* spacy.load: ``nlp = spacy.load(PIPELINE); nlp(SENTENCE)`` for a saved pipeline
  (``spacy.blank("en")`` + ``sentencizer`` + ``lpcfg_parser`` with the model);

each *cold*, with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder: every
kernel the first parse needs is compiled), and *warm*, in the folder the cold run
filled (kernels loaded from the cache). The runs are interleaved, so a busy
machine slows them alike. The model defaults to what ``spacy-lpcfg train
ptb_sample`` fits (the default combination of four models), trained once into
``--work`` and reused.

``--pythonpath DIR`` puts DIR first on the processes' PYTHONPATH, to time another
copy of the package with the same script; ``--baseline DIR`` times such a copy
(e.g. a checkout before a change, its ``spacy_lpcfg`` inside DIR) as well, in turn
with this one, and adds its rows to the table. Targets: cold at most 10 s, warm at
most 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

SENTENCE = "The old man saw a dog ."
COLD_TARGET = 10.0
WARM_TARGET = 2.0
SPACY_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import spacy
nlp = spacy.load(sys.argv[1])
loaded = time.perf_counter()
doc = nlp(sys.argv[2])
parsed = time.perf_counter()
print(json.dumps({"load": loaded - start, "parse": parsed - loaded,
                  "tree": doc.sents.__next__()._.parse_string}))
"""


def cli_command() -> list[str]:
    """The ``spacy-lpcfg`` console script of this interpreter (not a shim around it)."""
    beside = Path(sys.executable).parent / "spacy-lpcfg"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("spacy-lpcfg")
    return [found] if found else [sys.executable, "-m", "spacy_lpcfg"]


def run(command: list[str], env: dict[str, str], stdin: str | None = None) -> dict:
    """Run one fresh process; RETURNS its wall and CPU seconds and stdout. It runs in
    the temporary folder: ``python -c`` imports from its working directory first."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        command,
        input=stdin,
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {"wall": wall, "cpu": cpu, "out": done.stdout.strip()}


def environment(cache_dir: Path, pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), SPACY_LPCFG_DATA=str(data_dir()))
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    return env


def build_pipeline(model: Path, target: Path, env: dict[str, str]) -> None:
    """Save a pipeline of a sentencizer and the parser with ``model`` (in a process of
    its own, so that this one never imports the package under test)."""
    script = (
        "import spacy, sys\n"
        "nlp = spacy.blank('en')\n"
        "nlp.add_pipe('sentencizer')\n"
        "nlp.add_pipe('lpcfg_parser', config={'model': sys.argv[1]})\n"
        "nlp.to_disk(sys.argv[2])\n"
    )
    run([sys.executable, "-c", script, str(model), str(target)], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a model directory")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench_cold")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sentence", default=SENTENCE)
    parser.add_argument("--pythonpath", type=Path, default=None, help="time this copy instead")
    parser.add_argument("--baseline", type=Path, default=None, help="also time this copy")
    parser.add_argument("--baseline-name", default="baseline", help="its name in the table")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="caches-", dir=args.work))
    setup_env = environment(scratch / "setup", args.pythonpath)
    model = args.model
    if model is None:
        model = args.work / "model"
        if not (model / "cfg.json").is_file():
            print(f"training the default model of ptb_sample into {model} (minutes)")
            run([*cli_command(), "train", "ptb_sample", str(model)], setup_env)
    pipeline = scratch / "pipeline"
    build_pipeline(model.resolve(), pipeline, setup_env)

    cases = {
        "CLI": ([*cli_command(), "parse", str(model)], args.sentence + "\n"),
        "spacy.load": ([sys.executable, "-c", SPACY_SCRIPT, str(pipeline), args.sentence], None),
    }
    versions = {"this tree": args.pythonpath}
    if args.baseline is not None:
        versions[args.baseline_name] = args.baseline
    results: dict[tuple[str, str, str], list[dict]] = {}
    outputs: dict[str, set[str]] = {name: set() for name in cases}
    for index in range(args.runs):
        for name, (command, stdin) in cases.items():
            for version, pythonpath in versions.items():
                cache = scratch / f"numba-{index}"
                env = environment(cache, pythonpath)
                for state in ("cold", "warm"):  # warm: in the folder the cold run filled
                    result = run(command, env, stdin)
                    results.setdefault((name, version, state), []).append(result)
                    output = result["out"]
                    outputs[name].add(
                        json.loads(output)["tree"] if name == "spacy.load" else output
                    )
                    print(f"run {index + 1}: {name} {version} {state}: {result['wall']:.2f} s "
                          f"wall, {result['cpu']:.2f} s CPU", flush=True)  # fmt: skip
                shutil.rmtree(cache, ignore_errors=True)
    for name, found in outputs.items():  # every run and version: the same parse
        if len(found) != 1:
            sys.exit(f"{name}: the runs parsed the sentence differently: {sorted(found)}")

    rows = []
    for (name, version, state), runs in results.items():
        wall = statistics.median(r["wall"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        target = COLD_TARGET if state == "cold" else WARM_TARGET
        verdict = "yes" if wall <= target else f"no (+{wall - target:.1f} s)"
        extra = ""
        if name == "spacy.load":
            load = statistics.median(json.loads(r["out"])["load"] for r in runs)
            first = statistics.median(json.loads(r["out"])["parse"] for r in runs)
            extra = f"load {load:.2f} s, first nlp() {first:.2f} s"
        rows.append(
            f"| {name} | {version} | {state} | {wall:.2f} | {cpu:.2f} "
            f"| {min(r['wall'] for r in runs):.2f} | {target:.0f} | {verdict} | {extra} |"
        )
    table = "\n".join(
        [
            "| run | package | numba cache | wall s (median) | CPU s (median) | best wall s "
            "| target s | within | inside the process |",
            "|---|---|---|---:|---:|---:|---:|---|---|",
            *rows,
        ]
    )
    print(table)
    for name, found in outputs.items():
        print(f"{name} parse: {next(iter(found))}")
    shutil.rmtree(scratch, ignore_errors=True)
    if args.write:
        model_name = (
            "the default model of ptb_sample (`spacy-lpcfg train ptb_sample`: four models combined)"
            if args.model is None
            else f"the model {args.model.name}"
        )
        body = (
            "## Cold start: a fresh process's first parse\n\n"
            f"`python benchmarks/bench_cold_start.py --runs {args.runs} --write`: "
            f"{model_name}, "
            f"one sentence ({args.sentence!r}); CLI = `echo SENTENCE | spacy-lpcfg parse "
            "MODEL`; spacy.load = `spacy.load(PIPELINE)` then `nlp(SENTENCE)` for a saved "
            "pipeline (sentencizer + lpcfg_parser). Cold: `NUMBA_CACHE_DIR` a new folder, "
            "every kernel compiled; warm: the folder the cold run filled. Whole processes "
            "(CPU s: their own user + system time; the wall time also counts waiting for the "
            f"cores of a shared machine), median of {args.runs} interleaved runs"
            + (
                f", the package as in this tree and as {args.baseline_name}"
                if args.baseline
                else ""
            )
            + f". Targets: cold at most {COLD_TARGET:.0f} s, warm at most "
            f"{WARM_TARGET:.0f} s.\n\n" + table + "\n"
        )
        write_section("cold_start", body)


if __name__ == "__main__":
    main()
