"""Training a model on a treebank as ``spacy-lpcfg train`` does, and the reading that
``train`` and ``optimize`` share.

``train`` fits a recipe's estimator and saves the model; for the split-merge
estimators it keeps a checkpoint per cycle beside the model directory (``resume``
goes on from the last), chooses the cycle on dev trees by EVALB F1, and attaches a
function labeller when the recipe has one and the trees have function tags.
``train_bracketer`` fits an unsupervised bracketer on the words and tags alone.

Import-light (the CLI reads it at start-up): the estimators, the parser and the
corpora are imported when used.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import defaults

if TYPE_CHECKING:
    from .grammar.model import ParsingModel
    from .recipes import Recipe
    from .trees import Tree
    from .unsupervised import Bracketer

Model = TypeVar("Model")

# The unsupervised bracketers (``unsupervised.BRACKETERS``, named here so that the CLI
# starts without importing them): trained on the words and tags of the trees only.
BRACKETER_NAMES = ("spectral_unsup", "ccm", "right", "left", "random")


@dataclass
class Trained(Generic[Model]):
    """A training run's outcome: the model (a ``ParsingModel`` or a bracketer), how
    many trees it learnt from, and the seconds the fitting took (not the reading)."""

    model: Model
    trees: int
    seconds: float


def train(
    recipe: Recipe,
    corpus: str,
    model_dir: Path,
    *,
    split: str = "train",
    data_dir: Path | None = None,
    encoding: str | None = None,
    limit: int | None = None,
    language: str | None = None,
    head_rules: str | None = None,
    n_jobs: int = 1,
    dev: str | None = None,
    resume: bool = False,
    function_labeller: bool | None = None,
    function_labels: str = defaults.FUNCTION_LABELS,
    note: Callable[[str], object] | None = None,
) -> Trained[ParsingModel]:
    """Fit ``recipe`` on the first ``limit`` trees (None: all) of ``corpus`` (a corpus
    name or treebank path) and save the model, named after the treebank, to ``model_dir``.

    Split-merge estimators only: ``n_jobs`` E-step workers; a checkpoint per cycle in
    ``checkpoint_dir(model_dir)``, removed once the model is written; ``resume`` goes
    on from its last complete cycle (``note`` is told from where); ``dev``, a split
    of the named corpus or a treebank path, chooses the cycle. ``function_labeller``:
    True attaches the recipe's labeller even to trees without function tags.
    """
    from .estimators.registry import estimator_entry
    from .grammar.model import treebank_name

    trees, scheme = read_training_trees(corpus, split, data_dir, encoding, limit)
    language = training_language(corpus, language)
    spec = recipe.transform_spec(scheme, language, head_rules)
    fitter: Any = recipe.make_estimator(spec, language)
    by_cycle = estimator_entry(recipe.estimator).checkpoints
    if by_cycle:
        fitter.set_params(n_jobs=n_jobs)
    start = time.perf_counter()
    tagger = None
    if recipe.function_labeller and _labeller_wanted(function_labeller, trees, scheme):
        from .estimators.function_labels import fit_function_tagger

        # Fitted before the grammars: its solver's arrays are freed before EM starts,
        # so that training peaks at the larger of the two rather than at their sum.
        tagger = fit_function_tagger(trees, spec.scheme, language)
    if by_cycle:
        dev_trees = None if dev is None else _read_dev(dev, corpus, data_dir, encoding)
        checkpoints = checkpoint_dir(model_dir)
        model = fit_model(
            fitter, trees, scheme, dev_trees=dev_trees, checkpoints=checkpoints, resume=resume,
            note=note,
        )  # fmt: skip
    else:
        model = fit_model(fitter, trees, scheme)
    if tagger is not None:
        model = model.with_function_labeller(tagger, function_labels)
    seconds = time.perf_counter() - start
    model = model.with_treebank(treebank_name(corpus))  # combine compares it
    model.to_disk(model_dir)
    shutil.rmtree(checkpoint_dir(model_dir), ignore_errors=True)
    return Trained(model, len(trees), seconds)


def train_bracketer(
    name: str,
    corpus: str,
    model_dir: Path,
    *,
    split: str = "train",
    data_dir: Path | None = None,
    encoding: str | None = None,
    limit: int | None = None,
) -> Trained[Bracketer]:
    """Fit the bracketer ``name`` (one of ``BRACKETER_NAMES``: CCM is started from the
    spectral trees) on the sentences' words and POS tags (no brackets are read) and
    save it to ``model_dir``."""
    from .unsupervised import BRACKETERS, save_bracketer

    trees, _ = read_training_trees(corpus, split, data_dir, encoding, limit)
    start = time.perf_counter()
    model = BRACKETERS[name]().fit(trees)
    save_bracketer(model, model_dir)
    return Trained(model, len(trees), time.perf_counter() - start)


def checkpoint_dir(model_dir: Path) -> Path:
    """Where train keeps split-merge checkpoints: beside MODEL_DIR (``to_disk`` replaces
    MODEL_DIR whole), under a name its clean-up of stale leftovers never matches."""
    model_dir = model_dir.absolute()
    return model_dir.parent / f".{model_dir.name}.checkpoints"


def checkpointed_cycles(folder: Path, n_models: int) -> dict[str, int | None]:
    """The last complete cycle in a checkpoint folder (by its name), or for a product
    (``n_models`` > 1) in each of its seeds' folders (``seed0``...); None: none complete."""
    from .estimators.em.checkpoints import latest_cycle
    from .estimators.seed_product import SEED_FOLDER

    if n_models == 1:
        return {folder.name: latest_cycle(folder)}
    seeds = [SEED_FOLDER.format(k) for k in range(n_models)]
    return {seed: latest_cycle(folder / seed) for seed in seeds}


def training_language(corpus: str, language: str | None) -> str:
    """``language``, else the named corpus's language, else the default."""
    from .corpora import CORPORA

    if language:
        return language
    return CORPORA[corpus].lang if corpus in CORPORA else defaults.LEXICON.language


def read_training_trees(
    corpus: str, split: str, data_dir: Path | None, encoding: str | None, limit: int | None
):
    """``(trees, scheme)``: the first ``limit`` trees (None: all) of a corpus split or a
    treebank path, streamed under a "reading" bar, so that --limit reads only those."""
    from .corpora import CORPORA, iter_corpus, open_treebank
    from .progress import progress
    from .trees.formats import TreebankReader

    stream: Iterable[Tree]
    if corpus in CORPORA and encoding is None:
        stream, scheme = iter_corpus(corpus, split, data_dir=data_dir), CORPORA[corpus].scheme
    elif corpus not in CORPORA and Path(corpus).exists():
        reader = TreebankReader(corpus, encoding=encoding)
        stream, scheme = reader, reader.scheme
    else:  # not readable as asked: open_treebank raises the error that says why
        trees, scheme = open_treebank(corpus, split, data_dir=data_dir, encoding=encoding)
        return trees[:limit], scheme
    # a comprehension, not list(): a bar's length (the limit) would be taken as a size hint
    trees = [
        tree for tree in progress(islice(stream, limit), desc="reading", total=limit, unit="tree")
    ]
    if not trees:  # open_treebank names the reason (a file without trees)
        return open_treebank(corpus, split, data_dir=data_dir, encoding=encoding)
    return trees, scheme


def _read_dev(dev: str, corpus: str, data_dir: Path | None, encoding: str | None):
    """--dev: a split of the named corpus, else a treebank path."""
    from .corpora import CORPORA, SPLITS

    if corpus in CORPORA and dev in SPLITS:
        return read_training_trees(corpus, dev, data_dir, encoding, None)[0]
    return read_training_trees(dev, "dev", data_dir, encoding, None)[0]


def fit_model(
    estimator: Any,
    trees: list,
    scheme: str,
    *,
    dev_trees: list | None = None,
    checkpoints: Path | None = None,
    resume: bool = False,
    note: Callable[[str], object] | None = None,
) -> ParsingModel:
    """Fit ``estimator`` on ``trees`` and return its model: what ``train`` and the spaCy
    component's ``initialize`` both do.

    An estimator that keeps checkpoints (split-merge) keeps one per cycle in
    ``checkpoints`` when given a folder, and with ``resume`` goes on from its last
    complete cycle (``note`` is told from where). Given ``dev_trees``, an estimator
    that chooses on them (split-merge: its cycle) scores them by EVALB F1.
    """
    from .decode import Parser
    from .evaluation.parsing import f1_scorer

    if checkpoints is not None and "checkpoint_dir" in estimator.get_params():
        if resume and note is not None:
            note(f"resuming {_resumed_from(checkpoints, estimator)} ({checkpoints})")
        estimator.set_params(checkpoint_dir=str(checkpoints))
        scorer = f1_scorer(Parser, scheme)
        return estimator.fit(trees, dev_trees, resume=resume, dev_scorer=scorer).model_
    if dev_trees is None:
        return estimator.fit(trees).model_
    return estimator.fit(trees, dev_trees, dev_scorer=f1_scorer(Parser, scheme)).model_


def _resumed_from(folder: Path, estimator: Any) -> str:
    """Where a resumed fit goes on from, per seed for a product of seeds."""
    n_models = estimator.get_params().get("n_models", 1)
    cycles = checkpointed_cycles(folder, n_models)
    if n_models > 1:
        return "the seeds from " + ", ".join(
            f"{seed}: cycle {cycle}" if cycle else f"{seed}: the start"
            for seed, cycle in cycles.items()
        )
    cycle = next(iter(cycles.values()))
    return f"from cycle {cycle}" if cycle else "from the start: no checkpoint"


def _labeller_wanted(asked: bool | None, trees, scheme: str) -> bool:
    """A labeller that the recipe brings (not ``--function-labeller``) is left out for
    a treebank without function tags (the summary says so): nothing to learn."""
    from .estimators.function_labels import has_function_tags

    return bool(asked) or has_function_tags(trees, scheme)
