"""Sentences in, unlabelled trees out: the input forms and the output trees of the bracketers.

A bracketer accepts, per sentence, a ``Tree`` (only its words and tags are
read: no structure is ever used), a sequence of words, or a sequence of
``(word, tag)`` pairs. Punctuation is removed before learning and bracketing
(the field's convention, and punctuation is scored nowhere), but kept in the
output: each punctuation token is attached to the lowest induced constituent
that contains the words on both sides of it, so removing it again gives back
exactly the induced bracketing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..evaluation.unlabeled import is_punctuation_tag
from ..trees.tree import ROOT_LABEL, Tree

BRACKET_LABEL = "X"  # the one label of induced constituents
NO_TAG = "X"  # the preterminal label of a content word given without a tag


@dataclass(frozen=True)
class Sentence:
    """One input sentence, split into its content words and its punctuation.

    words (tuple[str, ...]): all tokens, in order.
    tags (tuple[str, ...] | None): their POS tags, None when not given.
    content (tuple[int, ...]): offsets of the non-punctuation tokens.
    gold_split (int | None): for a sentence read from a Tree, the split of its
        top bracket over the content words (``gold_top_split``), for the
        oracle experiments of Parikh, Cohen & Xing (2014); None otherwise.
    """

    words: tuple[str, ...]
    tags: tuple[str, ...] | None
    content: tuple[int, ...]
    gold_split: int | None = None

    @property
    def content_words(self) -> list[str]:
        return [self.words[i] for i in self.content]

    @property
    def content_tags(self) -> list[str] | None:
        return None if self.tags is None else [self.tags[i] for i in self.content]


def as_sentence(item: Tree | Sequence) -> Sentence:
    """Read one input sentence (a Tree, words, or (word, tag) pairs).

    Without tags, a token is punctuation when it has no letter or digit.
    RETURNS (Sentence): the sentence.
    """
    if isinstance(item, Tree):
        words, tags = item.words(), item.tags()
    elif len(item) and not isinstance(item[0], str):
        words = [word for word, _ in item]
        tags = [tag for _, tag in item]
    else:
        words, tags = list(item), None
    if tags is None:
        content = [i for i, word in enumerate(words) if any(ch.isalnum() for ch in word)]
    else:
        content = [i for i, tag in enumerate(tags) if not is_punctuation_tag(tag)]
    gold = gold_top_split(item, content) if isinstance(item, Tree) else None
    return Sentence(tuple(words), None if tags is None else tuple(tags), tuple(content), gold)


def gold_top_split(tree: Tree, content: Sequence[int]) -> int | None:
    """The top bracket of a gold tree: where its first top constituent ends, in content words.

    The top node is the highest one with at least two children holding content
    words (below TOP and unary chains); its first such child is the first top
    constituent, the rest of the sentence the second (a flat node is read as
    its first child against the rest). None for fewer than two content words.
    """
    content_set = set(content)
    node, start = tree, 0
    while True:
        parts, position = [], start
        for child in node.children:
            size = child.n_words if child.word is None else 1
            held = sum(1 for i in range(position, position + size) if i in content_set)
            if held:
                parts.append((child, position, held))
            position += size
        if len(parts) >= 2:
            return parts[0][2]
        if not parts or parts[0][0].word is not None:
            return None
        node, start = parts[0][0], parts[0][1]


def as_sentences(items: Iterable[Tree | Sequence]) -> list[Sentence]:
    return [as_sentence(item) for item in items]


def bracketed_tree(sentence: Sentence, brackets: Iterable[tuple[int, int]]) -> Tree:
    """The output tree: ``TOP`` over ``X`` constituents, words under their tags.

    sentence (Sentence): the sentence.
    brackets (Iterable[tuple[int, int]]): non-crossing half-open spans over the
        content words; the whole sentence is always a constituent.
    RETURNS (Tree): ``(TOP (X ...))`` with every token, punctuation included.
    """
    n_content = len(sentence.content)
    # Content span -> token span: punctuation between two words of a
    # constituent belongs to it; punctuation at a boundary goes up.
    token_start = list(sentence.content) + [len(sentence.words)]
    token_end = [0] + [offset + 1 for offset in sentence.content]
    spans = {(token_start[i], token_end[j]) for i, j in brackets if j - i >= 2}
    spans.add((0, len(sentence.words)))
    spans.discard((0, 0))
    if n_content and (token_start[0], token_end[n_content]) != (0, len(sentence.words)):
        spans.add((token_start[0], token_end[n_content]))
    tags: Sequence[str] | None = sentence.tags
    if tags is None:  # punctuation is its own tag, so that it reads back as punctuation
        content = set(sentence.content)
        tags = [NO_TAG if i in content else w for i, w in enumerate(sentence.words)]
    leaves = [Tree.leaf(tag, word) for word, tag in zip(sentence.words, tags)]
    # Outermost first: longer spans before the shorter spans they contain.
    ordered = sorted(spans, key=lambda span: (span[0], -span[1]))
    stack: list[tuple[int, list[Tree]]] = []  # (end, children) of the open constituents
    position = 0
    root_children: list[Tree] = []

    def close_until(limit: int) -> None:
        while stack and stack[-1][0] <= limit:
            _, children = stack.pop()
            node = Tree(BRACKET_LABEL, tuple(children))
            (stack[-1][1] if stack else root_children).append(node)

    def emit_words(until: int) -> None:
        nonlocal position
        while position < until:
            close_until(position)
            (stack[-1][1] if stack else root_children).append(leaves[position])
            position += 1

    for start, end in ordered:
        emit_words(start)
        close_until(start)
        stack.append((end, []))
    emit_words(len(leaves))
    close_until(len(leaves))
    return Tree(ROOT_LABEL, tuple(root_children))
