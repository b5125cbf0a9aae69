"""Bad settings of the lpcfg_parser are rejected when it is made (issue 11, item 7).

``nlp.add_pipe("lpcfg_parser", config=...)`` fails at once, with a coded message
that names the value, rather than at the first parse; a saved pipeline still
loads where the model directory it was made from is gone.
"""

from __future__ import annotations

import math
import shutil

import pytest
import spacy
from spacy.util import load_model_from_config

from spacy_lpcfg import defaults
from spacy_lpcfg.pipeline import LPCFGParser


@pytest.fixture(scope="module")
def model_dir(ptb_pipeline_dir):
    """A model directory (the grammar of the small PTB pipeline)."""
    return ptb_pipeline_dir / "lpcfg_parser" / "model"


def add_parser(**config):
    return spacy.blank("en").add_pipe("lpcfg_parser", config=config)


def test_settings_model_that_does_not_exist(tmp_path):
    missing = tmp_path / "no" / "such_model"
    with pytest.raises(ValueError, match="E711") as error:
        add_parser(model=str(missing))
    message = str(error.value)
    assert f"'{missing}', which does not exist" in message
    assert f"spacy-lpcfg train CORPUS {missing}" in message  # how to make one
    assert "nlp.initialize()" in message


def test_settings_model_that_is_no_model_directory(tmp_path, model_dir):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="E712") as error:
        add_parser(model=str(empty))
    assert f"'{empty}', which is not a model directory (no cfg.json, transforms.json" in str(
        error.value
    )
    assert "spacy-lpcfg train CORPUS MODEL_DIR" in str(error.value)
    with pytest.raises(
        ValueError,
        match=r"E712.*cfg\.json', which is not a model directory "
        r"\(a file, not a directory\)",
    ):
        add_parser(model=str(model_dir / "cfg.json"))
    partial = tmp_path / "partial"
    shutil.copytree(model_dir, partial)
    (partial / "lexicon.json").unlink()
    with pytest.raises(ValueError, match=r"E712.*\(no lexicon\.json\)"):
        add_parser(model=str(partial))
    assert add_parser(model=str(model_dir)).model_path == model_dir  # the real one is fine


def test_settings_model_pointing_at_a_saved_pipeline_says_where_the_grammar_is(
    ptb_pipeline_dir, model_dir
):
    with pytest.raises(ValueError, match="E712") as error:
        add_parser(model=str(ptb_pipeline_dir))
    assert f"spacy.load('{ptb_pipeline_dir}')" in str(error.value)
    assert f"its grammar is in '{model_dir}'" in str(error.value)
    with pytest.raises(ValueError, match=f"E712.*Its grammar is in '{model_dir}'"):
        add_parser(model=str(model_dir.parent))


@pytest.mark.parametrize("threshold", [-0.1, -1e-9, 1.0, 5.0])
def test_settings_prune_threshold_outside_zero_one(threshold):
    with pytest.raises(ValueError, match="E713") as error:
        add_parser(prune_threshold=threshold)
    message = str(error.value)
    assert f"Invalid prune_threshold {threshold!r} for 'lpcfg_parser'" in message
    assert "0 <= t < 1" in message and str(defaults.PRUNE_THRESHOLD) in message


def test_settings_prune_threshold_nan():
    # spaCy itself refuses NaN in a config; the component refuses it when made directly.
    with pytest.raises(ValueError, match="E961"):
        add_parser(prune_threshold=math.nan)
    settings = {
        "model": None,
        "estimator": None,
        "transforms": {},
        "decoder": "auto",
        "use_tags": "auto",
        "write_tags": "missing",
        "spans_key": "constituents",
        "max_length": 150,
        "missing_sentences": "doc",
    }
    with pytest.raises(ValueError, match="E713.*nan"):
        LPCFGParser(spacy.blank("en").vocab, prune_threshold=math.nan, **settings)


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1e-5])
def test_settings_prune_threshold_accepted_and_used(model_dir, threshold):
    parser = add_parser(model=str(model_dir), prune_threshold=threshold)
    assert set(parser.parser.cascade.thresholds) == {threshold}


@pytest.mark.parametrize(
    "config, message",
    [
        ({"decoder": "cky"}, r"E011.*'cky' for 'decoder': one of 'auto', .*'max_rule'"),
        ({"max_length": 0}, r"E011.*0 for 'max_length': an int >= 1"),
        ({"max_length": -3}, r"E011.*-3 for 'max_length'"),
        ({"max_length": "10"}, r"E011.*'10' for 'max_length'"),
        ({"spans_key": ""}, r"E011.*'' for 'spans_key'"),
        ({"use_tags": "yes"}, r"E011.*'yes' for 'use_tags'"),
    ],
)
def test_settings_other_bad_values(config, message):
    with pytest.raises(ValueError, match=message):
        add_parser(**config)


def test_settings_are_checked_when_a_config_is_loaded(tmp_path):
    # As spacy train / spacy assemble build the pipeline from config.cfg.
    config = spacy.blank("en").config
    config["nlp"]["pipeline"] = ["lpcfg_parser"]
    config["components"]["lpcfg_parser"] = {
        "factory": "lpcfg_parser",
        "model": str(tmp_path / "gone"),
    }
    with pytest.raises(ValueError, match="E711.*gone"):
        load_model_from_config(config, auto_fill=True)


def test_settings_saved_pipeline_loads_without_the_original_model(model_dir, tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": str(copy)})
    expected = nlp("Investors bought shares .")[:]._.parse_string
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(copy)  # the config still names it; the pipeline has its own copy
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded("Investors bought shares .")[:]._.parse_string == expected
    # ...also as a sourced component,
    config = spacy.blank("en").config
    config["nlp"]["pipeline"] = ["lpcfg_parser"]
    config["components"]["lpcfg_parser"] = {"source": str(tmp_path / "pipeline")}
    sourced = load_model_from_config(config, auto_fill=True)
    assert sourced("Investors bought shares .")[:]._.parse_string == expected
    # ...but a component added to the loaded pipeline is new, and checked.
    loaded.remove_pipe("lpcfg_parser")
    with pytest.raises(ValueError, match="E711"):
        loaded.add_pipe("lpcfg_parser", config={"model": str(copy)})


def test_settings_decoder_takes_every_registered_name():
    """The component checks the decoder against the registry (``accepted_names``): "dual"
    and the other members decoders too, and the older names combine stored."""
    from spacy_lpcfg.decode.registry import accepted_names

    names = accepted_names()
    assert {"dual", "members_product", "members_mbr", "product", "mbr"} <= set(names)
    for name in names:
        assert add_parser(decoder=name).decoder == name
