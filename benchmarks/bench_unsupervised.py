"""Unsupervised bracketing (issue 16): the BENCHMARKS.md section "unsupervised".

For each corpus, two settings: as in the field, the bracketers are induced from
the text (words and POS tags, never the trees) of *all* sentences of the corpus
and scored on the same sentences; and trained on the train split, scored on the
test split. Scores are unlabelled micro F1 (``evaluation.unlabeled``: no
punctuation, no sentence span, no single words) on sentences of at most 10 and
40 words. The spectral learner is fitted once per setting on all the fitting
sentences; CCM is fitted per length bound on the sentences within it (as in
paper 002), both Klein & Manning's ("ccm", ``init="split_uniform"``) and ours,
started from the spectral trees ("seeded", ``CCM()``, whose spectral learner
sees all the fitting sentences); the branching baselines need no fitting.

    python benchmarks/bench_unsupervised.py [--corpora ptb_sample ...] [--lengths 10 40]
        [--settings all train-test] [--max-sentences N] [--write]

Prints the table; ``--write`` also replaces the section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

from spacy_lpcfg.corpora import load_splits  # noqa: E402
from spacy_lpcfg.evaluation.unlabeled import is_punctuation_tag, unlabeled_scores  # noqa: E402
from spacy_lpcfg.unsupervised import (  # noqa: E402
    CCM,
    LeftBranching,
    RandomBranching,
    RightBranching,
    SpectralBracketer,
)

CORPORA = ("ptb_sample", "icepahc", "floresta", "cess_esp")
SETTINGS = ("all", "train-test")
METHODS = ("spectral", "oracle", "ccm", "seeded", "right", "left", "random")


def content_length(tree) -> int:
    return sum(not is_punctuation_tag(tag) for tag in tree.tags())


def run_corpus(corpus: str, args) -> list[dict]:
    splits = load_splits(corpus, data_dir=data_dir())
    rows = []
    for setting in args.settings:
        if setting == "all":
            fit_trees = splits["train"] + splits["dev"] + splits["test"]
            eval_trees = fit_trees
        else:
            fit_trees, eval_trees = splits["train"], splits["test"]
        if args.max_sentences:
            fit_trees = fit_trees[: args.max_sentences]
            eval_trees = fit_trees if setting == "all" else eval_trees[: args.max_sentences]
        start = time.perf_counter()
        spectral = SpectralBracketer().fit(fit_trees)
        spectral_time = time.perf_counter() - start
        for length in args.lengths:
            scored = [t for t in eval_trees if content_length(t) <= length]
            row = {
                "corpus": corpus,
                "setting": setting,
                "length": length,
                "n_fit": len(fit_trees),
                "n_eval": len(scored),
                "spectral_fit_s": spectral_time,
            }
            for method in args.methods:
                start = time.perf_counter()
                if method in ("spectral", "oracle"):
                    # the same fitted model; "oracle" reads the gold top bracket
                    model = spectral.set_params(
                        top_bracket="oracle" if method == "oracle" else "heuristic"
                    )
                elif method in ("ccm", "seeded"):
                    init = "split_uniform" if method == "ccm" else "spectral"
                    model = CCM(max_length=length, init=init).fit(fit_trees)
                    row[f"{method}_fit_s"] = time.perf_counter() - start
                else:
                    cls = {"right": RightBranching, "left": LeftBranching}.get(method)
                    model = (cls() if cls else RandomBranching(random_state=0)).fit([])
                predicted = model.predict(scored)
                scores = unlabeled_scores(scored, predicted, max_length=length)
                row[method], row[f"{method}_sentence"] = scores.f1, scores.sentence_f1
            print(row, file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def report(rows: list[dict], args) -> str:
    methods = list(args.methods)
    head = (
        "| corpus | setting | length | sentences (fit / scored) | "
        + " | ".join(methods)
        + " | spectral fit (s) | CCM fit (s) | seeded fit (s) |"
    )
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for row in rows:
        scores = []
        best = max(row[m] for m in methods if m != "oracle")  # the oracle sees gold
        for method in methods:
            cell = f"{row[method]:.1f}"
            scores.append(f"**{cell}**" if row[method] == best else cell)
        lines.append(
            f"| {row['corpus']} | {row['setting']} | <= {row['length']} | "
            f"{row['n_fit']} / {row['n_eval']} | "
            + " | ".join(scores)
            + f" | {row['spectral_fit_s']:.1f} | {row.get('ccm_fit_s', float('nan')):.1f}"
            + f" | {row.get('seeded_fit_s', float('nan')):.1f} |"
        )
    return (
        "## Unsupervised bracketing: spectral, CCM and branching baselines\n\n"
        "Unlabelled micro F1 without punctuation, "
        "the sentence span and single words, on sentences of at most 10 / 40 words. "
        "`all`: induced from the words and tags of all sentences of the corpus and scored "
        "on them (the field's convention); `train-test`: fitted on train, scored on test. "
        "Spectral: `SpectralBracketer()` defaults (fitted once per setting on all its "
        "sentences, fit time includes learning the word vectors); oracle: the same model given "
        "the gold top bracket (paper 002's -O rows; not a fair competitor); ccm: Klein & "
        "Manning's, fitted on the sentences within the length bound; seeded: `CCM()`, the same "
        "EM started from the spectral trees (its spectral learner fitted on all the sentences; "
        "the fit time includes it); random: seed 0. Best per row (without the oracle) in "
        "bold.\n\n" + "\n".join(lines) + "\n\n`python benchmarks/bench_unsupervised.py --write`\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    parser.add_argument("--lengths", nargs="+", type=int, default=[10, 40])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--max-sentences", type=int, default=None, help="first N sentences only")
    parser.add_argument("--write", action="store_true", help="also write BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    for corpus in args.corpora:
        rows += run_corpus(corpus, args)
    body = report(rows, args)
    print(body)
    if args.write:
        write_section("unsupervised", body)


if __name__ == "__main__":
    main()
