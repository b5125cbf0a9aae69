"""Control characters never reach bracketed output raw: ``-U+001B-`` and the like."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_lpcfg.trees.brackets import (
    escape_word,
    parse_tree,
    unescape_word,
    writable_label,
    writable_word,
)
from spacy_lpcfg.trees.tree import Tree

CONTROLS = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]]


def _has_control(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)


def _written(word: str) -> str:
    return Tree("TOP", (Tree("S", (Tree.leaf("NN", word), Tree.leaf("VB", "go"))),)).pformat()


def test_pformat_escapes_nul_esc_del_and_c1():
    line = _written("a\0b\x1b[31mc\x7f\x9bd")
    assert not _has_control(line)
    # (escape_word in full: "[" is written "-LSB-" too, as ever with a word escaped)
    assert line == "(TOP (S (NN a-U+0000-b-U+001B--LSB-31mc-U+007F--U+009B-d) (VB go)))"


@pytest.mark.parametrize("char", CONTROLS)
def test_every_control_character_reads_back(char):
    word = f"x{char}y"
    (written,) = parse_tree(_written(word)).words()[:1]
    assert not _has_control(written) and unescape_word(written) == word
    assert escape_word(word) == written


def test_only_the_escapes_of_control_characters_read_back():
    # Other code points in the same spelling are text, as is a lowercase or short form.
    for text in ["-U+0041-", "-U+00A0-", "-u+001b-", "-U+1B-", "-U+001B", "U+001B-"]:
        assert unescape_word(text) == text


def test_whitespace_still_becomes_an_underscore():
    assert writable_word("a b\u3000c") == "a_b_c"
    assert writable_word("a\tb") == "a-U+0009-b"  # a control character first


def test_labels_are_written_without_control_characters():
    assert writable_label("NP\x1b[2J") == "NP-U+001B--LSB-2J"
    assert writable_label("NP-SBJ") == "NP-SBJ"
    assert writable_label("-LRB-") == "-LRB-"


def test_pformat_escapes_control_characters_in_labels():
    tree = Tree("TOP", (Tree("NP\x1b", (Tree.leaf("N\0N", "a"),)),))
    assert not _has_control(tree.pformat())


WORD_CHARS = st.one_of(
    st.sampled_from(CONTROLS),
    st.characters(blacklist_categories=["Cs", "Zs", "Zl", "Zp", "Cc"], blacklist_characters="-"),
)


@settings(max_examples=300, deadline=None)
@given(word=st.text(WORD_CHARS, min_size=1, max_size=12))
def test_any_word_reads_back_from_pformat(word):
    """pformat, then parse_tree, then unescape_word: the same word (words without
    whitespace, and without a "-" that could run into an escape)."""
    line = _written(word)
    assert not _has_control(line)
    read = parse_tree(line).words()[0]
    assert read == writable_word(word)
    assert unescape_word(read) == word
