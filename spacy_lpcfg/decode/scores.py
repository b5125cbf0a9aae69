"""Scores of a parse: the sentence's log-likelihood and its constituents' posteriors.

The *log-likelihood* of a sentence is ``log Z``, the log of the root's inside
score in the chart the decoder used: the sum, over every derivation (tree and
latent states) that the pruning mask allows, of the product of its rule weights
and of its words' lexical weights. Under a generative grammar (MLE, clustering,
split-merge: rule weights conditional on their parent, emissions ``P(e | tag)``)
that is ``log P(words)`` restricted to the trees the mask allows, which is at most
the unpruned total: pruning only removes derivations. Two more things make it
differ from a textbook ``log P(words)``: an unknown word is emitted as its
signature class (``Lexicon``: ``P(class | tag)``), and given tags that constrain
the lexicon restrict the sum to the derivations with those tags. Signed
(spectral) grammars estimate ``Z``; it is reported when it is positive, else None.

The *posterior* of a constituent of the returned tree, ``(c, i, j)`` in the
treebank's labels, is the probability under the chart's distribution that the
sentence's tree has a bracket ``c`` over ``[i, j)``: the item marginals of every
natural (phrasal) chart item over ``[i, j)`` whose label projects to ``c``, summed.
A label projects to the labels ``TransformPipeline.invert`` gives it: annotations
dropped (``NP^S`` and ``NP^VP`` both project to ``NP``), a collapsed unary chain
to each of its parts (``S::VP`` to ``S`` and ``VP``); latent states are summed out
in the marginals already, and intermediate (``@``) items are no brackets. When the
tree has the same label twice over one span (a chain ``NP::NP``), the m-th
(outermost first) gets the probability of at least m such brackets: the items
whose label holds ``c`` at least m times. This is exact whenever a derivation has
at most one natural item per span, which is the case for every grammar with
collapsed unary chains (the default transform); a grammar that keeps unary rules
between phrases can stack two items projecting to ``c`` over one span, and the sum
is then the expected number of such items (possibly above the probability). Signed
grammars' marginals are estimates and may fall outside [0, 1].
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..chart import ChartPosteriors
from ..chart.inputs import per_grammar
from ..grammar import LPCFG
from ..grammar.symbols import PHRASAL
from ..trees.transforms import PARENT_SEP, UNARY_SEP
from ..trees.tree import Tree
from .span_marginals import SpanMarginals

Constituent = tuple[str, int, int]  # (label, start, end), as Tree.spans gives them
SpanPosteriors = tuple[tuple[str, int, int, float], ...]


def log_likelihood(chart: ChartPosteriors) -> float | None:
    """``log Z`` of a chart (see the module docstring); None when the chart has no
    parse or (signed grammars) Z is not positive."""
    if not chart.has_parse or chart.z_sign < 0 or not math.isfinite(chart.log_abs_z):
        return None
    return float(chart.log_abs_z)


def constituents(tree: Tree) -> list[Constituent]:
    """The phrase nodes of a parse, TOP and preterminals excluded, in pre-order (a unary
    chain outermost first): what ``Parse.span_posteriors`` lists."""
    return tree.spans(include_root=False)


def with_posteriors(
    spans: Sequence[Constituent], posteriors: Sequence[float] | np.ndarray
) -> SpanPosteriors:
    """``(label, start, end, posterior)`` per constituent."""
    return tuple(
        (label, start, end, float(value))
        for (label, start, end), value in zip(spans, posteriors, strict=True)
    )


def relabelled(scores: SpanPosteriors | None, tree: Tree) -> SpanPosteriors | None:
    """``scores`` with the labels of ``tree``, a relabelled copy of the tree they were
    computed for (the function labeller adds function tags, the shape stays)."""
    if scores is None:
        return None
    spans = constituents(tree)
    if [span[1:] for span in spans] != [score[1:3] for score in scores]:
        return None  # another shape: nothing to carry over
    return tuple((*span, score[3]) for span, score in zip(spans, scores))


def chart_posteriors_of(
    grammar: LPCFG, chart: ChartPosteriors, spans: Sequence[Constituent]
) -> np.ndarray:
    """float64[len(spans)]: the posterior of each constituent in one grammar's chart
    (module docstring); labels are matched exactly, function tags included."""
    if not len(spans) or not chart.has_parse:
        return np.zeros(len(spans))
    table = _symbol_slots(grammar)
    size = chart.n_words + 1
    n_slots = max(len(table.index), 1)
    rows: dict[tuple[int, int], int] = {}  # the tree's distinct spans
    wanted: list[int] = []  # each constituent's (span row, slot), flat; -1: unknown label
    copies: dict[Constituent, int] = {}
    for span in spans:
        m = copies[span] = copies.get(span, 0) + 1
        slot = table.index.get((span[0], m))
        row = rows.setdefault(span[1:], len(rows))
        wanted.append(-1 if slot is None else row * n_slots + slot)
    # The chart items over those spans (one cheap pass over every item), the slots
    # their labels fill (none for intermediate symbols and tags), a dense (row, slot)
    # table of their marginals.
    row_of = np.full(size * size, -1, dtype=np.int32)
    row_of[[start * size + end for start, end in rows]] = np.arange(len(rows), dtype=np.int32)
    item_rows = np.take(row_of, chart.item_starts * np.int32(size) + chart.item_ends)
    chosen = np.flatnonzero(item_rows >= 0)
    slots = table.slots[chart.item_symbols[chosen]]
    filled = slots >= 0
    flat = item_rows[chosen].astype(np.int64)[:, None] * n_slots + slots
    weights = np.broadcast_to(chart.marginals[chosen][:, None], slots.shape)
    table_values = np.bincount(flat[filled], weights=weights[filled], minlength=len(rows) * n_slots)
    keys = np.array(wanted, dtype=np.int64)
    return np.where(keys >= 0, table_values[np.maximum(keys, 0)], 0.0)


def mean_chart_posteriors(
    grammars: Sequence[LPCFG], charts: Sequence[ChartPosteriors], spans: Sequence[Constituent]
) -> np.ndarray | None:
    """The mean over the charts that have a parse of ``chart_posteriors_of`` (an
    ensemble's members); None when none has."""
    found = [
        chart_posteriors_of(grammar, chart, spans)
        for grammar, chart in zip(grammars, charts)
        if chart.has_parse
    ]
    return np.mean(found, axis=0) if found else None


def marginal_posteriors_of(
    marginals: SpanMarginals, spans: Sequence[Constituent], category: Callable[[str], str]
) -> np.ndarray:
    """float64[len(spans)]: the posterior of each constituent by its category, from
    dense marginals whose labels are (chains of) categories already: the m-th
    constituent of category c over a span gets the marginals of the labels holding c
    at least m times (module docstring)."""
    columns = _label_slots(marginals.labels)
    posteriors = np.zeros(len(spans))
    seen: dict[Constituent, int] = {}
    for position, (label, start, end) in enumerate(spans):
        name = category(label)
        copies = seen[(name, start, end)] = seen.get((name, start, end), 0) + 1
        found = columns.get((name, copies))
        if found is not None:
            posteriors[position] = marginals.marginals[start, end, found].sum()
    return posteriors


@dataclass(frozen=True)
class _Slots:
    """The bracket slots (label, copies) each symbol fills.

    index (dict): (label, m) -> slot id, for "at least m brackets label over the span".
    slots (np.ndarray): int64 (S, W): the slots of symbol a, padded with -1 (all -1
        for the symbols that are no brackets: intermediate symbols, tags, TOP).
    """

    index: dict[tuple[str, int], int]
    slots: np.ndarray


def _chain(name: str) -> list[str]:
    """The treebank labels a transformed phrase label stands for, top down."""
    return name.partition(PARENT_SEP)[0].split(UNARY_SEP)


def _fills(chain: Sequence[str]) -> list[tuple[str, int]]:
    return [(label, m) for label in dict.fromkeys(chain) for m in range(1, chain.count(label) + 1)]


@per_grammar
def _symbol_slots(grammar: LPCFG) -> _Slots:
    symbols = grammar.symbols
    index: dict[tuple[str, int], int] = {}
    kinds = symbols.kind_codes
    filled = [
        [index.setdefault(slot, len(index)) for slot in _fills(_chain(name))]
        if kinds[symbol] == PHRASAL
        else []
        for symbol, name in enumerate(symbols.names)
    ]
    slots = np.full((len(filled), max(map(len, filled), default=0) or 1), -1, dtype=np.int64)
    for symbol, found in enumerate(filled):
        slots[symbol, : len(found)] = found
    return _Slots(index, slots)


@functools.lru_cache(maxsize=64)
def _label_slots(labels: tuple[str, ...]) -> dict[tuple[str, int], np.ndarray]:
    """(category, m) -> the columns of ``labels`` (chains of categories) holding the
    category at least m times."""
    found: dict[tuple[str, int], list[int]] = {}
    for column, label in enumerate(labels):
        for slot in _fills(label.split(UNARY_SEP)):
            found.setdefault(slot, []).append(column)
    return {slot: np.array(columns, dtype=np.int64) for slot, columns in found.items()}
