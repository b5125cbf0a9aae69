"""Products of split-merge seeds against the Berkeley parser: BENCHMARKS.md "seed_products".

The products of the first K seeds that ``bench_split_merge.py`` trained in ``--work``
(``seed0``, ``seed1``...; what ``train --estimator split_merge --n-models K`` trains),
joined by ``combine_models`` (one ensemble, product_mbr): dev and test F1, then
``race.sh`` on the test split ``--runs`` times with every product in each run, and the
median of each product's speed ratio to the Berkeley parser.

    python benchmarks/bench_seed_products.py [--sizes 1 2 3 4 8] [--runs 3]
        [--work /tmp/bench_split_merge] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

BERKELEY = Path(__file__).resolve().parents[2] / "shared" / "tools" / "berkeley"
RATIO = re.compile(r"^(\S+)\s+F1\s+([\d.]+)\s+([\d.]+) sent/s\s+= ([\d.]+)x berkeley$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 3, 4, 8])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_split_merge"))
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    models = {size: _product(args.work, size) for size in args.sizes}
    scores = {size: _scores(model) for size, model in models.items()}
    races = [_race(list(models.values())) for _ in range(args.runs)]
    body = report(args, models, scores, races)
    print(body)
    if not args.no_write:
        write_section("seed_products", body)


def _product(work: Path, size: int) -> Path:
    """The model directory of seeds 0 .. size - 1 (one seed: its own directory)."""
    seeds = [work / f"seed{seed}" for seed in range(size)]
    missing = [str(seed) for seed in seeds if not seed.is_dir()]
    if missing:
        sys.exit(f"no trained seeds {', '.join(missing)}: run bench_split_merge.py first")
    if size == 1:
        return seeds[0]
    from spacy_lpcfg.grammar.model import ParsingModel, combine_models

    out = work / f"product{size}"
    if not out.is_dir():
        combine_models([ParsingModel.from_disk(seed) for seed in seeds]).to_disk(out)
    return out


def _scores(model: Path) -> dict[str, float]:
    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import load_splits
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.grammar.model import ParsingModel

    splits = load_splits("ptb_sample", data_dir=data_dir(), keep_functions=False)
    parser = Parser(ParsingModel.from_disk(model))
    return {split: evaluate(parser, splits[split]).fscore for split in ("dev", "test")}


def _race(models: list[Path]) -> str:
    command = ["bash", str(BERKELEY / "race.sh"), *map(str, models)]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def _ratios(races: list[str], model: Path) -> list[float]:
    found = []
    for race in races:
        for line in race.splitlines():
            match = RATIO.match(line)
            if match and str(model).endswith(match.group(1)):
                found.append(float(match.group(4)))
    return found


def report(args, models, scores, races) -> str:
    lines = [
        "## Products of split-merge seeds against the Berkeley parser (ptb_sample)",
        "",
        f"`python benchmarks/bench_seed_products.py --sizes {' '.join(map(str, args.sizes))} "
        f"--runs {args.runs}`: the first K seeds of `bench_split_merge.py` (what `train "
        "--estimator split_merge --n-models K` trains: seeds 0 .. K - 1; `--recipe "
        "split_merge_product` is K = 3) joined into one ensemble (product_mbr, members "
        "pruned by the first at the default ensemble threshold); EVALB F1 on categories; "
        f"speed: the median (min-max) of the ratios to the Berkeley parser's SM4 grammar "
        f"over {args.runs} `race.sh` runs on the test split, every product in each run.",
        "",
        "| seeds | dev F1 | test F1 | ratio to Berkeley |",
        "|---:|---:|---:|---|",
    ]
    for size, model in models.items():
        ratios = _ratios(races, model)
        spread = (
            f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
            if ratios
            else "-"
        )
        lines.append(
            f"| {size} | {scores[size]['dev']:.2f} | {scores[size]['test']:.2f} | {spread} |"
        )
    lines += ["", "`race.sh` runs:", "", "```", "\n\n".join(races), "```"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
