"""Clone-some and INHERIT against split-merge and clone-all: the BENCHMARKS.md section
"clone_some".

Dreyer & Eisner (2006, section 5) split, after a first split of every symbol,
only the symbols whose two states' rewrite distributions diverge more than the
average ("clone some"), and report that it matched splitting every symbol to
L = 4 with 30% fewer parameters. Here, on ptb_sample (train split, X-bar trees,
seed 0), each cycle's grammar is scored on all dev trees beside its number of
rule and emission weights (the free parameters, up to one per distribution):

* split-merge: ``SplitMergeEstimator()`` (split all, merge half back);
* clone some: ``split="some", merge_fraction=0``;
* clone all: ``merge_fraction=0`` (L = 2, 4, 8 for every symbol: Matsuzaki et al.);
* INHERIT (Dreyer & Eisner 2006, section 3.2): ``InheritEstimator(n_states=L)`` with
  its defaults, one row per L.

Free parameters are the weights less one per distribution (rules per parent state,
emissions per tag state; INHERIT's patterns per rule and draws per symbol too).

    python benchmarks/bench_clone_some.py [--cycles 4] [--inherit 2 4 8 16] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

RUNS = {
    "split-merge": {},
    "clone some": {"split": "some", "merge_fraction": 0.0},
    "clone all": {"merge_fraction": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=4)
    parser.add_argument("--inherit", type=int, nargs="*", default=[2, 4, 8, 16])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.defaults import INHERIT
    from spacy_lpcfg.estimators import SplitMergeEstimator
    from spacy_lpcfg.estimators.em import KINDS, EMGrammar, count_distributions
    from spacy_lpcfg.estimators.inherit import InheritEstimator

    inherit_defaults = ", ".join(
        f"{name} {value}" for name, value in asdict(INHERIT).items() if name != "n_states"
    )

    splits = load_splits("ptb_sample", data_dir=data_dir(), keep_functions=False)
    lines = [
        "| training | cycle / L | states | parameters | free parameters | dev F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, params in RUNS.items():
        # every symbol at 2**cycles states: cycle 4 would not fit in memory here
        cycles = args.cycles - 1 if name == "clone all" else args.cycles
        start = time.perf_counter()
        estimator = SplitMergeEstimator(n_cycles=cycles, random_state=0, **params)
        estimator.fit(
            splits["train"],
            splits["dev"],
            dev_scorer=lambda model, trees: evaluate(Parser(model), trees).fscore,
        )
        treebank = estimator.treebank_
        names = list(treebank.counts.symbols.names)
        for cycle, states in enumerate(estimator.history_["n_states"], 1):
            n_states = np.ones(len(names), dtype=np.int64)
            for symbol, count in states.items():
                n_states[names.index(symbol)] = count
            layout = EMGrammar(n_states, {})
            weights = sum(int(layout.offsets(treebank, kind)[-1]) for kind in KINDS)
            f1 = estimator.history_["dev_f1"][cycle - 1]
            free = weights - count_distributions(treebank, n_states)
            lines.append(
                f"| {name} | {cycle} | {int(n_states.sum()):,} | {weights:,} | {free:,} "
                f"| {f1:.2f} |"
            )
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    for n_states in args.inherit:
        start = time.perf_counter()
        estimator = InheritEstimator(n_states=n_states, random_state=0).fit(splits["train"])
        grammar = estimator.inherit_grammar_
        weights = sum(len(w) for w in grammar.weights.values())
        weights += sum(p.size for p in grammar.patterns.values()) + len(grammar.annotation)
        f1 = evaluate(Parser(estimator.model_), splits["dev"]).fscore
        lines.append(
            f"| INHERIT | {n_states} | {int(grammar.n_states.sum()):,} | {weights:,} "
            f"| {estimator.n_parameters_:,} | {f1:.2f} |"
        )
        print(f"INHERIT {n_states}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    body = "\n".join(
        [
            "## Clone some, clone all, INHERIT and split-merge (ptb_sample dev)",
            "",
            f"`python benchmarks/bench_clone_some.py --cycles {args.cycles} --inherit "
            f"{' '.join(map(str, args.inherit))}`: one "
            "SplitMergeEstimator per row group (seed 0, train split, X-bar trees, 20 EM "
            "iterations after each split and 10 smoothed ones after it), each cycle's "
            "grammar parsing all 273 dev trees; INHERIT: `InheritEstimator(n_states=L)` "
            f"(defaults: {inherit_defaults}), its expanded grammar parsing them. "
            "Parameters: the weights (split-merge: rule and emission weights; INHERIT: "
            "rule, emission, pass-pattern and draw weights); free parameters: less one "
            "per distribution.",
            "",
            *lines,
        ]
    )
    print(body)
    if not args.no_write:
        write_section("clone_some", body)


if __name__ == "__main__":
    main()
