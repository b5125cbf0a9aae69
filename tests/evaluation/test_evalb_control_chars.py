"""Control characters in EVALB input: NUL, ESC and the other C0 characters.

EVALB reads each line with fgets(), so a NUL byte stays in its buffer. Its
reader copies a label or word up to a terminator (space, ``(`` or ``)``), and NUL
is none, so the word is read whole; but it is stored and compared as a C string,
which ends at the NUL. Where a token would begin, the NUL ends the line (the
reading loop stops at it). Every other control character is an ordinary byte.
"""

from __future__ import annotations

from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.evaluation import score_lines, score_trees
from spacy_lpcfg.evaluation.report import ERROR, SKIP, VALID
from spacy_lpcfg.trees import parse_tree
from spacy_lpcfg.trees.tree import Tree

runner = CliRunner()


def _line(word: str, tag: str = "NN") -> str:
    return f"(TOP (S (NP ({tag} {word})) (VP (VB go))))"


def _row(gold: str, test: str):
    result = score_lines([gold], [test])
    assert not result.aborted
    (row,) = result.rows
    return row, result.messages


def test_nul_inside_a_word_is_scored():
    row, messages = _row(_line("a\0b"), _line("a\0b"))
    assert messages == []
    assert (row.status, row.matched, row.gold_brackets, row.test_brackets) == (VALID, 3, 3, 3)
    assert (row.words, row.correct_tags) == (2, 2)


def test_nul_ends_the_word_as_a_c_string():
    # strcmp() compares up to the NUL: "a\0b" and "a\0c" are both "a"...
    row, messages = _row(_line("a\0b"), _line("a\0c"))
    assert (row.status, row.matched, messages) == (VALID, 3, [])
    row, messages = _row(_line("a\0b"), _line("a"))
    assert (row.status, row.matched, messages) == (VALID, 3, [])
    # ... and EVALB's message quotes the word up to it.
    row, messages = _row(_line("a\0b"), _line("ab"))
    assert row.status == ERROR and messages == ["1 : Words unmatch (a|ab)"]


def test_nul_in_a_tag_or_label_cuts_it():
    row, _ = _row(_line("a", "NN\0X"), _line("a", "NN"))
    assert (row.status, row.correct_tags) == (VALID, 2)
    gold = "(TOP (S (NP\0X (NN a)) (VP (VB go))))"
    row, _ = _row(gold, _line("a"))
    assert (row.status, row.matched, row.gold_brackets) == (VALID, 3, 3)


def test_nul_where_a_token_begins_ends_the_line():
    row, messages = _row(_line("a"), "(TOP (S (NP (NN a)) \0(VP (VB go))))")
    assert row.status == ERROR
    assert messages == [
        "1 : Bracketing is unbalanced (too many open bracket)",
        "1 : Length unmatch (2|1)",
    ]
    row, _ = _row(_line("a"), "\0" + _line("a"))
    assert row.status == SKIP  # no word read: a parser failure


def test_esc_and_other_c0_characters_are_word_bytes():
    for char in ["\x1b", "\x01", "\x07", "\x1c", "\x1f", "\x7f"]:
        row, messages = _row(_line(f"a{char}b"), _line(f"a{char}b"))
        assert (row.status, row.matched, messages) == (VALID, 3, []), repr(char)
    row, messages = _row(_line("a\x1bb"), _line("a\x1bc"))
    assert row.status == ERROR and messages == ["1 : Words unmatch (a\x1bb|a\x1bc)"]


def test_a_tree_written_with_control_escapes_pairs_with_raw_gold():
    # ``Tree.pformat`` writes control characters escaped; the scorer compares the
    # words they stand for, so a parse written that way scores against raw gold.
    for word in ["a\x1bb", "a\0b", "\x9b"]:
        written = Tree("TOP", (Tree.leaf("NN", word),)).pformat()
        assert word not in written
        row, messages = _row(f"(TOP (NN {word}))", written)
        assert (row.status, messages) == (VALID, []), repr(word)
        result = score_trees([parse_tree(f"(TOP (NN {word}))")], [parse_tree(written)])
        assert result.rows[0].status == VALID and not result.messages


def test_evaluate_command_scores_nul_and_esc_words(tmp_path):
    gold, test = tmp_path / "gold.txt", tmp_path / "test.txt"
    lines = [_line("a\0b"), _line("c\x1bd"), _line("e\x00\x1bf")]
    gold.write_bytes(("\n".join(lines) + "\n").encode())
    test.write_bytes(("\n".join(lines) + "\n").encode())
    result = runner.invoke(app, ["evaluate", str(gold), str(test)])
    assert result.exit_code == 0, result.stderr
    assert "Number of Valid sentence  =      3" in result.stdout
    assert "Bracketing FMeasure       = 100.00" in result.stdout
    assert "Tagging accuracy          = 100.00" in result.stdout
