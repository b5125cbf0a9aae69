"""Parsing speed and accuracy, single process: the BENCHMARKS.md section "parse".

Cases, all with the default Parser (decoder auto: max_rule for the MLE model, mbr for
the latent ones since f445e06; default pruning levels and threshold): the MLE model on the PTB-sample test split and on (the first sentences
of) the IcePaHC dev split, and synthetic latent grammars (the PTB MLE grammar split
into m = 8 and 16 states, ``synthetic.py``) on the PTB-sample test split; plus the
accuracy reference the pruning is held to (the former default levels at threshold
1e-5). Each case runs in a fresh process, so that its peak memory is its own; the
numba cache is warm (one warm-up parse). Speed is the median of --repeat runs, wall
clock and CPU time (the machine is shared: CPU time is the steadier figure).

    python benchmarks/bench_parse.py [--quick] [--no-write] [--repeat 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from common import data_dir, peak_rss_mb, write_section

ICEPAHC_DEV_SENTENCES = 500  # of 7,289: three runs of the whole split would take 20 min
REFERENCE = {"levels": ({}, {"annotations": True}), "prune_threshold": 1e-5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sentences, 2 runs")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per case")
    args = parser.parse_args()
    repeat = 2 if args.quick else max(1, args.repeat)
    ptb = 60 if args.quick else None
    cases = [
        ("MLE", "ptb_sample", "test", ptb, 1, {}, repeat),
        ("MLE, reference pruning", "ptb_sample", "test", ptb, 1, REFERENCE, 1),
        ("MLE", "icepahc", "dev", 100 if args.quick else ICEPAHC_DEV_SENTENCES, 1, {}, repeat),
        ("synthetic m=8", "ptb_sample", "test", 30 if args.quick else None, 8, {}, repeat),
        ("synthetic m=16", "ptb_sample", "test", 30 if args.quick else None, 16, {}, repeat),
    ]
    spawn = multiprocessing.get_context("spawn")
    rows = []
    for case in cases:
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            row = pool.submit(run_case, *case).result()
        print(row, flush=True)
        rows.append(row)
    body = report(rows, repeat)
    print(body)
    if not args.no_write:
        write_section("parse", body)


def run_case(name, corpus, split, limit, n_states, options, repeat) -> dict:
    """Train (or split) the model, parse the split `repeat` times, score the last run."""
    from synthetic import split_model

    from spacy_lpcfg.corpora import CORPORA, load_split, open_treebank
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.estimators.mle import MLEEstimator
    from spacy_lpcfg.evaluation import score_parses
    from spacy_lpcfg.trees.transforms import TransformSpec

    trees, scheme = open_treebank(corpus, "train", data_dir=data_dir())
    start = time.perf_counter()
    estimator = MLEEstimator(transform=TransformSpec(scheme=scheme), language=CORPORA[corpus].lang)
    model = estimator.fit(trees).model_
    fit_seconds = time.perf_counter() - start
    del trees
    if n_states > 1:
        model = split_model(model, n_states)
    gold = list(load_split(corpus, split, data_dir=data_dir()))[:limit]
    sentences = [tree.words() for tree in gold]
    parser = Parser(model, **options)
    parser.parse_all(sentences[:10])  # loads the compiled kernels
    wall, cpu = [], []
    for _ in range(repeat):
        parser.fallbacks.clear()
        parser.seconds.clear()
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        parses = parser.parse_all(sentences)
        wall.append(time.perf_counter() - start_wall)
        cpu.append(time.process_time() - start_cpu)
    trees = [parse.tree for parse in parses]
    scores = score_parses(gold, trees, scheme=scheme).evalb.to_dict()
    staged = sum(parser.seconds.values())
    return {
        "case": name,
        "data": f"{corpus} {split}",
        "sentences": len(sentences),
        "mean_words": sum(map(len, sentences)) / len(sentences),
        "symbols": model.grammar.n_symbols,
        "states": n_states,
        "fit_s": fit_seconds,
        "f1": scores["bracketing_fscore"],
        "f1_40": scores["bracketing_fscore_40"],
        "wall": [len(sentences) / seconds for seconds in wall],
        "cpu": [len(sentences) / seconds for seconds in cpu],
        "shares": {stage: seconds / staged for stage, seconds in parser.seconds.items()},
        "fallbacks": dict(parser.fallbacks),
        "peak_rss_mb": peak_rss_mb(),
    }


def report(rows: list[dict], repeat: int) -> str:
    lines = [
        "| case | data | sentences (mean words) | F1 | F1 ≤40 | sent/s wall | sent/s CPU "
        "| coarse / fine / decode / lexicon | fallbacks | peak RSS MB |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for row in rows:
        shares = row["shares"]
        share = " / ".join(
            f"{100 * shares.get(stage, 0):.0f}%"
            for stage in ("pruning", "chart", "decode", "lexicon")
        )
        fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(row["fallbacks"].items())) or "none"
        case = row["case"] + (f" ({row['symbols']} symbols)" if row["states"] == 1 else "")
        lines.append(
            f"| {case} | {row['data']} | {row['sentences']} ({row['mean_words']:.1f}) "
            f"| {row['f1']:.2f} | {row['f1_40']:.2f} | {_speed(row['wall'])} "
            f"| {_speed(row['cpu'])} | {share} | {fallbacks} | {row['peak_rss_mb']:.0f} |"
        )
    fits = ", ".join(
        f"{row['data'].split()[0]} {row['fit_s']:.1f} s" for row in rows if row["case"] == "MLE"
    )
    return (
        "## Parsing: speed and accuracy\n\n"
        "`python benchmarks/bench_parse.py`: one process, default `Parser` (decoder auto; "
        "pruning levels X-bar with unary chains cut to their lowest label and POS "
        "categories, then X-bar with Markov context; threshold 3e-4); speed is the median "
        f"(min-max) of {repeat} runs after a warm-up, over the sentences of each line; "
        "EVALB COLLINS.prm F1. coarse / fine / decode / lexicon: shares of the parse time "
        "in the pruning passes, the final grammar's inside-outside, decoding (with the "
        "tree) and lexical scoring. MLE training (read + fit, not in the parse time): "
        f"{fits}. Reference pruning: the former default levels (X-bar, X-bar with "
        "annotations) at threshold 1e-5, the accuracy the defaults are held to. "
        "Synthetic m: the PTB MLE grammar with every symbol split into m states "
        "(`benchmarks/synthetic.py`), the cost of a PCFG-LA of that size.\n\n"
        + "\n".join(lines)
        + "\n\n"
        + LIMITS
    )


LIMITS = """What limits speed (the Berkeley parser does about 7 sentences/s per core on WSJ):

* The dense first pass (every chart item of the first level, n³ × rules) is most of the
  MLE parse time. Its inner loops run over the cells of one width, short vectors, so
  it is bound by loop overhead rather than arithmetic; its cost is the size of the
  first-level grammar (PTB: 93 symbols, 1.6k rules; IcePaHC: 302 symbols, 5.6k rules).
* The sparse passes check every rule of every allowed parent (about 10 ns each, most of
  it mispredicted branches). Skipping intermediate items whose right sibling (named by
  their Markov context) is missing halves the items of the markovised grammars.
* Latent grammars: the final pass contracts an m x m x m tensor per anchored rule,
  inside and outside; at m = 16 the tensors (8.8k rules, 290 MB) stream from memory,
  so memory bandwidth bounds it.
* Per sentence, Python glue (lexicon, inverse transforms, decoder bookkeeping) is about
  1 ms.
"""


def _speed(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})"


if __name__ == "__main__":
    main()
