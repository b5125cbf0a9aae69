"""The parser applies a model's function labeller to every parse it returns."""

from __future__ import annotations

import pytest

from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.estimators.function_labels import attach_function_labeller
from spacy_lpcfg.evaluation import evaluate
from spacy_lpcfg.grammar.model import combine_models
from spacy_lpcfg.trees.transforms import TransformSpec

N_TRAIN = 400
STRIPPED = TransformSpec(keep_functions=False)


@pytest.fixture(scope="module")
def train(load_corpus):
    return load_corpus("ptb_sample", "train")[:N_TRAIN]


@pytest.fixture(scope="module")
def stripped(train):
    """(MLE model without function tags, the same with a labeller fitted on its trees)."""
    bare = MLEEstimator(transform=STRIPPED).fit(train).model_
    return bare, attach_function_labeller(bare, train)


@pytest.fixture(scope="module")
def sentences(load_corpus):
    return [tree.words() for tree in load_corpus("ptb_sample", "dev")[:12]]


def test_stripped_grammar_with_labeller_gets_function_labels(stripped, load_corpus):
    """ptb_sample dev, MLE and labeller fitted on 400 trees: measured 72.39 F1 on the
    function tags of matched brackets and 62.77 with full labels; without the labeller
    0 and (on the same brackets) 54.87; EVALB F1 69.22 both."""
    bare, labelled = stripped
    dev = load_corpus("ptb_sample", "dev")
    with_labels = evaluate(Parser(labelled), dev)
    without = evaluate(Parser(bare), dev)
    assert with_labels.fscore == without.fscore  # the labeller changes no bracket
    assert without.functions.functions.fscore == 0.0
    assert with_labels.functions.functions.fscore > 69.0
    assert with_labels.function_fscore > 59.0
    assert with_labels.function_fscore > without.function_fscore + 5.0


def test_every_parse_is_labelled_fallbacks_too(stripped, sentences):
    bare, labelled = stripped
    for max_length in (150, 8):  # 8: the longer sentences get flat trees ("too_long")
        parser = Parser(labelled, max_length=max_length)
        plain = Parser(bare, max_length=max_length)
        assert parser.labeller is labelled.labeller
        parses = parser.parse_all(sentences)
        expected = labelled.labeller.label([parse.tree for parse in plain.parse_all(sentences)])
        assert [parse.tree for parse in parses] == expected
        assert [parse.fallback for parse in parses] == [
            p.fallback for p in plain.parse_all(sentences)
        ]
        if max_length == 150:
            assert any("-SBJ" in label for tree in expected for label, _, _ in tree.spans())
    assert parser.fallbacks["too_long"] > 0 and parser.seconds["labeller"] > 0


def test_function_labels_setting_decides_for_a_grammar_with_function_tags(
    train, stripped, sentences
):
    keep = MLEEstimator().fit(train).model_
    labeller = stripped[1].labeller
    own = [parse.tree for parse in Parser(keep).parse_all(sentences)]
    by_grammar = Parser(keep.with_function_labeller(labeller, "grammar"))
    assert by_grammar.labeller is None
    assert [parse.tree for parse in by_grammar.parse_all(sentences)] == own
    by_labeller = Parser(keep.with_function_labeller(labeller, "labeller"))
    replaced = [parse.tree for parse in by_labeller.parse_all(sentences)]
    assert replaced == labeller.label(own) and replaced != own


def test_combined_models_are_labelled_once(train, stripped, sentences):
    bare, labelled = stripped
    left = MLEEstimator(transform=TransformSpec(keep_functions=False, binarization="left"))
    other = left.fit(train).model_
    combined = combine_models([other, labelled], "product")
    plain = Parser(combined.with_function_labeller(None)).parse_all(sentences)
    parses = Parser(combined).parse_all(sentences)
    assert [p.tree for p in parses] == labelled.labeller.label([p.tree for p in plain])
