"""The lpcfg_parser component with real spaCy: registration, training, parsing, settings."""

from __future__ import annotations

import subprocess
import sys

import pytest
import spacy

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.pipeline.docs import tree_constituents
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformSpec

TEXT = "The company said it will sell its stake. Investors bought more shares on Friday."


def test_component_is_found_through_entry_points_without_an_import():
    # A fresh process: spacy.blank() loads the spacy_factories entry point, and the
    # other registries find our names on demand; nothing heavy is imported on the way.
    code = """
import sys, time
import spacy
from spacy.util import registry
start = time.perf_counter()
nlp = spacy.blank("en")
blank_seconds = time.perf_counter() - start
heavy = sorted(m for m in ("numba", "scipy", "sklearn") if m in sys.modules)
assert "spacy_lpcfg.pipeline" in sys.modules
for kind, name in [("scorers", "spacy_lpcfg.constituency_scorer.v1"),
                   ("readers", "spacy_lpcfg.TreebankCorpus.v1"),
                   ("misc", "spacy_lpcfg.MLEEstimator.v1")]:
    registry.get(kind, name)
nlp.add_pipe("lpcfg_parser")
print(blank_seconds, heavy)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    seconds, heavy = out.stdout.split(" ", 1)
    assert heavy.strip() == "[]"
    assert float(seconds) < 1.0


def test_component_initialize_fits_the_configured_estimator(ptb_small, gold_examples):
    nlp = spacy.blank("en")
    config = {"estimator": {"@misc": "spacy_lpcfg.MLEEstimator.v1", "rare_threshold": 2}}
    parser = nlp.add_pipe("lpcfg_parser", config=config)
    assert parser.parsing_model is None and parser.labels == ()
    examples = gold_examples(nlp, ptb_small[0])
    nlp.initialize(lambda: examples)
    # The grammar is the one the estimator fits on the same trees, with the
    # component's transforms and the pipeline's language.
    spec = TransformSpec(scheme="penn", head_rules="collins")
    expected = MLEEstimator(transform=spec, language="en", rare_threshold=2).fit(ptb_small[0])
    assert parser.parsing_model == expected.model_
    assert {"NP-SBJ", "VP", "S", "PP-LOC"} <= set(parser.labels)
    assert parser.estimator.rare_threshold == 2 and not hasattr(parser.estimator, "model_")


def test_component_parses_raw_text_by_sentence(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    nlp.add_pipe("sentencizer", first=True)
    doc = nlp(TEXT)
    sents = list(doc.sents)
    assert len(sents) == 2
    group = doc.spans["constituents"]
    assert group.attrs["lpcfg"] == 1 and group.attrs["scheme"] == "penn"
    for sent in sents:
        roots = [span for span in group if span.start == sent.start and span.end == sent.end]
        assert roots, "each sentence gets its own root"
        assert sent._.labels == tuple(
            span.label_.split("-")[0] for span in roots
        )  # the unary chain at the root
        tree = Tree.from_string(f"(TOP {sent._.parse_string})")  # categories, as benepar
        assert tree.words() == [token.text for token in sent]
        assert tree.tags() == [token.tag_ for token in sent]  # tags were written
        # The group holds the parse's phrases in pre-order, as offsets in the Doc.
        inside = [(s.label_.split("-")[0], s.start - sent.start, s.end - sent.start) for s in group]
        inside = [span for span in inside if span[1] >= 0 and span[2] <= len(sent)]
        assert inside == tree_constituents(tree)
    assert all(token.tag_ for token in doc)
    assert [span.text for span in sents[0]._.constituents][0] == sents[0].text


def test_component_parses_the_whole_doc_without_sentence_boundaries(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    doc = nlp(TEXT)
    assert not doc.has_annotation("SENT_START")
    roots = [span for span in doc.spans["constituents"] if span.start == 0 and span.end == len(doc)]
    assert roots and doc[:]._.parent is None

    strict = spacy.load(
        ptb_pipeline_dir, config={"components": {"lpcfg_parser": {"missing_sentences": "error"}}}
    )
    with pytest.raises(ValueError, match="E702.*sentencizer"):
        strict(TEXT)
    strict.add_pipe("sentencizer", first=True)
    assert len(list(strict(TEXT).sents)) == 2


def test_component_uses_tags_from_earlier_components(ptb_pipeline_dir):
    nlp = spacy.load(ptb_pipeline_dir)
    ruler = nlp.add_pipe("attribute_ruler", before="lpcfg_parser")
    # A tagger stand-in: "saw" is a noun here, which the grammar alone would not choose.
    ruler.add([[{"LOWER": "saw"}]], {"TAG": "NN"})
    ruler.add([[{"LOWER": "the"}]], {"TAG": "DT"})
    doc = nlp("The saw cut the wood .")
    assert doc[1].tag_ == "NN" and doc[0].tag_ == "DT"  # kept (write_tags="missing")
    assert "(NN saw)" in doc[:]._.parse_string
    assert all(token.tag_ for token in doc)  # the others were predicted

    ignoring = spacy.load(
        ptb_pipeline_dir,
        config={"components": {"lpcfg_parser": {"use_tags": "ignore", "write_tags": "never"}}},
    )
    ignoring.add_pipe("attribute_ruler", before="lpcfg_parser").add(
        [[{"LOWER": "saw"}]], {"TAG": "NN"}
    )
    doc = ignoring("The saw cut the wood .")
    assert [token.tag_ for token in doc] == ["", "NN", "", "", "", ""]


def test_component_model_setting_reads_a_model_directory(ptb_pipeline_dir, tmp_path):
    trained = spacy.load(ptb_pipeline_dir)
    trained.get_pipe("lpcfg_parser").parsing_model.to_disk(tmp_path / "grammar")
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("lpcfg_parser", config={"model": str(tmp_path / "grammar")})
    doc, expected = nlp("Investors bought shares ."), trained("Investors bought shares .")
    assert [(s.label_, s.start, s.end) for s in doc.spans["constituents"]] == [
        (s.label_, s.start, s.end) for s in expected.spans["constituents"]
    ]
    # A pipeline saved with nlp.to_disk carries its own copy of the grammar.
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "grammar" / "grammar.npz").unlink()
    reloaded = spacy.load(tmp_path / "pipeline")
    assert reloaded("Investors bought shares .")[:]._.parse_string == doc[:]._.parse_string
    # ...while a fresh component refuses the damaged directory at once,
    with pytest.raises(ValueError, match="E712.*no grammar.npz"):
        spacy.blank("en").add_pipe("lpcfg_parser", config={"model": str(tmp_path / "grammar")})
    # and one whose files are there but corrupt fails clearly when it reads them.
    (tmp_path / "grammar" / "grammar.npz").write_bytes(b"not an npz")
    damaged = spacy.blank("en").add_pipe(
        "lpcfg_parser", config={"model": str(tmp_path / "grammar")}
    )
    with pytest.raises(GrammarError, match="E124.*grammar.npz"):
        damaged.initialize(lambda: [])
    assert parser.labels


def test_component_initialize_from_a_treebank_setting(data_dir, tmp_path):
    # spacy assemble passes dummy Examples; the training data then comes from a setting.
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("lpcfg_parser")
    with pytest.raises(ValueError, match="E703.*treebank"):
        nlp.initialize()  # one dummy Doc without constituents
    nlp.config["initialize"]["components"]["lpcfg_parser"] = {
        "treebank": "ptb_sample",
        "data_dir": str(data_dir),
        "limit": 100,
    }
    nlp.initialize()
    assert parser.parsing_model.training["trees"] == 100
    with pytest.raises(ValueError, match="E710"):
        parser.initialize(lambda: [], nlp=nlp, treebank=str(tmp_path / "train.spacy"))


@pytest.mark.parametrize(
    "config, message",
    [
        ({"decoder": "best"}, "decoder"),
        ({"use_tags": "always"}, "use_tags"),
        ({"write_tags": "sometimes"}, "write_tags"),
        ({"missing_sentences": "skip"}, "missing_sentences"),
        ({"max_length": 0}, "max_length"),
        ({"transforms": {"binarization": "middle"}}, "binarization"),
        ({"transforms": {"markov": 2}}, "markov"),
    ],
)
def test_component_rejects_bad_settings_at_creation(config, message):
    with pytest.raises(ValueError, match=message):
        spacy.blank("en").add_pipe("lpcfg_parser", config=config)


def test_component_without_a_grammar_says_how_to_get_one():
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser")
    with pytest.raises(ValueError, match="E701.*initialize"):
        nlp("Nothing to parse with.")
