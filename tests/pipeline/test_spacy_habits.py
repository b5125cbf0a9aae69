"""What a spaCy user expects of a pipeline: readable score names in spacy train's table,
one word when the same closed-form model is scored again, and a pipeline folder that
loads from anywhere once copied."""

from __future__ import annotations

import shutil
import warnings

import pytest
import spacy


@pytest.fixture(scope="module")
def nlp(ptb_pipeline_dir):
    return spacy.load(ptb_pipeline_dir)


def test_default_score_weights_fit_spacy_trains_table(nlp, ptb_small, gold_examples):
    weights = nlp.config["training"]["score_weights"]
    assert weights["cons_f"] == 1.0
    assert all(len(name) <= 13 for name in weights)  # spaCy cuts longer names
    scores = nlp.evaluate(gold_examples(nlp, ptb_small[1][:5]))
    assert scores["cons_f"] == scores["constituents_f"] > 0.5
    assert scores["cons_func_f"] == scores["constituents_func_f"]


def test_scoring_the_same_model_again_warns_once(ptb_pipeline_dir, ptb_small, gold_examples):
    nlp = spacy.load(ptb_pipeline_dir)
    examples = gold_examples(nlp, ptb_small[1][:3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp.evaluate(examples)  # the first evaluation: nothing to say
    with pytest.warns(UserWarning, match=r"LPCFG-W703.*max_steps = 1"):
        nlp.evaluate(examples)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp.evaluate(examples)  # once


def test_a_copied_pipeline_folder_loads_from_anywhere(ptb_pipeline_dir, tmp_path, monkeypatch):
    copy = tmp_path / "moved" / "pipeline"
    shutil.copytree(ptb_pipeline_dir, copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    doc = spacy.load(copy)("The cat sat on the mat .")
    assert doc.spans["constituents"] and doc[:]._.parse_string.startswith("(S ")
