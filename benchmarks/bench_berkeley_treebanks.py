"""The Berkeley parser against the ready pipelines' models on every treebank.

Usage: python benchmarks/bench_berkeley_treebanks.py [--work DIR] [--test-trees N] [--write]

For each treebank other than ptb_sample (whose Berkeley grammars ship with the tool:
race.sh): writes its fixed train and test splits as bracketed files (function tags
stripped, as the Berkeley trainer strips them), then runs
``../shared/tools/berkeley/any.sh TRAIN TEST --work DIR/<corpus> MODEL``: the Berkeley
parser's trainer with its defaults (SM4), its parser on the test sentences, and, in
the same run, ``spacy-lpcfg test`` of our model (``projects/pipelines/models/<corpus>``,
``train``'s default recipe) on the same file; F1 is EVALB (COLLINS.prm) for both, the
speed ratio is from that one run. ``--test-trees N`` races on about N test trees,
every k-th (``corpora.spread``), for treebanks with more (IcePaHC: 7,324). A treebank whose log
exists in ``--work`` is not run again (delete it to rerun). ``--rerace`` races
the same test file again with the grammar that run trained (``any.sh --grammar``: no
training; its training figures are the first run's), for a new version of ours; a
treebank whose ``<corpus>.rerace.log`` exists is not raced again.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, data_dir, machine, write_section  # noqa: E402

ANY = REPO.parent / "shared" / "tools" / "berkeley" / "any.sh"
MODELS = REPO / "projects" / "pipelines" / "models"
CORPORA = ("cess_esp", "floresta", "icepahc")
TRAINED = re.compile(r"SM(\d+): wall (\d+) s, CPU (\d+) s, peak RSS (\d+) MB")
RACED = re.compile(r"^(\S+)(?: \S+ \(\S+\))?\s+F1\s+(\S+)\s+(\S+) sent/s")  # any.sh pads names


def write_splits(corpus: str, work: Path, test_trees: int | None) -> tuple[Path, Path]:
    from spacy_lpcfg.corpora import load_splits, spread

    splits = load_splits(corpus, data_dir=data_dir(), keep_functions=False)
    test = splits["test"] if test_trees is None else spread(splits["test"], test_trees)
    paths = []
    for name, trees in (("train", splits["train"]), ("test", test)):
        path = work / f"{corpus}.{name}.mrg"
        path.write_text("".join(f"{tree}\n" for tree in trees), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def race(corpus: str, work: Path, test_trees: int | None) -> str:
    log = work / f"{corpus}.log"
    if not log.exists():
        work.mkdir(parents=True, exist_ok=True)
        train, test = write_splits(corpus, work, test_trees)
        env = dict(os.environ, SPACY_LPCFG_DATA=str(data_dir()))
        command = ["bash", str(ANY), str(train), str(test), "--work", str(work / corpus)]
        done = subprocess.run([*command, str(MODELS / corpus)], env=env, capture_output=True,
                              text=True)  # fmt: skip
        if done.returncode:
            sys.exit(f"any.sh failed on {corpus}:\n{done.stderr[-2000:]}")
        log.write_text(done.stdout, encoding="utf-8")
    return log.read_text(encoding="utf-8")


def rerace(corpus: str, work: Path, test_trees: int | None) -> str:
    """The first run's training lines, then a new race on the same test trees with the
    grammar it trained."""
    first, log = work / f"{corpus}.log", work / f"{corpus}.rerace.log"
    if not first.exists():
        sys.exit(f"{corpus}: no earlier run in {work} to race again")
    lines = first.read_text(encoding="utf-8").splitlines()
    trained = [line for line in lines if TRAINED.search(line)]
    if log.exists():  # raced again before: not run again (delete it to rerun)
        return "\n".join([*trained, log.read_text(encoding="utf-8")])
    train, test = write_splits(corpus, work, test_trees)  # the same trees as the first run
    env = dict(os.environ, SPACY_LPCFG_DATA=str(data_dir()))
    grammar = work / corpus / "berkeley.gr"
    command = ["bash", str(ANY), str(train), str(test), "--grammar", str(grammar),
               "--work", str(work / corpus)]  # fmt: skip
    done = subprocess.run([*command, str(MODELS / corpus)], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"any.sh failed on {corpus}:\n{done.stderr[-2000:]}")
    log.write_text(done.stdout, encoding="utf-8")
    return "\n".join([*trained, done.stdout])


def row(corpus: str, output: str) -> str:
    trained = TRAINED.search(output)
    raced = [m.groups() for line in output.splitlines() if (m := RACED.match(line))]
    if trained is None or len(raced) != 2:
        sys.exit(f"{corpus}: cannot read any.sh's output:\n{output}")
    cycles, wall, cpu, rss = trained.groups()
    (_, berkeley_f1, berkeley_speed), (_, our_f1, our_speed) = raced
    ratio = float(our_speed) / float(berkeley_speed)
    return (
        f"| {corpus} | {berkeley_f1} | {float(berkeley_speed):.2f} | SM{cycles}: {wall} s wall, "
        f"{cpu} s CPU, {int(rss) / 1024:.1f} GB | {our_f1} | {float(our_speed):.2f} "
        f"| {ratio:.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_berkeley_treebanks"))
    parser.add_argument("--test-trees", type=int, default=1000, help="about, spread")
    parser.add_argument("--rerace", action="store_true", help="race again, no training")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    for corpus in CORPORA:
        from spacy_lpcfg.corpora import load_splits

        sizes = {k: len(v) for k, v in load_splits(corpus, data_dir=data_dir()).items()}
        limit = args.test_trees if sizes["test"] > args.test_trees else None
        output = rerace(corpus, args.work, limit) if args.rerace else race(corpus, args.work, limit)
        raced = (args.work / corpus / "gold").read_text(encoding="utf-8").count("\n")
        rows.append(row(corpus, output) + f" {raced} of {sizes['test']} |")
        print(rows[-1], flush=True)
    table = "\n".join(
        [
            "| treebank | Berkeley F1 | Berkeley sentences/s | Berkeley training "
            "| ours: F1 | ours: sentences/s | speed vs Berkeley | test trees |",
            "|---|---:|---:|---|---:|---:|---:|---:|",
            *rows,
        ]
    )
    print(table)
    body = (
        "## The Berkeley parser on the other treebanks\n\n"
        f"`python benchmarks/bench_berkeley_treebanks.py --test-trees {args.test_trees} "
        f"{'--rerace ' if args.rerace else ''}--write` on {machine()}: `../shared/tools/berkeley/any.sh` trains the Berkeley "
        "parser (GrammarTrainer, its defaults: SM4, X-bar, function tags stripped) on each "
        "treebank's fixed training split and parses the test sentences; in the same run "
        "`spacy-lpcfg test` parses them with our ready pipeline's model (`train`'s "
        "default recipe, `projects/pipelines/models/<treebank>`). EVALB F1 (COLLINS.prm, "
        "function tags stripped) for both; sentences/s exclude loading; the speed ratio "
        "is from that one run (both parsers' speeds move with the machine's load: ratios "
        "are the comparable figure). IcePaHC is raced on test trees spread evenly over its test "
        'split. ptb_sample: BENCHMARKS.md "Products of split-merge seeds against the '
        'Berkeley parser (ptb_sample)".'
        + (
            " With --rerace, each race reuses the grammar the first run trained "
            "(`any.sh --grammar`): the training column is that run's."
            if args.rerace
            else ""
        )
        + "\n\n"
        + table
        + "\n"
    )
    if args.write:
        write_section("berkeley_treebanks", body)


if __name__ == "__main__":
    main()
