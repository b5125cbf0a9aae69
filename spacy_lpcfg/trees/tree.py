"""The immutable constituency tree used everywhere in the package.

A ``Tree`` is a labelled node with a tuple of children. Preterminals carry the
word (``word is not None``) and no children; their label is the POS tag. Spans
are half-open ``[start, end)`` word offsets. Readers return trees rooted at a
node labelled ``ROOT_LABEL`` ("TOP") over the sentence node(s), the same for
every corpus, so grammars have one start symbol and EVALB deletes it.

Traversals use explicit stacks, not recursion: treebanks contain trees deeper
than is comfortable for Python's recursion limit once binarised.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

ROOT_LABEL = "TOP"
EMPTY_TAG = "-NONE-"  # preterminal tag of empty elements (traces, null elements) in every format


@dataclass(frozen=True, slots=True)
class Tree:
    """A constituency tree node.

    label (str): the node's label (phrase category with function tags, or POS tag).
    children (tuple[Tree, ...]): the child nodes; empty for a preterminal.
    word (str | None): the word of a preterminal; None for phrasal nodes.
    """

    label: str
    children: tuple[Tree, ...] = ()
    word: str | None = None

    @classmethod
    def leaf(cls, tag: str, word: str) -> Tree:
        """A preterminal: POS tag over a word."""
        return cls(tag, (), word)

    @classmethod
    def from_string(cls, text: str) -> Tree:
        """Parse one Penn-bracketed tree (see ``trees.brackets.parse_tree``)."""
        from .brackets import parse_tree

        return parse_tree(text)

    @property
    def is_preterminal(self) -> bool:
        return self.word is not None

    def with_label(self, label: str) -> Tree:
        return Tree(label, self.children, self.word)

    def with_children(self, children: tuple[Tree, ...]) -> Tree:
        return Tree(self.label, children, self.word)

    def with_words(self, words: Sequence[str]) -> Tree:
        """The same tree with its words replaced, in order (e.g. escaped or original forms)."""
        words = list(words)
        if len(words) != self.n_words:
            raise ValueError(f"{len(words)} words for a tree of {self.n_words}")
        position = len(words)
        done: list[Tree] = []  # rebuilt nodes, in reverse pre-order
        for node in reversed(list(self.subtrees())):
            if node.word is not None:
                position -= 1
                done.append(Tree(node.label, (), words[position]))
            else:
                children = tuple(done.pop() for _ in node.children)
                done.append(Tree(node.label, children))
        return done[0]

    def subtrees(self) -> Iterator[Tree]:
        """All nodes in pre-order (parents before children, left to right)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.children:
                stack.extend(reversed(node.children))

    def preterminals(self) -> list[Tree]:
        return [node for node in self.subtrees() if node.word is not None]

    def words(self) -> list[str]:
        return [node.word for node in self.subtrees() if node.word is not None]

    def tags(self) -> list[str]:
        return [node.label for node in self.subtrees() if node.word is not None]

    def tagged_words(self) -> list[tuple[str, str]]:
        return [(node.word, node.label) for node in self.subtrees() if node.word is not None]

    @property
    def n_words(self) -> int:
        return sum(1 for node in self.subtrees() if node.word is not None)

    def spans(
        self, *, include_root: bool = True, include_preterminals: bool = False
    ) -> list[tuple[str, int, int]]:
        """Labelled half-open spans ``(label, start, end)`` of the nodes, in pre-order.

        A unary chain gives several spans with the same offsets, outermost first.
        """
        out: list[tuple[str, int, int]] = []
        # Post-order pass computing ends, written into pre-order slots.
        position = 0
        stack: list[tuple[Tree, int, bool]] = [(self, 0, False)]
        starts: list[int] = []
        slots: list[int] = []
        while stack:
            node, depth, visited = stack.pop()
            if node.word is not None:
                if include_preterminals:
                    out.append((node.label, position, position + 1))
                position += 1
                continue
            if visited:
                start = starts.pop()
                slot = slots.pop()
                if slot >= 0:
                    out[slot] = (node.label, start, position)
                continue
            starts.append(position)
            if include_root or depth > 0:
                slots.append(len(out))
                out.append((node.label, position, position))
            else:
                slots.append(-1)
            stack.append((node, depth, True))
            stack.extend((child, depth + 1, False) for child in reversed(node.children))
        return out

    def pformat(self) -> str:
        """The tree in Penn bracket notation on one line: ``(TOP (S (NP (DT The) ...)))``.

        A word holding ``(``, ``)`` or whitespace is written escaped (``f(x)`` ->
        ``f-LRB-x-RRB-``, see ``trees.brackets.writable_word``), so the text reads back.
        """
        from .brackets import writable_label, writable_word

        parts: list[str] = []
        stack: list[Tree | str] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
            elif item.word is not None:
                parts.append(f"({writable_label(item.label)} {writable_word(item.word)})")
            else:
                parts.append(f"({writable_label(item.label)}")
                stack.append(")")
                for child in reversed(item.children):
                    stack.append(child)
                    stack.append(" ")
        return "".join(parts)

    def pretty(self, indent: int = 2) -> str:
        """Multi-line Penn notation: one phrase per line, flat phrases on one line."""
        from .brackets import writable_label

        lines: list[str] = []
        stack: list[tuple[Tree, int] | None] = [(self, 0)]  # None closes the last line
        while stack:
            item = stack.pop()
            if item is None:
                lines[-1] += ")"
                continue
            node, depth = item
            pad = " " * (indent * depth)
            if node.word is not None or all(c.word is not None for c in node.children):
                lines.append(pad + node.pformat())
                continue
            lines.append(f"{pad}({writable_label(node.label)}")
            stack.append(None)
            stack.extend((child, depth + 1) for child in reversed(node.children))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.pformat()

    def __repr__(self) -> str:
        text = self.pformat()
        return f"Tree({text if len(text) < 200 else text[:197] + '...'})"
