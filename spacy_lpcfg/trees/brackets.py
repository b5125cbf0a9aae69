"""Penn bracket notation: tokenising, raw parsing and conversion to ``Tree``.

The raw form is format-neutral: a node is a list ``[label, child, ...]`` whose
children are nested lists or plain strings (terminals); the generic Penn
interpretation is ``raw_to_tree``. Treebank files are read by
``trees.formats``, whose scanner builds ``Tree`` objects directly, with each
format's own leaf conventions (PPCHE ``word-lemma``, CESS ``(POS word lemma)``,
Floresta childless punctuation).

Text goes into bracket notation with the Penn Treebank escapes
(``escape_word``): ``(`` is ``-LRB-``, ``)`` ``-RRB-``, ``[`` ``-LSB-``, ``]``
``-RSB-``, ``{`` ``-LCB-``, ``}`` ``-RCB-``, also inside longer words
(``f(x)`` -> ``f-LRB-x-RRB-``), as benepar writes them; ``unescape_word``
gives the text back (a word that was ``-LRB-`` to begin with reads back as
``(``, the treebank spelling of that character). ``Tree.pformat`` escapes only
the words bracket notation cannot hold (``writable_word``), so treebank
spellings such as Floresta's ``{`` are written as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import Errors, TreebankFormatError, excerpt
from .tree import ROOT_LABEL, Tree

RawNode = list  # [label: str, *children: RawNode | str]

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
ROOT_WRAPPERS = frozenset({"", "TOP", "ROOT"})

PTB_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
"""Bracket characters and their Penn Treebank spelling in words."""
# Whitespace would split a word in two: it becomes "_", as multiword tokens are
# written in Floresta and CESS-ESP. (Python's \s: str.isspace(), all below U+3001.)
_ESCAPE_TABLE = str.maketrans(
    {**PTB_ESCAPES, **{chr(c): "_" for c in range(0x3001) if chr(c).isspace()}}
)
_ESCAPED = re.compile("|".join(map(re.escape, PTB_ESCAPES.values())))
_UNESCAPES = {escape: character for character, escape in PTB_ESCAPES.items()}
_UNWRITABLE = re.compile(r"[\s()]")


def escape_word(word: str) -> str:
    """The word as written in bracket notation: each bracket character becomes its
    Penn Treebank escape (``f(x)`` -> ``f-LRB-x-RRB-``), whitespace ``_``.
    Escapes already present stay as they are (``-LRB-`` -> ``-LRB-``)."""
    return word.translate(_ESCAPE_TABLE)


def unescape_word(word: str) -> str:
    """The text of a bracketed word: each Penn Treebank bracket escape in it back to
    its character (``f-LRB-x-RRB-`` -> ``f(x)``, ``-LCB-`` -> ``{``)."""
    return _ESCAPED.sub(lambda match: _UNESCAPES[match.group()], word) if "-" in word else word


def writable_word(word: str) -> str:
    """The word as ``Tree.pformat`` writes it: as it is when bracket notation can hold
    it, so treebank spellings stay (Floresta's ``{``, IcePaHC's ``{á}``); else, when it
    holds ``(``, ``)`` or whitespace, ``escape_word(word)``."""
    return escape_word(word) if _UNWRITABLE.search(word) else word


def _line_of(text: str, offset: int, first_line: int) -> int:
    return first_line + text.count("\n", 0, offset)


def _column_of(text: str, offset: int) -> int:
    return offset - text.rfind("\n", 0, offset)


def iter_raw_trees(
    text: str,
    *,
    path: str | Path | None = None,
    first_line: int = 1,
    close_open: bool = False,
) -> Iterator[tuple[RawNode, int]]:
    """Yield ``(raw_tree, line)`` for each top-level bracketed expression in ``text``.

    close_open (bool): close brackets still open at the end of ``text`` instead of
        raising (some corpora need this per block; see ``trees.formats``).
    RAISES TreebankFormatError: unbalanced brackets or text outside brackets.
    """
    stack: list[RawNode] = []
    open_at: list[int] = []
    expect_label = False
    line, counted = first_line, 0  # the line number at offset ``counted`` (counted forward)
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "(":
            node: RawNode = [""]
            if stack:
                stack[-1].append(node)
            stack.append(node)
            open_at.append(match.start())
            expect_label = True
        elif token == ")":
            if not stack:
                raise TreebankFormatError(
                    Errors.E001.format(detail="')' without a matching '('"),
                    path=path,
                    line=_line_of(text, match.start(), first_line),
                    column=_column_of(text, match.start()),
                )
            node = stack.pop()
            start = open_at.pop()
            if not stack:
                line += text.count("\n", counted, start)
                counted = start
                yield node, line
            expect_label = False
        elif not stack:
            raise TreebankFormatError(
                Errors.E001.format(detail=f"text {excerpt(token)} outside any bracket"),
                path=path,
                line=_line_of(text, match.start(), first_line),
                column=_column_of(text, match.start()),
            )
        elif expect_label:
            stack[-1][0] = token
            expect_label = False
        else:
            stack[-1].append(token)
    if stack:
        if not close_open:
            raise TreebankFormatError(
                Errors.E001.format(detail=f"{len(stack)} bracket(s) not closed"),
                path=path,
                line=_line_of(text, open_at[0], first_line),
                column=_column_of(text, open_at[0]),
            )
        yield stack[0], _line_of(text, open_at[0], first_line)


def raw_to_tree(raw: RawNode, *, path: str | Path | None = None, line: int | None = None) -> Tree:
    """Interpret a raw node in plain Penn notation and root it at ``ROOT_LABEL``.

    ``(TAG word)`` is a preterminal; every other node must have only bracketed
    children. An unlabelled, ``TOP`` or ``ROOT`` outer bracket becomes the
    ``TOP`` root; any other root label is wrapped in a ``TOP`` node.
    """
    tree = _convert(raw, path, line)
    if tree.word is None and raw[0] in ROOT_WRAPPERS:
        return tree.with_label(ROOT_LABEL)
    return Tree(ROOT_LABEL, (tree,))


def _convert(raw: RawNode, path, line) -> Tree:
    # Iterative post-order conversion; ``done`` collects converted children.
    out: list[list[Tree]] = [[]]
    stack: list[tuple[RawNode, bool]] = [(raw, False)]
    while stack:
        node, visited = stack.pop()
        label = node[0]
        if visited:
            children = tuple(out.pop())
            out[-1].append(Tree(label, children))
            continue
        kids = node[1:]
        if not kids:
            raise TreebankFormatError(
                f"node {excerpt(f'({label})')} has no children", path=path, line=line
            )
        if isinstance(kids[0], str):
            if len(kids) != 1:
                words = " ".join(kid if isinstance(kid, str) else "(...)" for kid in kids)
                node = excerpt(f"({label} {words})")
                raise TreebankFormatError(
                    f"preterminal {node} must hold exactly one word", path=path, line=line
                )
            out[-1].append(Tree(label, (), kids[0]))
            continue
        if any(isinstance(kid, str) for kid in kids):
            raise TreebankFormatError(
                f"node {excerpt(f'({label} ...)')} mixes words and phrases", path=path, line=line
            )
        out.append([])
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(kids))
    (tree,) = out[0]
    return tree


def parse_tree(text: str) -> Tree:
    """Parse exactly one Penn-bracketed tree (rooted at ``TOP``, see ``raw_to_tree``)."""
    trees = list(iter_raw_trees(text))
    if len(trees) != 1:
        raise TreebankFormatError(f"expected one tree, found {len(trees)}")
    raw, line = trees[0]
    return raw_to_tree(raw, line=line)
