"""Combining the span marginals of a model's members: models trained apart, decoded together.

Members may differ in everything but the treebank: binarisation direction,
Markov orders, function tags kept or stripped, estimator, lexicon. What they
share is the treebank's brackets, so they are combined where they agree to
mean the same thing: each member's chart gives span marginals of natural
labels (``span_marginals``: intermediate symbols are no brackets, annotations
are stripped), the labels are reduced to the treebank's categories (function
tags dropped, ``NP-SBJ`` -> ``NP``, chains kept: ``S-TPC::VP`` -> ``S::VP``)
and the brackets are chosen from the members' combined category marginals:

``members_product``  the span-factored product of their marginals (``product``
                     module), the default (``defaults.MEMBER_DECODER``);
``members_mbr``      expected labelled recall of their mean (``mbr_tree``; any
                     sign, so it suits spectral members, whose marginals can be
                     negative).

Function labels then come from the members that keep them: each chosen
bracket takes the full label of its category with the largest mean marginal
among those members (the category alone when none of them gives it mass).
Tags are decided with the brackets, from the mean (or product of) tag marginals.
Both are registered decoders of kind "members" (``decode.registry``), as is dual
decomposition (``decode.dual``), which combines the members' trees instead.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from ..trees.transforms import coarse_label
from .mbr import DEFAULT_THRESHOLD, mbr_tree
from .product import span_product
from .registry import decoder_names
from .result import ParseResult
from .span_marginals import SpanMarginals, aligned, mean_marginals
from .span_scores import SpanScores

MEMBER_DECODERS = decoder_names("members")  # what benchmarks/bench_combine.py compares


def members_product(
    parts: Sequence[SpanMarginals],
    keeps_functions: Sequence[bool],
    scheme: str,
    *,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The tree of the product of the members' category marginals (module docstring).

    parts (Sequence[SpanMarginals]): the marginals of the members that parsed (>= 1).
    keeps_functions (Sequence[bool]): per part, whether its labels carry function tags.
    scheme (str): the label scheme, which says what a label's category is.
    span_scores (SpanScores | None): added to each bracket's score, by category.
    RETURNS (ParseResult): TOP over natural labels, with function tags where a member
        that keeps them supplies one.
    """
    categories = aligned([by_category(part, scheme) for part in parts])
    result = span_product(categories, "members_product", span_scores)
    return _with_member_functions(result, parts, keeps_functions, scheme)


def members_mbr(
    parts: Sequence[SpanMarginals],
    keeps_functions: Sequence[bool],
    scheme: str,
    *,
    span_scores: SpanScores | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> ParseResult:
    """The expected-recall tree of the mean of the members' category marginals
    (``mbr_tree``); arguments as for ``members_product``.

    threshold (float): the cost of a bracket.
    """
    categories = aligned([by_category(part, scheme) for part in parts])
    result = mbr_tree(
        mean_marginals(categories),
        threshold=threshold,
        decoder="members_mbr",
        span_scores=span_scores,
    )
    return _with_member_functions(result, parts, keeps_functions, scheme)


def _with_member_functions(
    result: ParseResult, parts: Sequence[SpanMarginals], keeps: Sequence[bool], scheme: str
) -> ParseResult:
    """``result`` with the function tags of the parts that keep them, if any."""
    keepers = [part for part, keeps_functions in zip(parts, keeps) if keeps_functions]
    if not keepers or len(result.labels) <= 1:
        return result
    return _with_functions(result, mean_marginals(aligned(keepers)), scheme)


def by_category(part: SpanMarginals, scheme: str) -> SpanMarginals:
    """``part`` with its labels' marginals summed by category."""
    names, column = _category_columns(part.labels, scheme)
    if names == part.labels:
        return part
    n = part.n_words
    projection = np.zeros((len(part.labels), len(names)))
    projection[np.arange(len(part.labels)), column] = 1.0
    flat = part.marginals.reshape(-1, len(part.labels))
    spans = np.flatnonzero(flat.any(axis=1))  # the few spans with mass (after pruning)
    marginals = np.zeros((len(flat), len(names)))
    marginals[spans] = flat[spans] @ projection
    return SpanMarginals(
        names, marginals.reshape(n + 1, n + 1, len(names)), part.tags, part.tag_marginals
    )


@functools.lru_cache(maxsize=64)
def _category_columns(labels: tuple[str, ...], scheme: str) -> tuple[tuple[str, ...], np.ndarray]:
    """(the distinct categories of ``labels``, the column of each label among them)."""
    categories = [coarse_label(label, scheme) for label in labels]
    names = tuple(dict.fromkeys(categories))
    index = {name: i for i, name in enumerate(names)}
    return names, np.array([index[c] for c in categories], dtype=np.int64)


def _with_functions(result: ParseResult, full: SpanMarginals, scheme: str) -> ParseResult:
    """``result`` with each bracket relabelled by its best full label in ``full``."""
    categories, column = _category_columns(full.labels, scheme)
    category_index = {name: i for i, name in enumerate(categories)}
    names = list(result.label_names)
    index = {name: i for i, name in enumerate(names)}
    labels = result.labels.copy()
    for node in range(1, len(labels)):  # node 0 is TOP
        category = category_index.get(names[labels[node]])
        if category is None:
            continue
        candidates = np.flatnonzero(column == category)
        values = full.marginals[result.starts[node], result.ends[node], candidates]
        if values.max() <= 0:
            continue
        label = full.labels[candidates[int(values.argmax())]]
        labels[node] = index.setdefault(label, len(names))
        if labels[node] == len(names):
            names.append(label)
    # Tags index the names after the phrase labels: keep them where they were by
    # appending the new names at the end.
    return dataclasses.replace(result, label_names=tuple(names), labels=labels)
