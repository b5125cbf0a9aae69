"""Cold start: a fresh process that loads a pipeline and parses its first sentence.

Usage: python benchmarks/bench_cold_start.py [--pipeline NAME] [--runs 3] [--write]

Timings, each the median of ``runs`` fresh processes (seconds from the start of
the process, interpreter start included, until its first parse is printed, which
the targets bound; wall and CPU seconds until it has exited), for an installed
pipeline package
(default ``en_lpcfg_ptb_sample``, built by ``projects/pipelines``: its wheel ships
the compiled kernels of a first parse and seeds numba's cache with them on import):

* CLI: ``echo SENTENCE | spacy-lpcfg parse en_lpcfg_ptb_sample``;
* spacy.load: ``nlp = spacy.load("en_lpcfg_ptb_sample"); nlp(SENTENCE)``;
* spacy.load, folder: ``spacy.load(<the package's data folder>)``, the same
  pipeline read as a folder, which never seeds the cache (what a first parse costs
  without shipped kernels);

each *cold*, with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder), and
*warm*, in the folder the cold run filled. The runs are interleaved, so a busy
machine slows them alike; the folder's runs, which compile for half a minute, come
after all the others, as a process started right after such a compile was up to
0.5 s slower here. ``--pythonpath DIR`` puts DIR first on the processes'
PYTHONPATH, to time another copy of spacy_lpcfg; ``--baseline DIR`` times such a
copy as well, in turn with this one. Targets: cold at most 10 s, warm at most 2 s.
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
FOLDER = "spacy.load, folder"
SPACY_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import spacy
nlp = spacy.load(sys.argv[1])
loaded = time.perf_counter()
doc = nlp(sys.argv[2])
parsed = time.perf_counter()
print(json.dumps({"load": loaded - start, "parse": parsed - loaded,
                  "tree": doc.sents.__next__()._.parse_string}), flush=True)
"""


def cli_command() -> list[str]:
    """The ``spacy-lpcfg`` console script of this interpreter (not a shim around it)."""
    beside = Path(sys.executable).parent / "spacy-lpcfg"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("spacy-lpcfg")
    return [found] if found else [sys.executable, "-m", "spacy_lpcfg"]


def run(command: list[str], env: dict[str, str], stdin: str | None = None) -> dict:
    """Run one fresh process; RETURNS its wall and CPU seconds, the seconds until its
    first line of output (the first parse, printed and flushed as soon as it is made)
    and its stdout. It runs in the temporary folder: ``python -c`` imports from its
    working directory first."""
    before = os.times()
    start = time.perf_counter()
    # stderr to a file: a pipe nobody reads until the end could fill and stall the child
    with (
        tempfile.TemporaryFile("w+") as errors,
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            cwd=tempfile.gettempdir(),
            text=True,
        ) as process,
    ):
        assert process.stdin and process.stdout
        process.stdin.write(stdin or "")
        process.stdin.close()
        first_line = process.stdout.readline()
        first = time.perf_counter() - start
        rest = process.stdout.read()
        returncode = process.wait()
        wall = time.perf_counter() - start
        errors.seek(0)
        error_text = errors.read()
    after = os.times()
    if returncode or not first_line:  # no parse printed: say why
        sys.exit(f"failed ({returncode}): {' '.join(command)}\n{error_text[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {"wall": wall, "first": first, "cpu": cpu, "out": (first_line + rest).strip()}


def installed() -> str:
    """What the timed processes import from: this interpreter's environment."""
    from importlib.metadata import distributions

    editable = any(
        (d.read_text("direct_url.json") or "").find('"editable": true') >= 0
        for d in distributions()
        if (d.metadata["Name"] or "").lower() == "spacy-lpcfg"
    )
    kind = "a development install (editable)" if editable else "an installed wheel"
    count = len({(d.metadata["Name"] or "").lower() for d in distributions()})
    return f"the Python of {sys.prefix} ({kind} of spacy-lpcfg, {count} distributions)"


def environment(cache_dir: Path, pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), SPACY_LPCFG_DATA=str(data_dir()))
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    return env


def package_folder(name: str, env: dict[str, str]) -> Path:
    """The data folder of an installed pipeline package (found without importing it)."""
    script = (
        "import importlib.util, sys; from pathlib import Path\n"
        "spec = importlib.util.find_spec(sys.argv[1])\n"
        "print(next(Path(next(iter(spec.submodule_search_locations))).glob('*/config.cfg')).parent)"
    )
    found = subprocess.run(
        [sys.executable, "-c", script, name], env=env, capture_output=True, text=True
    )
    if found.returncode:
        sys.exit(
            f"{name} is not installed: build it with projects/pipelines "
            "(spacy project run all) and pip install its wheel"
        )
    return Path(found.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", default="en_lpcfg_ptb_sample", help="an installed package")
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
    folder = package_folder(args.pipeline, environment(scratch / "setup", args.pythonpath))
    cases = {
        "CLI": ([*cli_command(), "parse", args.pipeline], args.sentence + "\n"),
        "spacy.load": ([sys.executable, "-c", SPACY_SCRIPT, args.pipeline, args.sentence], None),
        FOLDER: (
            [sys.executable, "-c", SPACY_SCRIPT, str(folder), args.sentence],
            None,
        ),
    }
    versions = {"this tree": args.pythonpath}
    if args.baseline is not None:
        versions[args.baseline_name] = args.baseline
    results: dict[tuple[str, str, str], list[dict]] = {}
    outputs: dict[str, set[str]] = {name: set() for name in cases}
    # The folder case compiles for half a minute; on this VM the processes right after
    # such a compile start up to 0.5 s slower, so it runs after the others.
    groups = ([name for name in cases if name != FOLDER], [FOLDER])
    for index, names in [(index, names) for names in groups for index in range(args.runs)]:
        for name in names:
            command, stdin = cases[name]
            for version, pythonpath in versions.items():
                cache = scratch / f"numba-{index}"
                env = environment(cache, pythonpath)
                for state in ("cold", "warm"):  # warm: in the folder the cold run filled
                    result = run(command, env, stdin)
                    results.setdefault((name, version, state), []).append(result)
                    output = result["out"]
                    outputs[name].add(
                        json.loads(output)["tree"] if name.startswith("spacy.load") else output
                    )
                    print(f"run {index + 1}: {name} {version} {state}: first parse "
                          f"{result['first']:.2f} s, exit {result['wall']:.2f} s wall, "
                          f"{result['cpu']:.2f} s CPU", flush=True)  # fmt: skip
                shutil.rmtree(cache, ignore_errors=True)
    for name, found in outputs.items():  # every run and version: the same parse
        if len(found) != 1:
            sys.exit(f"{name}: the runs parsed the sentence differently: {sorted(found)}")

    rows = []
    for (name, version, state), runs in results.items():
        wall = statistics.median(r["wall"] for r in runs)
        first = statistics.median(r["first"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        target = COLD_TARGET if state == "cold" else WARM_TARGET
        verdict = "yes" if first <= target else f"no (+{first - target:.1f} s)"
        extra = ""
        if name.startswith("spacy.load"):
            load = statistics.median(json.loads(r["out"])["load"] for r in runs)
            parse = statistics.median(json.loads(r["out"])["parse"] for r in runs)
            extra = f"load {load:.2f} s, first nlp() {parse:.2f} s"
        rows.append(
            f"| {name} | {version} | {state} | {first:.2f} | {min(r['first'] for r in runs):.2f} "
            f"| {wall:.2f} | {cpu:.2f} | {target:.0f} | {verdict} | {extra} |"
        )
    table = "\n".join(
        [
            "| run | package | numba cache | first parse s (median) | best first parse s "
            "| process wall s (median) | CPU s (median) | target s | within "
            "| inside the process |",
            "|---|---|---|---:|---:|---:|---:|---:|---|---|",
            *rows,
        ]
    )
    print(table)
    for name, found in outputs.items():
        print(f"{name} parse: {next(iter(found))}")
    shutil.rmtree(scratch, ignore_errors=True)
    if args.write:
        body = (
            "## Cold start: a fresh process's first parse\n\n"
            f"`python benchmarks/bench_cold_start.py --runs {args.runs} --write`, run by "
            f"{installed()}: the "
            f"installed pipeline package {args.pipeline} (built by projects/pipelines: its "
            "wheel ships the compiled kernels of a first parse and seeds numba's cache with "
            f"them when imported), one sentence ({args.sentence!r}). CLI = `echo SENTENCE | "
            f"spacy-lpcfg parse {args.pipeline}`; spacy.load = `spacy.load"
            f'("{args.pipeline}")` then `nlp(SENTENCE)`; spacy.load, folder = the same '
            "pipeline loaded from its data folder, which never seeds the cache (every "
            "kernel compiled: what the first parse costs without shipped kernels). Cold: "
            "`NUMBA_CACHE_DIR` a new folder; warm: the folder the cold run filled. First "
            "parse: from starting the process (interpreter start included) until its parse "
            "is printed, which is what the targets bound; process wall: until the process "
            "has exited (the interpreter's clean-up after the parse included); CPU s: the "
            "whole process's user + system time (the wall times also count waiting for "
            "the cores of a shared machine). Median of "
            f"{args.runs} interleaved runs (the folder's, which compile for half a minute, "
            "after the others: the processes right after such a compile start slower)"
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
