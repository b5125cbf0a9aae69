"""Pruning by merged latent states: the BENCHMARKS.md section "state_pruning".

Before a latent grammar's own pass the parser can prune once more with the grammar's
states merged into a few per symbol (``chart.pruning``, ``defaults.PRUNE_STATES`` and
``defaults.STATE_PRUNE_THRESHOLD``). For each model given (``CORPUS=MODEL_DIR``, the
pipelines' models by default) and each setting (``STATES:THRESHOLD``; ``0:`` is no such
pass), on the dev split: F1, F1 with function labels, sentences/s (median of
``--runs``, one process, after a warm-up sentence) and the share of the items left by
the one-state pass that the merged-states pass prunes. Then the same on the test
split for no pass and the default.

    python benchmarks/bench_state_pruning.py [--model CORPUS=DIR ...] [--runs 3] [--splits dev,test]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, data_dir, write_section  # noqa: E402

MODELS = {
    corpus: REPO / "projects/pipelines/models" / corpus
    for corpus in ("ptb_sample", "cess_esp", "floresta")
}
SETTINGS = ("0:", "2:1e-3", "4:1e-4", "4:3e-4", "4:1e-3", "8:1e-3")
DEV_LIMIT = {"cess_esp": 300}  # the rest: the whole dev split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[], help="CORPUS=MODEL_DIR")
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--splits", default="dev,test", help="dev, test or both")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from spacy_lpcfg import defaults
    from spacy_lpcfg.corpora import open_treebank
    from spacy_lpcfg.grammar.model import ParsingModel

    models = dict(MODELS)
    models.update(given.partition("=")[::2] for given in args.model)  # type: ignore[misc]
    default = f"{defaults.PRUNE_STATES}:{defaults.STATE_PRUNE_THRESHOLD:g}"
    rows = []
    for corpus, path in models.items():
        model = ParsingModel.from_disk(path)
        wanted = args.splits.split(",")
        for split, settings in (("dev", args.settings), ("test", ["0:", default])):
            if split not in wanted:
                continue
            gold, scheme = open_treebank(
                corpus, split, data_dir=data_dir(), bracket_scheme=model.label_scheme
            )
            gold = gold[: DEV_LIMIT.get(corpus)] if split == "dev" else gold
            for setting in settings:
                row = (corpus, split, setting, *measure(model, gold, scheme, setting, args.runs))
                rows.append(row)
                print(row, file=sys.stderr, flush=True)
    body = report(rows, args, default)
    print(body)
    if not args.no_write and args.splits == "dev,test":
        write_section("state_pruning", body)


def measure(model, gold, scheme, setting: str, runs: int):
    """(F1, function F1, sentences/s, share of items the merged-states pass prunes)."""
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.evaluation import evaluate, get_params

    groups, _, threshold = setting.partition(":")
    options = {"state_threshold": float(threshold)} if threshold else {}
    parser = Parser(model, state_groups=int(groups), **options)
    parser.parse(gold[0].words())
    seconds, scores = [], None
    for _ in range(runs):
        start = time.perf_counter()
        scores = evaluate(parser, gold, scheme=scheme, params=get_params("collins"))
        seconds.append(time.perf_counter() - start)
    pruned = pruned_share(parser, gold) if parser.cascade.merges_states else 0.0
    fscore = scores.to_dict()["bracketing_fscore"]
    return fscore, scores.function_fscore, len(gold) / statistics.median(seconds), pruned


def pruned_share(parser, gold) -> float:
    """Of the items the one-state pass keeps, the share the merged-states pass prunes."""
    before = after = 0
    for tree in gold:
        words = tree.words()
        lexicals, coarse = parser._lexicals(words, None, time.perf_counter())
        kept = parser.cascade.prune(coarse, fine=lexicals[0]).kept
        if len(kept) == len(parser.cascade.thresholds) + 1:  # every pass ran
            before, after = before + kept[-2], after + kept[-1]
    return 1 - after / before if before else 0.0


def report(rows, args, default: str) -> str:
    given = "".join(f" --model {m}" for m in args.model)
    lines = [
        "## Pruning by merged states",
        "",
        f"`python benchmarks/bench_state_pruning.py{given} --runs {args.runs}`: the pipelines' "
        "models (train's default recipe: three split-merge seeds decoded as one product, "
        "a function labeller). Before the first seed's own pass the parser prunes with "
        "its states merged into STATES runs of neighbours per symbol at THRESHOLD "
        "(`0:` none, the former parser). Pruned: the share of the items left by the "
        "one-state pass that this pass removes. Dev splits (cess_esp: its first "
        f"{DEV_LIMIT['cess_esp']} trees), then test for none and the default ({default}); "
        f"one process, median of {args.runs} runs.",
        "",
        "```",
        f"{'treebank':<11} {'split':<5} {'setting':<8} {'F1':>6} {'fn F1':>6} {'sent/s':>7} "
        f"{'x none':>6} {'pruned':>6}",
    ]
    base = {(r[0], r[1]): r[5] for r in rows if r[2] == "0:"}
    for corpus, split, setting, fscore, function, speed, pruned in rows:
        ratio = speed / base[(corpus, split)]
        lines.append(
            f"{corpus:<11} {split:<5} {setting:<8} {fscore:6.2f} {function:6.2f} {speed:7.1f} "
            f"{ratio:6.2f} {pruned:6.0%}"
        )
    lines.append("```")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
