"""Head rules: classic Collins (1999) cases, the PPCHE table, defaults and the registry."""

from __future__ import annotations

import pytest

from spacy_lpcfg.trees.heads import HEAD_RULES, HeadRules, find_head, get_head_rules


@pytest.mark.parametrize(
    "parent, children, head",
    [
        ("S", "NP VP .", 1),
        ("S", "NP-SBJ VP .", 1),
        ("S", "PP-LOC , NP-SBJ-1 VP .", 3),
        ("NP", "DT JJ NN", 2),
        ("NP", "DT NNS", 1),
        ("NP", "NP PP", 0),
        ("NP", "NP , SBAR", 0),
        ("NP", "NNP NNP POS", 2),  # the possessive marker heads an NP that ends in it
        ("NP", "DT JJ", 1),  # no noun, no NP: rightmost JJ
        ("NP", "CD NNS", 1),
        ("NP", "QP", 0),
        ("PP", "IN NP", 0),
        ("PP", "TO NP", 0),
        ("SBAR", "WHNP S", 0),  # Collins: the wh-phrase (or complementiser) heads SBAR
        ("SBAR", "IN S", 0),
        ("SBAR", "S", 0),
        ("VP", "VBD NP PP", 0),
        ("VP", "MD VP", 0),
        ("VP", "TO VP", 0),
        ("VP", "ADVP VBZ NP", 1),
        ("ADJP", "RB JJ", 1),
        ("ADVP", "RB RB", 1),  # searched from the right
        ("QP", "IN CD CD", 0),
        ("WHNP", "WDT NN", 0),
        ("SINV", "`` S , '' VBD NP .", 4),
        ("FRAG", "NP : NP .", 3),  # "right" with no list: last child
        ("PRN", "-LRB- NP -RRB-", 0),
    ],
)
def test_collins_heads(parent, children, head):
    assert find_head(children.split(), parent, "penn", "collins") == head


def test_collins_coordination_moves_head_before_cc():
    assert find_head(["DT", "NN", "CC", "NN"], "NP", "penn", "collins") == 1
    # punctuation just before CC is skipped
    assert find_head(["NN", ",", "CC", "NN"], "NP", "penn", "collins") == 0
    assert find_head(["NN", "CC", "NN"], "NP", "penn", "collins") == 0


def test_unknown_category_uses_default_direction():
    assert find_head(["A", "B", "C"], "UNKNOWN", "penn", "collins") == 0
    assert find_head(["A", "B", "C"], "UNKNOWN", "penn", "first") == 0
    assert find_head(["A", "B", "C"], "UNKNOWN", "penn", "last") == 2


def test_single_child_is_head():
    assert find_head(["NN"], "NP") == 0


@pytest.mark.parametrize(
    "parent, children, head",
    [
        ("IP-MAT", "NP-SBJ VBDI NP-OB1 .", 1),
        ("IP-MAT", "ADVP-TMP MDPI NP-SBJ VB NP-OB1", 1),  # leftmost verb: the finite one
        ("IP-SMC", "NP-SBJ ADJP-PRD", 1),
        ("CP-REL", "C IP-SUB", 0),
        ("CP-QUE", "WNP-1 IP-SUB", 0),
        ("NP-SBJ", "D-N N-N", 1),  # case suffixes are cut by the penn scheme
        ("NP-OB1", "PRO-A Q-A", 0),
        ("PP", "P NP", 0),
        ("ADJP-PRD", "ADVR ADJ-N", 1),
        ("CONJP", "CONJ NP", 0),
    ],
)
def test_ppche_heads(parent, children, head):
    assert find_head(children.split(), parent, "penn", "ppche") == head


def test_other_schemes_reduce_labels_to_categories():
    rules = HeadRules("toy", {"np": (("left", ("n",)),)})
    assert rules.find_head([">N+art", "H+n"], "SUBJ+np", "floresta") == 1
    rules = HeadRules("toy", {"sn": (("left", ("grup.nom",)),)})
    assert rules.find_head(["espec.ms", "grup.nom"], "sn-SUJ", "cess") == 1


def test_prefix_patterns():
    rules = HeadRules("toy", {"IP": (("leftdis", ("VB*",)),)})
    assert rules.find_head(["NP", "VBPI", "VB"], "IP") == 1
    assert rules.find_head(["NP", "ADVP"], "IP") == 0  # no match: first child


def test_registry():
    assert set(HEAD_RULES) == {"collins", "ppche", "first", "last"}
    assert get_head_rules("collins") is HEAD_RULES["collins"]
    rules = HeadRules("mine")
    assert get_head_rules(rules) is rules
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\].*'nope'"):
        get_head_rules("nope")


def test_invalid_input():
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\]"):
        find_head([], "NP")
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\].*'sideways'"):
        HeadRules("bad", {"NP": (("sideways", ("NN",)),)})
