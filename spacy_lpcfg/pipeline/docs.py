"""Adapters between spaCy Docs and trees, and the token text table at that boundary.

A parse lives on a Doc as a ``SpanGroup`` (key ``"constituents"`` by default):
one ``Span`` per phrase of the tree in pre-order, labelled with the full
treebank label (``NP-SBJ``); a unary chain gives several spans at the same
offsets, outermost first; the ``TOP`` root and the preterminals are not spans
(POS tags are in ``token.tag_``). The group's ``attrs`` mark it as ours
(``{"lpcfg": 1}``), name the label scheme of its labels and list the sentences
that needed a parser fallback. A parsed Doc's group also has, where the model
gives them, ``attrs["scores"]``: each span's posterior (None where unknown), in
the group's order, as spaCy's ``spancat`` keeps its scores; and
``attrs["log_likelihoods"]``: ``[start, end, log_likelihood]`` per sentence
(token offsets of its first word and past its last). Whitespace tokens (``token.is_space``) are not
leaves of any tree; they stay inside the spans around them.

The same layout serves gold docs (``tree_to_doc``, used by the converter and the
corpus reader) and parsed docs, and ``doc_trees`` reads either back into trees:
for training (``LPCFGParser.initialize``) and scoring (EVALB on trees).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence

from spacy.tokens import Doc, Span, SpanGroup
from spacy.vocab import Vocab

from ..errors import Errors
from ..trees.tree import ROOT_LABEL, Tree

SPANS_KEY = "constituents"
GROUP_MARKER = "lpcfg"  # attrs key marking a span group of constituents; value = layout version
# attrs key: "full" writes function tags into ._.parse_string (benepar writes categories)
PARSE_STRING_LABELS_KEY = "parse_string_labels"
PARSE_STRING_LABELS = ("category", "full")
GROUP_VERSION = 1
SCORES_KEY = "scores"  # attrs key: each span's posterior (spancat's name for its scores)
LOG_LIKELIHOODS_KEY = "log_likelihoods"  # attrs key: [start, end, value] per sentence
MISSING_TAG = "XX"  # tag of a leaf without token.tag_ where one is needed (scoring)

# Raw spellings of a token -> its spellings in treebanks, most common first. A
# model uses the first one it knows; a token the model knows as written stays
# as written. So PTB models get their bracket escapes, ``...'' quotes and '--'
# dashes; IcePaHC and CESS-ESP models keep their plain '"' and '-'; CESS-ESP
# writes parentheses '-Fpa-' '-Fpt-', Floresta '{' '}' and quotes '«' '»'.
TOKEN_SPELLINGS: dict[str, tuple[str, ...]] = {
    "(": ("-LRB-", "-Fpa-", "{"),
    ")": ("-RRB-", "-Fpt-", "}"),
    "[": ("-LSB-", "-LRB-", "["),
    "]": ("-RSB-", "-RRB-", "]"),
    "{": ("-LCB-", "-LRB-"),
    "}": ("-RCB-", "-RRB-"),
    "“": ("``", "«", "“", '"'),
    "”": ("''", "»", "”", '"'),
    "„": ("``", "„", "«", '"'),
    "«": ("``", '"'),
    "»": ("''", '"'),
    "‘": ("`", "'"),
    "’": ("'",),
    "—": ("--", "—", "-"),
    "–": ("--", "–", "-"),
    "…": ("...",),
}
# A straight double quote opens or closes: the first of a sentence opens, the next
# closes. (Icelandic and German close with “, which English opens with.)
OPENING_QUOTES = ("``", "«", "„", "“")
CLOSING_QUOTES = ("''", "»", "”", "“")
# Characters inside longer tokens ("n’t", "’s"), tried when the token is unknown.
CHARACTER_SPELLINGS = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-"})


class TokenNormalizer:
    """Maps spaCy token texts to the spellings a model was trained on.

    known_words (Iterable[str]): the model's known words (``Lexicon.known_words``).
    """

    def __init__(self, known_words: Iterable[str]):
        self.known = frozenset(known_words)

    def __call__(self, texts: Sequence[str]) -> list[str]:
        """The treebank spelling of each token of one sentence."""
        out = []
        quotes = 0
        candidates: Sequence[str]
        for text in texts:
            if text == '"' and text not in self.known:
                candidates = CLOSING_QUOTES if quotes % 2 else OPENING_QUOTES
                quotes += 1
            else:
                candidates = TOKEN_SPELLINGS.get(text, ())
            out.append(self.spell(text, candidates))
        return out

    def spell(self, text: str, candidates: Sequence[str] = ()) -> str:
        """``text`` if known, else the first known candidate, else ``text`` with curly
        quotes and long dashes made plain if that is known ("n’t"), else ``text``."""
        if text in self.known:
            return text
        for candidate in candidates:
            if candidate in self.known:
                return candidate
        translated = text.translate(CHARACTER_SPELLINGS)
        return translated if translated in self.known else text


def tree_constituents(tree: Tree) -> list[tuple[str, int, int]]:
    """``(label, start, end)`` of every phrase in pre-order; no ``TOP`` root, no preterminals."""
    return tree.spans(include_root=tree.label != ROOT_LABEL)


def group_attrs(
    scheme: str, fallbacks: Sequence[tuple[int, str]] = (), parse_string_labels: str = "category"
) -> dict:
    """The ``attrs`` of a constituent span group (JSON/msgpack data only);
    ``parse_string_labels`` "full": ``._.parse_string`` keeps function tags."""
    attrs: dict = {GROUP_MARKER: GROUP_VERSION, "scheme": scheme}
    if parse_string_labels != "category":
        attrs[PARSE_STRING_LABELS_KEY] = parse_string_labels
    if fallbacks:
        attrs["fallbacks"] = [[index, reason] for index, reason in fallbacks]
    return attrs


def tree_to_doc(vocab: Vocab, tree: Tree, *, spans_key: str = SPANS_KEY, scheme: str) -> Doc:
    """A Doc of the tree's words (spaces unknown) with its tags and constituents.

    tree (Tree): a treebank tree (usually rooted at ``TOP``).
    scheme (str): the label scheme of its labels ("penn", "floresta", "cess").
    """
    doc = Doc(vocab, words=tree.words(), tags=tree.tags())
    spans = [Span(doc, start, end, label=label) for label, start, end in tree_constituents(tree)]
    doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans, attrs=group_attrs(scheme))
    return doc


def sentence_leaves(doc: Doc, missing_sentences: str, name: str) -> list[tuple[int, list[int]]]:
    """``(sentence index, leaf token indices)`` per sentence that has a word.

    Sentences come from ``doc.sents``; without sentence boundaries the whole Doc
    is one sentence (``missing_sentences="doc"``) or it is an error ("error").
    RAISES ValueError: no boundaries with ``missing_sentences="error"``.
    """
    if not len(doc):
        return []
    if doc.has_annotation("SENT_START"):
        bounds = [(sent.start, sent.end) for sent in doc.sents]
    elif missing_sentences == "doc":
        bounds = [(0, len(doc))]
    else:
        raise ValueError(Errors.E702.format(name=name))
    out = []
    for index, (start, end) in enumerate(bounds):
        leaves = [i for i in range(start, end) if not doc[i].is_space]
        if leaves:
            out.append((index, leaves))
    return out


def find_group(doc: Doc, spans_key: str) -> SpanGroup | None:
    """The span group ``spans_key`` of ``doc``, if it has one."""
    return doc.spans.get(spans_key)


def doc_trees(
    doc: Doc,
    spans_key: str = SPANS_KEY,
    *,
    by_sentence: bool = False,
    missing_tag: str | None = MISSING_TAG,
) -> list[Tree]:
    """Trees of a Doc's constituents, rooted at ``TOP`` (the inverse of ``tree_to_doc``).

    Leaves are the non-whitespace tokens with ``token.tag_``; spans over only
    whitespace and spans labelled ``TOP`` are ignored.
    by_sentence (bool): one tree per sentence when the Doc has sentence
        boundaries; else (and by default) one tree for the whole Doc.
    missing_tag (str | None): the tag of a token without ``token.tag_``; None
        makes a missing tag an error (training needs tags).
    RETURNS (list[Tree]): the trees; none for a Doc without words.
    RAISES ValueError: crossing constituents, a constituent across a sentence
        boundary, or a missing tag when ``missing_tag`` is None.
    """
    group = find_group(doc, spans_key)
    spans = [] if group is None else [(span.label_, span.start, span.end) for span in group]
    if by_sentence and doc.has_annotation("SENT_START"):
        bounds = [(sent.start, sent.end) for sent in doc.sents]
    else:
        bounds = [(0, len(doc))]
    starts = [start for start, _ in bounds]
    per_sentence: list[list[tuple[str, int, int]]] = [[] for _ in bounds]
    for label, start, end in spans:
        sentence = bisect_right(starts, start) - 1
        if end > bounds[sentence][1]:
            span = f"{label} [{start}, {end})"
            raise ValueError(Errors.E706.format(span=span, key=spans_key))
        per_sentence[sentence].append((label, start, end))
    trees = []
    for (start, end), inside in zip(bounds, per_sentence):
        leaves = [i for i in range(start, end) if not doc[i].is_space]
        if leaves:
            words = [doc[i].text for i in leaves]
            tags = [_tag(doc, i, missing_tag) for i in leaves]
            trees.append(build_tree(leaves, words, tags, inside, spans_key))
    return trees


def _tag(doc: Doc, index: int, missing_tag: str | None) -> str:
    tag = doc[index].tag_
    if tag:
        return tag
    if missing_tag is None:
        raise ValueError(Errors.E705.format(index=index, text=doc[index].text))
    return missing_tag


def build_tree(
    leaves: Sequence[int],
    words: Sequence[str],
    tags: Sequence[str],
    spans: Iterable[tuple[str, int, int]],
    spans_key: str = SPANS_KEY,
) -> Tree:
    """The tree rooted at ``TOP`` over ``leaves`` with the given constituents.

    leaves (Sequence[int]): increasing token indices of the words.
    words, tags (Sequence[str]): one per leaf.
    spans (Iterable[tuple[str, int, int]]): ``(label, start, end)`` in token offsets,
        in pre-order (unary chains outermost first).
    RAISES ValueError: two constituents cross.
    """
    nodes = []
    for order, (label, start, end) in enumerate(spans):
        first, last = bisect_left(leaves, start), bisect_left(leaves, end)
        if label != ROOT_LABEL and first < last:
            nodes.append((first, -last, order, label))
    nodes.sort()  # stable pre-order: by start, longest first, then as given
    # Frames of open phrases: [label, start, end, children]; the root frame is TOP.
    stack: list[list] = [[ROOT_LABEL, 0, len(leaves), []]]
    next_leaf = 0

    def fill(frame: list, until: int) -> None:
        nonlocal next_leaf
        while next_leaf < until:
            frame[3].append(Tree.leaf(tags[next_leaf], words[next_leaf]))
            next_leaf += 1

    def close() -> None:
        frame = stack.pop()
        fill(frame, frame[2])
        stack[-1][3].append(Tree(frame[0], tuple(frame[3])))

    for first, negative_last, _, label in nodes:
        last = -negative_last
        while stack[-1][2] <= first and len(stack) > 1:
            close()
        top = stack[-1]
        if last > top[2]:
            inner = f"{label} [{leaves[first]}, {leaves[last - 1] + 1})"
            outer = f"{top[0]} [{leaves[top[1]]}, {leaves[top[2] - 1] + 1})"
            raise ValueError(Errors.E704.format(first=outer, second=inner, key=spans_key))
        fill(top, first)
        stack.append([label, first, last, []])
    while len(stack) > 1:
        close()
    fill(stack[0], len(leaves))
    return Tree(ROOT_LABEL, tuple(stack[0][3]))
