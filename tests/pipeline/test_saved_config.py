"""A pipeline made from a model directory saves a config that says what the model is
(its estimator block, transforms, function labeller) and no path of the machine that
made it; the folder loads anywhere and parses as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import spacy
from spacy.util import load_config, registry

from spacy_lpcfg.estimators import CombinedEstimator, MLEEstimator, SplitMergeEstimator
from spacy_lpcfg.estimators.function_labels import attach_function_labeller
from spacy_lpcfg.estimators.noise import NoisyEnsemble
from spacy_lpcfg.estimators.seed_product import SeedProduct
from spacy_lpcfg.grammar.model import ParsingModel, combine_models
from spacy_lpcfg.trees.transforms import TransformSpec

TEXT = "The cat sat on the mat. Then it slept."


@pytest.fixture(scope="module")
def trees(load_corpus):
    return load_corpus("ptb_sample", "train")[:150]


def _mle(trees, **transform) -> ParsingModel:
    spec = TransformSpec(**transform)
    return MLEEstimator(rare_threshold=2, transform=spec).fit(trees).model_


def _seed_product(trees) -> ParsingModel:
    member = SplitMergeEstimator(n_cycles=1, em_iterations=2, merge_em_iterations=1)
    return SeedProduct(estimator=member, n_models=2, random_state=5).fit(trees).model_


def _combined(trees) -> ParsingModel:
    right = _mle(trees, binarization="right", v_markov=2)
    left = _mle(trees, binarization="left", v_markov=1, keep_functions=False)
    return combine_models([right, left], decoder="product")


def _noisy(trees) -> ParsingModel:
    return NoisyEnsemble(n_models=2, random_state=3).fit(trees).model_


def _labelled(trees) -> ParsingModel:
    return attach_function_labeller(_mle(trees, keep_functions=False), trees)


MODELS = {
    "mle": (_mle, MLEEstimator),
    "seed_product": (_seed_product, SeedProduct),
    "combined": (_combined, CombinedEstimator),
    "noisy": (_noisy, NoisyEnsemble),
    "labelled": (_labelled, MLEEstimator),
}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_a_saved_pipeline_says_what_its_model_is(kind, trees, tmp_path, monkeypatch):
    make, estimator_class = MODELS[kind]
    model = make(trees)
    source = tmp_path / "machine" / "models" / kind
    model.to_disk(source)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"model": str(source)})
    nlp.initialize()
    parses = [sent._.parse_string for sent in nlp(TEXT).sents]
    nlp.to_disk(tmp_path / "pipeline")

    text = (tmp_path / "pipeline" / "config.cfg").read_text(encoding="utf-8")
    assert str(tmp_path) not in text and "machine" not in text
    settings = load_config(tmp_path / "pipeline" / "config.cfg")["components"]["lpcfg_parser"]
    assert settings["model"] is None
    assert settings["function_labeller"] is (model.labeller is not None)
    first = model.parts[0].transform.to_dict()
    assert settings["transforms"] == {
        key: value for key, value in first.items() if key not in ("version", "marked_phrases")
    }
    estimator = registry.resolve({"x": settings["estimator"]})["x"]
    assert type(estimator) is estimator_class
    if kind == "seed_product":
        assert estimator.n_models == 2 and estimator.random_state == 5
        assert estimator.estimator.n_cycles == 1 and estimator.estimator.em_iterations == 2
    if kind == "combined":
        assert [type(member) for member in estimator.estimators] == [MLEEstimator] * 2
        assert [dict(m) for m in estimator.member_transforms] == [
            {"binarization": "right", "h_markov": 1, "v_markov": 2, "keep_functions": True},
            {"binarization": "left", "h_markov": 1, "v_markov": 1, "keep_functions": False},
        ]
        assert estimator.decoder == "product"
    if kind == "noisy":
        assert estimator.n_models == 2 and estimator.random_state == 3
    if kind in ("mle", "labelled"):
        assert estimator.rare_threshold == 2

    moved = tmp_path / "elsewhere" / "pipeline"
    shutil.copytree(tmp_path / "pipeline", moved)
    shutil.rmtree(tmp_path / "machine")
    monkeypatch.chdir(moved.parent)
    loaded = spacy.load(moved)
    assert [sent._.parse_string for sent in loaded(TEXT).sents] == parses
    assert loaded.config["components"]["lpcfg_parser"]["model"] is None


def test_a_model_read_on_first_use_is_described_then(trees, tmp_path):
    _mle(trees).to_disk(tmp_path / "model")
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": str(tmp_path / "model")})
    assert nlp.config["components"]["lpcfg_parser"]["model"] == str(tmp_path / "model")
    nlp("The cat sat .")
    settings = nlp.config["components"]["lpcfg_parser"]
    assert settings["model"] is None
    assert settings["estimator"]["@misc"] == "spacy_lpcfg.MLEEstimator.v1"


def test_a_pipeline_fitted_from_its_config_keeps_that_config(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp("The cat sat .")
    saved = load_config(Path(ptb_pipeline_dir) / "config.cfg")["components"]["lpcfg_parser"]
    assert nlp.config["components"]["lpcfg_parser"]["estimator"] == saved["estimator"]


def test_the_combined_estimator_block_trains_from_a_config(trees, gold_examples):
    config = """
[x]
@misc = "spacy_lpcfg.CombinedEstimator.v1"
member_transforms = [{"binarization": "right"}, {"binarization": "left"}]

[x.*.right]
@misc = "spacy_lpcfg.MLEEstimator.v1"

[x.*.left]
@misc = "spacy_lpcfg.MLEEstimator.v1"
rare_threshold = 2
"""
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"estimator": spacy.util.load_config_from_str(config)["x"]})
    nlp.initialize(lambda: gold_examples(nlp, trees[:100]))
    model = nlp.get_pipe("lpcfg_parser")._model
    assert len(model.parts) == 2
    assert [part.transform.binarization for part in model.parts] == ["right", "left"]
    assert nlp("The cat sat .").spans["constituents"]


def test_the_component_decodes_a_combined_model_by_dual_decomposition(trees, tmp_path):
    """decoder = "dual", as ``spacy-lpcfg test --decoder dual`` takes it."""
    from spacy_lpcfg.decode import Parser

    combined = _combined(trees)
    combined.to_disk(tmp_path / "combined")
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": str(tmp_path / "combined"), "decoder": "dual"})
    doc = nlp("The cat sat on the mat .")
    expected = Parser(combined, decoder="dual").parse([token.text for token in doc]).tree
    found = [(span.label_, span.start, span.end) for span in doc.spans["constituents"]]
    assert found == expected.spans(include_root=False)
    with pytest.raises(ValueError, match="decoder"):
        spacy.blank("en").add_pipe("lpcfg_parser", config={"decoder": "no_such_decoder"})
