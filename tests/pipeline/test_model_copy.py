"""A saved pipeline reads its components' own model copies only: no symbolic link out of
them, no fallback to the model path of its training; a model of another language than
the pipeline's is parsed with a warning."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.pipeline import tree_to_doc
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.unsupervised import RightBranching, load_bracketer, save_bracketer

TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
]
# Another treebank: parsed with its model, "the dog runs ." gets other labels.
OTHER_TREEBANK = [
    "(TOP (IP-MAT (NP-SBJ (D the) (N dog)) (VBPI runs) (. .)))",
    "(TOP (IP-MAT (NP-SBJ (D the) (N cat)) (VBPI sleeps) (NP-OB1 (N food)) (. .)))",
]
TEXT = "the dog runs ."
SECRET = "TOPSECRET-do-not-quote"


def _model_dir(path: Path, treebank: list[str], language: str = "en") -> Path:
    trees = [Tree.from_string(text) for text in treebank]
    estimator = MLEEstimator(open_class_threshold=1, language=language)
    estimator.fit(trees).model_.to_disk(path)
    return path


def _labels(doc) -> set[str]:
    return {span.label_ for span in doc.spans["constituents"]}


@pytest.fixture
def pipeline(tmp_path, monkeypatch) -> Path:
    """A pipeline saved with the model it was given by a relative ``model`` path."""
    monkeypatch.chdir(tmp_path)
    _model_dir(tmp_path / "grammar", TREEBANK)
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": "grammar"})
    assert _labels(nlp(TEXT)) == {"S", "NP", "VP"}
    nlp.to_disk(tmp_path / "pipeline")
    return tmp_path / "pipeline"


# No fallback to the training-time model path ---------------------------------------


def test_a_pipeline_without_its_model_copy_never_reads_the_training_path(
    pipeline, tmp_path, monkeypatch
):
    shutil.rmtree(pipeline / "lpcfg_parser" / "model")
    # Elsewhere, the relative training path names another model.
    _model_dir(tmp_path / "elsewhere" / "grammar", OTHER_TREEBANK)
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(GrammarError, match="E718") as error:
        nlp = spacy.load(pipeline)
        nlp(TEXT)  # never reached: the first use would raise at the latest
    message = str(error.value)
    assert str(pipeline / "lpcfg_parser") in message and "model" in message
    assert "elsewhere" not in message


def test_a_fitted_pipeline_without_its_model_copy_says_so_on_first_use(tmp_path):
    """Fitted in initialize (no ``model`` setting): loading works, parsing names the folder."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser")
    examples = [
        Example(Doc(nlp.vocab, words=tree.words()), tree_to_doc(nlp.vocab, tree, scheme="penn"))
        for tree in map(Tree.from_string, TREEBANK)
    ]
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(tmp_path / "pipeline" / "lpcfg_parser" / "model")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("lpcfg_parser").model_path is None
    with pytest.raises(GrammarError, match="E718") as error:
        loaded(TEXT)
    assert str(tmp_path / "pipeline" / "lpcfg_parser") in str(error.value)


def test_a_pipeline_with_its_model_copy_ignores_the_training_path(pipeline, tmp_path):
    shutil.rmtree(tmp_path / "grammar")
    _model_dir(tmp_path / "grammar", OTHER_TREEBANK)
    assert _labels(spacy.load(pipeline)(TEXT)) == {"S", "NP", "VP"}


# Symbolic links in a saved pipeline -------------------------------------------------


def test_a_pipeline_model_copy_with_a_linked_file_is_refused(pipeline, tmp_path):
    copy = pipeline / "lpcfg_parser" / "model"
    private = tmp_path / "elsewhere.json"
    private.write_text(f'{{"format": "{SECRET}"}}')
    (copy / "cfg.json").unlink()
    (copy / "cfg.json").symlink_to(private)
    with pytest.raises(GrammarError, match="E131") as error:
        spacy.load(pipeline)
    assert str(copy) in str(error.value) and "cfg.json" in str(error.value)
    assert SECRET not in str(error.value) and "elsewhere" not in str(error.value)


def test_a_pipeline_model_copy_that_is_a_link_is_refused(pipeline, tmp_path):
    copy = pipeline / "lpcfg_parser" / "model"
    shutil.rmtree(copy)
    copy.symlink_to(_model_dir(tmp_path / "other", OTHER_TREEBANK), target_is_directory=True)
    with pytest.raises(GrammarError, match="E131") as error:
        spacy.load(pipeline)
    assert str(pipeline / "lpcfg_parser") in str(error.value) and "other" not in str(error.value)


def test_a_model_setting_with_a_linked_file_is_refused_at_once(tmp_path):
    model = _model_dir(tmp_path / "grammar", TREEBANK)
    shutil.move(model / "lexicon.json", tmp_path / "elsewhere.json")
    (model / "lexicon.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(GrammarError, match="E131.*'lexicon.json'"):
        spacy.blank("en").add_pipe("lpcfg_parser", config={"model": str(model)})


@pytest.fixture
def bracketer_dir(tmp_path) -> Path:
    path = tmp_path / "bracketer"
    save_bracketer(RightBranching().fit([["a", "b", "c"]]), path)
    return path


@pytest.mark.parametrize("member", ["bracketer.json", "arrays.npz"])
def test_a_bracketer_with_a_linked_file_is_refused(bracketer_dir, tmp_path, member):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.move(bracketer_dir / member, outside / member)
    (bracketer_dir / member).symlink_to(outside / member)
    with pytest.raises(GrammarError, match="E131") as error:
        load_bracketer(bracketer_dir)
    assert str(bracketer_dir) in str(error.value) and member in str(error.value)
    assert "elsewhere" not in str(error.value)


def test_a_pipeline_bracketer_with_a_linked_file_is_refused(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_bracketer", config={"method": "right"})
    nlp.get_pipe("lpcfg_bracketer").bracketer = RightBranching().fit([["a", "b"]])
    nlp.to_disk(tmp_path / "pipeline")
    copy = tmp_path / "pipeline" / "lpcfg_bracketer" / "model"
    private = tmp_path / "private.json"
    private.write_text(f'{{"format_version": "{SECRET}"}}')
    (copy / "bracketer.json").unlink()
    (copy / "bracketer.json").symlink_to(private)
    with pytest.raises(GrammarError, match="E131") as error:
        spacy.load(tmp_path / "pipeline")
    assert "bracketer.json" in str(error.value) and SECRET not in str(error.value)
    assert "private" not in str(error.value)


# A model of another language -------------------------------------------------------


def _parser(tmp_path: Path, lang: str, language: str):
    nlp = spacy.blank(lang)
    model = _model_dir(tmp_path / f"model_{language}", TREEBANK, language)
    nlp.add_pipe("lpcfg_parser", config={"model": str(model)})
    return nlp


def test_a_model_of_another_language_warns_once(tmp_path):
    nlp = _parser(tmp_path, "en", "is")
    with pytest.warns(UserWarning, match="W702") as record:
        nlp(TEXT)
    message = str(next(w.message for w in record if "W702" in str(w.message)))
    assert "'is'" in message and "'en'" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp(TEXT)
        list(nlp.pipe([TEXT, TEXT]))
    # Another component warns again, once.
    with pytest.warns(UserWarning, match="W702"):
        _parser(tmp_path / "again", "en", "is")(TEXT)


@pytest.mark.parametrize("lang, language", [("xx", "is"), ("is", "is"), ("en", "en")])
def test_no_warning_for_the_pipeline_language_or_a_multilingual_one(tmp_path, lang, language):
    nlp = _parser(tmp_path, lang, language)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp(TEXT)


# The treebank a component is trained on ----------------------------------------------


def test_initialize_from_a_treebank_records_it(data_dir):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("lpcfg_parser")
    parser.initialize(lambda: [], nlp=nlp, treebank="ptb_sample", data_dir=data_dir, limit=20)
    assert parser.parsing_model.treebank == "ptb_sample"
