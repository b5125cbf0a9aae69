"""Decoders of single grammars on ptb_sample: the BENCHMARKS.md section "decoders".

Each model directory is parsed on the dev and test splits with each decoder
(``Parser(model, decoder=...)``), EVALB F1 on categories (collins). What
``decoder="auto"`` picks for a model that is not an ensemble
(``decode.parser.default_decoder``, ``defaults.DECODER``) is chosen on dev from
this table.

    python benchmarks/bench_decoders.py MODEL_DIR... [--decoders max_rule mbr variational]
        [--no-write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--decoders", nargs="+", default=["max_rule", "mbr", "variational"])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode.parser import Parser, default_decoder
    from spacy_lpcfg.grammar.model import ParsingModel

    splits = {
        keep: load_splits("ptb_sample", data_dir=data_dir(), keep_functions=keep)
        for keep in (True, False)
    }
    header = " | ".join(f"{d} dev | {d} test" for d in args.decoders)
    lines = [
        f"| model | estimator | auto | {header} |",
        "|---|---|---|" + "---:|" * (2 * len(args.decoders)),
    ]
    for path in args.models:
        model = ParsingModel.from_disk(path)
        trees = splits[model.transform.keep_functions]
        cells = []
        for decoder in args.decoders:
            for split in ("dev", "test"):
                scores = evaluate(Parser(model, decoder=decoder), trees[split])
                cells.append(f"{scores.fscore:.2f}")
        lines.append(
            f"| {path.name} | {model.estimator} | {default_decoder(model)} | "
            + " | ".join(cells)
            + " |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    body = "\n".join(
        [
            "## Decoders of single grammars (ptb_sample)",
            "",
            f"`python benchmarks/bench_decoders.py {' '.join(p.name for p in args.models)}` "
            "(model directories trained by `spacy-lpcfg train`): each model parsed with "
            "each decoder; EVALB F1 (collins), function tags kept where the model keeps "
            'them. `auto` is what `decoder="auto"` picks for it.',
            "",
            *lines,
        ]
    )
    print(body)
    if not args.no_write:
        write_section("decoders", body)


if __name__ == "__main__":
    main()
