"""benepar-compatible ``Span._`` and ``Token._`` getters over the constituent span group.

Every value is computed from the span group the parser wrote (found by its
``attrs["lpcfg"]`` marker, else under the key "constituents"), so a parse
travels with the Doc through ``DocBin``, ``Doc.to_bytes``, ``spacy apply`` and
``nlp.pipe(n_process=2)``; the getters are module-level functions, so they pickle.

==========================  ===============================================================
``Span._.labels``           categories of the unary chain at exactly these offsets, outermost
                            first: ``("S", "VP")``; ``()`` for a token that is no phrase
``Span._.full_labels``      the same with function tags: ``("NP-SBJ",)``
``Span._.function_labels``  the function tags alone, ``"-"``-joined: ``("SBJ",)`` (``""`` if none)
``Span._.parse_string``     ``(S (NP-SBJ (PRP She)) (VP ...) (. .))``, brackets in words escaped
``Span._.constituents``     pre-order iterator: the span, its phrases and its tokens
``Span._.children``         iterator of child phrases and of the tokens directly below
``Span._.parent``           the lowest phrase strictly containing the span, or None
``Token._.*``               the same for ``doc[i : i + 1]`` (labels, full_labels,
                            function_labels, parse_string, parent)
==========================  ===============================================================

A span matches a constituent when its words do: whitespace tokens at its
edges are ignored (a sentence from the sentencizer may begin with "\\n\\n").
Whitespace tokens are no words: a span of whitespace only (a whitespace token,
or the whitespace-only sentence the sentencizer makes of "Hello.  \\n") is no
constituent and never an error: no labels (``()``), ``parse_string`` ``""``,
no ``constituents`` or ``children``, and as ``parent`` the lowest phrase around
it (None between sentences). Other spans raise ``NonConstituentException``; a
Doc nobody parsed raises ``NotParsedError``. Function tags are split with the
label scheme in the group's attrs ("penn" ``NP-SBJ``, "floresta" ``SUBJ+np``,
"cess" ``sn-SUJ``).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from spacy.tokens import Doc, Span, SpanGroup, Token

from ..errors import NonConstituentException, NotParsedError, Warnings
from ..trees.brackets import escape_word  # PTB escapes in parse strings, as benepar writes them
from ..trees.labels import LabelScheme, get_scheme
from .docs import GROUP_MARKER, MISSING_TAG, SPANS_KEY

Offsets = tuple[int, int]


@dataclass
class ParseIndex:
    """The constituents of one Doc, indexed by offsets.

    group (SpanGroup): the group indexed (the index is rebuilt when it changes).
    size (int): its length when indexed.
    scheme (LabelScheme): how its labels split into category and function tags.
    chains (dict): (start, end) -> full labels of the unary chain there, outermost first.
    parents (dict): (start, end) -> offsets of the lowest strictly containing phrase, or None.
    children (dict): (start, end) -> offsets of its child phrases, in order.
    token_parents (dict): token index -> offsets of the lowest phrase longer than one
        token that contains it.
    """

    group: SpanGroup
    size: int
    scheme: LabelScheme
    chains: dict[Offsets, tuple[str, ...]]
    parents: dict[Offsets, Offsets | None]
    children: dict[Offsets, list[Offsets]]
    token_parents: dict[int, Offsets]


# One index per Doc, dropped with the Doc. A module-level cache rather than
# Doc.user_data, so that nothing but the span group is ever serialised.
_INDEXES: weakref.WeakKeyDictionary[Doc, ParseIndex] = weakref.WeakKeyDictionary()


def constituent_group(doc: Doc) -> SpanGroup:
    """The span group holding the Doc's constituents. RAISES NotParsedError: none."""
    marked = [key for key, group in doc.spans.items() if group.attrs.get(GROUP_MARKER)]
    key = SPANS_KEY if SPANS_KEY in marked or not marked else marked[0]
    if key not in doc.spans:
        raise NotParsedError(
            "No constituency parse on this Doc: add the 'lpcfg_parser' component to the "
            "pipeline (or read Docs converted with 'spacy-lpcfg convert')."
        )
    return doc.spans[key]


def parse_index(doc: Doc) -> ParseIndex:
    """The (cached) index of the Doc's constituents."""
    group = constituent_group(doc)
    index = _INDEXES.get(doc)
    if index is None or index.group is not group or index.size != len(group):
        index = _build_index(group)
        _INDEXES[doc] = index
    return index


def _build_index(group: SpanGroup) -> ParseIndex:
    doc = group.doc
    chains: dict[Offsets, list[str]] = {}
    for span in group:
        offsets = _trim(doc, span.start, span.end)  # the parser writes them trimmed; others may not
        if offsets[0] < offsets[1]:
            chains.setdefault(offsets, []).append(span.label_)
    # Outer phrases first; a stable sort keeps a user-reordered group usable.
    order = sorted(chains, key=lambda offsets: (offsets[0], -offsets[1]))
    parents: dict[Offsets, Offsets | None] = {}
    children: dict[Offsets, list[Offsets]] = {offsets: [] for offsets in order}
    token_parents: dict[int, Offsets] = {}
    open_phrases: list[Offsets] = []
    for offsets in order:
        start, end = offsets
        while open_phrases and open_phrases[-1][1] <= start:
            open_phrases.pop()
        parent = open_phrases[-1] if open_phrases else None
        parents[offsets] = parent
        if parent is not None:
            children[parent].append(offsets)
        open_phrases.append(offsets)
        if end - start > 1:  # inner phrases come later and overwrite outer ones
            for token in range(start, end):
                token_parents[token] = offsets
    scheme = get_scheme(group.attrs.get("scheme", "penn"))
    frozen = {offsets: tuple(labels) for offsets, labels in chains.items()}
    return ParseIndex(group, len(group), scheme, frozen, parents, children, token_parents)


def _trim(doc: Doc, start: int, end: int) -> Offsets:
    """``[start, end)`` without whitespace tokens at its edges (empty if only whitespace)."""
    while start < end and doc[start].is_space:
        start += 1
    while end > start and doc[end - 1].is_space:
        end -= 1
    return start, end


def _locate(span: Span) -> tuple[ParseIndex, Offsets | None]:
    """The index and the constituent offsets of a span (a phrase or a single word);
    None for a span of whitespace only, which is no constituent but no error either."""
    index = parse_index(span.doc)
    offsets = _trim(span.doc, span.start, span.end)
    if offsets[0] == offsets[1]:
        return index, None
    if offsets not in index.chains and offsets[1] - offsets[0] != 1:
        raise NonConstituentException(f"Span is not a constituent: {span}")
    return index, offsets


def get_full_labels(span: Span) -> tuple[str, ...]:
    index, offsets = _locate(span)
    return index.chains.get(offsets, ()) if offsets else ()


def get_labels(span: Span) -> tuple[str, ...]:
    return tuple(_scheme(span).category(label) for label in get_full_labels(span))


def get_function_labels(span: Span) -> tuple[str, ...]:
    scheme = _scheme(span)
    return tuple("-".join(scheme.functions(label)) for label in get_full_labels(span))


def _scheme(span: Span) -> LabelScheme:
    return parse_index(span.doc).scheme


def get_parent(span: Span) -> Span | None:
    index, offsets = _locate(span)
    if offsets is None:  # whitespace: inside the phrases around it, if any
        parent = index.token_parents.get(span.start)
    elif offsets in index.chains:
        parent = index.parents[offsets]
    else:
        parent = index.token_parents.get(offsets[0])
    return None if parent is None else span.doc[parent[0] : parent[1]]


def _child_offsets(index: ParseIndex, doc: Doc, offsets: Offsets) -> list[Offsets]:
    """Child phrases and the words between them, in order."""
    if offsets[1] - offsets[0] == 1:
        return []  # a word, maybe under a unary chain
    out: list[Offsets] = []
    position = offsets[0]
    for child in [*index.children[offsets], (offsets[1], offsets[1])]:
        out.extend((i, i + 1) for i in range(position, child[0]) if not doc[i].is_space)
        if child[0] < child[1]:
            out.append(child)
        position = child[1]
    return out


def get_children(span: Span) -> Iterator[Span]:
    index, offsets = _locate(span)
    if offsets is None:
        return
    doc = span.doc
    for start, end in _child_offsets(index, doc, offsets):
        yield doc[start:end]


def get_constituents(span: Span) -> Iterator[Span]:
    index, offsets = _locate(span)
    if offsets is None:
        return
    doc = span.doc
    stack = [offsets]
    while stack:
        start, end = stack.pop()
        yield doc[start:end]
        stack.extend(reversed(_child_offsets(index, doc, (start, end))))


def get_parse_string(span: Span) -> str:
    index, offsets = _locate(span)
    if offsets is None:
        return ""
    doc = span.doc
    parts: list[str] = []
    stack: list[Offsets | str] = [offsets]  # offsets to write, or text
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        labels = index.chains.get(item, ())
        parts.append("".join(f"({label} " for label in labels))
        stack.append(")" * len(labels))
        children = _child_offsets(index, doc, item)
        if not children:
            token = doc[item[0]]
            tag = token.tag_ or MISSING_TAG
            parts.append(f"({escape_word(tag)} {escape_word(token.text)})")
        for position, child in enumerate(reversed(children)):
            if position:
                stack.append(" ")
            stack.append(child)
    return "".join(parts)


def _token_span(token: Token) -> Span:
    return token.doc[token.i : token.i + 1]


def get_token_labels(token: Token) -> tuple[str, ...]:
    return get_labels(_token_span(token))


def get_token_full_labels(token: Token) -> tuple[str, ...]:
    return get_full_labels(_token_span(token))


def get_token_function_labels(token: Token) -> tuple[str, ...]:
    return get_function_labels(_token_span(token))


def get_token_parse_string(token: Token) -> str:
    return get_parse_string(_token_span(token))


def get_token_parent(token: Token) -> Span | None:
    return get_parent(_token_span(token))


SPAN_GETTERS = {
    "labels": get_labels,
    "full_labels": get_full_labels,
    "function_labels": get_function_labels,
    "parse_string": get_parse_string,
    "constituents": get_constituents,
    "children": get_children,
    "parent": get_parent,
}
TOKEN_GETTERS = {
    "labels": get_token_labels,
    "full_labels": get_token_full_labels,
    "function_labels": get_token_function_labels,
    "parse_string": get_token_parse_string,
    "parent": get_token_parent,
}


def install_extensions() -> None:
    """Register the getters on ``Span`` and ``Token`` (idempotent).

    A name another package registered first (benepar uses the same ones) is
    left alone with a warning, never overwritten.
    """
    for cls, getters in ((Span, SPAN_GETTERS), (Token, TOKEN_GETTERS)):
        for name, getter in getters.items():
            if not cls.has_extension(name):
                cls.set_extension(name, getter=getter)
            elif cls.get_extension(name)[2] is not getter:
                warnings.warn(Warnings.W501.format(name=name), stacklevel=2)
