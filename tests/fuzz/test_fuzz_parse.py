"""Fuzzing parsing: ``Parser.parse(words, tags)`` and the ``parse`` command, over random
unicode tokens (brackets, slashes, escapes, control and whitespace-like characters,
emoji, combining marks, very long tokens), empty lines and malformed ``--tagged`` pairs.

A parse is a TOP-rooted tree over exactly the given words; its bracketed line reads
back, giving each word as ``writable_word`` writes it, and ``unescape_word`` gives
the word itself back (for words without whitespace or "-", see
``test_escaped_words_read_back``).
"""

from __future__ import annotations

import re

import pytest
from fuzz_support import TOKENS, WHITESPACE, assert_clean_exit, fuzz, outcome
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.trees.brackets import parse_tree, unescape_word, writable_word
from spacy_lpcfg.trees.tree import ROOT_LABEL

runner = CliRunner()


def _check_parse(tree, words: list[str]) -> None:
    assert tree.label == ROOT_LABEL and tree.words() == words
    line = tree.pformat()
    assert "\n" not in line
    read = parse_tree(line)
    assert read.words() == [writable_word(word) for word in words]
    assert read.tags() == tree.tags()
    for word, written in zip(words, read.words()):
        if not re.search(r"[\s-]", word):
            assert unescape_word(written) == word


@st.composite
def tag_lists(draw, n: int, known: list[str]):
    """None, or one tag per word: the grammar's tags, junk, empty strings and None."""
    if draw(st.booleans()):
        return None
    tag = st.one_of(st.sampled_from(known), st.text(max_size=5), st.none())
    return draw(st.lists(tag, min_size=n, max_size=n))


@pytest.mark.filterwarnings("ignore:.W301.:UserWarning")  # junk tags, on purpose
@fuzz(200)
@given(data=st.data(), words=st.lists(TOKENS.filter(bool), min_size=1, max_size=12))
def test_parser_parses_any_tokens(ptb_parser, data, words):
    known = sorted(ptb_parser.model.lexicon.tags)
    tags = data.draw(tag_lists(len(words), known))
    parse, error = outcome(ptb_parser.parse, words, tags)
    if error is None:
        _check_parse(parse.tree, words)
    else:
        raise AssertionError(f"a sentence of words must parse: {error!r}")


@fuzz(5)
@given(word=TOKENS.filter(bool), n=st.sampled_from([151, 400]))
def test_parser_long_sentences_fall_back_to_a_flat_tree(ptb_parser, word, n):
    parse = ptb_parser.parse([word] * n)
    assert parse.fallback == "too_long"
    _check_parse(parse.tree, [word] * n)


def test_parser_rejects_what_is_no_sentence(ptb_parser):
    """An empty sentence, or tags that do not match the words, raise the project's error."""
    for words, tags in (([], None), (["a", "b"], ["NN"]), (["a"], ["NN", "VB"])):
        with pytest.raises(ValueError, match=r"\[LPCFG-E120\]"):
            ptb_parser.parse(words, tags)


def test_parser_refuses_an_empty_word(ptb_parser):
    """Found by the fuzzer: an empty word was parsed into a tree printing '(TAG )',
    which does not read back; it is refused now."""
    with pytest.raises(ValueError, match=r"\[LPCFG-E\d{3}\]"):
        ptb_parser.parse(["a", ""])


# The parse command ------------------------------------------------------------------

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what the command's universal-newline reading splits at


def _input_lines(text: str) -> list[str]:
    lines = _NEWLINE.split(text)
    return lines[:-1] if lines[-1] == "" else lines


@st.composite
def input_text(draw, tagged: bool) -> str:
    """Lines of tokens joined by whitespace runs; empty and blank lines; with ``tagged``
    mostly word/TAG tokens, some malformed (no slash, empty word or tag)."""
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["tokens", "tokens", "tokens", "empty", "blank"]))
        if kind == "empty":
            lines.append("")
            continue
        if kind == "blank":
            lines.append(draw(st.lists(WHITESPACE, min_size=1, max_size=3).map("".join)))
            continue
        tokens = draw(st.lists(TOKENS, min_size=1, max_size=8))
        if tagged:
            tags = st.one_of(st.sampled_from(["NN", "DT", "VBZ", ".", "-LRB-", "X"]), TOKENS)
            tokens = [
                token + draw(st.sampled_from(["/", "/", "/", "", "//"])) + draw(tags)
                if draw(st.integers(0, 9))
                else token
                for token in tokens
            ]
        line = ""
        for token in tokens:
            line += token + draw(st.lists(WHITESPACE, min_size=1, max_size=2).map("".join))
        lines.append(line)
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return ending.join(lines) + draw(st.sampled_from(["", ending]))


def _expected_words(line: str, tagged: bool) -> list[str] | None:
    """The words the command parses on a line; None when ``--tagged`` must refuse it."""
    tokens = line.split()
    if not tagged:
        return tokens
    pairs = [token.rpartition("/") for token in tokens]
    if not all(word and sep and tag for word, sep, tag in pairs):
        return None
    return [word for word, _, _ in pairs]


def _check_command_output(result, text: str, tagged: bool, name: str) -> None:
    lines = _input_lines(text)
    outputs = result.stdout.split("\n")
    assert outputs[-1] == ""  # every tree ends its line
    for number, (line, output) in enumerate(zip(lines, outputs), 1):
        if not line.strip():
            assert output == ""
            continue
        words = _expected_words(line, tagged)
        if words is None:  # the first malformed line stops the command
            assert result.exit_code == 1 and len(outputs) - 1 == number - 1
            assert f"{name}, line {number}, column" in result.stderr
            return
        written = parse_tree(output).words()
        assert written == [writable_word(word) for word in words]
        for word, read in zip(words, written):
            if "-" not in word:
                assert unescape_word(read) == word
    assert result.exit_code == 0, result.stderr
    assert len(outputs) - 1 == len(lines)


@fuzz(20)
@given(data=st.data(), tagged=st.booleans(), bom=st.booleans())
def test_parse_command_on_random_text(ptb_model_dir, fuzz_dir, data, tagged, bom):
    text = data.draw(input_text(tagged))
    path = fuzz_dir / "sentences.txt"
    path.write_bytes(b"\xef\xbb\xbf" * bom + text.encode("utf-8"))
    args = ["parse", str(ptb_model_dir), str(path)] + ["--tagged"] * tagged
    result = runner.invoke(app, args)
    assert_clean_exit(result)
    # A file that starts with U+FEFF starts with a byte-order mark, which is not read
    # (found by the long profile: a first word made of U+FEFF lost its first one).
    read = text if bom else text.removeprefix("\ufeff")
    _check_command_output(result, read, tagged, str(path))


@fuzz(10)
@given(
    data=st.binary(max_size=200),
    encoding=st.sampled_from(["utf-8", "latin-1", "utf-16", "cp1252", "ascii"]),
    stdin=st.booleans(),
)
def test_parse_command_on_random_bytes(ptb_model_dir, fuzz_dir, data, encoding, stdin):
    """Any bytes: each line parses, or the command stops at an undecodable one."""
    path = fuzz_dir / "bytes.txt"
    path.write_bytes(data)
    args = ["parse", str(ptb_model_dir), "--encoding", encoding]
    if stdin:
        result = runner.invoke(app, args, input=data)
    else:
        result = runner.invoke(app, [*args, str(path)])
    assert_clean_exit(result)
    if result.exit_code == 0:
        text = data.decode(encoding)
        if encoding == "utf-8":  # read as utf-8-sig
            text = text.removeprefix("\ufeff")
        _check_command_output(result, text, False, "")
