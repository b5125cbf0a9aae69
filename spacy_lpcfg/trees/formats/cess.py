"""CESS-ESP ``.tbf`` files (Spanish, ISO-8859-1).

Each tree is a chunk that starts at a line holding only ``(`` (the unlabelled
outer bracket) and runs to the next such line or the end of the file.
Preterminals have three parts, ``(POS word lemma)``, and become
``Tree.leaf(POS, word)``. Elided subjects ``(sn.e-SUJ *0*)`` become a
``(-NONE- *0*)`` preterminal under their phrase, so ``normalize`` removes them.

Documented corpus repairs (README "Quirks"): brackets still open at the end
of a chunk are closed (two trees lack a ``)``) and surplus ``)`` after the
tree are ignored (one tree). Anything else malformed is an error; with
``errors="skip"`` the chunk is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...errors import TreebankFormatError, excerpt
from ..tree import EMPTY_TAG, Tree
from .scan import FormatProblem, rooted, scan

ENCODING = "latin-1"
ELIDED = "*0*"


def read_units(
    lines: list[str], path: str, on_error: Callable[[TreebankFormatError], None]
) -> Iterator[Tree]:
    """Yield the tree of each chunk, rooted at ``TOP``, before normalisation.

    on_error (Callable): called with each error (it raises, or records and returns,
        in which case reading goes on with the next chunk).
    """
    starts = [index for index, line in enumerate(lines) if line.rstrip() == "("]
    first = starts[0] if starts else len(lines)
    for index in range(first):
        if lines[index].strip():
            on_error(TreebankFormatError("text before the first tree", path=path, line=index + 1))
            break
    for start, stop in zip(starts, [*starts[1:], len(lines)]):
        try:
            nodes = list(
                scan(lines, start, stop, finish, path=path, close_open=True, ignore_surplus=True)
            )
            if len(nodes) != 1:
                raise TreebankFormatError(
                    f"a chunk must hold one tree, found {len(nodes)}", path=path, line=start + 1
                )
        except TreebankFormatError as error:
            on_error(error)
            continue
        yield rooted(nodes[0][0])


def finish(label: str, children: list) -> Tree:
    """Build one CESS node: ``(POS word lemma)``, ``(sn.e-SUJ *0*)`` or a phrase."""
    if not children:
        raise FormatProblem(f"node {excerpt(f'({label})')} has no children")
    first = children[0]
    if type(first) is str:
        if len(children) == 2 and type(children[1]) is str:
            return Tree(label, (), first)
        if len(children) == 1 and first == ELIDED:
            return Tree(label, (Tree(EMPTY_TAG, (), first),))
        raise FormatProblem(
            f"preterminal {excerpt(f'({label} ...)')} must be (POS word lemma) or hold {ELIDED}"
        )
    if str in map(type, children):
        raise FormatProblem(f"node {excerpt(f'({label} ...)')} mixes words and phrases")
    return Tree(label, tuple(children))
