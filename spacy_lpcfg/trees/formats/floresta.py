"""Floresta Sintá(c)tica ``.ptb`` files (Portuguese, ISO-8859-1).

After a header of ``#`` comment lines, each sentence is a block: a line
``#<N> <source-id> <raw sentence>`` and the bracketed tree(s) up to the next
such line. Labels are ``FUNCTION+form`` on every node, words included
(``(H+n revivalismo)``), and there is no outer bracket. Each block is one
tree: its top-level trees (usually one; up to three) go under one ``TOP``.

The corpus has known defects (README "Quirks"); the reader handles them
deterministically, the same way as the README's statistics:

* Brackets still open at the end of a block are closed.
* A childless node is a token whose label is both word and tag: punctuation
  ``(,)``, ``(«)``, ``(...)``, and the lone ``(?+?`` of block #695.
* A node whose label has no ``+`` is punctuation, so it is such a token even
  when it dominates material because its ``)`` is misplaced
  (``(, (N<PRED+pp ...) ...)``): the material follows the token as its
  siblings. The one such label over a word, ``(N<{'185/60_R_14'} 185/60_R_14)``
  (#3540), so gives two tokens, the label and the word, as the README counts.
* A node with both a word and phrases (``(UTT+prop Folha (QUE+acl ...))``,
  left open in the file) keeps its label and phrases; the word becomes a
  preterminal child with the node's label, in its place.
* A corrupt preterminal with several strings, where morphology leaked into the
  label (``(H+prop' M S} Decreto_regulamentar_19/19_{B})``), keeps the last
  string as its word and its label as written (``H+prop'``).

Any other malformation is an error; with ``errors="skip"`` the block is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import cast

from ...errors import TreebankFormatError
from ..tree import ROOT_LABEL, Tree
from .scan import Finish, FormatProblem, scan

ENCODING = "latin-1"
_BLOCK_HEADER = re.compile(r"#\d+(\s|$)")


def read_units(
    lines: list[str], path: str, on_error: Callable[[TreebankFormatError], None]
) -> Iterator[Tree]:
    """Yield the tree of each block, rooted at ``TOP``, before normalisation.

    on_error (Callable): called with each error (it raises, or records and returns,
        in which case reading goes on with the next block).
    """
    starts = [index for index, line in enumerate(lines) if _BLOCK_HEADER.match(line)]
    first = starts[0] if starts else len(lines)
    for index in range(first):
        if lines[index].strip() and not lines[index].startswith("#"):
            on_error(TreebankFormatError("text before the first block", path=path, line=index + 1))
            break
    for start, stop in zip(starts, [*starts[1:], len(lines)]):
        try:
            # finish's tuples (runs of siblings) pass through scan as nodes
            found = scan(lines, start + 1, stop, cast(Finish, finish), path=path, close_open=True)
            nodes = _as_nodes(ROOT_LABEL, [node for node, _ in found])
            if not nodes:
                raise TreebankFormatError("block without a tree", path=path, line=start + 1)
        except TreebankFormatError as error:
            on_error(error)
            continue
        yield Tree(ROOT_LABEL, tuple(nodes))


def finish(label: str, children: list) -> Tree | tuple[Tree, ...]:
    """Build one Floresta node; a tuple is a run of siblings (see the module docstring)."""
    if not label:  # "(" right before "(" or ")": Floresta has no unlabelled brackets
        raise FormatProblem("unlabelled bracket (every Floresta node has a label)")
    if "+" not in label:  # punctuation
        token = Tree(label, (), label)
        return (token, *_as_nodes(label, children)) if children else token
    if not children:
        return Tree(label, (), label)
    if all(type(child) is str for child in children):
        return Tree(label, (), children[-1])
    return Tree(label, tuple(_as_nodes(label, children)))


def _as_nodes(label: str, children: list) -> list[Tree]:
    """Children as nodes: words become preterminals tagged ``label``, runs are spliced in."""
    out: list[Tree] = []
    for child in children:
        if type(child) is str:
            out.append(Tree(label, (), child))
        elif type(child) is tuple:
            out.extend(child)
        else:
            out.append(child)
    return out
