"""The registered EVALB constituency scorer (spacy_lpcfg.constituency_scorer.v1)."""

from __future__ import annotations

import pickle

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry

from spacy_lpcfg.evaluation import function_scores, score_trees
from spacy_lpcfg.pipeline import tree_to_doc
from spacy_lpcfg.trees import Tree

scorer = registry.scorers.get("spacy_lpcfg.constituency_scorer.v1")()
VOCAB = spacy.blank("en").vocab
GOLD = (
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP-LOC (IN on) (NP (DT the) (NN mat))))"
    " (. .)))"
)
TEST = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP-LOC (IN on)) (NP (DT the) (NN mat))) (. .)))"
)


def example(gold: str, test: str, scheme: str = "penn") -> Example:
    predicted = tree_to_doc(VOCAB, Tree.from_string(test), scheme=scheme)
    return Example(predicted, tree_to_doc(VOCAB, Tree.from_string(gold), scheme=scheme))


def test_scorer_oracle_scores_one():
    scores = scorer([example(GOLD, GOLD)])
    for key in ("p", "r", "f", "func_p", "func_r", "func_f", "exact", "tag_acc"):
        assert scores[f"constituents_{key}"] == 1.0, key
    assert scores["spans_constituents_f"] == 1.0
    assert scores["constituents_per_label"]["NP"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert scores["spans_constituents_per_type"] == scores["constituents_per_label"]


def test_scorer_is_evalb_on_the_trees():
    gold, test = [Tree.from_string(GOLD)], [Tree.from_string(TEST)]
    scores = scorer([example(GOLD, TEST)])
    evalb = score_trees(gold, test).summary()
    full = function_scores(gold, test).labelled
    assert scores["constituents_p"] == pytest.approx(evalb.precision / 100)
    assert scores["constituents_r"] == pytest.approx(evalb.recall / 100)
    assert scores["constituents_func_p"] == pytest.approx(full.precision / 100)
    assert scores["constituents_func_f"] < scores["constituents_f"] < 1.0  # NP-SBJ lost its tag


def test_scorer_counts_brackets_as_a_multiset():
    # A unary NP over NP is two brackets (EVALB); a set of spans would score 1.0.
    gold = "(TOP (S (NP (NP (DT a) (NN b))) (VP (VBZ c))))"
    test = "(TOP (S (NP (DT a) (NN b)) (VP (VBZ c))))"
    scores = scorer([example(gold, test)])
    assert scores["constituents_r"] == pytest.approx(3 / 4)
    assert scores["constituents_p"] == 1.0


def test_scorer_strips_functions_with_the_label_scheme():
    gold = "(TOP (STA+fcl (SUBJ+np (H+prop Ana)) (P+v-fin (H+v-fin sorriu))))"
    test = "(TOP (STA+fcl (ACC+np (H+prop Ana)) (P+v-fin (H+v-fin sorriu))))"
    scores = scorer([example(gold, test, scheme="floresta")])
    assert scores["constituents_f"] == 1.0  # np == np
    assert scores["constituents_func_f"] < 1.0  # SUBJ+np != ACC+np


def test_scorer_handles_another_tokenisation_of_the_text():
    words, tags = ["I", "don't", "know", "."], ["PRP", "VBP", "VB", "."]
    reference = Doc(VOCAB, words=words, spaces=[True, True, False, False], tags=tags)
    reference.spans["constituents"] = [
        Span(reference, 0, 4, label="S"),
        Span(reference, 1, 3, label="VP"),
    ]
    predicted = spacy.blank("en").make_doc(reference.text)  # I do n't know .
    predicted.spans["constituents"] = [
        Span(predicted, 0, 5, label="S"),
        Span(predicted, 1, 4, label="VP"),
        Span(predicted, 1, 2, label="VB"),  # "do": no reference token ends there
    ]
    for token, tag in zip(predicted, ["PRP", "VBP", "RB", "VB", "."]):
        token.tag_ = tag
    scores = scorer([Example(predicted, reference)])
    # Brackets move to the reference tokens by characters; "do" cannot and is dropped.
    assert scores["constituents_r"] == 1.0 and scores["constituents_p"] == 1.0
    # EVALB drops "." (COLLINS.prm); "don't" has no predicted token of its own.
    assert scores["constituents_tag_acc"] == pytest.approx(2 / 3)


def test_scorer_without_reference_constituents_gives_none():
    doc = spacy.blank("en")("No parse here")
    scores = scorer([Example(doc, doc)])
    assert scores["constituents_f"] is None and scores["constituents_per_label"] is None


def test_scorer_pickles_and_accepts_pipe_keywords():
    scores = pickle.loads(pickle.dumps(scorer))(
        [example(GOLD, GOLD)], spans_key="constituents", labels=("S",)
    )
    assert scores["constituents_f"] == 1.0
