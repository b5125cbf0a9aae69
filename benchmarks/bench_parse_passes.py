"""Where a parse's time goes, pass by pass: the BENCHMARKS.md section "parse_passes".

For each model, the test split parsed in one process (after a warm-up of 20
sentences, so that no kernel compiles in the timed runs), with the chart kernels
timed where the parser calls them:

- the dense pass: the coarse X-bar grammar's inside-outside over every cell;
- the one-state pass: the grammar's symbols with one state each;
- the merged-states pass: the first grammar's states merged into runs (pruning only);
- the grammars' passes: each grammar of the model (a product's seeds) over what the
  pruning left, whose marginals the decoder combines;
- the rest: everything else: Python around the kernels (lexicon, masks, the function
  labeller, trees) and the decoders (their span and rule CKY kernels included).

Seconds are the median of ``--runs`` runs; items are the chart items per sentence
each latent pass builds. The wrapping costs a few microseconds a call.

    python benchmarks/bench_parse_passes.py [MODEL_DIR:CORPUS ...] [--runs 3]
        [--limit 300] [--no-write]

Without models: the project's pipelines' models (``projects/pipelines/models``).
"""

from __future__ import annotations

import argparse
import collections
import importlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("ptb_sample", "floresta", "cess_esp", "icepahc")
PASSES = ("dense", "one-state", "merged-states", "grammars")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="MODEL_DIR:CORPUS (the test split is parsed)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=300, help="test sentences per treebank")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    targets = [_target(given) for given in args.models] or [
        (ROOT / "projects/pipelines/models" / corpus, corpus)
        for corpus in CORPORA
        if (ROOT / "projects/pipelines/models" / corpus).exists()
    ]
    timers = _Timers()
    timers.install()
    rows = [measure(timers, model, corpus, args.runs, args.limit) for model, corpus in targets]
    body = report(rows, args.runs, args.limit)
    print(body)
    if not args.no_write:
        write_section("parse_passes", body)


def _target(given: str) -> tuple[Path, str]:
    model, _, corpus = given.rpartition(":")
    return Path(model), corpus


class _Timers:
    """Seconds and items per pass, from wrappers around the kernels' call sites."""

    def __init__(self) -> None:
        self.seconds: collections.Counter = collections.Counter()
        self.items: collections.Counter = collections.Counter()
        self.pruning = False

    def install(self) -> None:
        chart = importlib.import_module("spacy_lpcfg.chart.inside_outside")
        pruning = importlib.import_module("spacy_lpcfg.chart.pruning")
        self._wrap(pruning, "coarse_posteriors", lambda args: "dense")
        self._wrap(chart, "one_state_inside", lambda args: "one-state")
        self._wrap(chart, "one_state_outside", lambda args: "one-state")
        latent = self._latent
        self._wrap(chart, "latent_inside", latent, count_items=True)
        self._wrap(chart, "latent_outside", latent)
        refine = pruning._refine

        def refining(*args, **kwargs):
            self.pruning = True
            try:
                return refine(*args, **kwargs)
            finally:
                self.pruning = False

        pruning._refine = refining

    def _latent(self, args) -> str:
        return "merged-states" if self.pruning else "grammars"

    def _wrap(self, module, name: str, which, count_items: bool = False) -> None:
        kernel = getattr(module, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            result = kernel(*args, **kwargs)
            key = which(args)
            self.seconds[key] += time.perf_counter() - start
            if count_items:
                self.items[key] += len(result[3])  # item_symbols
            return result

        setattr(module, name, timed)


def measure(timers: _Timers, model_dir: Path, corpus: str, runs: int, limit: int) -> dict:
    from spacy_lpcfg.corpora import load_split
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.grammar.model import ParsingModel

    parser = Parser(ParsingModel.from_disk(model_dir))
    sentences = [tree.words() for tree in load_split(corpus, "test")[:limit]]
    for words in sentences[:20]:
        parser.parse(words)
    totals, passes, items = [], collections.defaultdict(list), collections.Counter()
    for _ in range(runs):
        timers.seconds.clear()
        timers.items.clear()
        start = time.perf_counter()
        for words in sentences:
            parser.parse(words)
        totals.append(time.perf_counter() - start)
        for name in PASSES:
            passes[name].append(timers.seconds[name])
        items = timers.items.copy()
    row = {
        "corpus": corpus,
        "sentences": len(sentences),
        "total": statistics.median(totals),
        "passes": {name: statistics.median(seconds) for name, seconds in passes.items()},
        "items": {name: items[name] / len(sentences) for name in ("merged-states", "grammars")},
        "grammars": 1 + len(parser.model.ensemble),
    }
    print(row, flush=True)
    return row


def report(rows: list[dict], runs: int, limit: int) -> str:
    lines = [
        "## Where a parse's time goes, pass by pass",
        "",
        f"`python benchmarks/bench_parse_passes.py --runs {runs} --limit {limit}`: the "
        "pipelines' models (train's default: a product of three split-merge seeds with the "
        f"function labeller) on the first {limit} test sentences of their treebank, one "
        "process, one sentence at a time; the chart kernels timed where the parser calls "
        "them (the script's docstring says what each pass is); share of the wall time, "
        f"median of {runs} runs. Items: chart items per sentence that the merged-states "
        "pass and each grammar's pass build.",
        "",
        "| treebank | sent/s | dense | one-state | merged-states | grammars | the rest "
        "| items merged / per grammar |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        total = row["total"]
        shares = [100 * row["passes"][name] / total for name in PASSES]
        rest = 100 - sum(shares)
        per_grammar = row["items"]["grammars"] / row["grammars"]
        lines.append(
            f"| {row['corpus']} | {row['sentences'] / total:.1f} | "
            + " | ".join(f"{share:.0f}%" for share in shares)
            + f" | {rest:.0f}% | {row['items']['merged-states']:.0f} / {per_grammar:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
