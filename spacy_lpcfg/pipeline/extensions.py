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
``Span._.parse_string``     ``(S (NP (PRP She)) (VP ...) (. .))``, brackets in words escaped;
                            function tags too (``NP-SBJ``) with the component's
                            ``parse_string_labels="full"``
``Span._.constituents``     pre-order iterator: the span, its phrases and its tokens
``Span._.children``         iterator of child phrases and of the tokens directly below
``Span._.parent``           the lowest phrase strictly containing the span, or None
``Span._.score``            the constituent's posterior: the probability, under the
                            distribution the parser decoded from, that the sentence's tree
                            has this bracket (its own label for a span from the group, the
                            outermost of the chain otherwise; ``decode.scores``); None when
                            the model gives none (a fallback parse, a word under no phrase)
``Span._.scores``           the posteriors of ``labels``, one each
``Span._.log_likelihood``   for a parsed sentence, its log-likelihood under the model
                            (``Parse.log_likelihood``); None for other spans
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

import functools
import importlib.abc
import sys
import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spacy.tokens import Doc, Span, SpanGroup, Token

from ..errors import NonConstituentException, NotParsedError, Warnings
from ..trees.brackets import escape_word  # PTB escapes in parse strings, as benepar writes them
from ..trees.labels import LabelScheme, get_scheme
from .docs import (
    GROUP_MARKER,
    LOG_LIKELIHOODS_KEY,
    MISSING_TAG,
    PARSE_STRING_LABELS_KEY,
    SCORES_KEY,
    SPANS_KEY,
)

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
    scores (dict): (start, end) -> the posteriors of the chain's labels (None: unknown).
    log_likelihoods (dict): (start, end) of a parsed sentence -> its log-likelihood.
    """

    group: SpanGroup
    size: int
    scheme: LabelScheme
    chains: dict[Offsets, tuple[str, ...]]
    parents: dict[Offsets, Offsets | None]
    children: dict[Offsets, list[Offsets]]
    token_parents: dict[int, Offsets]
    scores: dict[Offsets, tuple[float | None, ...]]
    log_likelihoods: dict[Offsets, float]


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
    scores: dict[Offsets, list[float | None]] = {}
    given = group.attrs.get(SCORES_KEY)
    if not isinstance(given, list) or len(given) != len(group):
        given = [None] * len(group)  # none, or the group changed since it was parsed
    for span, score in zip(group, given):
        offsets = _trim(doc, span.start, span.end)  # the parser writes them trimmed; others may not
        if offsets[0] < offsets[1]:
            chains.setdefault(offsets, []).append(span.label_)
            scores.setdefault(offsets, []).append(score)
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
    log_likelihoods = {
        (int(start), int(end)): float(value)
        for start, end, value in group.attrs.get(LOG_LIKELIHOODS_KEY, ())
    }
    return ParseIndex(
        group,
        len(group),
        scheme,
        frozen,
        parents,
        children,
        token_parents,
        {offsets: tuple(values) for offsets, values in scores.items()},
        log_likelihoods,
    )


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
        raise _non_constituent()(f"Span is not a constituent: {span}")
    return index, offsets


def _non_constituent() -> type[NonConstituentException]:
    """NonConstituentException, and benepar's too when benepar is loaded, so that
    ``except benepar.NonConstituentException`` written for benepar catches it."""
    benepar = sys.modules.get(BENEPAR_EXTENSIONS)
    if benepar is None:
        return NonConstituentException
    return _both_exceptions(benepar.NonConstituentException)


@functools.cache
def _both_exceptions(theirs: type[Exception]) -> type[NonConstituentException]:
    return type("NonConstituentException", (NonConstituentException, theirs), {})


def get_full_labels(span: Span) -> tuple[str, ...]:
    index, offsets = _locate(span)
    return index.chains.get(offsets, ()) if offsets else ()


def get_labels(span: Span) -> tuple[str, ...]:
    return tuple(_scheme(span).category(label) for label in get_full_labels(span))


def get_function_labels(span: Span) -> tuple[str, ...]:
    scheme = _scheme(span)
    return tuple("-".join(scheme.functions(label)) for label in get_full_labels(span))


def get_scores(span: Span) -> tuple[float | None, ...]:
    index, offsets = _locate(span)
    return index.scores.get(offsets, ()) if offsets else ()


def get_score(span: Span) -> float | None:
    index, offsets = _locate(span)
    if offsets is None or offsets not in index.chains:
        return None
    chain, scores = index.chains[offsets], index.scores[offsets]
    position = chain.index(span.label_) if span.label_ in chain else 0
    return scores[position]


def get_log_likelihood(span: Span) -> float | None:
    return parse_index(span.doc).log_likelihoods.get(_trim(span.doc, span.start, span.end))


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
    full = index.group.attrs.get(PARSE_STRING_LABELS_KEY) == "full"
    parts: list[str] = []
    stack: list[Offsets | str] = [offsets]  # offsets to write, or text
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        labels = index.chains.get(item, ())
        if not full:
            labels = tuple(index.scheme.category(label) for label in labels)
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


def get_tree(span: Span):
    """The parse of the span as an ``nltk.Tree`` (what benepar's ``Parser.parse`` gives)."""
    from ..trees.nltk_trees import to_nltk

    return to_nltk(get_parse_string(span))


SPAN_GETTERS = {
    "labels": get_labels,
    "full_labels": get_full_labels,
    "function_labels": get_function_labels,
    "parse_string": get_parse_string,
    "constituents": get_constituents,
    "children": get_children,
    "parent": get_parent,
    "tree": get_tree,
    "score": get_score,
    "scores": get_scores,
    "log_likelihood": get_log_likelihood,
}
TOKEN_GETTERS = {
    "labels": get_token_labels,
    "full_labels": get_token_full_labels,
    "function_labels": get_token_function_labels,
    "parse_string": get_token_parse_string,
    "parent": get_token_parent,
}
# Always ours, whoever has the bare names: Span._.lpcfg_parse_string...
PREFIX = "lpcfg_"
# benepar installs its getters under the same bare names when this module runs
BENEPAR_EXTENSIONS = "benepar.integrations.spacy_extensions"


def install_extensions() -> None:
    """Register the getters on ``Span`` and ``Token`` (idempotent), each as
    ``lpcfg_<name>`` and, where no other package has it, as ``<name>``.

    A bare name another package registered first (benepar uses the same ones) is left
    alone with a warning. If benepar is imported later, its getters take the bare
    names (spaCy would refuse benepar's registration otherwise): both parsers then
    keep working, ours as ``._.lpcfg_<name>`` (``_BeneparWatcher``).
    """
    cls: Any  # Span or Token, each with its own getters
    for cls, getters in ((Span, SPAN_GETTERS), (Token, TOKEN_GETTERS)):
        for name, getter in getters.items():
            if not cls.has_extension(PREFIX + name):
                cls.set_extension(PREFIX + name, getter=getter)
            if not cls.has_extension(name):
                if BENEPAR_EXTENSIONS not in sys.modules:
                    cls.set_extension(name, getter=getter)
            elif cls.get_extension(name)[2] is not getter:
                warnings.warn(Warnings.W701.format(name=name), stacklevel=2)
    if not any(isinstance(finder, _BeneparWatcher) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BeneparWatcher())


# the names benepar registers (on Span; on Token the first three)
BENEPAR_NAMES = ("labels", "parse_string", "parent", "constituents", "children")


def _release_bare_names() -> None:
    """Unregister our getters under benepar's names (benepar is about to take them)."""
    for cls, getters in ((Span, SPAN_GETTERS), (Token, TOKEN_GETTERS)):
        for name, getter in getters.items():
            mine = cls.has_extension(name) and cls.get_extension(name)[2] is getter
            if mine and name in BENEPAR_NAMES:
                cls.remove_extension(name)


class _BeneparWatcher(importlib.abc.MetaPathFinder):
    """Frees the bare extension names just before benepar registers its own."""

    def find_spec(self, fullname, path, target=None):
        if fullname == BENEPAR_EXTENSIONS:
            _release_bare_names()
        return None  # the import itself goes on as usual
