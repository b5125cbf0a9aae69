"""Chart posteriors for decoders: computed once per sentence, or reused when given; an
ensemble's grammars pruned by the first."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..chart import ChartPosteriors, inside_outside
from ..chart.inputs import Mask, MergedMask, column_members
from ..errors import Errors
from ..grammar import LPCFG, LexicalScores


def chart_posteriors(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None,
    posteriors: ChartPosteriors | None,
    *,
    rule_posteriors: bool = True,
) -> ChartPosteriors:
    """`posteriors` after checking it fits the sentence, or a new inside-outside pass."""
    if posteriors is None:
        return inside_outside(grammar, lexical, mask, rule_posteriors=rule_posteriors)
    if posteriors.n_words != lexical.n_words:
        raise ValueError(Errors.E304.format(found=posteriors.n_words, expected=lexical.n_words))
    return posteriors


def ensemble_charts(
    grammars: Sequence[LPCFG],
    lexicals: Sequence[LexicalScores],
    mask: Mask,
    *,
    threshold: float,
    rule_posteriors: bool,
) -> list[ChartPosteriors]:
    """The charts of an ensemble's grammars (or a product's) for one sentence.

    The first grammar parses over ``mask``; the others over the items whose posterior
    under the first is above ``threshold``. A latent grammar's own posteriors are far
    sharper than the one-state levels that made ``mask``, and an ensemble's grammars
    are noisy copies of one grammar (or EM runs over one skeleton), so they need few
    items besides the first's (BENCHMARKS.md "Ensembles and products: members pruned
    by the first"). A grammar that finds no parse there parses over ``mask``. With
    ``threshold`` 0, grammars of other symbols or a signed first grammar (spectral
    posteriors are no probabilities), every grammar parses over ``mask``.

    RETURNS (list[ChartPosteriors]): one per grammar, in order.
    """
    charts = [inside_outside(grammars[0], lexicals[0], mask, rule_posteriors=rule_posteriors)]
    first, rest = charts[0], list(zip(grammars[1:], lexicals[1:]))
    shared = first.has_parse and threshold > 0 and not grammars[0].signed
    if not rest or not shared or any(g.symbols != grammars[0].symbols for g, _ in rest):
        return charts + [
            inside_outside(grammar, lexical, mask, rule_posteriors=rule_posteriors)
            for grammar, lexical in rest
        ]
    n = first.n_words
    columns, members = _identity_columns(grammars[0].n_symbols)
    kept = first.marginals > threshold
    # as wide as the kernels read masks (a multiple of 8 columns): not copied per member
    items = np.zeros((n + 1, n + 1, len(members[0]) - 1), dtype=bool)
    items[first.item_starts[kept], first.item_ends[kept], first.item_symbols[kept]] = True
    narrow = MergedMask(items, columns, members)
    for grammar, lexical in rest:
        chart = inside_outside(grammar, lexical, narrow, rule_posteriors=rule_posteriors)
        if not chart.has_parse:
            chart = inside_outside(grammar, lexical, mask, rule_posteriors=rule_posteriors)
        charts.append(chart)
    return charts


@functools.lru_cache(maxsize=8)
def _identity_columns(n_symbols: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(columns, column_members) of a mask over n_symbols symbols, one column each,
    padded to a multiple of 8 columns."""
    columns = np.arange(n_symbols, dtype=np.int32)
    return columns, column_members(columns, -(-n_symbols // 8) * 8)
