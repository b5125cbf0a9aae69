"""The output of every decoder: a parse as compact pre-order arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import Errors
from ..trees.tree import Tree

_NO_INTS = np.zeros(0, dtype=np.int32)
_NO_INTS.flags.writeable = False


@dataclass(frozen=True, eq=False)  # arrays: compare fields explicitly
class ParseResult:
    """A parse of n words in the grammar's (transformed) label space.

    The phrase nodes are listed in pre-order, a unary chain outermost first,
    the root ("TOP", over [0, n)) first; preterminals are not nodes, they are
    the tags of the words. Nodes may have any number of children: decoders on
    grammar rules give binary trees with intermediate ``@`` nodes, span decoders
    give natural labels only. ``TransformPipeline.invert(result.to_tree(words))``
    gives a tree in the treebank's labels.

    n_words (int): sentence length n >= 1.
    label_names (tuple[str, ...]): the names that `labels` and `tags` index
        (the grammar's symbol names for grammar decoders).
    labels (np.ndarray): int32[N], the label of each phrase node.
    starts, ends (np.ndarray): int32[N], the half-open span of each node.
    tags (np.ndarray): int32[n], the preterminal of each word.
    score (float): the decoder's objective for this tree: a log score for
        viterbi, max_rule, variational and products (up to a constant for the
        span-level product), expected matched brackets minus their cost for
        mbr; -inf when decoding failed.
    decoder (str): the name of the decoder that produced it.
    """

    n_words: int
    label_names: tuple[str, ...]
    labels: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    tags: np.ndarray
    score: float
    decoder: str

    @classmethod
    def failure(cls, n_words: int, decoder: str) -> ParseResult:
        """The result of a decoder that found no tree: the caller falls back."""
        return cls(n_words, (), _NO_INTS, _NO_INTS, _NO_INTS, _NO_INTS, -np.inf, decoder)

    @property
    def has_parse(self) -> bool:
        """False when decoding failed (no derivation survived, or none had a finite score)."""
        return len(self.labels) > 0

    def to_tree(self, words: Sequence[str]) -> Tree:
        """The parse as a Tree over `words`, labels as in `label_names`.

        RAISES ValueError: decoding failed, or `words` has the wrong length.
        """
        if not self.has_parse:
            raise ValueError(Errors.E301.format(decoder=self.decoder))
        if len(words) != self.n_words:
            raise ValueError(Errors.E302.format(expected=self.n_words, found=len(words)))
        names = self.label_names
        leaves = [Tree.leaf(names[tag], word) for tag, word in zip(self.tags.tolist(), words)]
        finished: list[Tree] = []
        stack: list[tuple[str, int, list[Tree]]] = []  # open nodes: (label, end, children)
        placed = 0  # words before this one are in some node's children

        def close() -> None:
            nonlocal placed
            label, end, children = stack.pop()
            children.extend(leaves[placed:end])
            placed = max(placed, end)
            (stack[-1][2] if stack else finished).append(Tree(label, tuple(children)))

        for label, start, end in zip(
            self.labels.tolist(), self.starts.tolist(), self.ends.tolist()
        ):
            while stack and stack[-1][1] <= start:
                close()
            if stack:
                stack[-1][2].extend(leaves[placed:start])
            placed = max(placed, start)
            stack.append((names[label], end, []))
        while stack:
            close()
        return finished[0]
