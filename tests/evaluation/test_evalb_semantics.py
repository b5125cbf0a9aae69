"""EVALB semantics on small hand-computed examples (counts worked out from EVALB's rules)."""

from __future__ import annotations

import pytest

from spacy_lpcfg.evaluation import EvalbParams, evaluate_files, score_lines, score_trees
from spacy_lpcfg.trees import parse_tree


def _row(gold: str, test: str, params="collins"):
    result = score_lines([gold], [test], params)
    assert len(result.rows) == 1
    return result.rows[0]


def _counts(row):
    return (row.status, row.matched, row.gold_brackets, row.test_brackets, row.crossing)


@pytest.mark.parametrize("read", ["lines", "trees"])
def test_duplicate_unary_brackets_match_one_to_one(read):
    gold, test = "(TOP (NP (NP (NN x))))", "(TOP (NP (NN x)))"
    if read == "lines":
        result = score_lines([gold, test, gold], [test, gold, gold])
    else:
        trees = [parse_tree(gold), parse_tree(test), parse_tree(gold)]
        result = score_trees(trees, [trees[1], trees[0], trees[2]])
    assert [(r.matched, r.gold_brackets, r.test_brackets) for r in result.rows] == [
        (1, 2, 1),
        (1, 1, 2),
        (2, 2, 2),
    ]
    assert result.summary().matched == 4


def test_crossing_counts_test_brackets():
    gold = "(TOP (S (NP (DT a) (NN b)) (VP (VB c) (NN d))))"
    test = "(TOP (S (DT a) (X (NN b) (VB c)) (NN d)))"
    row = _row(gold, test)
    # X(1,3) crosses both NP(0,2) and VP(2,4) but is one crossing test bracket.
    assert _counts(row) == (0, 1, 3, 2, 1)
    assert row.format() == (
        "   1    4    0   33.33  50.00     1      3    2      1      4     4   100.00\n"
    )


def test_equivalent_and_unlabelled_matching():
    gold, test = "(TOP (S (VB go) (PRT out)))", "(TOP (S (VB go) (ADVP out)))"
    # EVALB compares tags with EQ_LABEL too.
    assert _row(gold, test).correct_tags == 2
    assert _row(gold, test, EvalbParams()).correct_tags == 1
    gold = "(TOP (S (VB go) (PRT-CLR (RP out))))"
    test = "(TOP (S (VB go) (ADVP (RP out))))"
    assert _counts(_row(gold, test)) == (0, 2, 2, 2, 0)
    no_equivalence = EvalbParams.collins().replace(equivalent_labels=())
    assert _counts(_row(gold, test, no_equivalence)) == (0, 1, 2, 2, 0)
    unlabelled = no_equivalence.replace(labeled=False)
    assert _counts(_row(gold, test, unlabelled)) == (0, 2, 2, 2, 0)


def test_spmrl_cuts_at_hash_and_cuts_tags():
    gold = "(TOP (NP#sg (NN-X a) (NN b)))"
    test = "(TOP (NP (NN a) (NN b)))"
    collins, spmrl = _row(gold, test), _row(gold, test, "spmrl")
    assert (collins.matched, collins.correct_tags) == (0, 1)
    assert (spmrl.matched, spmrl.correct_tags) == (1, 2)


def test_spmrl_one_word_length_mismatch_gives_two_rows():
    gold, test = "(TOP (X (NN a)))", "(TOP (X (NN a) (NN b)))"
    spmrl = score_lines([gold], [test], "spmrl")
    assert spmrl.messages == []
    assert [(r.id, _counts(r), r.words, r.correct_tags) for r in spmrl.rows] == [
        (1, (0, 0, 0, 0, 0), 0, 0),
        (1, (0, 0, 1, 1, 0), 1, 1),
    ]
    assert spmrl.summary().sentences == 2
    collins = score_lines([gold], [test], "collins")
    assert collins.messages == ["1 : Length unmatch (1|2)"]
    assert _counts(collins.rows[0])[0] == 1


def test_quote_terminal_is_reinserted():
    gold = "(TOP (S (NP (NP (NNS dogs) (POS ')) (NN food)) (VP (VBZ is)) (. .)))"
    test = "(TOP (S (NP (NP (NNS dogs) ('' ')) (NN food)) (VP (VBZ is)) (. .)))"
    plain = score_lines([gold], [test])
    assert plain.messages == ["1 : Length unmatch (4|3)"]
    params = EvalbParams.collins().replace(quote_labels=("''", "POS"))
    row = _row(gold, test, params)
    assert (row.length, *_counts(row), row.words, row.correct_tags) == (5, 0, 4, 4, 4, 0, 4, 3)


def test_unbalanced_line_is_an_error_but_scored():
    gold = "(TOP (S (NP (NN a)) (VP (VB b))))"
    result = score_lines([gold], ["(TOP (S (NP (NN a)) (VP (VB b))"])
    assert result.messages == ["1 : Bracketing is unbalanced (too many open bracket)"]
    row = result.rows[0]
    assert row.format() == (
        "   1    2    1   66.67  66.67     2      3    3      0      2     2   100.00\n"
    )
    assert result.summary().error_sentences == 1
    extra_close = score_lines(["(TOP (S (NN a)))"], ["(TOP (S (NN a))))"])
    assert extra_close.messages == ["1 : Bracketing is unbalanced (too many open bracket)"]
    assert _counts(extra_close.rows[0]) == (1, 1, 1, 1, 0)


@pytest.mark.parametrize(
    "test,first",
    [
        ("(TOP (S (NN a))) x", "1 : Reading sentence"),
        ("(TOP (S (NN a b)))", "1 : More than two elements in a bracket"),
    ],
)
def test_unreadable_text_aborts_like_evalb(test, first):
    # EVALB cannot read past the character and repeats the error until MAX_ERROR.
    result = score_lines(["(TOP (S (NN a)))", "(TOP (S (NN a)))"], [test, test])
    assert result.aborted and result.exit_status == 1
    assert result.rows == []
    assert result.messages[0] == first
    assert result.messages[1:] == ["1 : Reading sentence"] * 11
    assert result.format().count("\n") == 3  # the header only


def test_line_count_mismatch_is_reported():
    line = "(TOP (S (NN a)))"
    more_gold = score_lines([line, line], [line])
    assert more_gold.messages == ["2 : Number of lines unmatch (too many lines in gold file)"]
    assert len(more_gold.rows) == 1 and not more_gold.aborted
    more_test = score_lines([line], [line, line])
    assert more_test.messages == ["2 : Number of lines unmatch (too many lines in test file)"]
    assert "=== Summary ===" in more_test.format()
    with pytest.raises(ValueError, match=r"\[LPCFG-E014\]"):
        score_trees([parse_tree(line)], [])


def test_skips_errors_and_empty_gold():
    line = "(TOP (S (NN a)))"
    result = score_lines([line, line, line, "(())"], ["(())", "", "(TOP (S (NN b)))", line])
    assert [r.status for r in result.rows] == [2, 2, 1, 1]
    assert result.messages == ["3 : Words unmatch (a|b)", "4 : Length unmatch (0|1)"]
    trees = score_trees([parse_tree(line)], [None])
    assert trees.rows[0].status == 2


def test_words_compare_with_eq_word_and_c_whitespace():
    gold, test = "(TOP (S (NN colour)))", "(TOP (S (NN color)))"
    assert score_lines([gold], [test]).messages == ["1 : Words unmatch (colour|color)"]
    params = EvalbParams.collins().replace(equivalent_words=(("colour", "color"),))
    assert _row(gold, test, params).matched == 1
    # \v is C whitespace; a no-break space is part of a word.
    assert _row("(TOP (S (NN\va)))", "(TOP (S (NN a)))").matched == 1
    assert score_lines(["(TOP (S (NN a\u00a0b)))"], ["(TOP (S (NN a)))"]).messages == [
        "1 : Words unmatch (a\u00a0b|a)"
    ]


def test_tables_and_exact_match():
    flat = "(TOP (S " + " ".join(f"(NN w{i})" for i in range(12)) + "))"
    gold = [
        "(TOP (S (NP (DT the) (NN dog)) (VP (VBD ran))))",
        "(TOP (S (NP (NNP Kim)) (VP (VBD saw) (NP (NNP Lee)))))",
        "(TOP (S (NP (PRP it)) (VP (VBD fell) (PRT (RP down)))))",
        flat,
    ]
    test = [
        gold[0],
        "(TOP (S (NP (NNP Kim)) (VP (VBD saw) (NP (NN Lee)))))",
        "(TOP (S (NP (PRP it)) (VP (VBD fell) (ADVP (RP down)))))",
        flat,
    ]
    result = score_lines(gold, test)
    summary = result.summary()
    assert (summary.complete_sentences, summary.exact_sentences) == (4, 3)
    assert result.to_dict()["exact_match"] == 75.0
    labels = result.label_scores()
    assert list(labels) == ["NP", "S", "VP", "PRT", "ADVP"]
    assert (labels["NP"].gold, labels["NP"].test, labels["NP"].matched) == (4, 4, 4)
    # ADVP matched PRT: recall is counted on the gold label, precision on the test label.
    assert (labels["PRT"].recall, labels["PRT"].precision) == (100.0, 0.0)
    assert (labels["ADVP"].recall, labels["ADVP"].precision) == (0.0, 100.0)
    buckets = result.length_scores()
    assert [(b.min_length, b.max_length, b.summary.sentences) for b in buckets] == [
        (1, 10, 3),
        (11, 20, 1),
    ]
    assert result.to_dict()["per_length"][1]["bracketing_fscore"] == 100.0


def test_files_are_read_as_bytes_split_at_newlines(tmp_path):
    gold, test = tmp_path / "gold", tmp_path / "test"
    gold.write_bytes(b"(TOP (S (NN caf\xe9)))\r\n(TOP (S (NN b)))")  # Latin-1, no final newline
    test.write_bytes(b"(TOP (S (NN caf\xe9)))\n(TOP (S (NN b)))\n")
    result = evaluate_files(gold, test)
    assert result.messages == []
    assert [row.matched for row in result.rows] == [1, 1]
