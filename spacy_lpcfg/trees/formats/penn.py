"""Generic Penn Treebank brackets (``.mrg``, one tree per line, ``(TOP ...)`` files).

Trees follow each other in the file, each either in an unlabelled outer
bracket (``( (S ...))``, ``((S ...))``), in a ``TOP`` or ``ROOT`` bracket, or
bare (``(S ...)``); line breaks and indentation do not matter. ``(TAG word)``
is a preterminal and empty elements are ``(-NONE- *T*-1)`` preterminals.

This reader repairs nothing: unbalanced brackets, text outside brackets, a
bracket without a label inside a tree, a childless node, a preterminal with
several words and a node mixing words and phrases are errors. After an error
(with ``errors="skip"``) reading resumes at the next line starting with ``(``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...errors import Errors, TreebankFormatError, excerpt
from ..tree import Tree
from .scan import FormatProblem, next_tree_start, rooted, scan

ENCODING = "utf-8"


def read_units(
    lines: list[str], path: str, on_error: Callable[[TreebankFormatError], None]
) -> Iterator[Tree]:
    """Yield each tree, rooted at ``TOP``, before normalisation.

    on_error (Callable): called with each error (it raises, or records and returns,
        in which case reading resumes at the next tree).
    """
    start = 0
    while start < len(lines):
        try:
            for node, _line in scan(lines, start, len(lines), finish, path=path):
                yield rooted(node)
            return
        except TreebankFormatError as error:
            on_error(error)
            start = next_tree_start(lines, error.line or len(lines))


def finish(label: str, children: list) -> Tree:
    """Build one Penn node from its label and children (``Tree`` or word strings)."""
    if not children:
        raise FormatProblem(
            Errors.E002 if not label else f"node {excerpt(f'({label})')} has no children"
        )
    first = children[0]
    if type(first) is str:
        if len(children) != 1:
            words = " ".join(child if type(child) is str else "(...)" for child in children)
            node = excerpt(f"({label} {words})")
            raise FormatProblem(f"preterminal {node} must hold exactly one word")
        if not label:
            raise FormatProblem(f"word {excerpt(first)} has no POS tag")
        return Tree(label, (), first)
    if str in map(type, children):
        raise FormatProblem(f"node {excerpt(f'({label} ...)')} mixes words and phrases")
    return Tree(label, tuple(children))
