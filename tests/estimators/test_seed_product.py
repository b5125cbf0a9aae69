"""SeedProduct: split-merge grammars from consecutive seeds, joined into one ensemble."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.estimators import clone, seed_product
from spacy_lpcfg.estimators.em import ShardedTreebank
from spacy_lpcfg.estimators.seed_product import SeedProduct
from spacy_lpcfg.estimators.split_merge import SplitMergeEstimator
from spacy_lpcfg.grammar.model import ENSEMBLE
from spacy_lpcfg.recipes import RECIPES, Recipe

SETTINGS = {"n_cycles": 1, "em_iterations": 2, "merge_em_iterations": 1}


@pytest.fixture(scope="module")
def ptb_150(load_corpus):
    return load_corpus("ptb_sample", "train", keep_functions=False)[:150]


@pytest.fixture(scope="module")
def product(ptb_150):
    estimator = SeedProduct(estimator=SplitMergeEstimator(**SETTINGS), n_models=2, random_state=5)
    return estimator.fit(ptb_150)


def test_members_are_the_grammars_of_consecutive_seeds(product, ptb_150):
    assert product.seeds_ == [5, 6]
    model = product.model_
    grammars = [model.grammar] + [model.extra_grammars[k] for k in model.training[ENSEMBLE]]
    for seed, grammar in zip([5, 6], grammars):
        alone = SplitMergeEstimator(**SETTINGS, random_state=seed).fit(ptb_150)
        assert grammar == alone.grammar_
    assert grammars[0] != grammars[1]  # the split noise differs
    assert model.decoder == "product_mbr" and not model.members
    assert all(not hasattr(member, "treebank_") for member in product.estimators_)


def test_member_processes_train_the_same_grammars(product, ptb_150):
    parallel = clone(product).set_params(n_jobs=2).fit(ptb_150)
    assert parallel.model_ == product.model_
    assert all(not hasattr(member, "treebank_") for member in parallel.estimators_)


def test_the_product_parses(product, load_corpus):
    dev = load_corpus("ptb_sample", "dev", keep_functions=False)[:5]
    parses = Parser(product.model_).parse_all(tree.words() for tree in dev)
    assert [parse.tree.words() for parse in parses] == [tree.words() for tree in dev]


def test_a_generator_draws_the_seeds():
    product = SeedProduct(n_models=3, random_state=np.random.default_rng(0))
    seeds = product.seeds()
    assert len(set(seeds)) == 3
    assert seeds == SeedProduct(n_models=3, random_state=np.random.default_rng(0)).seeds()


def test_each_seed_checkpoints_in_its_own_folder(ptb_150, tmp_path, monkeypatch):
    product = SeedProduct(
        estimator=SplitMergeEstimator(**SETTINGS), n_models=2, checkpoint_dir=tmp_path
    ).fit(ptb_150)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["seed0", "seed1"]
    calls = []
    merge_losses = ShardedTreebank.merge_losses

    def counted(self, *args):
        calls.append(1)
        return merge_losses(self, *args)

    monkeypatch.setattr(ShardedTreebank, "merge_losses", counted)
    resumed = clone(product).fit(ptb_150, resume=True)
    assert resumed.model_ == product.model_
    assert not calls  # both seeds' last cycles came from their checkpoints
    clone(product).fit(ptb_150)
    assert len(calls) == 2  # a new run trains each seed's cycle again


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fitted_models_wait_on_disk_and_come_back_the_same(
    product, ptb_150, tmp_path, monkeypatch, n_jobs
):
    seen = []
    fit = SplitMergeEstimator.fit

    def watched(self, *args, **kwargs):
        # the models of the seeds fitted before this one: on disk, not in memory
        seen.append(sorted(path.parent.name for path in tmp_path.glob("seed*/model")))
        return fit(self, *args, **kwargs)

    read_back = []
    from_disk = seed_product.ParsingModel.from_disk

    def read(path):
        read_back.append(Path(path).parent.name)
        return from_disk(path)

    monkeypatch.setattr(SplitMergeEstimator, "fit", watched)
    monkeypatch.setattr(seed_product.ParsingModel, "from_disk", read)
    stored = clone(product).set_params(checkpoint_dir=tmp_path, n_jobs=n_jobs).fit(ptb_150)
    if n_jobs == 1:  # in worker processes the patch does not apply
        assert seen == [[], ["seed0"]]
    # the workers' models all come back from disk; in one process, the last stays
    assert read_back == (["seed0"] if n_jobs == 1 else ["seed0", "seed1"])
    assert stored.model_ == product.model_
    assert not list(tmp_path.glob("seed*/model"))  # read back, then removed
    for member, alone in zip(stored.estimators_, product.estimators_):
        assert member.grammar_ == alone.grammar_ and member.model_.grammar is member.grammar_
        assert member.coarse_grammar_ == alone.coarse_grammar_
        assert member.lexicon_ is member.model_.lexicon


@pytest.mark.parametrize(
    "params",
    [{"n_models": 0}, {"n_jobs": 0}, {"estimator": SplitMergeEstimator(n_cycles=-1)}],
)
def test_bad_params_raise_before_fitting(params, ptb_150):
    with pytest.raises(ValueError, match="E011"):
        SeedProduct(**params).fit(ptb_150)


def test_recipes_build_products_of_split_merge_grammars():
    estimator = RECIPES["split_merge_product"].make_estimator()
    assert isinstance(estimator, SeedProduct) and estimator.n_models == 3
    clone_some = Recipe(estimator="clone_some", n_models=2).make_estimator()
    assert clone_some.n_models == 2 and clone_some.estimator.split == "some"
    assert isinstance(Recipe(estimator="split_merge").make_estimator(), SplitMergeEstimator)
    for estimator in ("mle", "spectral", "combined"):
        with pytest.raises(ValueError, match="n_models"):
            Recipe(estimator=estimator, n_models=2)
