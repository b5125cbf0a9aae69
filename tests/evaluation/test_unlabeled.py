"""``unlabeled_scores`` pairs each predicted tree with the gold tree over the same words."""

from __future__ import annotations

import re

import pytest

from spacy_lpcfg.evaluation.unlabeled import unlabeled_scores
from spacy_lpcfg.trees.tree import Tree

CAT = "(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat)) (. .)))"
DOG = "(TOP (S (NP (DT a) (NN dog)) (VP (VBD ran)) (. !)))"


def trees(*lines: str) -> list[Tree]:
    return [Tree.from_string(line) for line in lines]


def test_swapped_trees_of_equal_length_raise_naming_the_sentence():
    with pytest.raises(ValueError, match=r"^\[LPCFG-E0\d\d\] Sentence 1\b") as error:
        unlabeled_scores(trees(CAT, DOG), trees(DOG, CAT))
    message = str(error.value)
    assert "'the cat sat'" in message and "'a dog ran'" in message


def test_a_shifted_file_raises_at_the_first_sentence_out_of_place():
    gold = trees(CAT, CAT, DOG)
    with pytest.raises(ValueError, match=r"Sentence 3\b"):
        unlabeled_scores(gold, trees(CAT, CAT, CAT))


def test_word_counts_are_checked_first_and_name_the_sentence():
    with pytest.raises(ValueError, match=r"^\[LPCFG-E0\d\d\] Sentence 2\b.*4 gold words.* 3 pre"):
        unlabeled_scores(trees(CAT, CAT), trees(CAT, "(TOP (X (X a) (X b) (X c)))"))


def test_punctuation_words_are_not_compared():
    # As EVALB deletes punctuation before it compares words: only kept words count.
    test = CAT.replace("(. .)", "(. ?)")
    scores = unlabeled_scores(trees(CAT), trees(test), max_length=None)
    assert scores.f1 == 100.0


def test_words_written_with_control_escapes_match_raw_gold():
    gold = Tree("TOP", (Tree("S", (Tree.leaf("NN", "a\x1bb"), Tree.leaf("NN", "c\0"))),))
    written = Tree.from_string(gold.pformat())
    assert written.words() != gold.words()  # escaped as written
    assert unlabeled_scores([gold], [written]).n_sentences == 1


def test_the_excerpt_of_a_long_sentence_stays_short():
    long_gold = "(TOP (S " + " ".join(f"(NN w{i})" for i in range(200)) + "))"
    long_test = long_gold.replace("(NN w5)", "(NN v5)")
    with pytest.raises(ValueError) as error:
        unlabeled_scores(trees(long_gold), trees(long_test), max_length=None)
    assert len(str(error.value)) < 400 and "w199" not in str(error.value)
    assert re.search(r"'w5 w6.*'v5 w6", str(error.value))


@pytest.mark.parametrize("max_length", [0, -1])
def test_max_length_below_one_is_refused(max_length):
    with pytest.raises(ValueError, match=r"^\[LPCFG-E0\d\d\] .*max_length.*" + str(max_length)):
        unlabeled_scores(trees(CAT), trees(CAT), max_length=max_length)


def test_max_length_none_and_one_are_accepted():
    assert unlabeled_scores(trees(CAT), trees(CAT), max_length=None).n_sentences == 1
    assert unlabeled_scores(trees(CAT), trees(CAT), max_length=1).n_sentences == 0
