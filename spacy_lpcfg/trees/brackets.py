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

Control characters (C0, DEL and C1) are written as their code point between
hyphens, ``-U+001B-`` for ESC, in words and labels alike: printed raw, ESC
and its kin are commands to the terminal that shows the tree, and NUL ends a
C string (EVALB's words). The spelling is of the Penn escapes' family, reads
back the same way (``unescape_word``, ``unescape_controls``), and is no
treebank's spelling of a word; a backslash escape would have needed every
backslash in the text escaped too.
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
CONTROL_CHARACTERS = "".join(map(chr, [*range(0x20), 0x7F, *range(0x80, 0xA0)]))
"""C0, DEL and C1: written as ``-U+001B-`` (see the module docstring)."""
CONTROL_ESCAPES = {char: f"-U+{ord(char):04X}-" for char in CONTROL_CHARACTERS}
# Whitespace would split a word in two: it becomes "_", as multiword tokens are
# written in Floresta and CESS-ESP. (Python's \s: str.isspace(), all below U+3001.)
# Whitespace that is a control character (tab, newline) gets its reversible escape.
_ESCAPE_TABLE = str.maketrans(
    {
        **PTB_ESCAPES,
        **{chr(c): "_" for c in range(0x3001) if chr(c).isspace()},
        **CONTROL_ESCAPES,
    }
)
_UNESCAPES = {
    **{escape: character for character, escape in PTB_ESCAPES.items()},
    **{escape: character for character, escape in CONTROL_ESCAPES.items()},
}
_CONTROL_ESCAPE = r"-U\+00(?:[01][0-9A-F]|7F|[89][0-9A-F])-"  # exactly CONTROL_ESCAPES
_ESCAPED = re.compile("|".join([*map(re.escape, PTB_ESCAPES.values()), _CONTROL_ESCAPE]))
_ESCAPED_CONTROL = re.compile(_CONTROL_ESCAPE)
_UNWRITABLE = re.compile(r"[\s()\x00-\x1f\x7f-\x9f]")  # the last two: CONTROL_CHARACTERS


def escape_word(word: str) -> str:
    """The word as written in bracket notation: each bracket character becomes its
    Penn Treebank escape (``f(x)`` -> ``f-LRB-x-RRB-``), each control character its
    code point (``-U+001B-``), other whitespace ``_``. Escapes already present stay
    as they are (``-LRB-`` -> ``-LRB-``)."""
    return word.translate(_ESCAPE_TABLE)


def unescape_word(word: str) -> str:
    """The text of a bracketed word: each Penn Treebank bracket escape and control
    character escape in it back to its character (``f-LRB-x-RRB-`` -> ``f(x)``,
    ``-LCB-`` -> ``{``, ``-U+001B-`` -> ESC)."""
    return _ESCAPED.sub(_unescape, word) if "-" in word else word


def unescape_controls(word: str) -> str:
    """The word with only its control character escapes read back (``-U+0000-`` ->
    NUL): what a raw treebank word holds where ``escape_word`` wrote an escape, and
    the Penn bracket escapes, which treebanks hold as they are, stay."""
    return _ESCAPED_CONTROL.sub(_unescape, word) if "-U+" in word else word


def _unescape(match: re.Match) -> str:
    return _UNESCAPES[match.group()]


def writable_word(word: str) -> str:
    """The word as ``Tree.pformat`` writes it: as it is when bracket notation can hold
    it, so treebank spellings stay (Floresta's ``{``, IcePaHC's ``{á}``); else, when it
    holds ``(``, ``)``, whitespace or a control character, ``escape_word(word)``."""
    return escape_word(word) if _UNWRITABLE.search(word) else word


def writable_label(label: str) -> str:
    """The label as bracket notation writes it: as ``writable_word``, so that a label
    (from a user's treebank, through a grammar) cannot carry a bracket, whitespace or
    a control character into the output either."""
    return writable_word(label)


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
                shown = excerpt(f"({label} {words})")
                raise TreebankFormatError(
                    f"preterminal {shown} must hold exactly one word", path=path, line=line
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
