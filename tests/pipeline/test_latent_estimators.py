"""The latent estimators through the component's config: spectral, clustering, noisy
ensembles, products of split-merge seeds."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from spacy.util import registry

from spacy_lpcfg.estimators import ClusteringEstimator, SpectralEstimator
from spacy_lpcfg.estimators.base import json_params
from spacy_lpcfg.estimators.inherit import InheritEstimator
from spacy_lpcfg.estimators.noise import NoisyEnsemble
from spacy_lpcfg.trees.transforms import TransformSpec

CONFIGS = Path(__file__).resolve().parents[2] / "projects" / "ptb_sample" / "configs"
N_TREES = 120  # each fit takes a second or two
TEXTS = [
    "The company said it will sell its stake.",
    "Investors bought more shares on Friday, traders said.",
    "It fell.",
]
CLUSTERING = {"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "n_states": 2}
ESTIMATORS = {
    "spectral": {"@misc": "spacy_lpcfg.SpectralEstimator.v1", "n_states": 3},
    "clustering": {**CLUSTERING, "n_states": 4, "smoothing": 0.2, "init": "random"},
    "noisy_clustering": {
        "@misc": "spacy_lpcfg.NoisyEnsemble.v1",
        "n_models": 2,
        "noise": "gaussian",
        "noise_scale": 0.3,
        "estimator": CLUSTERING,
    },
    "inherit": {"@misc": "spacy_lpcfg.InheritEstimator.v1", "n_states": 2, "em_iterations": 5},
    # a product of split-merge seeds: its model is an ensemble of split_merge grammars
    "split_merge": {
        "@misc": "spacy_lpcfg.SeedProduct.v1",
        "n_models": 2,
        "estimator": {
            "@misc": "spacy_lpcfg.SplitMergeEstimator.v1",
            "n_cycles": 1,
            "em_iterations": 5,
            "merge_em_iterations": 2,
        },
    },
}
# The component's transforms on the PTB sample, and the decoder "auto" chooses.
SPEC = TransformSpec(scheme="penn", head_rules="collins")
DECODERS = {
    "spectral": "mbr",
    "clustering": "mbr",
    "inherit": "mbr",
    "noisy_clustering": "product_mbr",
    "split_merge": "product_mbr",
}


def parses(docs) -> list:
    return [
        (
            [(span.label_, span.start, span.end) for span in doc.spans["constituents"]],
            dict(doc.spans["constituents"].attrs),
            [token.tag_ for token in doc],
        )
        for doc in docs
    ]


@pytest.fixture(scope="module", params=sorted(ESTIMATORS))
def trained(request, ptb_small, gold_examples):
    """(name, nlp): a blank English pipeline whose parser was fitted with the estimator."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"estimator": ESTIMATORS[request.param]})
    examples = gold_examples(nlp, ptb_small[0][:N_TREES])
    nlp.initialize(lambda: examples)
    return request.param, nlp


def test_latent_estimators_are_registered_entry_points():
    found = {point.name: point for point in entry_points(group="spacy_misc")}
    for name in (
        "SpectralEstimator",
        "ClusteringEstimator",
        "NoisyEnsemble",
        "SeedProduct",
        "InheritEstimator",
    ):
        key = f"spacy_lpcfg.{name}.v1"
        assert found[key].load() is registry.misc.get(key)
        assert registry.misc.get(key).__doc__


def test_latent_estimators_expose_every_parameter_but_transform_and_language():
    import inspect

    for name, cls in [
        ("SpectralEstimator", SpectralEstimator),
        ("ClusteringEstimator", ClusteringEstimator),
        ("NoisyEnsemble", NoisyEnsemble),
        ("InheritEstimator", InheritEstimator),
    ]:
        function = registry.misc.get(f"spacy_lpcfg.{name}.v1")
        params = inspect.signature(function).parameters
        # the parameters as models record them: a lexicon's settings by their own names
        assert set(params) == set(json_params(cls())) - {"transform", "language"}
        # the same defaults, so that an empty block is the estimator's default
        made = function()
        defaults = {k: v for k, v in cls().get_params(deep=False).items() if k in params}
        if name == "NoisyEnsemble":
            assert isinstance(made.estimator, ClusteringEstimator)  # never None: see below
            defaults.pop("estimator")
        made_params = made.get_params(deep=False)
        assert {key: made_params[key] for key in defaults} == defaults, name


def test_latent_estimators_fit_with_the_components_transforms(trained, ptb_small):
    name, nlp = trained
    parser = nlp.get_pipe("lpcfg_parser")
    model = parser.parsing_model
    assert model.estimator == name
    assert model.transform == SPEC and model.language == "en"
    assert not hasattr(parser.estimator, "model_")  # the configured estimator stays unfitted
    assert {"NP-SBJ", "VP", "S"} <= set(parser.labels)
    if name == "noisy_clustering":
        # the members got the component's transform too, and all of them are saved
        assert model.params["estimator"]["transform"] == SPEC.to_dict()
        assert model.params["estimator"]["language"] == "en"
        assert model.training["ensemble"] == [1]
    else:
        assert max(model.grammar.n_states) > 1


def test_latent_estimators_parse_with_the_models_decoder(trained):
    name, nlp = trained
    parser = nlp.get_pipe("lpcfg_parser")
    assert parser.decoder == "auto" and parser.parser.decoder == DECODERS[name]
    docs = list(nlp.pipe(TEXTS))
    for doc in docs:
        spans = doc.spans["constituents"]
        assert len(spans) > 0 and all(token.tag_ for token in doc)
        assert spans[0].start == 0 and spans[0].end == len(doc)  # the sentence's root phrase
    assert next(docs[0].sents)._.parse_string.startswith("(S ")


def test_latent_estimators_survive_to_disk_and_to_bytes(trained, tmp_path):
    name, nlp = trained
    expected = parses(nlp.pipe(TEXTS))
    nlp.to_disk(tmp_path / name)
    loaded = spacy.load(tmp_path / name)  # validates the saved estimator block, nested too
    estimator = loaded.get_pipe("lpcfg_parser").estimator
    assert repr(estimator) == repr(nlp.get_pipe("lpcfg_parser").estimator)
    assert parses(loaded.pipe(TEXTS)) == expected
    original = nlp.get_pipe("lpcfg_parser").parsing_model
    assert loaded.get_pipe("lpcfg_parser").parsing_model == original

    fresh = spacy.blank("en")
    fresh.add_pipe("sentencizer")
    fresh.add_pipe("lpcfg_parser", config={"estimator": ESTIMATORS[name]})
    fresh.from_bytes(nlp.to_bytes())
    assert parses(fresh.pipe(TEXTS)) == expected
    assert fresh.get_pipe("lpcfg_parser").parsing_model == original


# A decoder other than auto's (a signed spectral grammar has none but MBR's).
OVERRIDES = {
    "spectral": "mbr",
    "clustering": "max_rule",
    "inherit": "max_rule",
    "noisy_clustering": "product",
    "split_merge": "product",
}


def test_latent_estimators_an_explicit_decoder_wins(trained, tmp_path):
    name, nlp = trained
    nlp.to_disk(tmp_path / name)
    overrides = {"components": {"lpcfg_parser": {"decoder": OVERRIDES[name]}}}
    loaded = spacy.load(tmp_path / name, config=overrides)
    assert loaded.get_pipe("lpcfg_parser").parser.decoder == OVERRIDES[name]
    assert all(len(doc.spans["constituents"]) for doc in loaded.pipe(TEXTS))


def test_latent_estimators_auto_decoder_of_a_treebank_grammar(ptb_pipeline_dir):
    parser = spacy.load(ptb_pipeline_dir).get_pipe("lpcfg_parser")
    assert parser.parser.decoder == "max_rule"


@pytest.mark.parametrize(
    "estimator, message",
    [
        ({"@misc": "spacy_lpcfg.SpectralEstimator.v1", "n_states": "x"}, "n_states"),
        ({"@misc": "spacy_lpcfg.SpectralEstimator.v1", "n_states": 2.5}, "n_states"),
        ({"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "n_states": {"NP": "x"}}, "n_states"),
        ({"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "init": "best"}, "init"),
        ({"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "smoothing": "high"}, "smoothing"),
        ({"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "transform": {}}, "transform"),
        ({"@misc": "spacy_lpcfg.NoisyEnsemble.v1", "noise": "pink"}, "noise"),
        ({"@misc": "spacy_lpcfg.NoisyEnsemble.v1", "n_models": "many"}, "n_models"),
        (
            {"@misc": "spacy_lpcfg.NoisyEnsemble.v1", "estimator": {**CLUSTERING, "n_states": "x"}},
            "n_states",
        ),
    ],
)
def test_latent_estimators_config_rejects_bad_values(estimator, message):
    with pytest.raises(ConfigValidationError, match=message):
        spacy.blank("en").add_pipe("lpcfg_parser", config={"estimator": estimator})


def test_latent_estimators_ensemble_members_are_clustering_models():
    estimator = {
        "@misc": "spacy_lpcfg.NoisyEnsemble.v1",
        "estimator": {"@misc": "spacy_lpcfg.SpectralEstimator.v1"},
    }
    with pytest.raises(ValueError, match="E011.*ClusteringEstimator"):
        spacy.blank("en").add_pipe("lpcfg_parser", config={"estimator": estimator})


def test_latent_estimators_n_states_per_symbol():
    estimator = {"@misc": "spacy_lpcfg.ClusteringEstimator.v1", "n_states": {"NP^S": 4}}
    parser = spacy.blank("en").add_pipe("lpcfg_parser", config={"estimator": estimator})
    assert parser.estimator.n_states == {"NP^S": 4}


def test_latent_estimators_project_config_resolves():
    config = spacy.util.load_config(CONFIGS / "clustering.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    estimator = nlp.get_pipe("lpcfg_parser").estimator
    assert isinstance(estimator, ClusteringEstimator) and estimator.n_states == 16


def test_latent_estimators_project_ensemble_config_is_the_recommended_recipe():
    """projects/ptb_sample's default: 8 noisy clustering m=16 members, v=1, function tags kept."""
    config = spacy.util.load_config(CONFIGS / "ensemble.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    parser = nlp.get_pipe("lpcfg_parser")
    ensemble = parser.estimator
    assert isinstance(ensemble, NoisyEnsemble)
    assert (ensemble.n_models, ensemble.noise, ensemble.noise_scale) == (8, "gaussian", 0.3)
    assert isinstance(ensemble.estimator, ClusteringEstimator)
    assert ensemble.estimator.n_states == 16
    transforms = parser.transforms  # the config names the recipe's transforms
    assert transforms["v_markov"] == 1 and transforms["keep_functions"] is True


SPLIT_MERGE = {
    "@misc": "spacy_lpcfg.SplitMergeEstimator.v1",
    "n_cycles": 2,
    "em_iterations": 5,
    "merge_em_iterations": 2,
}


def test_a_dev_corpus_chooses_the_split_merge_cycle(ptb_small, gold_examples, data_dir):
    """[initialize.components.lpcfg_parser.dev_corpus], a reader block: split-merge parses
    the dev Docs after each cycle and keeps the best cycle, as `train --dev` does."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"estimator": SPLIT_MERGE})
    nlp.config["initialize"]["components"]["lpcfg_parser"] = {
        "dev_corpus": {
            "@readers": "spacy_lpcfg.TreebankCorpus.v1",
            "path": "ptb_sample",
            "split": "dev",
            "data_dir": str(data_dir),
            "limit": 10,
        }
    }
    examples = gold_examples(nlp, ptb_small[0][:120])
    nlp.initialize(lambda: examples)
    history = nlp.get_pipe("lpcfg_parser").parsing_model.training["history"]
    scores = history["dev_f1"]
    assert len(scores) == 2 and all(0 < score <= 100 for score in scores)
    assert history["best_cycle"] == 1 + scores.index(max(scores))


def test_a_dev_corpus_needs_an_estimator_that_uses_it(ptb_small, gold_examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"estimator": ESTIMATORS["clustering"]})
    train, dev = ptb_small
    examples = gold_examples(nlp, train[:50])
    read = []

    def training():  # checks come before any data is read
        read.append(1)
        return examples

    with pytest.raises(ValueError, match=r"E716.*ClusteringEstimator"):
        nlp.get_pipe("lpcfg_parser").initialize(
            training, nlp=nlp, dev_corpus=lambda pipeline: gold_examples(pipeline, dev)
        )
    with pytest.raises(ValueError, match="E717"):
        nlp.get_pipe("lpcfg_parser").initialize(training, dev_corpus=lambda _: [])
    assert not read
