"""Function labels from the grammar or from a labeller: the BENCHMARKS.md section
"function_labels".

For each treebank, fits ``train``'s default model (``Recipe()``: Le Roux et al.'s four
clustering models, decoded together) and the treebank PCFG (``Recipe(estimator="mle")``,
function tags kept), and one function labeller (``attach_function_labeller``) on the
same training trees. Each model scores the test split twice, in one process: with the
function tags of its grammar (``function_labels="grammar"``) and with the labeller's
(``"labeller"``). The labeller changes labels only, so bracket F1 must be the same in
both rows (asserted). Each line gives EVALB F1 (categories), F1 with full labels
(``NP-SBJ``), function-tag precision, recall and F1 on the brackets whose category and
span are right, and sentences per second.

    python benchmarks/bench_function_labels.py [--corpora ptb_sample floresta ...]
        [--test-limit 300] [--icepahc-train-limit 15000] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, peak_rss_mb, write_section  # noqa: E402

CORPORA = ("ptb_sample", "floresta", "cess_esp", "icepahc")
SOURCES = ("grammar", "labeller")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument(
        "--test-limit", type=int, default=300, help="test trees scored (every k-th)"
    )
    parser.add_argument(
        "--icepahc-train-limit",
        type=int,
        default=15000,
        help="icepahc training trees (every k-th); 0: all",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    rows: list[dict] = []
    sizes: dict[str, tuple[int, int, int]] = {}
    start = time.perf_counter()
    for corpus in args.corpora:
        sizes[corpus] = measure(corpus, args, rows)
        print(f"# {corpus} done, {time.perf_counter() - start:.0f} s wall", flush=True)
        body = report(rows, sizes, args, time.perf_counter() - start)
        if not args.no_write:  # after every treebank: a partial run still leaves its rows
            write_section("function_labels", body)
    print(body)


def measure(corpus: str, args, rows: list[dict]) -> tuple[int, int, int]:
    """Score both models of ``corpus`` with both label sources; append to ``rows``.
    RETURNS: the numbers of training trees, test trees and the test split's trees."""
    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import CORPORA as INFO
    from spacy_lpcfg.corpora import load_splits, spread
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.estimators.function_labels import attach_function_labeller
    from spacy_lpcfg.progress import quiet
    from spacy_lpcfg.recipes import Recipe

    info = INFO[corpus]
    splits = load_splits(corpus, data_dir=data_dir())
    train = splits["train"]
    if corpus == "icepahc" and args.icepahc_train_limit:
        train = spread(train, args.icepahc_train_limit)
    test = spread(splits["test"], args.test_limit)
    out = (len(train), len(test), len(splits["test"]))
    del splits
    labeller = None
    for name, recipe in (("default (combined)", Recipe()), ("MLE", Recipe(estimator="mle"))):
        with quiet():
            begin = time.perf_counter()
            estimator = recipe.make_estimator(
                recipe.transform_spec(info.scheme, info.lang), info.lang
            )
            model = estimator.fit(train).model_
            fit_seconds = time.perf_counter() - begin
            del estimator
            if labeller is None:  # one labeller, fitted once, for both grammars
                begin = time.perf_counter()
                labeller = attach_function_labeller(model, train).labeller
                labeller_seconds = time.perf_counter() - begin
            assert model.keeps_functions, f"{corpus} {name}: the grammar strips function tags"
            f1 = None
            for source in SOURCES:
                labelled = model.with_function_labeller(labeller, source)
                scores = evaluate(Parser(labelled), test, scheme=info.scheme)
                figures = scores.to_dict()
                if f1 is None:
                    f1 = scores.fscore
                # the labeller replaces function tags only: the brackets are the same
                assert scores.fscore == f1, f"{corpus} {name}: bracket F1 {scores.fscore} != {f1}"
                rows.append(
                    {
                        "corpus": corpus,
                        "model": name,
                        "source": source,
                        "f1": scores.fscore,
                        "function_f1": scores.function_fscore,
                        "tag_p": figures["function_tag_precision"],
                        "tag_r": figures["function_tag_recall"],
                        "tag_f1": figures["function_tag_fscore"],
                        "speed": figures["sentences_per_second"],
                        "fallbacks": figures["fallbacks"],
                        "fit": fit_seconds,
                        "labeller_fit": labeller_seconds,
                        "rss_mb": peak_rss_mb(),
                    }
                )
                print(rows[-1], flush=True)
                del labelled, scores
        del model
        gc.collect()  # one model in memory at a time (icepahc)
    return out


def report(rows: list[dict], sizes: dict, args, seconds: float) -> str:
    command = "python benchmarks/bench_function_labels.py"
    if tuple(args.corpora) != CORPORA:
        command += " --corpora " + " ".join(args.corpora)
    if args.test_limit != 300:
        command += f" --test-limit {args.test_limit}"
    if args.icepahc_train_limit != 15000:
        command += f" --icepahc-train-limit {args.icepahc_train_limit}"
    trees = "; ".join(
        f"{corpus} {train} / {test}" + (f" of {total}" if test < total else "")
        for corpus, (train, test, total) in sizes.items()
    )
    icepahc = (
        f" IcePaHC trains on {sizes['icepahc'][0]} of its training trees (every k-th): "
        "the four-way model of the whole treebank needs about 6 GB per member."
        if "icepahc" in sizes and args.icepahc_train_limit
        else ""
    )
    lines = [
        "## Function labels: the grammar's or the labeller's",
        "",
        f"`{command}` ({seconds / 60:.0f} min wall, one process, peak "
        f"{max(row['rss_mb'] for row in rows) / 1024:.1f} GB): per treebank, `train`'s "
        "default model (`Recipe()`: four clustering models, m = 16, binarised left and "
        "right, function tags kept and stripped, decoded together) and the treebank PCFG "
        '(`Recipe(estimator="mle")`: right, h = 1, v = 2, function tags kept), both '
        "fitted on the training trees, and one function labeller "
        "(`attach_function_labeller`, a logistic regression, default parameters) fitted "
        "on the same trees. Each model parses the test trees twice: with its grammar's "
        'function tags (`function_labels="grammar"`) and with the labeller\'s '
        '(`"labeller"`, which replaces them on every phrase); bracket F1 is the same '
        "in both (asserted). F1 is EVALB COLLINS on categories; F1 with function labels "
        "matches full labels (`NP-SBJ`, indices dropped) on EVALB's brackets; function "
        "tags P / R / F1 count the tags on the brackets whose category and span are "
        "right (function labelling as Le Roux et al. 2013 score it, section 5.4). Training / test trees "
        f"(test: every k-th of the split when limited): {trees}.{icepahc} Fit s: the "
        "bracket model; the labeller's fit is given once per treebank below. "
        "Sentences/s were measured on a shared machine.",
        "",
        "| treebank | model | function labels from | F1 | F1 with function labels "
        "| function tags P / R / F1 | sent/s | fit s |",
        "|---|---|---|---:|---:|---|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['corpus']} | {row['model']} | {row['source']} | {row['f1']:.2f} "
            f"| {row['function_f1']:.2f} | {row['tag_p']:.2f} / {row['tag_r']:.2f} / "
            f"{row['tag_f1']:.2f} | {row['speed']:.1f} | {row['fit']:.0f} |"
        )
    gains = []
    for corpus in sizes:
        for model in dict.fromkeys(row["model"] for row in rows if row["corpus"] == corpus):
            pair = {
                row["source"]: row["function_f1"]
                for row in rows
                if row["corpus"] == corpus and row["model"] == model
            }
            if len(pair) == 2:
                gains.append(f"{corpus} {model} {pair['labeller'] - pair['grammar']:+.2f}")
    labeller_fits = ", ".join(
        f"{corpus} {next(row['labeller_fit'] for row in rows if row['corpus'] == corpus):.0f} s"
        for corpus in sizes
    )
    lines += [
        "",
        "F1 with function labels, labeller minus grammar: " + "; ".join(gains) + ".",
        f"Labeller fit: {labeller_fits}.",
    ]
    fallbacks = [
        f"{row['corpus']} {row['model']} ({row['source']}) {row['fallbacks']}"
        for row in rows
        if row["fallbacks"]
    ]
    if fallbacks:
        lines.append("Parser fallbacks (sentences): " + "; ".join(fallbacks) + ".")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
