"""``spacy-lpcfg train --function-labeller``: the labeller saved with the model, its
function tags in ``parse`` and ``test`` output, kept by ``combine``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.grammar.model import ParsingModel

runner = CliRunner()
LIMIT = 200


def _invoke(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


@pytest.fixture(scope="module")
def labelled_dir(data_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "labelled"
    result = _invoke(
        "train", "ptb_sample", path, "--data-dir", data_dir, "--limit", LIMIT,
        "--estimator", "mle", "--no-functions", "--function-labeller", "--json", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["function_labeller"] is True
    return path


def test_train_saves_the_labeller_and_test_scores_its_tags(labelled_dir, data_dir):
    model = ParsingModel.from_disk(labelled_dir)
    assert model.labeller is not None and not model.transform.keep_functions
    assert model.function_labels == "auto" and model.training["trees"] == LIMIT
    result = _invoke(
        "test", labelled_dir, "ptb_sample", "--split", "dev", "--limit", 30,
        "--data-dir", data_dir, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["function_tag_fscore"] > 50.0  # the grammar alone: 0


def test_parse_prints_the_labellers_tags(labelled_dir):
    result = _invoke("parse", labelled_dir, input="The company said it will sell its stake .\n")
    assert result.exit_code == 0, result.output
    assert "(NP-SBJ " in result.stdout


def test_combine_keeps_the_labeller(labelled_dir, data_dir, tmp_path):
    other = tmp_path / "left"
    result = _invoke(
        "train", "ptb_sample", other, "--data-dir", data_dir, "--limit", 50,
        "--estimator", "mle", "--binarization", "left", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _invoke("combine", other, labelled_dir, tmp_path / "both").exit_code == 0
    combined = ParsingModel.from_disk(tmp_path / "both")
    assert combined.labeller == ParsingModel.from_disk(labelled_dir).labeller
    assert combined.members and all(part.labeller is None for part in combined.parts)


@pytest.mark.parametrize(
    "options,message",
    [
        (["--function-labels", "both"], "--function-labels must be one of auto, grammar, labeller"),
        (["--function-labeller", "--estimator", "ccm"], "--function-labeller needs a grammar"),
    ],
)
def test_train_refuses_bad_labeller_options_before_any_work(tmp_path, options, message):
    result = _invoke("train", tmp_path / "no_corpus.mrg", tmp_path / "model", *options)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and not (tmp_path / "model").exists()


def test_train_fits_the_labeller_before_the_grammar_and_attaches_the_same_one(
    data_dir, tmp_path, monkeypatch
):
    """Fitted first, the labeller's solver arrays are freed before the grammar's fit,
    so training peaks at the larger of the two; the model is the one fitted after."""
    from spacy_lpcfg import training
    from spacy_lpcfg.estimators import function_labels

    events = []
    fit_tagger, fit_model = function_labels.fit_function_tagger, training.fit_model
    monkeypatch.setattr(
        function_labels,
        "fit_function_tagger",
        lambda *a, **k: events.append("labeller") or fit_tagger(*a, **k),
    )
    monkeypatch.setattr(
        training, "fit_model", lambda *a, **k: events.append("grammar") or fit_model(*a, **k)
    )
    result = _invoke(
        "train", "ptb_sample", tmp_path / "m", "--data-dir", data_dir, "--limit", LIMIT,
        "--estimator", "mle", "--no-functions", "--function-labeller", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert events == ["labeller", "grammar"]
    model = ParsingModel.from_disk(tmp_path / "m")
    trees = training.read_training_trees("ptb_sample", "train", data_dir, None, LIMIT)[0]
    after = function_labels.attach_function_labeller(model.with_function_labeller(None), trees)
    assert model.labeller is not None and after.labeller is not None
    assert model.labeller.coef.tobytes() == after.labeller.coef.tobytes()
    assert model.labeller.features == after.labeller.features
    assert model.labeller.classes == after.labeller.classes
    assert model.labeller.intercept.tobytes() == after.labeller.intercept.tobytes()
