"""Fuzzing EVALB: mutated and random gold/test lines, files and the ``evaluate`` command.

EVALB semantics turn malformed lines into per-sentence errors and messages, not
exceptions: ``score_lines`` never raises, and its report always formats.
``evaluate_files`` raises only for files it cannot read or decode, and the
command exits 0, or 1 (EVALB's abort, or a one-line ``error:``), never with a
traceback.
"""

from __future__ import annotations

import json
import math

from fuzz_support import (
    assert_clean_exit,
    bracket_text,
    fuzz,
    mutated,
    outcome,
)
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.errors import TreebankFormatError
from spacy_lpcfg.evaluation import evaluate_files, score_lines, score_trees
from spacy_lpcfg.trees.brackets import CONTROL_CHARACTERS, parse_tree
from spacy_lpcfg.trees.formats import read_treebank
from spacy_lpcfg.trees.tree import Tree

PARAMS = st.sampled_from(["collins", "spmrl"])
runner = CliRunner()


def _gold_lines(seeds, fuzz_dir) -> list[str]:
    """The seed PTB trees, one bracketed line each, as EVALB reads them."""
    path = fuzz_dir / "gold_seed.mrg"
    path.write_bytes(seeds["penn"])
    return [tree.pformat() for tree in read_treebank(path)]


@st.composite
def line_pairs(draw, gold: list[str]) -> tuple[bytes, bytes]:
    """(gold file, test file): the gold lines, each side possibly mutated, or random."""
    text = "\n".join(gold) + "\n"
    sides = []
    for _ in range(2):
        sides.append(
            draw(
                st.one_of(
                    st.just(text.encode()),
                    mutated(text.encode()),
                    bracket_text().map(str.encode),
                    st.binary(max_size=300),
                )
            )
        )
    return sides[0], sides[1]


def _check_result(result) -> None:
    report = result.format()
    assert isinstance(report, str)
    payload = result.to_dict()
    # The command prints it as UTF-8 JSON (labels may hold bytes that were not UTF-8).
    json.dumps(payload, ensure_ascii=False).encode("utf-8")
    for key in ("bracketing_fscore", "tagging_accuracy"):
        value = payload.get(key)
        assert value is None or isinstance(value, (int, float)) and not math.isinf(value)


@fuzz(150)
@given(
    gold=st.lists(st.one_of(bracket_text(), st.text(max_size=80)), max_size=4),
    test=st.lists(st.one_of(bracket_text(), st.text(max_size=80)), max_size=4),
    params=PARAMS,
)
def test_score_lines_never_raises(gold, test, params):
    _check_result(score_lines(gold, test, params))


@fuzz(100)
@given(data=st.data(), params=PARAMS)
def test_score_lines_on_mutated_trees(seeds, fuzz_dir, data, params):
    gold = _gold_lines(seeds, fuzz_dir)
    gold_text, test_text = data.draw(line_pairs(gold))
    decode = lambda raw: raw.decode("utf-8", "surrogateescape")  # noqa: E731
    result = score_lines(decode(gold_text), decode(test_text), params)
    _check_result(result)
    if gold_text == test_text and not result.messages:  # a file against itself
        for row in result.rows:
            assert row.matched == row.gold_brackets == row.test_brackets
            assert row.crossing == 0 and row.correct_tags == row.words


@fuzz(100)
@given(
    data=st.data(), params=PARAMS, encoding=st.sampled_from([None, "utf-8", "latin-1", "utf-16"])
)
def test_evaluate_files_raises_only_decoding_errors(seeds, fuzz_dir, data, params, encoding):
    gold_bytes, test_bytes = data.draw(line_pairs(_gold_lines(seeds, fuzz_dir)))
    gold, test = fuzz_dir / "gold.txt", fuzz_dir / "test.txt"
    gold.write_bytes(gold_bytes)
    test.write_bytes(test_bytes)
    result, error = outcome(evaluate_files, gold, test, params, encoding=encoding)
    if error is not None:
        assert encoding is not None and isinstance(error, TreebankFormatError), repr(error)
    else:
        _check_result(result)


@fuzz(12)
@given(data=st.data(), as_json=st.booleans(), encoding=st.sampled_from([None, "latin-1", "utf-16"]))
def test_evaluate_command_exits_cleanly(seeds, fuzz_dir, data, as_json, encoding):
    gold_bytes, test_bytes = data.draw(line_pairs(_gold_lines(seeds, fuzz_dir)))
    gold, test = fuzz_dir / "cli_gold.txt", fuzz_dir / "cli_test.txt"
    gold.write_bytes(gold_bytes)
    test.write_bytes(test_bytes)
    args = ["evaluate", str(gold), str(test)] + (["--json"] if as_json else [])
    args += ["--encoding", encoding] if encoding else []
    result = runner.invoke(app, args)
    assert_clean_exit(result, evalb_abort=True)
    if result.exit_code == 0 and as_json:
        assert "sentences" in json.loads(result.stdout)


def test_evaluate_json_with_a_label_that_is_not_utf8(fuzz_dir):
    """Found by the long run: a non-UTF-8 byte in a label reached --json output as a lone
    surrogate, and printing it raised UnicodeEncodeError. It is written \\x80 now."""
    gold, test = fuzz_dir / "gold_label.txt", fuzz_dir / "test_label.txt"
    gold.write_bytes(b"(TOP (S (NP (NN a)) (VP (VB b))))\n")
    test.write_bytes(b"(TOP (S (\x80P (NN a)) (VP (VB b))))\n")
    result = runner.invoke(app, ["evaluate", str(gold), str(test), "--json"])
    assert_clean_exit(result)
    assert result.exit_code == 0
    assert "\\x80P" in json.loads(result.stdout)["per_label"]


# Words EVALB reads raw: control characters (NUL too, but not C whitespace) and the
# pieces of their written escapes, never whitespace or a bracket.
RAW_WORDS = st.lists(
    st.one_of(
        st.sampled_from([char for char in CONTROL_CHARACTERS if char not in "\t\n\v\f\r"]),
        st.sampled_from(["a", "-", "U+", "00", "1B", "LRB", "é"]),
    ),
    min_size=1,
    max_size=6,
).map("".join)


@fuzz(150)
@given(words=st.lists(RAW_WORDS, min_size=1, max_size=5), params=PARAMS)
def test_a_parse_written_with_control_escapes_scores_against_raw_gold(words, params):
    """Gold holding raw control characters against the same tree as ``pformat`` writes
    it (escaped): a full match, read from lines (either side raw) or as trees, and no
    control character in the written line."""
    tree = Tree("TOP", (Tree("S", tuple(Tree.leaf("NN", word) for word in words)),))
    raw_line = "(TOP (S " + " ".join(f"(NN {word})" for word in words) + "))"
    written = tree.pformat()
    assert not any(char in CONTROL_CHARACTERS for char in written)
    for result in (
        score_lines([raw_line], [written], params),
        score_lines([written], [raw_line], params),
        score_trees([tree], [parse_tree(written)], params),
    ):
        assert not result.messages, (result.messages, raw_line, written)
        (row,) = result.rows
        assert row.matched == row.gold_brackets == row.test_brackets
        assert row.correct_tags == row.words == len(words)
