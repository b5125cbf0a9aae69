"""``evaluate`` / ``score_parses``: the library's one way to parse a gold set and score it."""

from __future__ import annotations

import pytest

import spacy_lpcfg
from spacy_lpcfg.evaluation import evaluate_files, function_scores, score_parses, score_trees
from spacy_lpcfg.trees.tree import Tree

GOLD = [
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP-LOC (IN on) (NP (DT the) (NN mat))))))",
    "(TOP (S (NP-SBJ (PRP It)) (VP (VBD rained))))",
]
TEST = [
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))))",
    "(TOP (S (NP (PRP It)) (VP (VBD rained))))",
]


@pytest.fixture(scope="module")
def small_parser(ptb_small):
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return Parser(MLEEstimator().fit(ptb_small[0]).model_)


def test_score_parses_gives_evalb_figures_and_full_label_figures(tmp_path):
    gold = [Tree.from_string(line) for line in GOLD]
    test = [Tree.from_string(line) for line in TEST]
    scores = score_parses(gold, test)
    # Categories: every bracket right (EVALB cuts "-LOC", "-SBJ").
    assert scores.fscore == 100.0
    (tmp_path / "gold").write_text("\n".join(GOLD) + "\n")
    (tmp_path / "test").write_text("\n".join(TEST) + "\n")
    assert scores.evalb.to_dict() == evaluate_files(tmp_path / "gold", tmp_path / "test").to_dict()
    # Full labels: 8 brackets each side, PP-LOC and NP-SBJ of the second tree missed.
    assert (scores.functions.labelled.matched, scores.functions.labelled.gold) == (6, 8)
    assert scores.function_fscore == pytest.approx(75.0)
    figures = scores.to_dict()
    assert figures["bracketing_fscore"] == 100.0 and figures["labelled_function_fscore"] == 75.0
    assert "seconds" not in figures  # no parser ran


def test_score_parses_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="E014"):
        score_parses([Tree.from_string(GOLD[0])], [])


def test_evaluate_parses_gold_words_and_scores_like_the_parts(small_parser, ptb_small):
    gold = list(ptb_small[1][:10])
    scores = spacy_lpcfg.evaluate(small_parser, gold)
    assert [tree.words() for tree in scores.parses] == [tree.words() for tree in gold]
    expected = score_trees(gold, scores.parses).to_dict()
    assert scores.evalb.to_dict() == expected
    assert scores.functions == function_scores(gold, scores.parses)
    assert 50 < scores.fscore < 100  # a real parser on real sentences
    figures = scores.to_dict()
    assert figures["sentences"] == 10 and figures["seconds"] > 0
    assert figures["decoder"] == small_parser.decoder
    assert figures["sentences_per_second"] == pytest.approx(10 / scores.seconds, rel=0.01)


def test_evaluate_checks_before_parsing(small_parser):
    with pytest.raises(ValueError, match="E025"):
        spacy_lpcfg.evaluate(small_parser, [])
    with pytest.raises((OSError, ValueError)):
        spacy_lpcfg.evaluate(small_parser, [Tree.from_string(GOLD[0])], params="no_such.prm")
