"""The lpcfg_parser's function labeller: fitted in initialize, saved with the pipeline,
its function tags on the Docs' constituents."""

from __future__ import annotations

import pytest
import spacy

from spacy_lpcfg.estimators.function_labels import FunctionLabeller

TEXTS = [
    "The company said it will sell its stake .",
    "Investors bought more shares on Friday , traders said .",
    "It fell .",
]
STRIPPED = {"keep_functions": False}


def labelled_spans(docs) -> list:
    return [
        [(span.label_, span.start, span.end) for span in doc.spans["constituents"]] for doc in docs
    ]


@pytest.fixture(scope="module")
def trained(ptb_small, gold_examples):
    """A pipeline whose grammar strips function tags, with ``function_labeller = true``."""
    nlp = spacy.blank("en")
    config = {"transforms": STRIPPED, "function_labeller": True}
    nlp.add_pipe("lpcfg_parser", config=config)
    examples = gold_examples(nlp, ptb_small[0])
    nlp.initialize(lambda: examples)
    return nlp


def test_initialize_fits_a_labeller_on_the_training_trees(trained, ptb_small):
    model = trained.get_pipe("lpcfg_parser").parsing_model
    assert not model.transform.keep_functions and model.active_labeller is model.labeller
    expected = FunctionLabeller(scheme="penn", language="en").fit(ptb_small[0]).tagger_
    assert model.labeller == expected  # the same trees, the default parameters
    labels = trained.get_pipe("lpcfg_parser").labels
    assert {"NP", "NP-SBJ", "PP-LOC", "S", "VP"} <= set(labels)  # categories x the tags
    assert len(labels) == len(set(labels)) and all("^" not in label for label in labels)


def test_docs_get_the_labellers_function_tags_after_to_disk(trained, tmp_path):
    docs = list(trained.pipe(TEXTS))
    labels = {label for doc in labelled_spans(docs) for label, _, _ in doc}
    assert "NP-SBJ" in labels  # from the labeller: the grammar has no function tags
    model = trained.get_pipe("lpcfg_parser").parsing_model
    subjects = [
        span for doc in docs for span in doc.spans["constituents"] if span.label_ == "NP-SBJ"
    ]
    assert all(span._.function_labels == ("SBJ",) for span in subjects)
    assert subjects[0].text in ("The company", "it", "Investors", "traders", "It")

    trained.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "lpcfg_parser" / "model" / "function_labeller.npz").is_file()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("lpcfg_parser").parsing_model == model
    assert labelled_spans(loaded.pipe(TEXTS)) == labelled_spans(docs)
    fresh = spacy.blank("en")
    fresh.add_pipe("lpcfg_parser", config={"transforms": STRIPPED})
    fresh.from_bytes(trained.to_bytes())
    assert labelled_spans(fresh.pipe(TEXTS)) == labelled_spans(docs)


def test_a_registered_labeller_block_sets_its_parameters(ptb_small, gold_examples):
    nlp = spacy.blank("en")
    block = {"@misc": "spacy_lpcfg.FunctionLabeller.v1", "C": 0.5, "min_count": 3}
    config = {"function_labeller": block, "function_labels": "grammar"}
    parser = nlp.add_pipe("lpcfg_parser", config=config)
    examples = gold_examples(nlp, ptb_small[0][:80])
    nlp.initialize(lambda: examples)
    model = parser.parsing_model
    assert model.labeller.params == {"C": 0.5, "max_iter": 300, "min_count": 3}
    # the grammar keeps function tags and the setting says "grammar": its own
    assert model.function_labels == "grammar" and model.active_labeller is None
    assert not hasattr(parser.function_labeller, "tagger_")  # the setting stays unfitted


def test_bad_function_labeller_settings(tmp_path, ptb_small, gold_examples):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="E714.*'yes'.*FunctionLabeller.v1"):
        nlp.add_pipe("lpcfg_parser", config={"function_labeller": "yes"})
    with pytest.raises(ValueError, match="E011.*'both' for 'function_labels'"):
        nlp.add_pipe("lpcfg_parser", config={"function_labels": "both"})
    trainer = spacy.blank("en")
    trainer.add_pipe("lpcfg_parser")
    examples = gold_examples(trainer, ptb_small[0][:20])
    trainer.initialize(lambda: examples)
    trainer.get_pipe("lpcfg_parser").parsing_model.to_disk(tmp_path / "grammar")
    config = {"model": str(tmp_path / "grammar"), "function_labeller": True}
    nlp.add_pipe("lpcfg_parser", config=config)
    with pytest.raises(ValueError, match="E715.*--function-labeller"):
        nlp.initialize()


def test_defaults_come_from_one_place():
    import dataclasses

    from spacy.util import registry

    from spacy_lpcfg import defaults

    params = FunctionLabeller().get_params()
    assert {
        key: params[key] for key in ("C", "max_iter", "min_count", "max_parameters")
    } == dataclasses.asdict(defaults.FUNCTION_LABELLER)
    made = registry.misc.get("spacy_lpcfg.FunctionLabeller.v1")()
    assert made.get_params() == params
    config = spacy.blank("en").get_factory_meta("lpcfg_parser").default_config
    assert config["function_labeller"] is False
    assert config["function_labels"] == defaults.FUNCTION_LABELS
