"""Ensembles and products pruned by their first grammar: the BENCHMARKS.md section "members".

Parses ptb_sample dev and test with each model given, for each ensemble threshold
(``Parser(ensemble_threshold=...)``, ``decode.charts.ensemble_charts``; 0: every
grammar parses the pruning passes' items), in one process, and then runs the
Berkeley parser's ``race.sh`` on test with every model at the default threshold,
so that speed is compared with Berkeley as a ratio from one run. Speed: the
median of ``--repeat`` parses of the split after a warm-up.

    python benchmarks/bench_members.py MODEL_DIR [MODEL_DIR ...]
        [--thresholds 0 1e-5 1e-4 1e-3] [--repeat 1] [--no-race] [--no-write]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, data_dir, timed_median, write_section  # noqa: E402

RACE = REPO.parent / "shared" / "tools" / "berkeley" / "race.sh"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--thresholds", nargs="+", type=float, default=[0, 1e-5, 1e-4, 1e-3])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-race", action="store_true", help="skip race.sh")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from spacy_lpcfg import defaults, evaluate
    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.grammar.model import ENSEMBLE, ParsingModel
    from spacy_lpcfg.progress import quiet

    splits = load_splits("ptb_sample", data_dir=data_dir())
    rows = []
    for path in args.models:
        model = ParsingModel.from_disk(path)
        members = 1 + len(model.training.get(ENSEMBLE, ()))
        for threshold in args.thresholds:
            row = [f"`{path}` ({members} members)", f"{threshold:g}"]
            for split in ("dev", "test"):
                gold = splits[split]
                with quiet():
                    parser = Parser(model, ensemble_threshold=threshold)
                    evaluate(parser, gold[:5], scheme=model.label_scheme)  # warm-up
                    seconds, _, scores = timed_median(
                        lambda p=parser, g=gold, s=model.label_scheme: evaluate(p, g, scheme=s),
                        args.repeat,
                    )
                row += [f"{scores.fscore:.2f}", f"{len(gold) / seconds:.1f}"]
            rows.append(row)
            print(" | ".join(row), flush=True)
    lines = [
        "## Ensembles and products: grammars pruned by the first",
        "",
        "`python benchmarks/bench_members.py "
        + " ".join(str(p) for p in args.models)
        + "`: one process; each member after the first parses only the items whose "
        "posterior under the first is above the ensemble threshold (0: every grammar parses "
        "what the pruning passes kept); EVALB COLLINS F1 on categories; sentences/s over "
        "the whole split (lexicon, pruning, charts, decoding, function labeller). Default "
        f"threshold: {defaults.ENSEMBLE_PRUNE_THRESHOLD:g} (the largest of these whose dev F1 "
        "is within 0.1 of 0's for both models).",
        "",
        "| model | ensemble threshold | dev F1 | dev sent/s | test F1 | test sent/s |",
        "|---|---:|---:|---:|---:|---:|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    if not args.no_race:
        race = subprocess.run(
            ["bash", str(RACE), *map(str, args.models)], capture_output=True, text=True
        )
        print(race.stdout, race.stderr, flush=True)
        lines += [
            "",
            "`race.sh` (test split, one run, default ensemble threshold):",
            "",
            "```",
            race.stdout.strip(),
            "```",
        ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("members", "\n".join(lines))


if __name__ == "__main__":
    main()
