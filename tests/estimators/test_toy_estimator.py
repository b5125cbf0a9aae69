"""An estimator written outside the package: registered, it trains, saves, loads and
parses through the CLI and through spaCy, by its name alone (ARCHITECTURE.md, "Adding
an estimator"). Also the nested ``lexicon`` parameter and the flat settings it
replaced."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace

import pytest
import spacy
from typer.testing import CliRunner

import spacy_lpcfg.pipeline.registry  # noqa: F401  (registers spacy_lpcfg.estimator.v1)
from spacy_lpcfg.cli import app
from spacy_lpcfg.estimators import MLEEstimator, TreebankEstimator, register_estimator
from spacy_lpcfg.estimators.base import Number, as_transform_spec, json_params
from spacy_lpcfg.estimators.mle import count_treebank, one_state_grammar
from spacy_lpcfg.estimators.registry import ESTIMATORS, estimator_names, get_estimator
from spacy_lpcfg.grammar.lexicon import LexiconSpec
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.pipeline.described import estimator_block
from spacy_lpcfg.recipes import Recipe
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformSpec

runner = CliRunner()


# The whole estimator: a class with a ``name``, its parameters, their constraints, fit.
class ToyEstimator(TreebankEstimator):
    """Relative frequencies of rule counts raised to ``power`` (1: the MLE grammar)."""

    name = "toy"
    _parameter_constraints = {"power": [Number("a number > 0", low=1e-12)]}

    def __init__(
        self,
        *,
        power: float = 1.0,
        transform: TransformSpec | dict | None = TransformSpec(),
        lexicon: LexiconSpec | dict | None = LexiconSpec(),
        language: str = "en",
    ):
        self._store_params(locals())

    def fit(self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None):
        self._check_params()
        spec, counts = count_treebank(trees, as_transform_spec(self.transform))
        lexicon = self._make_lexicon().fit_counts(counts.tokens)
        powered = replace(
            counts,
            binary_counts=counts.binary_counts**self.power,
            unary_counts=counts.unary_counts**self.power,
        )
        self.grammar_ = one_state_grammar(counts, *powered.relative_frequencies(), lexicon)
        self.model_ = self._make_model(self.grammar_, lexicon, spec, counts)
        return self


@pytest.fixture
def toy():
    """ToyEstimator registered for one test (``@register_estimator`` over the class
    does the same at import)."""
    register_estimator(ToyEstimator)
    yield ToyEstimator
    ESTIMATORS.pop("toy")


def test_toy_is_registered_by_its_name(toy):
    assert "toy" in estimator_names() and get_estimator("toy") is toy
    assert type(Recipe(estimator="toy").make_estimator()) is toy
    with pytest.raises(ValueError, match=r"E011.*'n_models': 1, unless"):
        Recipe(estimator="toy", n_models=2)


def test_toy_constraints_and_lexicon_are_checked_at_fit(toy, ptb_small):
    with pytest.raises(ValueError, match=r"E011.*0.0 for 'power': a number > 0"):
        toy(power=0.0).fit(ptb_small[0][:5])
    with pytest.raises(ValueError, match=r"E011.*'rare_threshold'"):
        toy(lexicon={"rare_threshold": -1}).fit(ptb_small[0][:5])


def test_toy_with_power_one_is_the_mle_grammar(toy, ptb_small):
    trees = ptb_small[0][:60]
    assert toy().fit(trees).grammar_ == MLEEstimator().fit(trees).grammar_


def test_toy_trains_and_parses_through_the_cli(toy, tmp_path, data_dir):
    model_dir = tmp_path / "toy"
    result = runner.invoke(
        app,
        ["train", "ptb_sample", str(model_dir), "--estimator", "toy", "--limit", "40",
         "--data-dir", str(data_dir), "--json", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["estimator"] == "toy"
    cfg = json.loads((model_dir / "cfg.json").read_text())
    assert cfg["estimator"]["name"] == "toy" and cfg["estimator"]["params"]["power"] == 1.0
    text = tmp_path / "input.txt"
    text.write_text("The company said it will sell its stake .\n")
    parsed = runner.invoke(app, ["parse", str(model_dir), str(text)])
    assert parsed.exit_code == 0, parsed.output
    assert Tree.from_string(parsed.stdout.split("\n")[0]).words()[:2] == ["The", "company"]


def test_toy_trains_and_parses_through_spacy(toy, ptb_small, gold_examples, tmp_path):
    config = {
        "estimator": {
            "@misc": "spacy_lpcfg.estimator.v1",
            "name": "toy",
            "params": {"power": 0.5},
            "lexicon": {"rare_threshold": 2},
        }
    }
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("lpcfg_parser", config=config)
    assert parser.estimator.power == 0.5 and parser.estimator.rare_threshold == 2
    nlp.initialize(lambda: gold_examples(nlp, ptb_small[0][:80]))
    model = parser.parsing_model
    assert model.estimator == "toy" and model.params["rare_threshold"] == 2
    doc = nlp("The company said it will sell its stake.")
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    again = loaded("The company said it will sell its stake.")
    assert [(s.start, s.end, s.label_) for s in again.spans["constituents"]] == [
        (s.start, s.end, s.label_) for s in doc.spans["constituents"]
    ]
    # a pipeline made from the model directory names the estimator by its name
    model.to_disk(tmp_path / "model")
    block = estimator_block(ParsingModel.from_disk(tmp_path / "model"))
    assert block == {
        "@misc": "spacy_lpcfg.estimator.v1",
        "name": "toy",
        "params": {"power": 0.5},
        "lexicon": LexiconSpec(rare_threshold=2).to_dict(),
    }
    remade = spacy.registry.resolve({"e": block})["e"]
    assert json_params(remade) == json_params(parser.estimator)


# The lexicon parameter and the flat settings it replaced -------------------------------


def test_lexicon_settings_by_their_own_names_are_the_lexicon_parameter():
    flat = MLEEstimator(rare_threshold=2, word_smoothing=0.5)
    nested = MLEEstimator(lexicon=LexiconSpec(rare_threshold=2, word_smoothing=0.5))
    assert flat.lexicon == nested.lexicon and repr(flat) == repr(nested)
    assert repr(flat) == "MLEEstimator(rare_threshold=2, word_smoothing=0.5)"
    assert json_params(flat) == json_params(nested)
    # a dict stays a dict (stored as given); the settings lay over it
    assert MLEEstimator(lexicon={"signature": "generic"}, rare_threshold=0).lexicon == {
        "signature": "generic",
        "rare_threshold": 0,
    }
    assert flat.set_params(rare_threshold=3).lexicon.rare_threshold == 3
    assert flat.get_params(deep=False)["lexicon"] == LexiconSpec(
        rare_threshold=3, word_smoothing=0.5
    )


def test_lexicon_recorded_params_keep_the_flat_names(ptb_small):
    """cfg.json records the lexicon's settings by their own names, as before it held
    them, so that older model directories and checkpoints read and compare the same."""
    trees = ptb_small[0][:40]
    nested = MLEEstimator(lexicon={"rare_threshold": 2}).fit(trees).model_
    flat = MLEEstimator(rare_threshold=2).fit(trees).model_
    assert "lexicon" not in nested.params and nested.params["rare_threshold"] == 2
    assert nested.params == flat.params and nested.grammar == flat.grammar
    assert sorted(nested.params) == list(nested.params)


def test_lexicon_block_in_a_spacy_config_fits_the_same_model(ptb_small, gold_examples):
    def fit(estimator):
        nlp = spacy.blank("en")
        nlp.add_pipe("lpcfg_parser", config={"estimator": estimator})
        nlp.initialize(lambda: gold_examples(nlp, ptb_small[0][:60]))
        return nlp.get_pipe("lpcfg_parser").parsing_model

    old = fit({"@misc": "spacy_lpcfg.MLEEstimator.v1", "rare_threshold": 2})
    new = fit(
        {"@misc": "spacy_lpcfg.estimator.v1", "name": "mle", "lexicon": {"rare_threshold": 2}}
    )
    assert new.grammar == old.grammar and new.params == old.params
