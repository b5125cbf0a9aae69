"""Penn Parsed Corpora of Historical English style ``.psd`` files (IcePaHC).

A *record* is one top-level bracket: an unlabelled outer bracket over the
sentence node and an ``(ID FILE,PAGE.N)`` node. The reader

* deletes ``ID`` and ``CODE`` subtrees (``CODE`` holds comments, page marks and
  headings, and can dominate phrases) and the constituents left without
  children; the record's ID is kept in ``Record.ident``;
* turns empty elements, leaves that are ``0`` or start with ``*`` (but not the
  asterisk token ``*-*``), into ``(-NONE- x)`` preterminals under their phrase,
  so ``normalize`` removes them like Penn Treebank traces;
* reads a ``word-lemma`` leaf as its word, the part before the first ``-``:
  ``menn-maður`` -> ``menn``, ``"-"-"`` -> ``"``, ``*-*`` -> ``*``. Hyphen
  tokens start with ``-`` and repeat the word as lemma: ``-`` and ``---`` are
  ``-``, ``-----`` is ``--``. A leaf without ``-`` is all word (``{á}``). The
  markup ``<dash/>`` (also ``<dash>``, ``</dash>``) for a hyphen inside a word
  becomes ``-``: ``Gull<dash/>Harald`` -> ``Gull-Harald``. Split-word halves
  keep their ``$`` (``tungur$``, ``$nar``), as written.

Records that end up without words are not trees but still count in the
record numbering (``Record.index``), which ``splits.json`` refers to.
Bracket errors are never repaired; with ``errors="skip"`` reading resumes at
the next line starting with ``(`` (every record starts there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ...errors import TreebankFormatError, excerpt
from ..tree import EMPTY_TAG, Tree
from .scan import FormatProblem, next_tree_start, rooted, scan

ENCODING = "utf-8"
METADATA_LABELS = frozenset({"ID", "CODE"})
_DASH_MARKUP = re.compile(r"</?dash/?>")


@dataclass(frozen=True, slots=True)
class Record:
    """One top-level bracket of a ``.psd`` file.

    index (int): 0-based position among all records of the file.
    ident (str | None): the text of its ``ID`` node, None if it has none.
    line (int): the line where the record starts.
    tree (Tree): ``TOP``-rooted, metadata deleted, empty elements as ``-NONE-``
        preterminals; may hold no words at all.
    """

    index: int
    ident: str | None
    line: int
    tree: Tree


def iter_records(
    lines: list[str], path: str, on_error: Callable[[TreebankFormatError], None]
) -> Iterator[Record]:
    """Yield every record of a ``.psd`` file.

    on_error (Callable): called with each error (it raises, or records and returns,
        in which case reading resumes at the next record).
    """
    builder = _RecordBuilder()
    start = 0
    index = 0
    while start < len(lines):
        try:
            for node, line in scan(lines, start, len(lines), builder.finish, path=path):
                yield Record(index, builder.ident, line, rooted(node))
                builder.ident = None
                index += 1
            return
        except TreebankFormatError as error:
            on_error(error)
            builder.ident = None
            start = next_tree_start(lines, error.line or len(lines))


def read_units(
    lines: list[str], path: str, on_error: Callable[[TreebankFormatError], None]
) -> Iterator[Tree]:
    """Yield the tree of each record (see ``iter_records``)."""
    for record in iter_records(lines, path, on_error):
        yield record.tree


def leaf_word(leaf: str) -> str:
    """The word of a ``word-lemma`` leaf (see the module docstring)."""
    word = leaf.partition("-")[0]
    if not word:  # a hyphen token: '-', '---' (word '-', lemma '-'), '-----'
        word = leaf[: max(1, len(leaf) // 2)]
    elif "<" in word:
        word = _DASH_MARKUP.sub("-", word)
    return word


class _RecordBuilder:
    """``finish`` function for records; remembers the ID of the record being read."""

    def __init__(self) -> None:
        self.ident: str | None = None

    def finish(self, label: str, children: list) -> Tree | None:
        if label in METADATA_LABELS:
            if label == "ID" and len(children) == 1 and type(children[0]) is str:
                self.ident = children[0]
            return None
        if not children:  # emptied by deletions; an outer bracket is kept to count the record
            return None if label else Tree(label)
        first = children[0]
        if type(first) is str:
            if len(children) != 1 or not label:
                leaves = " ".join(map(str, children))
                node = excerpt(f"({label} {leaves})")
                raise FormatProblem(f"{node} must be a tag over one word-lemma leaf")
            if first == "0" or (first[0] == "*" and first != "*-*"):
                return Tree(label, (Tree(EMPTY_TAG, (), first),))
            return Tree(label, (), leaf_word(first))
        if str in map(type, children):
            raise FormatProblem(f"node {excerpt(f'({label} ...)')} mixes words and phrases")
        return Tree(label, tuple(children))
