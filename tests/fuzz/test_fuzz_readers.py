"""Fuzzing the treebank readers: random bytes, bracket-ish text and mutated real trees
of every format, read with every error mode, a few encodings, and ``open_treebank``.

A read either yields well-formed trees or raises ``TreebankFormatError`` (naming
the file); with ``errors="skip"`` it never raises. Every tree read back from its
``pformat`` is the same tree, and is already normalised.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from fuzz_support import (
    ENCODINGS,
    SUFFIXES,
    bracket_text,
    fuzz,
    is_project_error,
    mutated,
    only_project_errors,
    outcome,
)
from hypothesis import given
from hypothesis import strategies as st

from spacy_lpcfg.corpora import open_treebank
from spacy_lpcfg.errors import TreebankFormatError
from spacy_lpcfg.trees.brackets import (
    escape_word,
    iter_raw_trees,
    parse_tree,
    raw_to_tree,
    unescape_word,
    writable_word,
)
from spacy_lpcfg.trees.formats import TreebankReader
from spacy_lpcfg.trees.normalize import NormalizeOptions, normalize
from spacy_lpcfg.trees.tree import ROOT_LABEL, Tree

FORMAT_NAMES = st.sampled_from(sorted(SUFFIXES))
RAW = NormalizeOptions(remove_empty=False, strip_indices=False)


@st.composite
def treebank_input(draw, seeds) -> tuple[str, bytes]:
    """(format, file bytes): random bytes, bracket-ish text or a mutated real excerpt."""
    name = draw(FORMAT_NAMES)
    data = draw(
        st.one_of(
            st.binary(max_size=600),
            bracket_text().map(lambda text: text.encode("utf-8")),
            bracket_text().map(lambda text: text.encode("latin-1", "replace")),
            mutated(seeds[name]),
            mutated(seeds[draw(FORMAT_NAMES)]),  # one format's trees read as another's
        )
    )
    return name, data


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_tree(tree: Tree, scheme: str, options: NormalizeOptions) -> None:
    """A tree as readers promise them: TOP-rooted, words and labels non-empty and
    writable as they are, read back from pformat unchanged, already normalised."""
    assert isinstance(tree, Tree) and tree.label == ROOT_LABEL and tree.word is None
    assert tree.n_words > 0
    for node in tree.subtrees():
        assert node.label, f"empty label in {tree!r}"
        if node.word is not None:
            # as they are, but for control characters, which are written escaped
            written = writable_word(node.word) == node.word
            assert node.word and (written or CONTROL.search(node.word)), repr(node.word)
            assert not node.children
        else:
            assert node.children
    text = tree.pformat()
    assert parse_tree(text).pformat() == text
    assert normalize(tree, scheme, options).pformat() == text


def _texts(trees: list[Tree]) -> list[str]:
    # Compared as text: Tree.__eq__ (dataclass) recurses, and fuzzed trees are deep.
    return [tree.pformat() for tree in trees]


def _read(path, name, *, errors, encoding, options=NormalizeOptions()):
    reader = TreebankReader(path, name, errors=errors, encoding=encoding, options=options)
    return list(reader), reader


@fuzz(250)
@given(data=st.data(), encoding=ENCODINGS, raw=st.booleans())
def test_readers_raise_only_format_errors(seeds, fuzz_dir, data, encoding, raw):
    name, content = data.draw(treebank_input(seeds))
    path = fuzz_dir / f"input{SUFFIXES[name]}"
    path.write_bytes(content)
    options = RAW if raw else NormalizeOptions()
    if encoding == "base64":  # a codec, but not a text encoding
        _, error = outcome(_read, path, name, errors="skip", encoding=encoding)
        assert "[LPCFG-E022]" in str(error)
        return
    for fmt in (name, "auto"):
        strict, error = outcome(
            _read, path, fmt, errors="raise", encoding=encoding, options=options
        )
        if error is not None:
            assert isinstance(error, TreebankFormatError), repr(error)
            assert error.path == str(path) and str(path) in str(error)
            assert len(str(error)) < 1000, "messages quote excerpts, not whole lines"
        # Skipping never raises, and agrees with a strict read that succeeded.
        skipped, reader = _read(path, fmt, errors="skip", encoding=encoding, options=options)
        if error is None:
            assert _texts(skipped) == _texts(strict[0]) and not reader.skipped
        else:
            assert reader.skipped
        for tree in skipped:
            _check_tree(tree, reader.scheme, options)


@fuzz(60)
@given(data=st.data(), encoding=st.sampled_from([None, "latin-1"]))
def test_open_treebank_on_a_path(seeds, fuzz_dir, data, encoding):
    name, content = data.draw(treebank_input(seeds))
    path = fuzz_dir / f"corpus{SUFFIXES[name]}"
    path.write_bytes(content)
    found, error = outcome(open_treebank, str(path), encoding=encoding)
    if error is None:
        trees, scheme = found
        assert trees and scheme in ("penn", "floresta", "cess")
    else:
        assert isinstance(error, ValueError), repr(error)  # format errors, E021 no trees


@fuzz(30)
@given(data=st.data())
def test_open_treebank_on_a_directory(seeds, fuzz_dir, data):
    """A directory of mutated files of several formats: trees, or one clear error
    (a bad file, files of different label schemes, no trees)."""
    folder = Path(tempfile.mkdtemp(dir=fuzz_dir))
    for index in range(data.draw(st.integers(1, 3))):
        name, content = data.draw(treebank_input(seeds))
        (folder / f"f{index}{SUFFIXES[name]}").write_bytes(content)
    with only_project_errors():
        trees, _ = open_treebank(folder)
        assert trees


@fuzz(300)
@given(text=st.one_of(bracket_text(), st.text(max_size=300)), close_open=st.booleans())
def test_bracket_parser_raises_only_format_errors(text, close_open):
    try:
        for raw, line in iter_raw_trees(text, path="fuzz", close_open=close_open):
            assert line >= 1
            with only_project_errors():
                tree = raw_to_tree(raw, path="fuzz", line=line)
                assert tree.label == ROOT_LABEL
                assert parse_tree(tree.pformat()).pformat() == tree.pformat()
    except Exception as error:
        assert isinstance(error, TreebankFormatError) or not is_project_error(error), error
        if not isinstance(error, TreebankFormatError):
            raise
    with only_project_errors():
        tree = Tree.from_string(text)
        assert parse_tree(tree.pformat()).pformat() == tree.pformat()


@fuzz(300)
@given(word=st.text(min_size=1, max_size=12))
def test_escaped_words_read_back(word):
    """What ``pformat`` writes of a word reads back as that word: the escape of any
    word is one bracket token, and its unescape is the word unless the word holds
    whitespace (written "_") or a "-" that can run into an escape."""
    escaped = escape_word(word)
    assert escaped and not any(c.isspace() or c in "()" for c in escaped)
    tree = Tree("TOP", (Tree.leaf("NN", word),))
    assert parse_tree(tree.pformat()).words() == [writable_word(word)]
    if not any(c.isspace() for c in word) and "-" not in word:
        assert unescape_word(escaped) == word
        assert unescape_word(writable_word(word)) == word
