"""Training and evaluating through spaCy's own commands (spacy train / evaluate / assemble)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.grammar import ParsingModel
from spacy_lpcfg.pipeline import trees_to_docbin
from spacy_lpcfg.trees.transforms import TransformSpec

CONFIG = Path(__file__).resolve().parents[2] / "projects" / "ptb_sample" / "configs" / "mle.cfg"


def spacy_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-m", "spacy", *args], capture_output=True, text=True, cwd=cwd
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.fixture(scope="module")
def corpus(ptb_small, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus")
    train, dev = ptb_small
    trees_to_docbin(train, "penn").to_disk(path / "train.spacy")
    trees_to_docbin(dev, "penn").to_disk(path / "dev.spacy")
    return path


def test_training_spacy_train_and_evaluate_agree(corpus, ptb_small, tmp_path):
    paths = ["--paths.train", str(corpus / "train.spacy"), "--paths.dev", str(corpus / "dev.spacy")]
    spacy_cli("train", str(CONFIG), "--output", str(tmp_path / "training"), *paths, cwd=tmp_path)
    best = tmp_path / "training" / "model-best"
    performance = json.loads((best / "meta.json").read_text())["performance"]
    assert 0.5 < performance["constituents_f"] < 1.0
    assert {"constituents_func_f", "constituents_per_label"} <= set(performance)
    # The closed-form fit: exactly the estimator's grammar on the training trees.
    expected = MLEEstimator(transform=TransformSpec(scheme="penn"), language="en")
    model = ParsingModel.from_disk(best / "lpcfg_parser" / "model")
    assert model == expected.fit(ptb_small[0]).model_

    out = spacy_cli(
        "evaluate", str(best), str(corpus / "dev.spacy"), "--output", str(tmp_path / "dev.json"),
        "--spans-key", "constituents", cwd=tmp_path,
    )  # fmt: skip
    scores = json.loads((tmp_path / "dev.json").read_text())
    assert scores["constituents_f"] == pytest.approx(performance["constituents_f"], abs=1e-9)
    assert "SPAN F" in out.stdout and "NP" in out.stdout  # the aliases make spaCy print them
    # ...and the same as evaluating in this process.
    nlp = spacy.load(best)
    from spacy.training import Corpus

    in_process = nlp.evaluate(Corpus(corpus / "dev.spacy")(nlp))
    assert in_process["constituents_f"] == pytest.approx(scores["constituents_f"], abs=1e-9)


def test_training_spacy_assemble_from_a_treebank_setting(data_dir, tmp_path):
    settings = "--initialize.components.lpcfg_parser."
    spacy_cli(
        "assemble", str(CONFIG), str(tmp_path / "assembled"),
        f"{settings}treebank", "ptb_sample", f"{settings}data_dir", str(data_dir),
        f"{settings}limit", "100", cwd=tmp_path,
    )  # fmt: skip
    nlp = spacy.load(tmp_path / "assembled")
    assert nlp.get_pipe("lpcfg_parser").parsing_model.training["trees"] == 100
    assert nlp("Prices rose .")[:]._.labels


@pytest.mark.parametrize("project", ["ptb_sample", "icepahc"])
def test_training_the_optimize_step_wraps_a_model_directory(project, corpus, ptb_small, tmp_path):
    # The projects' optimize step: `spacy train configs/optimized.cfg` with the model
    # directory that `spacy-lpcfg optimize` wrote; the pipeline parses with that model.
    model_dir = tmp_path / "search" / "model"
    searched = MLEEstimator(transform=TransformSpec(scheme="penn", v_markov=1)).fit(ptb_small[0])
    searched.model_.to_disk(model_dir)
    config = CONFIG.parents[2] / project / "configs" / "optimized.cfg"
    paths = ["--paths.train", str(corpus / "train.spacy"), "--paths.dev", str(corpus / "dev.spacy")]
    spacy_cli(
        "train", str(config), "--output", str(tmp_path / "training"), *paths,
        "--components.lpcfg_parser.model", str(model_dir), cwd=tmp_path,
    )  # fmt: skip
    best = tmp_path / "training" / "model-best"
    assert ParsingModel.from_disk(best / "lpcfg_parser" / "model") == searched.model_
