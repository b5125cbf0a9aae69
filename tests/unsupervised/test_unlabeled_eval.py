"""Unlabelled bracket scores on hand-made trees with figures computed by hand."""

from __future__ import annotations

import pytest

from spacy_lpcfg.evaluation.unlabeled import is_punctuation_tag, unlabeled_scores
from spacy_lpcfg.trees.tree import Tree

GOLD = [
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))",
    "(TOP (S (NP (PRP It)) (VP (VBZ rains)) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD barked))))",
    "(TOP (S " + " ".join(f"(NN w{i})" for i in range(12)) + "))",
]
PREDICTED = [
    # right-branching over the content words; the period hangs at the top
    "(TOP (X (X (X the) (X (X cat) (X (X sat) (X (X on) (X (X the) (X mat)))))) (X .)))",
    "(TOP (X (X It) (X rains) (X .)))",
    "(TOP (X (X (X (X a) (X big)) (X dog)) (X barked)))",
    "(TOP (X " + " ".join(f"(X w{i})" for i in range(12)) + "))",
]


def trees(lines):
    return [Tree.from_string(line) for line in lines]


def test_scores_by_hand():
    scores = unlabeled_scores(trees(GOLD), trees(PREDICTED), max_length=10)
    # sentence 1: gold {(0,2),(2,6),(3,6),(4,6)}, predicted {(1,6),(2,6),(3,6),(4,6)}: 3 matched
    # sentence 2: no brackets on either side; sentence 3: gold {(0,3)}, predicted {(0,2),(0,3)}
    # sentence 4: 12 words, above the bound
    assert (scores.matched, scores.gold, scores.predicted) == (4, 5, 6)
    assert (scores.n_sentences, scores.n_averaged) == (3, 2)
    assert scores.precision == pytest.approx(100 * 4 / 6)
    assert scores.recall == pytest.approx(80.0)
    assert scores.f1 == pytest.approx(2 * (4 / 6) * 0.8 / (4 / 6 + 0.8) * 100)
    assert scores.sentence_precision == pytest.approx((75 + 50) / 2)
    assert scores.sentence_recall == pytest.approx((75 + 100) / 2)
    assert scores.sentence_f1 == pytest.approx((75 + 200 / 3) / 2)


def test_length_bound_counts_words_without_punctuation():
    scores = unlabeled_scores(trees(GOLD), trees(PREDICTED), max_length=None)
    assert scores.n_sentences == 4
    assert scores.gold == 5  # the flat 12-word sentence has no bracket but the sentence
    assert scores.predicted == 6


def test_a_perfect_parse_scores_100():
    gold = trees(GOLD[:1])
    scores = unlabeled_scores(gold, gold, max_length=40)
    assert (scores.f1, scores.sentence_f1) == (100.0, 100.0)


def test_mismatched_words_raise():
    with pytest.raises(ValueError):
        unlabeled_scores(trees(GOLD[:1]), trees(PREDICTED[1:2]))


@pytest.mark.parametrize(
    "tag, expected",
    [(",", True), ("-LRB-", True), ("$", True), ("Fc", True), ("Fpa", True), ("«", True),
     ("-NONE-", True), ("NN", False), ("fc", False), ("Z", False), ("N-A", False), ("H+n", False)],
)  # fmt: skip
def test_punctuation_tags_of_the_bundled_treebanks(tag, expected):
    assert is_punctuation_tag(tag) is expected
