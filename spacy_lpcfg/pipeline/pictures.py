"""Pictures of the constituents on spaCy Docs and Spans (``spacy_lpcfg.render``).

The trees come from the span group the parser wrote (``docs.doc_trees``); the
drawing is ``spacy_lpcfg.pictures``, which knows nothing of spaCy.
"""

from __future__ import annotations

from spacy.tokens import Doc, Span

from ..errors import Errors
from ..pictures import TreeSVG, render_trees
from ..trees.tree import Tree
from .docs import MISSING_TAG, build_tree, doc_trees
from .extensions import constituent_group


def render_spacy(
    obj: Doc | Span, *, spans_key: str | None = None, scheme: str | None = None, **options
) -> TreeSVG:
    """Draw a Doc (one tree per sentence, stacked) or a Span (the tree over its words).

    spans_key (str | None): the span group of constituents; None finds the group the
        parser wrote.
    scheme (str | None): label notation; None takes the group's.
    **options: as for ``pictures.render_trees``.
    RAISES NotParsedError: no constituents on the Doc; ValueError: an unknown
        ``spans_key``, or constituents that do not form a tree.
    """
    if not isinstance(obj, (Doc, Span)):
        raise TypeError(Errors.E033.format(kind=type(obj).__name__))
    doc = obj if isinstance(obj, Doc) else obj.doc
    if spans_key is None:
        group = constituent_group(doc)
    elif spans_key in doc.spans:
        group = doc.spans[spans_key]
    else:
        known = ", ".join(sorted(doc.spans)) or "(none)"
        raise ValueError(Errors.E719.format(key=spans_key, known=known))
    scheme = scheme or group.attrs.get("scheme", "penn")
    if isinstance(obj, Doc):
        trees = doc_trees(doc, group.name, by_sentence=True)
    else:
        trees = [span_tree(obj, group.name)]
    if not trees:
        raise ValueError(Errors.E034.format(what="a Doc without words"))
    return render_trees(trees, scheme=scheme, **options)


def span_tree(span: Span, spans_key: str) -> Tree:
    """The tree over a span's words: the constituents inside it (others are left out)."""
    doc = span.doc
    leaves = [i for i in range(span.start, span.end) if not doc[i].is_space]
    if not leaves:
        raise ValueError(Errors.E034.format(what="a span of only whitespace"))
    inside = [
        (constituent.label_, constituent.start, constituent.end)
        for constituent in doc.spans[spans_key]
        if span.start <= constituent.start and constituent.end <= span.end
    ]
    words = [doc[i].text for i in leaves]
    tags = [doc[i].tag_ or MISSING_TAG for i in leaves]
    return build_tree(leaves, words, tags, inside, spans_key)
