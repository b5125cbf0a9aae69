"""``optimize``: the recipe and the latent states for a treebank, chosen on dev.

The search scores its candidates by EVALB F1 (categories) on trees it holds out
of the training split (``holdout``, every fifth tree), fitting them on the others:
with some eighty symbols to tune, a small dev set is fitted rather than learned
from (on ptb_sample, searching on its 273 dev sentences raised dev F1 by 2.2 and
lowered test F1 by 0.1). Dev chooses among a few finalists only. Stages, written
to one trace:

1. ``transforms``: a clustering model with the default states for each transform
   setting tried (vertical Markov order, function tags kept or stripped); each
   projects the treebank anew, so they run in parallel.
2. ``states``: ``LatentStateSearch`` from the best setting's projection.
3. ``final``: the finalists, fitted on every training tree and scored on dev: one
   model with the default states and one with the states found, Le Roux et al.'s
   four-way combination (``train``'s default: left and right binarisations,
   function tags kept and stripped), and noisy ensembles of both kinds of states,
   decoded by product and product-MBR. The best is the model.
4. when none of its grammars keeps function tags, the function labeller learned
   from the training trees puts them on, so that the model writes what the
   treebank has. It is fitted before everything else (as ``train`` fits it), so
   that its solver's arrays are gone before any grammar is fitted: the search
   then peaks at the larger of the two rather than at their sum.

With an ``output_dir``, the best and the default finalist's models wait on disk
(``FINALISTS``) while the later finalists fit, so that one model at a time is in
memory; the one chosen is read back at the end.

``max_time`` bounds the whole: the state search stops at ``SEARCH_SHARE`` of it,
and a finalist is not started once the time is up (the first excepted). Everything is
deterministic given ``random_state``, so ``resume`` (reading the trace) retraces
the finished part without scoring it again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..corpora import spread
from ..decode import Parser
from ..defaults import CEILINGS, CLUSTERING, FUNCTION_LABELS, SEARCH, TRANSFORM
from ..errors import Errors
from ..estimators.base import clone
from ..estimators.clustering import ClusteringEstimator
from ..estimators.combined import four_way_estimator
from ..estimators.function_labels import fit_function_tagger, has_function_tags
from ..estimators.noise import NoisyEnsemble
from ..evaluation.parsing import evaluate
from ..grammar.model import ParsingModel
from ..memory import release_freed_memory
from ..plots import plot_trace
from ..progress import progress, quiet
from ..recipes import DEFAULT_RECIPE, TRANSFORM_SETTINGS
from ..trees.transforms import TransformSpec, default_head_rules
from ..trees.tree import Tree
from .candidates import StateCandidates
from .states import LatentStateSearch
from .trace import Trace, fingerprint
from .workers import connect

TRACE_FILE = "trace.jsonl"
RECIPE_FILE = "recipe.json"
MODEL_DIR = "model"
PLOT_FILE = "trace.png"
DEFAULT_CHECKPOINTS = ".default.checkpoints"  # the default finalist's, in output_dir
FINALISTS = ".finalists"  # the best and the default finalist's models wait here

SEARCH_SHARE = 0.75
"""The share of ``max_time`` after which the state search stops: the rest is for the
finalists (on ptb_sample they take about 2 of 25 minutes; on larger treebanks a
finalist not started in time is skipped)."""


@dataclass
class OptimizeResult:
    """What ``optimize`` chose.

    model (ParsingModel): the best model (function labels restored if stripped).
    recipe (dict): how it was made: the transforms, the states found, the finalist
        chosen and its dev F1, every finalist's dev F1, the search's best F1 on its
        held-out trees, and the trees each step used.
    trace (list[dict]): every candidate scored.
    finished (bool): False when ``max_time`` cut the state search short.
    """

    model: ParsingModel
    recipe: dict[str, Any]
    trace: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = True


def transform_settings(
    pairs: Sequence[tuple[int, bool]], scheme: str, language: str
) -> list[TransformSpec]:
    """The TransformSpecs tried: (v_markov, keep_functions) pairs, the other settings
    the defaults (right binarisation, h = 1, the scheme's head rules)."""
    if not pairs:
        raise ValueError(Errors.E605.format(value=list(pairs)))
    return [
        TransformSpec(
            binarization=TRANSFORM.binarization,
            h_markov=TRANSFORM.h_markov,
            v_markov=int(v),
            keep_functions=bool(keep),
            scheme=scheme,
            head_rules=default_head_rules(scheme, language),
        )
        for v, keep in pairs
    ]


def _describe(spec: TransformSpec) -> dict[str, Any]:
    """The transform settings a recipe chooses (``recipes.TRANSFORM_SETTINGS``)."""
    return {name: getattr(spec, name) for name in TRANSFORM_SETTINGS}


def _score_transform(
    spec: TransformSpec,
    train: Sequence[Tree],
    dev: Sequence[Tree],
    params: dict[str, Any],
) -> tuple[float, float]:
    """Dev F1 and seconds of the default states under one transform setting, scored
    exactly as the state search scores its start (``StateCandidates``)."""
    start = time.perf_counter()
    with quiet():
        search = _state_search(spec, params)
        f1, _ = search.candidates(search.project(train), dev).score({})
    return f1, time.perf_counter() - start


def _state_search(spec: TransformSpec, params: dict[str, Any], **options) -> LatentStateSearch:
    estimator = ClusteringEstimator(
        n_states=params["n_states"],
        transform=spec,
        language=params["language"],
        random_state=params["random_state"],
    )
    return LatentStateSearch(
        estimator=estimator,
        max_states=params["max_states"],
        beam=params["beam"],
        coarse_step=params["coarse_step"],
        max_symbols=params["max_symbols"],
        min_count=params["min_count"],
        random_state=params["random_state"],
        scheme=params["scheme"],
        **options,
    )


def optimize(
    train: Sequence[Tree],
    dev: Sequence[Tree],
    *,
    scheme: str = "penn",
    language: str = "en",
    transforms: Sequence[tuple[int, bool]] = SEARCH.transforms,
    n_states: int = CLUSTERING.n_states,
    max_states: int = SEARCH.max_states,
    beam: int = SEARCH.beam,
    coarse_step: int = SEARCH.coarse_step,
    max_symbols: int | None = SEARCH.max_symbols,
    min_count: int = SEARCH.min_count,
    n_models: int = SEARCH.n_models,
    noise_scale: float = SEARCH.noise_scale,
    n_jobs: int = 1,
    scheduler: str | None = None,
    max_time: float | None = None,
    output_dir: Path | None = None,
    resume: bool = False,
    random_state: int = 0,
    holdout: float = SEARCH.holdout,
    search_limit: int | None = None,
    keep_default_within: float = SEARCH.keep_default_within,
) -> OptimizeResult:
    """Choose the recipe and the states on dev (module docstring) and fit the model.

    train, dev (Sequence[Tree]): training and dev trees, treebank labels, rooted at TOP.
    scheme, language (str): the treebank's label scheme and language.
    transforms (Sequence[tuple[int, bool]]): (v_markov, keep_functions) pairs tried.
    n_states (int): the states every symbol starts with.
    max_states, beam, coarse_step, max_symbols, min_count: ``LatentStateSearch``.
    n_models (int): members of the noisy ensembles (1: no ensemble stage).
    noise_scale (float): their gaussian noise.
    n_jobs (int): processes scoring candidates; scheduler (str | None): a Dask
        scheduler address to score them on instead.
    max_time (float | None): seconds for the whole search (None: no limit).
    output_dir (Path | None): where the trace is written as the search goes.
    resume (bool): go on from ``output_dir``'s trace.
    random_state (int): seeds everything.
    holdout (float): the share of the training trees the search scores its
        candidates on (fitting them on the rest); 0: score them on ``dev``.
    search_limit (int | None): search on about this many training trees, spread
        evenly over the treebank (every k-th tree): for treebanks too large to fit
        every candidate on (None: all). The finalists are fitted on all.
    keep_default_within (float): dev F1 points a finalist must beat ``train``'s
        default recipe by to be chosen over it.
    RETURNS (OptimizeResult): the model and the recipe.
    """
    check_search_options(
        max_states=max_states,
        beam=beam,
        min_count=min_count,
        n_models=n_models,
        n_jobs=n_jobs,
        max_time=max_time,
        holdout=holdout,
        max_symbols=max_symbols,
    )
    train, dev = list(train), list(dev)
    started = time.perf_counter()
    fit_trees, held_out = search_split(train, dev, holdout, search_limit)
    specs = transform_settings(transforms, scheme, language)
    params: dict[str, Any] = {
        "scheme": scheme,
        "language": language,
        "n_states": n_states,
        "max_states": max_states,
        "beam": beam,
        "coarse_step": coarse_step,
        "max_symbols": max_symbols,
        "min_count": min_count,
        "random_state": random_state,
    }
    settings = {
        **params,
        "transforms": [list(pair) for pair in transforms],
        "n_models": n_models,
        "noise_scale": noise_scale,
        "holdout": holdout,
        "search_limit": search_limit,
    }
    trace_path = None if output_dir is None else Path(output_dir) / TRACE_FILE
    if trace_path is not None:
        trace_path.parent.mkdir(parents=True, exist_ok=True)
    trace = Trace(trace_path, fingerprint(train, dev, settings), resume=resume)
    aside = None if output_dir is None else Path(output_dir) / FINALISTS
    try:
        labelling = time.perf_counter()
        tagger = _function_tagger(train, scheme, language)  # 4., fitted first (docstring)
        # max_time leaves the labeller out, as it did when the labeller came last
        clock = started + time.perf_counter() - labelling
        deadline = None if max_time is None else clock + max_time
        # 1. transforms, on the search's split
        scores = _transform_stage(specs, fit_trees, held_out, params, trace, n_jobs, scheduler)
        best_spec = max(zip(scores, specs), key=lambda item: item[0][0])[1]
        # 2. states, on the search's split, until SEARCH_SHARE of the time is spent
        search = _state_search(best_spec, params, n_jobs=n_jobs, scheduler=scheduler)
        with quiet():
            projected = search.project(fit_trees)
        if max_time is not None:  # at least the start is scored (a tiny positive budget)
            left = clock + SEARCH_SHARE * max_time - time.perf_counter()
            search.set_params(max_time=max(1e-6, left))
        search.fit_projected(projected, held_out, train=fit_trees, trace=trace)
        found = _Found(search.start_, search.assignment_, search.dev_f1_, search.finished_)
        del search, projected  # the search's trees and models: the finalists fit anew
        # 3. the finalists, fitted on every training tree, scored on dev
        finals, best = _final_stage(
            found, best_spec, specs[0], train, dev, params, n_models, noise_scale, trace, deadline,
            output_dir, aside,
        )  # fmt: skip
        f1, kept, choice = _unless_within_noise(best, keep_default_within)
        model = _taken_back(kept)
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
        trace.close()
    # 4. function labels for a model whose grammars all strip them
    if tagger is not None and not any(part.transform.keep_functions for part in model.parts):
        model = model.with_function_labeller(tagger, FUNCTION_LABELS)
        choice = {**choice, "function_labels": "labeller"}
    recipe = {
        "transform": _describe(best_spec),
        "searched": found.assignment,
        "model": choice,
        "dev_f1": f1,
        "search_f1": {"transforms": max(s for s, _ in scores), "states": found.dev_f1},
        "finalists": finals,
        "trees": {"search": len(fit_trees), "held_out": len(held_out), "model": len(train)},
        "finished": found.finished,
        "evaluations": len(trace.records),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return OptimizeResult(model, recipe, trace.records, found.finished)


def check_search_options(
    *,
    max_states: int,
    beam: int,
    min_count: int,
    n_models: int,
    n_jobs: int,
    max_time: float | None,
    holdout: float,
    max_symbols: int | None,
) -> None:
    """Raise ValueError for a bad option of ``optimize``, before any work."""
    LatentStateSearch(
        max_states=max_states,
        beam=beam,
        min_count=min_count,
        max_symbols=max_symbols,
        n_jobs=n_jobs,
        max_time=max_time,
    )._check_params()
    for name, value, low, expected in (
        ("n_models", n_models, 1, f"an int from 1 to {CEILINGS.n_models} (1: no ensembles)"),
        ("holdout", holdout, 0.0, "0 <= holdout < 1"),
    ):
        high = 1 if name == "holdout" else CEILINGS.n_models + 1
        if isinstance(value, bool) or not low <= value < high:
            raise ValueError(Errors.E011.format(name=name, value=value, expected=expected))


def search_split(
    train: list[Tree], dev: list[Tree], holdout: float, search_limit: int | None
) -> tuple[list[Tree], list[Tree]]:
    """The trees the search fits its candidates on and the trees it scores them on.

    About ``search_limit`` training trees (every k-th), of which every
    ``round(1 / holdout)``-th is held out for scoring; with ``holdout`` 0 the
    candidates are scored on ``dev`` itself.
    """
    train = spread(train, search_limit)
    if not holdout:
        return train, dev
    step = max(2, round(1 / holdout))
    return (
        [tree for i, tree in enumerate(train) if i % step != step - 1],
        train[step - 1 :: step],
    )


def _transform_stage(specs, train, dev, params, trace: Trace, n_jobs: int, scheduler):
    """(dev F1, seconds) of each transform setting (from the trace when known)."""
    from joblib import Parallel, delayed, parallel_config

    described = [_describe(spec) for spec in specs]
    known = [trace.known("transforms", d) for d in described]
    missing = [i for i, score in enumerate(known) if score is None]
    if missing:
        backend = {"backend": "dask"} if scheduler is not None else {}
        client = None if scheduler is None else connect(scheduler)
        try:
            with parallel_config(**backend):
                jobs = Parallel(n_jobs=1 if len(missing) == 1 else n_jobs)(
                    delayed(_score_transform)(specs[i], train, dev, params) for i in missing
                )
        finally:
            if client is not None:
                client.close()
        for i, (f1, seconds) in zip(missing, jobs):
            trace.add("transforms", described[i], f1, seconds)
            known[i] = (f1, seconds)
    return known


class _Found(NamedTuple):
    """What the state search found (``LatentStateSearch``'s ``start_``,
    ``assignment_``, ``dev_f1_`` and ``finished_``), kept without its trees and models."""

    start: dict[str, int]
    assignment: dict[str, int]
    dev_f1: float
    finished: bool


def _late(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _final_stage(
    found: _Found, spec, base_spec, train, dev, params, n_models, noise_scale, trace: Trace,
    deadline, output_dir: Path | None, aside: Path | None,
):  # fmt: skip
    """Fit the finalists on every training tree and score them on dev.

    The finalists: ``train``'s default recipe (first: always scored, and kept unless
    a finalist beats it by more than noise), one model with the default states (the
    best fixed-m model), one with the states found, the four-way combination and noisy
    ensembles of both kinds of states decoded two ways. RETURNS: the dev F1 of each
    (by name) and the best and the default finalist as (dev F1, model, description),
    their models written to ``aside`` when given (``_set_aside``). A finalist not
    scored yet is skipped once the time is up, except the first.
    """
    final = _state_search(spec, params)

    @functools.cache  # projected when a finalist needs it (the same again if rebuilt)
    def candidates() -> StateCandidates:
        with quiet():
            return final.candidates(final.project(train), dev)

    searched = dict(found.assignment)
    states = {"start": {}, "searched": searched}
    if searched == found.start:
        del states["searched"]
    # (what it is, the name of its fit, the fit): an ensemble's two decoders share a fit
    fits: dict[str, Any] = {
        "default": lambda: _fit_default(train, params, output_dir),
        "combined": lambda: _fit_combined(base_spec, train, params),
    }
    on_projection: set[str] = set()  # the fits made from ``candidates()``
    # train's default first: always scored, and kept unless beaten by more than noise
    finalists: list[tuple[dict[str, Any], str]] = [({"kind": "default"}, "default")]
    for name, assignment in states.items():
        fits[f"single {name}"] = lambda a=assignment: candidates().model(a)
        on_projection.add(f"single {name}")
        finalists.append(({"kind": "single", "states": name}, f"single {name}"))
    finalists.append(({"kind": "combined"}, "combined"))
    for name, assignment in states.items() if n_models > 1 else ():
        fits[f"ensemble {name}"] = lambda a=assignment: _fit_ensemble(
            candidates(), a, n_models, noise_scale
        )
        on_projection.add(f"ensemble {name}")
        for decoder in ("product_mbr", "product"):
            choice = {"kind": "ensemble", "states": name, "n_models": n_models, "decoder": decoder}
            finalists.append((choice, f"ensemble {name}"))
    scores: dict[str, float] = {}
    best: tuple[float, Any, dict[str, Any]] | None = None
    default: tuple[float, Any, dict[str, Any]] | None = None
    fitted: dict[str, ParsingModel] = {}  # the last fit, shared by an ensemble's decoders
    for position, (choice, fit) in enumerate(progress(finalists, desc="finalists", unit="model")):
        # the trace knows a finalist by what it is: its states, not their name
        key = {**choice, "states": states.get(choice.get("states", ""))}
        key["noise_scale"] = noise_scale if choice["kind"] == "ensemble" else None
        known = trace.known("final", key)
        name = ", ".join(f"{k} {v}" for k, v in choice.items() if k != "kind")
        name = choice["kind"] + (f" ({name})" if name else "")
        if known is None and position and _late(deadline):
            continue
        if known is not None and best is not None and known[0] <= best[0]:
            scores[name] = known[0]  # no better than the best: not fitted again
            continue
        fresh = fit not in fitted
        if fresh:
            fitted.clear()  # the last fit's model is gone before the next fit starts
            if fit in on_projection:
                candidates()  # projected outside the finalist's time, as before
            else:  # nor the projection, while a finalist that does not use it fits
                candidates.cache_clear()
            release_freed_memory()
        start = time.perf_counter()
        with quiet():
            if fresh:
                fitted[fit] = fits[fit]()
            model = fitted[fit]
            if choice["kind"] == "ensemble":
                model = model.with_members((), choice["decoder"])
            f1 = evaluate(Parser(model), dev, scheme=params["scheme"]).fscore
        if known is None:
            trace.add("final", key, f1, time.perf_counter() - start)
        scores[name] = f1
        kept = None
        if choice["kind"] == "default":
            kept = _set_aside(model, aside, "default")
            default = (f1, kept, choice)
        if best is None or f1 > best[0]:
            best = (f1, kept if kept is not None else _set_aside(model, aside, "best"), choice)
        del model  # held by ``fitted`` until the next fit, and by ``best`` if not aside
    assert best is not None  # the first finalist is always scored
    return scores, (best, default)


def _set_aside(model: ParsingModel, aside: Path | None, slot: str) -> ParsingModel | Path:
    """The model, or with ``aside`` the folder it is written to (``aside/slot``, any
    earlier model there replaced), so that it leaves memory with the finalist."""
    if aside is None:
        return model
    with quiet():
        model.to_disk(aside / slot)
    return aside / slot


def _taken_back(kept: ParsingModel | Path) -> ParsingModel:
    """The model ``_set_aside`` kept, read back from its folder if written."""
    return kept if isinstance(kept, ParsingModel) else ParsingModel.from_disk(kept)


def _unless_within_noise(pair, margin: float):
    """The best finalist, or train's default recipe when the best beats it on dev by
    less than ``margin`` F1: a few hundred dev trees cannot tell such finalists apart
    (BENCHMARKS.md "optimize: ptb_sample": a dev winner by a fraction of a point has
    scored below the default on test)."""
    best, default = pair
    if default is None or best[0] - default[0] >= margin:
        return best
    return default


def _function_tagger(train: Sequence[Tree], scheme: str, language: str):
    """The function labeller's tagger for the finalists that strip function tags
    (None for a treebank without them: nothing to learn)."""
    if not has_function_tags(train, scheme):
        return None
    return fit_function_tagger(train, scheme, language)


def _fit_default(train, params, output_dir: Path | None) -> ParsingModel:
    """``train``'s default recipe (``recipes.DEFAULT_RECIPE``), its labeller left to
    the last step (as for every finalist whose grammars strip function tags). With an
    ``output_dir``, its seeds checkpoint in a folder there, where each fitted seed's
    model waits until the last is fitted (``SeedProduct``), as ``train``'s do."""
    spec = DEFAULT_RECIPE.transform_spec(params["scheme"], params["language"])
    estimator: Any = DEFAULT_RECIPE.make_estimator(spec, params["language"])
    folder = None if output_dir is None else Path(output_dir) / DEFAULT_CHECKPOINTS
    if folder is not None and "checkpoint_dir" in estimator.get_params():
        estimator.set_params(checkpoint_dir=str(folder))
    try:
        return estimator.fit(train).model_
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _fit_combined(base_spec: TransformSpec, train, params) -> ParsingModel:
    """Le Roux et al.'s four-way combination (``four_way_estimator``) with the start's
    states; ``base_spec`` gives what the members share (scheme, head rules, h)."""
    n_states = min(params["n_states"], params["max_states"])
    estimator = four_way_estimator(n_states, params["random_state"], language=params["language"])
    estimator.set_params(transform=base_spec, language=params["language"])
    return estimator.fit(train).model_


def _fit_ensemble(candidates: StateCandidates, assignment, n_models: int, noise_scale: float):
    """A noisy ensemble of the candidates' projection, its members with the states of
    ``assignment``."""
    wanted = candidates.n_states(assignment)
    symbols = candidates.projected.counts.symbols
    member = clone(candidates.estimator).set_params(
        n_states={symbols.name(a): int(m) for a, m in enumerate(wanted) if m > 1}
    )
    ensemble = NoisyEnsemble(
        estimator=member,
        n_models=n_models,
        noise="gaussian",
        noise_scale=noise_scale,
        random_state=candidates.seed,
    )
    return ensemble.fit_projected(candidates.projected).model_


def write_result(result: OptimizeResult, output_dir: Path) -> None:
    """Write the model (``model/``), the recipe (``recipe.json``) and, with matplotlib,
    the plot of dev F1 against evaluations (``trace.png``) into ``output_dir``."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    result.model.to_disk(output_dir / MODEL_DIR)
    with (output_dir / RECIPE_FILE).open("w", encoding="utf8") as out:
        json.dump(result.recipe, out, indent=2, sort_keys=True)
        out.write("\n")
    with contextlib.suppress(ImportError):  # matplotlib is an optional extra
        plot_trace(result.trace, output_dir / PLOT_FILE)
