"""Models with members (``combine_models``, ``decode.members``): models trained apart
with their own transforms and lexicons, decoded together."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.decode.members import members_mbr, members_product
from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.decode.span_marginals import SpanMarginals
from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.grammar.model import ParsingModel, combine_models
from spacy_lpcfg.trees.transforms import TransformSpec

runner = CliRunner()


@pytest.fixture(scope="module")
def models(ptb_small):
    """MLE models of 300 PTB trees: right- and left-binarised with function tags, and
    right-binarised without them."""
    from spacy_lpcfg.estimators.mle import MLEEstimator

    def fit(**transform):
        return MLEEstimator(transform=TransformSpec(**transform)).fit(ptb_small[0]).model_

    return {
        "right": fit(),
        "left": fit(binarization="left"),
        "stripped": fit(keep_functions=False, v_markov=1),
    }


@pytest.fixture(scope="module")
def sentences(ptb_small):
    return [tree.words() for tree in ptb_small[1][:12]]


def _labels(tree) -> list[str]:
    return [node.label for node in tree.subtrees()]


def test_a_model_combined_with_itself_parses_as_the_model_alone(models, sentences):
    """Same marginals twice: the mean is the marginals, so the trees are the same as
    combining the one model's marginals."""
    model = models["right"]
    alone = Parser(model)
    twice = Parser(model.with_members([model], "mbr"))  # members, not one ensemble
    for words in sentences:
        marginals, _ = alone.span_marginals(words)
        result = members_mbr([marginals], [True], model.label_scheme)
        expected = model.pipeline.invert(result.to_tree(words))
        assert twice.parse(words).tree == expected


def test_member_transforms_are_inverted_per_member(models, sentences):
    """Left and right binarisations, with and without function tags: every parse is a
    treebank tree (no intermediate, annotated or chain labels) over the words, and
    function labels come from the members that keep them."""
    combined = combine_models([models["stripped"], models["left"], models["right"]], "mbr")
    parser = Parser(combined)
    assert parser.pipeline.spec.keep_functions  # inverted by a member with functions
    labels = []
    for words in sentences:
        tree = parser.parse(words).tree
        assert tree.words() == words
        for label in _labels(tree):
            assert not {"@", "^", "|"} & set(label), label
            assert "::" not in label, label
        labels += _labels(tree)
    assert any(label.endswith("-SBJ") for label in labels)  # from the left and right members
    stripped_only = Parser(models["stripped"].with_members([models["stripped"]], "product"))
    for words in sentences[:4]:
        assert not any("-SBJ" in label for label in _labels(stripped_only.parse(words).tree))


def test_each_member_prunes_and_scores_with_its_own_grammar(models, sentences):
    parser = Parser(combine_models([models["left"], models["right"]], "mbr"))
    for part, model in zip(parser.parts, [models["left"], models["right"]]):
        marginals, fallback = part.span_marginals(sentences[0])
        assert fallback is None
        assert not any(label.startswith("@") for label in marginals.labels)
        assert part.model.transform == model.transform


def test_function_labels_come_from_the_members_that_keep_them():
    """Brackets are chosen on categories; each takes its best full label."""
    n = 2
    tags = ("DT", "NN")
    tag_marginals = np.array([[1.0, 0.0], [0.0, 1.0]])

    def marginals(labels, values):
        array = np.zeros((n + 1, n + 1, len(labels)))
        array[0, 2] = values
        return SpanMarginals(labels, array, tags, tag_marginals)

    keeper = marginals(("NP-SBJ", "NP-TMP", "S"), [0.3, 0.4, 0.2])
    stripped = marginals(("NP", "S"), [0.6, 0.4])
    result = members_mbr([keeper, stripped], [True, False], "penn")
    tree = result.to_tree(["the", "cat"])
    assert [node.label for node in tree.subtrees()][:2] == ["TOP", "NP-TMP"]
    # Without a member that keeps functions: the category.
    result = members_product([stripped, stripped], [False, False], "penn")
    assert [node.label for node in result.to_tree(["the", "cat"]).subtrees()][1] == "NP"


def test_combined_model_round_trips(models, tmp_path):
    combined = combine_models([models["right"], models["left"], models["stripped"]], "product")
    combined.to_disk(tmp_path / "m")
    cfg = json.loads((tmp_path / "m" / "cfg.json").read_text())
    assert cfg["format_version"] == 2 and cfg["decoder"] == "product"
    assert cfg["members"] == [{"path": "members/0"}, {"path": "members/1"}]
    loaded = ParsingModel.from_disk(tmp_path / "m")
    assert loaded == combined
    assert [part.transform for part in loaded.parts] == [
        models[name].transform for name in ("right", "left", "stripped")
    ]
    assert ParsingModel.from_bytes(combined.to_bytes()) == combined
    assert Parser(loaded).decoder == "members_product"  # "product" as stored before
    # A model without members stays version 1: older releases still read it.
    models["right"].to_disk(tmp_path / "single")
    assert json.loads((tmp_path / "single" / "cfg.json").read_text())["format_version"] == 1


def test_combining_flattens_members(models):
    pair = combine_models([models["right"], models["left"]], "mbr")
    triple = combine_models([pair, models["stripped"]], "mbr")
    assert len(triple.parts) == 3 and not any(part.members for part in triple.parts)


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda cfg: cfg.update(members=[{"path": "elsewhere"}]), "'members'"),
        (lambda cfg: cfg.update(members=[{"path": f"members/{i}"} for i in range(65)]), "at most"),
        (lambda cfg: cfg.update(decoder=7), "'decoder'"),
        (lambda cfg: cfg.pop("decoder"), "decoder"),
    ],
)
def test_bad_member_entries_are_refused(models, tmp_path, change, message):
    combine_models([models["right"], models["left"]], "mbr").to_disk(tmp_path / "m")
    path = tmp_path / "m" / "cfg.json"
    cfg = json.loads(path.read_text())
    change(cfg)
    path.write_text(json.dumps(cfg))
    with pytest.raises(GrammarError, match=message):
        ParsingModel.from_disk(tmp_path / "m")


def test_nested_members_are_refused(models, tmp_path):
    combine_models([models["right"], models["left"]], "mbr").to_disk(tmp_path / "m")
    path = tmp_path / "m" / "members" / "0" / "cfg.json"
    cfg = json.loads(path.read_text())
    cfg["members"] = [{"path": "members/0"}]
    path.write_text(json.dumps(cfg))
    with pytest.raises(GrammarError, match="members of its own"):
        ParsingModel.from_disk(tmp_path / "m")


def test_other_label_schemes_and_single_models_are_refused(models):
    with pytest.raises(GrammarError, match="at least two"):
        combine_models([models["right"]], "mbr")
    cess = models["right"].transform.__class__(scheme="cess")
    other = ParsingModel(models["right"].grammar, models["right"].lexicon, cess)
    with pytest.raises(GrammarError, match="label scheme"):
        combine_models([models["right"], other], "mbr")


def test_grammar_decoders_are_refused_for_members(models):
    with pytest.raises(ValueError, match="decoder"):
        Parser(combine_models([models["right"], models["left"]], "mbr"), decoder="max_rule")


def test_cli_combine_then_test_and_parse(models, tmp_path):
    for name in ("right", "left"):
        models[name].to_disk(tmp_path / name)
    out = tmp_path / "both"
    result = runner.invoke(
        app, ["combine", str(tmp_path / "right"), str(tmp_path / "left"), str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(ParsingModel.from_disk(out).parts) == 2
    result = runner.invoke(app, ["parse", str(out)], input="The cat sat on the mat .\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("(TOP (")
    result = runner.invoke(app, ["test", str(out), "ptb_sample", "--split", "dev", "--limit", "10"])
    assert result.exit_code == 0, result.output
    assert "F1" in result.output or "fscore" in result.output.lower()
    # and as a spaCy component
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": str(out)})
    doc = nlp("The cat sat on the mat .")
    assert doc.spans["constituents"][0].label_ == "S"


@pytest.mark.parametrize(
    "args,message",
    [
        (["only_one", "out"], "at least two"),
        (["a", "b", "out", "--decoder", "viterbi"], "--decoder"),
    ],
)
def test_cli_combine_refuses_bad_arguments(tmp_path, args, message):
    result = runner.invoke(app, ["combine", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_models_of_one_structure_become_one_ensemble(models, sentences, tmp_path):
    """EM grammars from other seeds, say: one grammar structure, so combine makes one
    ensemble pruned once (Petrov 2010's product); with identical grammars, mbr and
    product give the single grammar's mbr and max_rule trees."""
    model = models["right"]
    for decoder, alone in (("mbr", "mbr"), ("product", "max_rule"), (None, "mbr")):
        combined = combine_models([model, model], decoder)
        assert not combined.members and len(combined.training["ensemble"]) == 1
        assert combined.decoder == ("product" if decoder == "product" else "product_mbr")
        assert combined.ensemble == (model.grammar,)
        single, both = Parser(model, decoder=alone), Parser(combined)
        for words in sentences[:6]:
            assert both.parse(words).tree == single.parse(words).tree
    combined.to_disk(tmp_path / "ensemble")
    loaded = ParsingModel.from_disk(tmp_path / "ensemble")
    assert loaded == combined and Parser(loaded).decoder == "product_mbr"
    # the members decoders' own names choose the ensemble's product alike
    assert combine_models([model, model], "members_product").decoder == "product"
    assert combine_models([model, model], "members_mbr").decoder == "product_mbr"
    # dual decomposition keeps them as members; other transforms too
    assert combine_models([model, model], "dual").members
    assert combine_models([model, models["left"]]).members


def test_the_older_member_decoder_names_parse_as_the_new_ones(models, sentences, tmp_path):
    """Models combine stored with "mbr" or "product" (before the members decoders had
    names of their own) parse as members_mbr and members_product, saved and loaded."""
    pair = [models["right"], models["left"]]
    for old, new in (("mbr", "members_mbr"), ("product", "members_product")):
        combine_models(pair, old).to_disk(tmp_path / old)
        loaded = ParsingModel.from_disk(tmp_path / old)
        assert loaded.decoder == old  # kept as saved
        before, after = Parser(loaded), Parser(combine_models(pair, new))
        assert before.decoder == after.decoder == new
        for words in sentences[:3]:
            assert before.parse(words) == after.parse(words)
