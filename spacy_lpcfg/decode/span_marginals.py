"""Anchored marginals of treebank brackets: the input of the span-level decoders.

Only *natural* labels are brackets: phrasal symbols. Intermediate
binarisation symbols (``@NP|<DT``) are not brackets of the treebank tree, so
they get no score, and the root TOP is always the top node. Parent
annotations are grammar state, not part of a bracket: ``NP^S`` and ``NP^VP``
are the same bracket ``NP`` once inverted, so their marginals are added
(likewise for annotated tags, ``DT^NP``). A collapsed chain ``S::VP`` stays
one label, standing for the brackets S and VP over the same span. Labels are
matched by name, so grammars with different symbol tables (different
binarisations or annotations) can be combined.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..chart import ChartPosteriors
from ..grammar import LPCFG, SymbolTable
from ..grammar.symbols import PHRASAL, PRETERMINAL
from ..trees.transforms import PARENT_SEP


@dataclass(frozen=True)
class SpanMarginals:
    """Marginals of bracket labels over spans and of tags over words.

    labels (tuple[str, ...]): the L natural labels, annotations stripped (``S::VP``, ``NP``).
    marginals (np.ndarray): float64 (n+1, n+1, L); marginals[i, j, l] is the probability
        that span [i, j) carries labels[l]; zero where j <= i; may be negative.
    tags (tuple[str, ...]): the T tags, annotations stripped.
    tag_marginals (np.ndarray): float64 (n, T), the probability of tags[t] at word i.
    """

    labels: tuple[str, ...]
    marginals: np.ndarray
    tags: tuple[str, ...]
    tag_marginals: np.ndarray

    @property
    def n_words(self) -> int:
        return self.tag_marginals.shape[0]

    def reindexed(self, labels: tuple[str, ...], tags: tuple[str, ...]) -> SpanMarginals:
        """The same marginals over larger label and tag lists (zeros for the new names)."""
        n = self.n_words
        marginals = np.zeros((n + 1, n + 1, len(labels)))
        marginals[:, :, _positions(self.labels, labels)] = self.marginals
        tag_marginals = np.zeros((n, len(tags)))
        tag_marginals[:, _positions(self.tags, tags)] = self.tag_marginals
        return SpanMarginals(labels, marginals, tags, tag_marginals)


def span_marginals(grammar: LPCFG, posteriors: ChartPosteriors) -> SpanMarginals:
    """The bracket-label and tag marginals of one chart.

    grammar (LPCFG): the grammar the posteriors were computed with.
    posteriors (ChartPosteriors): the chart's item marginals.
    RETURNS (SpanMarginals): dense marginals by stripped name.
    """
    n = posteriors.n_words
    kinds = grammar.symbols.kind_codes
    labels, label_column = grouped_names(grammar.symbols, PHRASAL)
    tags, tag_column = grouped_names(grammar.symbols, PRETERMINAL)
    item_kinds = kinds[posteriors.item_symbols]
    natural = item_kinds == PHRASAL
    cells = posteriors.item_starts[natural] * (n + 1) + posteriors.item_ends[natural]
    flat = cells.astype(np.int64) * len(labels) + label_column[posteriors.item_symbols[natural]]
    size = (n + 1) * (n + 1) * len(labels)
    marginals = np.bincount(flat, weights=posteriors.marginals[natural], minlength=size)
    is_tag = item_kinds == PRETERMINAL
    flat = posteriors.item_starts[is_tag] * len(tags) + tag_column[posteriors.item_symbols[is_tag]]
    tag_marginals = np.bincount(flat, weights=posteriors.marginals[is_tag], minlength=n * len(tags))
    return SpanMarginals(
        labels,
        marginals.reshape(n + 1, n + 1, len(labels)),
        tags,
        tag_marginals.reshape(n, len(tags)),
    )


def aligned(parts: Sequence[SpanMarginals]) -> list[SpanMarginals]:
    """`parts` over one list of labels and one of tags (the union, in order of appearance)."""
    labels = tuple(dict.fromkeys(label for part in parts for label in part.labels))
    tags = tuple(dict.fromkeys(tag for part in parts for tag in part.tags))
    return [
        part if (part.labels, part.tags) == (labels, tags) else part.reindexed(labels, tags)
        for part in parts
    ]


def mean_marginals(parts: Sequence[SpanMarginals]) -> SpanMarginals:
    """The mean of aligned ``parts`` (same labels and tags, see ``aligned``)."""
    return SpanMarginals(
        parts[0].labels,
        cast(np.ndarray, sum(part.marginals for part in parts) / len(parts)),
        parts[0].tags,
        cast(np.ndarray, sum(part.tag_marginals for part in parts) / len(parts)),
    )


@functools.lru_cache(maxsize=64)
def grouped_names(symbols: SymbolTable, kind: int) -> tuple[tuple[str, ...], np.ndarray]:
    """(stripped names, int64[n_symbols] column of each symbol of `kind` among them);
    cached, as grammars are decoded sentence after sentence."""
    ids = np.flatnonzero(symbols.kind_codes == kind)
    stripped = [symbols.name(cast(int, a)).partition(PARENT_SEP)[0] for a in ids]
    names = tuple(dict.fromkeys(stripped))
    index = {name: i for i, name in enumerate(names)}
    column = np.full(len(symbols), -1, dtype=np.int64)
    column[ids] = [index[name] for name in stripped]
    column.flags.writeable = False
    return names, column


def _positions(names: tuple[str, ...], target: tuple[str, ...]) -> np.ndarray:
    index = {name: i for i, name in enumerate(target)}
    return np.array([index[name] for name in names], dtype=np.int64)
