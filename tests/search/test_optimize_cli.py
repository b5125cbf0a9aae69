"""``spacy-lpcfg optimize``: a short search on a slice of ptb_sample, resume, errors."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from spacy_lpcfg import evaluate
from spacy_lpcfg.cli import app
from spacy_lpcfg.corpora import load_split, spread
from spacy_lpcfg.decode import Parser
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.search.optimize import MODEL_DIR, RECIPE_FILE, TRACE_FILE

runner = CliRunner()

SHORT = ["--limit", "300", "--dev-limit", "30", "--max-states", "4", "--max-symbols", "1"]
SHORT += ["--min-count", "1", "--n-models", "2"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def optimized(data_dir, tmp_path_factory):
    output = tmp_path_factory.mktemp("optimize") / "out"
    result = invoke("optimize", "ptb_sample", output, "--data-dir", data_dir, *SHORT, "--json")
    assert result.exit_code == 0, result.output
    return output, json.loads(result.stdout)


def read_trace(output):
    return [json.loads(line) for line in (output / TRACE_FILE).read_text().splitlines()][1:]


def test_optimize_writes_the_best_model_its_recipe_and_the_trace(optimized, data_dir):
    output, recipe = optimized
    assert json.loads((output / RECIPE_FILE).read_text()) == recipe
    records = read_trace(output)
    stages = [record["stage"] for record in records]
    assert stages[:4] == ["transforms"] * 4
    assert stages[4:] == sorted(stages[4:], key=["states", "final"].index)
    # the search scores on held-out training trees: dev chooses among the finalists only
    assert recipe["trees"] == {"search": 240, "held_out": 60, "model": 300}
    transforms = {json.dumps(r["candidate"], sort_keys=True): r["dev_f1"] for r in records[:4]}
    assert recipe["search_f1"]["transforms"] == max(transforms.values())
    assert transforms[json.dumps(recipe["transform"], sort_keys=True)] == max(transforms.values())
    states = [r["dev_f1"] for r in records if r["stage"] == "states"]
    assert recipe["search_f1"]["states"] == max(states)
    finals = [r for r in records if r["stage"] == "final"]
    kinds = [r["candidate"]["kind"] for r in finals]
    assert kinds[:2] == ["default", "single"] and "combined" in kinds and "ensemble" in kinds
    assert sorted(recipe["finalists"].values()) == sorted(r["dev_f1"] for r in finals)
    default = recipe["finalists"]["default"]
    best = max(recipe["finalists"].values())
    # the best on dev, unless it beats train's default by less than noise
    assert recipe["dev_f1"] == (default if best - default < 0.5 else best)
    model = ParsingModel.from_disk(output / MODEL_DIR)
    kind = recipe["model"]["kind"]
    if kind == "combined":  # Le Roux et al.'s four settings
        assert len(model.parts) == 4
    elif kind == "default":  # three split-merge seeds, one product
        assert model.estimator == "split_merge" and len(model.training["ensemble"]) == 2
    else:
        assert kind in ("single", "ensemble")
        assert model.transform.v_markov == recipe["transform"]["v_markov"]
    # function labels whatever the grammar keeps: from the grammar or a labeller
    keeps = any(part.transform.keep_functions for part in model.parts)
    assert keeps or model.labeller is not None
    # the model written is the finalist that scored best on dev (--dev-limit 30: every
    # k-th dev tree, about 30)
    dev = spread(load_split("ptb_sample", "dev", data_dir=data_dir), 30)
    assert 25 <= len(dev) <= 30
    assert evaluate(Parser(model), dev).fscore == pytest.approx(recipe["dev_f1"], abs=1e-9)


def test_resume_retraces_the_search_without_scoring_it_again(optimized, data_dir, monkeypatch):
    from spacy_lpcfg.search.candidates import StateCandidates

    output, recipe = optimized
    before = (output / TRACE_FILE).read_text()

    def refuse(*args, **kwargs):
        raise AssertionError("scored again")

    monkeypatch.setattr(StateCandidates, "score", refuse)
    result = invoke(
        "optimize", "ptb_sample", output, "--data-dir", data_dir, *SHORT, "--json", "--resume"
    )
    assert result.exit_code == 0, result.output
    again = json.loads(result.stdout)
    assert (output / TRACE_FILE).read_text() == before  # nothing new was scored
    for key in ("transform", "searched", "model", "dev_f1", "finalists", "search_f1"):
        assert again[key] == recipe[key], key


def test_bad_options_fail_before_any_work(tmp_path):
    for option, value in (("--beam", 0), ("--max-time", -5), ("--holdout", 1.5), ("--n-jobs", 0)):
        result = invoke("optimize", "ptb_sample", tmp_path / "out", option, value)
        assert result.exit_code == 1, (option, result.output)
        assert "Traceback" not in result.output and str(value) in result.output
        assert not (tmp_path / "out").exists()


def test_a_treebank_path_needs_dev_trees(tmp_path):
    treebank = tmp_path / "train.mrg"
    treebank.write_text("(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs))))\n")
    result = invoke("optimize", treebank, tmp_path / "out")
    assert result.exit_code == 1
    assert "--dev" in result.output and "Traceback" not in result.output


def test_a_search_on_a_sample_refits_the_choice_on_every_tree(load_corpus, tmp_path, monkeypatch):
    import importlib

    from spacy_lpcfg.estimators.clustering import ClusteringEstimator
    from spacy_lpcfg.estimators.seed_product import SeedProduct
    from spacy_lpcfg.search import optimize

    module = importlib.import_module("spacy_lpcfg.search.optimize")  # not the function
    fitted = []  # what is fitted, in order
    for owner, name, what in (
        (module, "fit_function_tagger", "labeller"),
        (ClusteringEstimator, "fit", "grammar"),
        (ClusteringEstimator, "fit_projected", "grammar"),
    ):
        original = getattr(owner, name)
        monkeypatch.setattr(
            owner, name, lambda *a, o=original, w=what, **k: fitted.append(w) or o(*a, **k)
        )
    folders = []  # where the default finalist's seeds checkpoint
    product_fit = SeedProduct.fit
    monkeypatch.setattr(
        SeedProduct, "fit", lambda self, *a, **k: folders.append(self.checkpoint_dir)
        or product_fit(self, *a, **k),
    )  # fmt: skip
    train = list(load_corpus("ptb_sample", "train")[:300])
    dev = list(load_corpus("ptb_sample", "dev")[:20])
    result = optimize(
        train,
        dev,
        transforms=[(1, False)],
        max_states=4,
        max_symbols=1,
        min_count=1,
        n_models=1,
        search_limit=100,
        output_dir=tmp_path,
    )
    # the labeller first, so that its solver's memory is gone before any grammar's
    assert fitted[0] == "labeller" and fitted.count("labeller") == 1 and "grammar" in fitted
    assert folders == [str(tmp_path / module.DEFAULT_CHECKPOINTS)]
    assert not (tmp_path / module.DEFAULT_CHECKPOINTS).exists()  # removed once fitted
    assert result.recipe["trees"] == {"search": 80, "held_out": 20, "model": 300}
    assert result.recipe["dev_f1"] == max(result.recipe["finalists"].values())
    # every third tree was searched on; the model knows the words of the others too
    # (those seen more than once: a word seen once feeds the unknown-word classes)
    sampled = {word for tree in train[::3] for word in tree.words()}
    counts = Counter(word for tree in train for word in tree.words())
    others = {word for word, count in counts.items() if count > 1} - sampled
    assert others and others <= set(result.model.lexicon.known_words)
    keeps = any(part.transform.keep_functions for part in result.model.parts)
    assert keeps != (result.model.labeller is not None)  # a labeller where none keeps them


def test_finalists_wait_on_disk_while_the_next_one_fits(load_corpus, tmp_path, monkeypatch):
    import gc
    import importlib
    import weakref

    from spacy_lpcfg.search import LatentStateSearch, optimize
    from spacy_lpcfg.search.candidates import StateCandidates

    module = importlib.import_module("spacy_lpcfg.search.optimize")
    alive = []  # (finalist, weak reference to its model), in the order fitted
    others = []  # (what, weak reference): the search, its model and every projection
    held = []  # per fit: the earlier finalists' models and the others still in memory

    def watched(what, original):
        def fit(*args, **kwargs):
            gc.collect()
            held.append([name for name, ref in alive + others if ref() is not None])
            model = original(*args, **kwargs)
            alive.append((what, weakref.ref(model)))
            return model

        return fit

    def project(self, trees, original=LatentStateSearch.project):
        projected = original(self, trees)
        others.append(("projection", weakref.ref(projected)))
        return projected

    def fit_projected(self, *args, original=LatentStateSearch.fit_projected, **kwargs):
        original(self, *args, **kwargs)
        others.extend([("search", weakref.ref(self)), ("search model", weakref.ref(self.model_))])
        return self

    monkeypatch.setattr(LatentStateSearch, "project", project)
    monkeypatch.setattr(LatentStateSearch, "fit_projected", fit_projected)
    monkeypatch.setattr(module, "_fit_default", watched("default", module._fit_default))
    monkeypatch.setattr(module, "_fit_combined", watched("combined", module._fit_combined))
    monkeypatch.setattr(StateCandidates, "model", watched("single", StateCandidates.model))
    written = []
    to_disk = ParsingModel.to_disk
    monkeypatch.setattr(
        ParsingModel, "to_disk", lambda self, path: written.append(str(path)) or to_disk(self, path)
    )
    train = list(load_corpus("ptb_sample", "train")[:150])
    dev = list(load_corpus("ptb_sample", "dev")[:10])
    options = dict(transforms=[(1, False)], max_states=2, max_symbols=1, min_count=1, n_models=1)
    result = optimize(train, dev, search_limit=60, output_dir=tmp_path, **options)
    first = [name for name, _ in alive].index("default")  # the search's models before
    assert [name for name, _ in alive[first:]] == ["default", "single", "combined"]
    # no earlier finalist's model in memory, nor the search's; the projection of every
    # training tree only while the finalist fitted on it fits
    assert held[first:] == [[], ["projection"], []]
    aside = tmp_path / module.FINALISTS
    assert str(aside / "default") in written and not aside.exists()  # removed at the end
    # the model chosen is read back from disk: the same as fitting it in memory
    again = optimize(train, dev, search_limit=60, **options)
    assert result.recipe["model"] == again.recipe["model"]
    assert result.recipe["finalists"] == again.recipe["finalists"]
    assert result.model == again.model


def test_a_treebank_without_function_tags_gets_no_labeller(load_corpus):
    from spacy_lpcfg.search import optimize

    train = list(load_corpus("ptb_sample", "train", keep_functions=False)[:150])
    dev = list(load_corpus("ptb_sample", "dev", keep_functions=False)[:10])
    result = optimize(
        train, dev, transforms=[(1, False)], max_states=2, max_symbols=1, min_count=1,
        n_models=1, search_limit=60,
    )  # fmt: skip
    assert result.model.labeller is None and "function_labels" not in result.recipe["model"]


def test_optimize_on_a_local_dask_cluster_chooses_as_one_process(optimized, data_dir, tmp_path):
    """``--scheduler``: two worker processes of a ``dask.distributed.LocalCluster`` score
    the candidates; every score of the trace, the choice and the model are those of
    the run in this process."""
    distributed = pytest.importorskip("distributed")
    serial_output, serial_recipe = optimized
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        output = tmp_path / "out"
        result = invoke(
            "optimize", "ptb_sample", output, "--data-dir", data_dir, *SHORT, "--json",
            "--scheduler", cluster.scheduler_address,
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    recipe = json.loads(result.stdout)

    def scored(records):
        return [(r["stage"], r["candidate"], r["dev_f1"]) for r in records]

    assert scored(read_trace(output)) == scored(read_trace(serial_output))
    keys = ("transform", "finalists", "dev_f1", "trees")
    assert {k: recipe[k] for k in keys} == {k: serial_recipe[k] for k in keys}
    assert (output / MODEL_DIR / "cfg.json").read_text() == (
        serial_output / MODEL_DIR / "cfg.json"
    ).read_text()
