"""Function-label scoring on hand-computed examples for each label scheme."""

from __future__ import annotations

import pytest

from spacy_lpcfg.evaluation import PRF, function_scores
from spacy_lpcfg.trees import parse_tree


def _scores(gold: str, test: str | None, scheme: str):
    return function_scores([parse_tree(gold)], [None if test is None else parse_tree(test)], scheme)


def test_penn_function_tags():
    gold = "(TOP (S (NP-SBJ-1 (PRP he)) (VP (VBD saw) (NP (PRP her)) (PP-TMP (IN on) (NP (NNP Monday)))) (. .)))"
    test = "(TOP (S (NP-SBJ (PRP he)) (VP (VBD saw) (NP-OBJ (PRP her)) (PP-LOC (IN on) (NP (NNP Monday)))) (. .)))"
    scores = _scores(gold, test, "penn")
    # S, NP-SBJ (index dropped), VP and NP(4,5) keep their full labels; TOP is deleted.
    assert scores.labelled == PRF(matched=4, gold=6, test=6)
    # Six category+span pairs carry gold {SBJ, TMP} and test {SBJ, OBJ, LOC}.
    assert scores.functions == PRF(matched=1, gold=2, test=3)
    assert scores.functions.recall == 50.0
    assert scores.functions.precision == pytest.approx(100 / 3)
    assert scores.functions.fscore == pytest.approx(40.0)
    assert scores.per_function == {
        "SBJ": PRF(1, 1, 1),
        "TMP": PRF(0, 1, 0),
        "LOC": PRF(0, 0, 1),
        "OBJ": PRF(0, 0, 1),
    }


def test_duplicate_unary_brackets_pair_outermost_first():
    scores = _scores("(TOP (NP-SBJ (NP (NN x))))", "(TOP (NP (NN x)))", "penn")
    assert scores.labelled == PRF(matched=1, gold=2, test=1)
    assert scores.functions == PRF(matched=0, gold=1, test=0)


def test_floresta_function_tags():
    gold = "(TOP (STA+fcl (SUBJ+np (H+n Maria)) (P+v-fin canta)))"
    test = "(TOP (STA+fcl (ACC+np (H+n Maria)) (P+v-fin canta)))"
    scores = _scores(gold, test, "floresta")
    assert scores.labelled == PRF(matched=1, gold=2, test=2)
    assert scores.functions == PRF(matched=1, gold=2, test=2)
    assert scores.per_function["SUBJ"] == PRF(0, 1, 0)


def test_cess_function_tags():
    gold = "(TOP (S (sn-SUJ (np00000 Juan)) (grup.verb (vmip3s0 canta))))"
    test = "(TOP (S (sn-CD (np00000 Juan)) (grup.verb (vmip3s0 canta))))"
    scores = _scores(gold, test, "cess")
    assert scores.labelled == PRF(matched=2, gold=3, test=3)
    assert scores.functions == PRF(matched=0, gold=1, test=1)
    assert scores.functions.fscore == 0.0


def test_unscored_pairs():
    gold = parse_tree("(TOP (S (NP-SBJ (NN a)) (VP (VB b))))")
    other = parse_tree("(TOP (S (NP-SBJ (NN a)) (VP (VB c))))")
    scores = function_scores([gold, gold, gold], [None, other, gold])
    assert (scores.sentences, scores.scored_sentences) == (3, 1)
    assert scores.labelled == PRF(3, 3, 3)
    assert scores.to_dict()["functions"]["fscore"] == 100.0
    with pytest.raises(ValueError, match=r"\[LPCFG-E014\]"):
        function_scores([gold], [])
