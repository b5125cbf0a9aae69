"""POS tagging accuracy of the parsers: the BENCHMARKS.md section "tagging".

For each corpus: train on the train split (default transforms, the corpus's
language), parse the dev split from its words alone (no gold tags), and count
the predicted tags that equal the gold ones: over all tokens, over the tokens
whose word never occurs in the training split ("unseen", what the unknown-word
signatures decide), and as EVALB's tagging accuracy (COLLINS.prm: punctuation
not counted). Each corpus runs in a fresh process, one after the other (one
training at a time). The unknown-word signature scheme can be forced, to compare
schemes (``--signature generic``) or code versions on the same corpora.

    python benchmarks/bench_tagging.py [--corpora ptb_sample ...] [--estimators mle clustering]
        [--split dev] [--signature auto] [--limit N] [--json FILE] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

CORPORA = ("ptb_sample", "icepahc", "floresta", "cess_esp")
ESTIMATORS = ("mle", "clustering")
CLUSTERING_STATES = 16  # the CLI's default for clustering


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument("--estimators", nargs="+", default=["mle"], choices=ESTIMATORS)
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    parser.add_argument(
        "--signature", default="auto", help="unknown-word signatures: auto (default), or a scheme"
    )
    parser.add_argument("--limit", type=int, default=None, help="parse the first N sentences")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    spawn = multiprocessing.get_context("spawn")
    rows = []
    for estimator in args.estimators:
        for corpus in args.corpora:
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                job = pool.submit(
                    run_case, corpus, estimator, args.split, args.signature, args.limit
                )
                row = job.result()
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    body = report(rows, args)
    print(body)
    if not args.no_write:
        write_section("tagging", body)


def run_case(corpus: str, estimator: str, split: str, signature: str, limit: int | None) -> dict:
    """Train on the corpus's train split, parse `split`, count correct tags."""
    from spacy_lpcfg.corpora import CORPORA as REGISTRY
    from spacy_lpcfg.corpora import load_split
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.evaluation import score_parses
    from spacy_lpcfg.trees.transforms import TransformSpec

    info = REGISTRY[corpus]
    train = list(load_split(corpus, "train", data_dir=data_dir()))
    settings = {
        "transform": TransformSpec(scheme=info.scheme),
        "language": info.lang,
        "signature": signature,
    }
    start = time.perf_counter()
    if estimator == "mle":
        from spacy_lpcfg.estimators.mle import MLEEstimator

        fitted = MLEEstimator(**settings).fit(train)
    else:
        from spacy_lpcfg.estimators.clustering import ClusteringEstimator

        fitted = ClusteringEstimator(n_states=CLUSTERING_STATES, **settings).fit(train)
    fit_seconds = time.perf_counter() - start
    seen = {word for tree in train for word in tree.words()}
    del train
    gold = list(load_split(corpus, split, data_dir=data_dir()))[:limit]
    parser = Parser(fitted.model_)
    start = time.perf_counter()
    parses = [parser.parse(tree.words()).tree for tree in gold]
    parse_seconds = time.perf_counter() - start
    counts = {"tokens": 0, "correct": 0, "unseen": 0, "unseen_correct": 0}
    for tree, parse in zip(gold, parses):
        for word, gold_tag, tag in zip(tree.words(), tree.tags(), parse.tags()):
            counts["tokens"] += 1
            counts["correct"] += tag == gold_tag
            if word not in seen:
                counts["unseen"] += 1
                counts["unseen_correct"] += tag == gold_tag
    evalb = score_parses(gold, parses, scheme=info.scheme).evalb.to_dict()
    return {
        "corpus": corpus,
        "split": split,
        "estimator": estimator,
        "signatures": fitted.lexicon_.signatures.name,
        "sentences": len(gold),
        **counts,
        "accuracy": 100 * counts["correct"] / counts["tokens"],
        "unseen_accuracy": 100 * counts["unseen_correct"] / max(counts["unseen"], 1),
        "evalb_tagging_accuracy": evalb["tagging_accuracy"],
        "f1": evalb["bracketing_fscore"],
        "fit_s": fit_seconds,
        "parse_s": parse_seconds,
    }


def report(rows: list[dict], args: argparse.Namespace) -> str:
    lines = [
        "| corpus | estimator | signatures | sentences | tokens | tag acc. | unseen tokens "
        "| unseen tag acc. | EVALB tag acc. | F1 | fit s | parse s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        unseen_share = 100 * row["unseen"] / row["tokens"]
        lines.append(
            f"| {row['corpus']} {row['split']} | {row['estimator']} | {row['signatures']} "
            f"| {row['sentences']} | {row['tokens']} | {row['accuracy']:.2f} "
            f"| {row['unseen']} ({unseen_share:.1f}%) | {row['unseen_accuracy']:.2f} "
            f"| {row['evalb_tagging_accuracy']:.2f} | {row['f1']:.2f} "
            f"| {row['fit_s']:.0f} | {row['parse_s']:.0f} |"
        )
    command = "python benchmarks/bench_tagging.py" + (
        f" --signature {args.signature}" if args.signature != "auto" else ""
    )
    return (
        "## POS tagging accuracy\n\n"
        f"`{command}`: train on the train split (default transforms, the corpus's "
        f"language, signatures `{args.signature}`), parse the {args.split} split from "
        "its words (no gold tags, default `Parser`), compare the predicted tags with "
        "the gold ones. Tag acc.: all tokens; unseen: tokens whose word does not occur "
        "in the train split; EVALB tag acc.: COLLINS.prm (punctuation not counted).\n\n"
        + "\n".join(lines)
    )


if __name__ == "__main__":
    main()
