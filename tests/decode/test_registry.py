"""One decoder registry for every kind of model (``decode.registry``), and ``Parser`` as
a factory over a grammar parser and a combined-model parser that share statistics."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spacy_lpcfg.decode import registry
from spacy_lpcfg.decode.combined_parser import CombinedParser
from spacy_lpcfg.decode.grammar_parser import GrammarParser
from spacy_lpcfg.decode.members import members_mbr
from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.decode.registry import (
    DECODERS,
    accepted_names,
    decoder_for,
    decoder_names,
    register_decoder,
)
from spacy_lpcfg.grammar.model import combine_models


@pytest.fixture(scope="module")
def small_model(ptb_small):
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return MLEEstimator().fit(ptb_small[0]).model_


@pytest.fixture
def scratch_registry():
    """The registry put back as it was after the test, whatever it registered."""
    saved = dict(DECODERS)
    yield
    DECODERS.clear()
    DECODERS.update(saved)


def test_names_are_unique_across_kinds():
    assert decoder_names("grammar") == ("max_rule", "variational", "viterbi", "mbr")
    assert decoder_names("ensemble") == ("product", "product_mbr")
    assert decoder_names("members") == ("members_product", "members_mbr", "dual")
    assert decoder_names() == decoder_names("grammar", "ensemble", "members")
    assert len(set(decoder_names())) == len(decoder_names())


@pytest.mark.parametrize(
    "name,members,expected",
    [
        ("mbr", False, "mbr"),
        ("product", False, "product"),
        ("mbr", True, "members_mbr"),  # the names combine stored before: aliases
        ("product", True, "members_product"),
        ("members_mbr", True, "members_mbr"),
        ("dual", True, "dual"),
    ],
)
def test_decoder_for_reads_a_name_for_its_kind_of_model(name, members, expected):
    assert decoder_for(name, members=members).name == expected


@pytest.mark.parametrize(
    "name,members", [("dual", False), ("members_mbr", False), ("max_rule", True), ("cky", True)]
)
def test_decoder_for_refuses_a_decoder_of_another_kind(name, members):
    with pytest.raises(ValueError, match=rf"E011.*'{name}'.*one of auto, ") as error:
        decoder_for(name, members=members)
    listed = decoder_names(*registry.model_kinds(members))
    assert ", ".join(listed) in str(error.value)


def test_accepted_names_hold_aliases_once_and_auto_first():
    assert accepted_names() == ("auto", *decoder_names())  # "product", "mbr" are names too
    assert accepted_names("members") == (
        "auto",
        "members_product",
        "product",
        "members_mbr",
        "mbr",
        "dual",
    )


def test_reading_the_names_loads_no_kernels():
    code = (
        "import sys; from spacy_lpcfg.decode.registry import decoder_names; decoder_names(); "
        "import spacy_lpcfg.cli; print([m for m in ('numba', 'scipy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_register_decoder_refuses_a_name_its_models_answer_to(scratch_registry):
    with pytest.raises(ValueError, match="E011.*'mbr'.*members_mbr"):
        register_decoder("my_mbr", members_mbr, kind="members", aliases=("mbr",))
    with pytest.raises(ValueError, match="E011.*'kind'"):
        register_decoder("mine", members_mbr, kind="forest")


def test_a_registered_grammar_decoder_parses(scratch_registry, small_model, ptb_small):
    register_decoder("my_max_rule", "spacy_lpcfg.decode.max_rule:max_rule_parse")
    mine, theirs = Parser(small_model, decoder="my_max_rule"), Parser(small_model)
    for tree in ptb_small[1][:3]:
        assert mine.parse(tree.words()).tree == theirs.parse(tree.words()).tree


def test_a_registered_members_decoder_parses(scratch_registry, small_model, ptb_small):
    register_decoder("my_members", members_mbr, kind="members", signed=True)
    combined = small_model.with_members([small_model], "my_members")  # stored by name
    mine, theirs = Parser(combined), Parser(combined, decoder="members_mbr")
    assert mine.decoder == "my_members"
    for tree in ptb_small[1][:3]:
        assert mine.parse(tree.words()).tree == theirs.parse(tree.words()).tree


def test_parser_is_the_parser_the_model_needs(small_model, ptb_small):
    single = Parser(small_model)
    assert type(single) is GrammarParser and isinstance(single, Parser)
    combined = Parser(combine_models([small_model, small_model], "dual"))
    assert type(combined) is CombinedParser and isinstance(combined, Parser)
    assert [type(part) for part in combined.parts] == [GrammarParser, GrammarParser]
    # the parts count into the combined parser's statistics, openly
    assert all(part.statistics is combined.statistics for part in combined.parts)
    combined.parse(ptb_small[1][0].words())
    assert combined.seconds["chart"] > 0 and combined.dual["sentences"] == 1
    assert combined.seconds is combined.statistics.seconds
    assert GrammarParser(small_model).decoder == single.decoder  # the classes directly
