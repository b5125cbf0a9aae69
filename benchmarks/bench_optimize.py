"""``spacy-lpcfg optimize`` on a corpus: the BENCHMARKS.md section "optimize_<corpus>".

Runs the search (``python -m spacy_lpcfg optimize CORPUS WORK ...``, timed, unless
WORK already holds its result), then scores on the test split, in one process:
``train``'s default model (what a user gets without options), the search's
baseline (one clustering model with the default states under the transforms the
search chose: the best fixed-m single model), the single model with the states
found, and the model ``optimize`` wrote (with its function labels). Each line
gives EVALB F1 (categories), F1 with function labels and sentences per second.

    python benchmarks/bench_optimize.py CORPUS [--work DIR] [--max-time 1500]
        [--n-jobs 2] [--limit N] [--dev-limit N] [--test-limit N] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--max-time", type=float, default=1500)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="training trees")
    parser.add_argument("--dev-limit", type=int, default=None, help="dev trees the search scores")
    parser.add_argument("--search-limit", type=int, default=None, help="trees searched on")
    parser.add_argument("--holdout", type=float, default=None, help="share scored on")
    parser.add_argument("--test-limit", type=int, default=None, help="test trees scored")
    parser.add_argument("--n-models", type=int, default=8, help="members of the ensembles")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    work = args.work or Path(f"/tmp/bench_optimize/{args.corpus}")

    search_seconds = None
    if not (work / "recipe.json").exists():
        command = [sys.executable, "-m", "spacy_lpcfg", "optimize", args.corpus, str(work)]
        command += ["--data-dir", str(data_dir()), "--n-jobs", str(args.n_jobs)]
        command += ["--max-time", str(args.max_time)]
        for option, value in (
            ("--limit", args.limit),
            ("--dev-limit", args.dev_limit),
            ("--search-limit", args.search_limit),
            ("--holdout", args.holdout),
            ("--n-models", args.n_models),
        ):
            if value is not None:
                command += [option, str(value)]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        search_seconds = time.perf_counter() - start
    recipe = json.loads((work / "recipe.json").read_text())

    from spacy_lpcfg import evaluate
    from spacy_lpcfg.corpora import CORPORA, load_splits, spread
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.estimators import ClusteringEstimator
    from spacy_lpcfg.grammar.model import ParsingModel
    from spacy_lpcfg.progress import quiet
    from spacy_lpcfg.recipes import Recipe
    from spacy_lpcfg.search import LatentStateSearch
    from spacy_lpcfg.search.candidates import StateCandidates
    from spacy_lpcfg.search.optimize import transform_settings

    info = CORPORA[args.corpus]
    splits = load_splits(args.corpus, data_dir=data_dir())
    train = spread(splits["train"], args.limit)
    test = spread(splits["test"], args.test_limit)
    transform = recipe["transform"]
    (spec,) = transform_settings(
        [(transform["v_markov"], transform["keep_functions"])], info.scheme, info.lang
    )
    rows = []

    def score(name: str, model: ParsingModel, fit_seconds: float | None) -> None:
        with quiet():
            scores = evaluate(Parser(model), test, scheme=info.scheme)
        figures = scores.to_dict()
        rows.append(
            (
                name,
                scores.fscore,
                scores.function_fscore,
                figures["sentences_per_second"],
                fit_seconds,
            )
        )
        print(rows[-1], flush=True)

    with quiet():
        start = time.perf_counter()
        default = Recipe().make_estimator(
            Recipe().transform_spec(info.scheme, info.lang), info.lang
        )
        default_model = default.fit(train).model_
        score(
            "`train` default (" + Recipe().estimator + ")",
            default_model,
            time.perf_counter() - start,
        )
        search = LatentStateSearch(
            estimator=ClusteringEstimator(transform=spec, language=info.lang, random_state=0),
            max_states=32,
            random_state=0,
            scheme=info.scheme,
        )
        start = time.perf_counter()
        candidates = StateCandidates(
            search.project(train), search._estimator(), [], scheme=info.scheme, seed=0
        )
        baseline = candidates.model({})
        score("clustering, 16 states per symbol (the search's start)", baseline, None)
        score("clustering, the states found", candidates.model(recipe["searched"]), None)
        # the ensembles of the finalists, whichever won
        from spacy_lpcfg.search.optimize import _fit_ensemble

        for name, states in (("16 states", {}), ("the states found", recipe["searched"])):
            ensemble = _fit_ensemble(candidates, states, args.n_models, 0.3)
            score(f"{args.n_models} noisy clustering models, {name} (product_mbr)", ensemble, None)
            del ensemble  # one in memory at a time (IcePaHC)
    chosen = ParsingModel.from_disk(work / "model")
    kind = recipe["model"]["kind"]
    score(f"optimize's model ({kind})", chosen, None)

    lines = [
        f"## optimize: {args.corpus}",
        "",
        f"`python benchmarks/bench_optimize.py {args.corpus} --max-time {args.max_time:.0f} "
        f"--n-jobs {args.n_jobs}"
        + "".join(
            f" {flag} {value}"
            for flag, value in (
                ("--limit", args.limit),
                ("--dev-limit", args.dev_limit),
                ("--search-limit", args.search_limit),
                ("--holdout", args.holdout),
                ("--test-limit", args.test_limit),
                ("--n-models", None if args.n_models == 8 else args.n_models),
            )
            if value is not None
        )
        + "`: the search (`spacy-lpcfg optimize`) "
        + (f"took {search_seconds / 60:.1f} min wall" if search_seconds else "was run before")
        + f", {recipe['evaluations']} candidates"
        + ("" if recipe["finished"] else ", stopped by --max-time")
        + f"; on its held-out training trees ({recipe['trees']['held_out']}) it chose the "
        + f"transforms {json.dumps(transform)} (F1 {recipe['search_f1']['transforms']:.2f}) "
        + f"and states for {len(recipe['searched'])} symbols (F1 "
        + f"{recipe['search_f1']['states']:.2f}); the finalists, fitted on all "
        + f"{recipe['trees']['model']} training trees, scored on dev: "
        + ", ".join(f"{name} {value:.2f}" for name, value in recipe["finalists"].items())
        + f"; the model: {json.dumps(recipe['model'])}. Test split"
        + (f" (about {args.test_limit} trees, every k-th)" if args.test_limit else "")
        + ", EVALB COLLINS F1.",
        "",
        "| model | test F1 | F1 with function labels | sent/s | fit s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, f1, func, speed, seconds in rows:
        fit = "" if seconds is None else f"{seconds:.0f}"
        lines.append(f"| {name} | {f1:.2f} | {func:.2f} | {speed} | {fit} |")
    lines.append("")
    lines.append("States found (searched symbols): " + json.dumps(recipe["searched"]))
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(f"optimize_{args.corpus}", body)


if __name__ == "__main__":
    main()
