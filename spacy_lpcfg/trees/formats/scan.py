"""The bracket scanner shared by the format readers.

``scan`` turns lines of bracketed text into trees in one pass: a regex splits
each line into ``(``, ``)`` and atoms, and every closing bracket hands the
node's label and children (``Tree`` objects or atom strings) to a format's
``finish`` function, which builds the node or drops it (returns None). Working
line by line keeps the line number of every bracket for error messages at no
extra cost; no raw intermediate tree is built and nothing recurses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ...errors import Errors, TreebankFormatError, excerpt
from ..tree import ROOT_LABEL, Tree

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_ROOT_WRAPPERS = frozenset({"", "TOP", "ROOT"})

Finish = Callable[[str, list], "Tree | None"]


class FormatProblem(ValueError):
    """Raised by a ``finish`` function for a malformed node; ``scan`` adds file and line."""


def scan(
    lines: list[str],
    start: int,
    stop: int,
    finish: Finish,
    *,
    path: str,
    close_open: bool = False,
    ignore_surplus: bool = False,
) -> Iterator[tuple[Tree, int]]:
    """Yield ``(node, line_number)`` for each top-level bracket in ``lines[start:stop]``.

    lines (list[str]): the file's lines; line numbers are 1-based indices into it.
    finish (Finish): builds a node from its label and children, or returns None to drop it.
    path (str): the file name used in error messages.
    close_open (bool): close brackets still open at ``stop`` (corpus-specific repair).
    ignore_surplus (bool): ignore ``)`` tokens after the last tree (corpus-specific repair).
    RAISES TreebankFormatError: unbalanced brackets, text outside brackets, an
        unlabelled inner bracket, or a node ``finish`` rejects.
    """
    labels: list[str] = []
    kids: list[list] = []
    opened: list[int] = []  # line index of each open bracket
    line = start  # line index of the node being finished
    expect_label = False
    surplus = False  # a ')' was ignored: only more ')' may follow
    findall = _TOKEN.findall
    try:
        for index in range(start, stop):
            for token in findall(lines[index]):
                if token == "(":
                    if expect_label and len(labels) > 1:
                        where = opened[-1] + 1
                        detail = (
                            f"unlabelled bracket at line {where} inside this tree (')' missing?)"
                        )
                        raise _error(path, opened[0], detail)
                    if surplus and not labels:
                        raise _error(
                            path, index, Errors.E001.format(detail="'(' after a surplus ')'")
                        )
                    labels.append("")
                    kids.append([])
                    opened.append(index)
                    expect_label = True
                elif token == ")":
                    if not labels:
                        if not ignore_surplus:
                            raise _error(path, index, Errors.E001.format(detail="')' without '('"))
                        surplus = True
                        continue
                    expect_label = False
                    line = opened.pop()
                    node = finish(labels.pop(), kids.pop())
                    if labels:
                        if node is not None:
                            kids[-1].append(node)
                    elif node is not None:
                        yield node, line + 1
                elif expect_label:
                    labels[-1] = token
                    expect_label = False
                elif labels:
                    kids[-1].append(token)
                else:
                    detail = f"text {excerpt(token)} outside brackets"
                    raise _error(path, index, Errors.E001.format(detail=detail))
        if labels and not close_open:
            detail = f"{len(labels)} bracket(s) opened here not closed"
            raise _error(path, opened[0], Errors.E001.format(detail=detail))
        while labels:
            line = opened.pop()
            node = finish(labels.pop(), kids.pop())
            if labels:
                if node is not None:
                    kids[-1].append(node)
            elif node is not None:
                yield node, line + 1
    except FormatProblem as problem:
        raise _error(path, line, str(problem)) from None


def _error(path: str, index: int, message: str) -> TreebankFormatError:
    return TreebankFormatError(message, path=path, line=index + 1)


def next_tree_start(lines: list[str], after: int) -> int:
    """Index of the first line at or after ``after`` that starts with ``(``: where
    reading resumes after a malformed tree when errors are skipped."""
    for index in range(after, len(lines)):
        if lines[index].startswith("("):
            return index
    return len(lines)


def rooted(node: Tree) -> Tree:
    """The node as a ``TOP``-rooted tree: an unlabelled, ``TOP`` or ``ROOT`` outer
    bracket is renamed ``TOP``; anything else is wrapped in a ``TOP`` node."""
    if node.word is None and node.label in _ROOT_WRAPPERS:
        return node.with_label(ROOT_LABEL)
    return Tree(ROOT_LABEL, (node,))
