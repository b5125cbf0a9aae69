"""Split-merge grammars trained from different seeds, decoded as one product (Petrov 2010).

EM climbs to a different local optimum from each seed's split noise, and the
grammars err differently. They share their transforms, symbols, rules and
vocabulary (those of the training trees), so ``grammar.model.combine_models``
joins them into one ensemble: pruned once per sentence, the members after the
first parsing only what it leaves (``decode.charts.ensemble_charts``), decoded by
``product_mbr``. On ptb_sample, 3 seeds are more accurate than the Berkeley parser at
more than twice its speed, 8 seeds a little more accurate still but slower
(BENCHMARKS.md "Products of split-merge seeds against the Berkeley parser
(ptb_sample)", "Ensembles and products: grammars pruned by the first").

Each seed trains in its own joblib process (``n_jobs`` at a time): one fit is
single-threaded, and a process keeps each seed's memory apart. With a
``checkpoint_dir`` (what ``train`` gives), each fitted member's model waits on disk
in its seed folder until the last one is fitted, so that training peaks at one seed's
fit rather than at that plus the models of the seeds before it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import CEILINGS, LATENT, SPLIT_MERGE
from ..grammar.model import ParsingModel, combine_models
from ..memory import release_freed_memory
from ..progress import progress, quiet
from ..trees.tree import Tree
from .base import BaseEstimator, check_random_state, clone, drop_training_data, int_range
from .split_merge import DevScorer, SplitMergeEstimator

SEED_FOLDER = "seed{}"  # a member's checkpoints, under the product's checkpoint_dir
MEMBER_MODEL = "model"  # a fitted member's model, in its seed folder until all are fitted


class SeedProduct(BaseEstimator):
    """K split-merge grammars from K seeds, one product model.

    estimator (SplitMergeEstimator | None): every member's settings (its
        ``random_state`` and ``checkpoint_dir`` are replaced). Defaults to
        SplitMergeEstimator().
    n_models (int): K. Defaults to ``defaults.SPLIT_MERGE.n_models`` (3).
    n_jobs (int): members trained at once, each in its own process. Defaults to 1.
    random_state (int | np.random.Generator | None): an int r seeds the members with
        r, r + 1, ... r + K - 1 (member 0 is the grammar ``SplitMergeEstimator(
        random_state=r)`` trains alone); a generator draws K seeds.
    checkpoint_dir (str | Path | None): each member checkpoints its cycles in its own
        folder ``seed0``, ``seed1``... under this one. Defaults to None.

    Fitted attributes: ``estimators_`` (the fitted members, without their
    ``treebank_`` and ``em_grammar_``), ``seeds_`` (list[int]), ``model_``
    (ParsingModel: the ensemble). With a ``checkpoint_dir``, the members' models are
    read back from the disk copies their fits left there (``MEMBER_MODEL``).
    """

    name = "split_merge_product"
    _parameter_constraints = {
        "n_models": [int_range(1, CEILINGS.n_models)],
        "n_jobs": [int_range(1, CEILINGS.n_jobs)],
    }
    estimator: SplitMergeEstimator | None
    n_models: int
    n_jobs: int
    random_state: int | np.random.Generator | None
    checkpoint_dir: str | Path | None

    def __init__(
        self,
        *,
        estimator: SplitMergeEstimator | None = None,
        n_models: int = SPLIT_MERGE.n_models,
        n_jobs: int = 1,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        checkpoint_dir: str | Path | None = None,
    ):
        self._store_params(locals())

    def _check_params(self) -> None:
        super()._check_params()
        self._member(0)._check_params()

    def seeds(self) -> list[int]:
        """The members' seeds (a generator ``random_state`` advances)."""
        if isinstance(self.random_state, (int, np.integer)):
            return [int(self.random_state) + k for k in range(self.n_models)]
        generator = check_random_state(self.random_state)
        return [int(seed) for seed in generator.integers(0, 2**31 - 1, size=self.n_models)]

    def _member(self, seed: int, index: int = 0) -> SplitMergeEstimator:
        member = SplitMergeEstimator() if self.estimator is None else clone(self.estimator)
        folder = None
        if self.checkpoint_dir is not None:
            folder = str(Path(self.checkpoint_dir) / SEED_FOLDER.format(index))
        member.set_params(random_state=seed, checkpoint_dir=folder)
        return member

    def fit(
        self,
        trees: Iterable[Tree],
        dev_trees: Iterable[Tree] | None = None,
        *,
        resume: bool = False,
        dev_scorer: DevScorer | None = None,
    ) -> SeedProduct:
        """Fit every member on ``trees`` and join them (arguments as for
        ``SplitMergeEstimator.fit``; ``resume`` goes on from each member's checkpoints).
        RETURNS (SeedProduct): self."""
        self._check_params()
        trees = list(trees)
        dev = None if dev_trees is None else list(dev_trees)
        seeds = self.seeds()
        members = [self._member(seed, k) for k, seed in enumerate(seeds)]
        options = {"resume": resume, "dev_scorer": dev_scorer}
        if self.n_jobs == 1 or len(members) == 1:
            bar = progress(members, desc="seeds", unit="model")
            last = len(members) - 1  # no later fit to make room for: kept in memory
            fitted = [
                _set_aside(member.fit(trees, dev, **options), to_disk=k < last)
                for k, member in enumerate(bar)
            ]
        else:
            from joblib import Parallel, delayed

            jobs = Parallel(n_jobs=min(self.n_jobs, len(members)), return_as="generator")(
                delayed(_fit_quietly)(member, trees, dev, options) for member in members
            )
            fitted = list(progress(jobs, desc="seeds", total=len(members), unit="model"))
        self.estimators_ = [_taken_back(member) for member in fitted]
        self.seeds_ = seeds
        models = [member.model_ for member in self.estimators_]
        self.model_ = models[0] if len(models) == 1 else combine_models(models)
        return self


def _fit_quietly(
    member: SplitMergeEstimator, trees: list[Tree], dev: list[Tree] | None, options: dict[str, Any]
) -> SplitMergeEstimator:
    """Fit in a worker process, whose bars would garble the parent's."""
    with quiet():
        member.fit(trees, dev, **options)
        return _set_aside(member)


# What a fitted member holds of its model, all read back from the disk copy.
_MODEL_ATTRIBUTES = ("model_", "grammar_", "coarse_grammar_", "lexicon_")


def _set_aside(member: SplitMergeEstimator, *, to_disk: bool = True) -> SplitMergeEstimator:
    """The fitted member without its training nodes and EM grammar (K copies of the
    treebank would otherwise stay in memory; the product needs the models only) and,
    ``to_disk`` and when it has a checkpoint folder, without its model, written there
    instead."""
    drop_training_data(member)
    if to_disk and member.checkpoint_dir is not None:
        with quiet():
            member.model_.to_disk(Path(member.checkpoint_dir) / MEMBER_MODEL)
        for name in _MODEL_ATTRIBUTES:
            delattr(member, name)
    release_freed_memory()  # what the fit freed, before the next fit or the product
    return member


def _taken_back(member: SplitMergeEstimator) -> SplitMergeEstimator:
    """The member with its model again, read from where ``_set_aside`` wrote it (the
    copy is removed: the model's arrays hold the bytes read)."""
    if hasattr(member, "model_"):
        return member
    folder = Path(member.checkpoint_dir) / MEMBER_MODEL  # type: ignore[arg-type]
    model = ParsingModel.from_disk(folder)
    shutil.rmtree(folder, ignore_errors=True)
    assert model.coarse_grammar is not None  # a split-merge model's, written with it
    member.model_, member.lexicon_ = model, model.lexicon
    member.grammar_, member.coarse_grammar_ = model.grammar, model.coarse_grammar
    return member
