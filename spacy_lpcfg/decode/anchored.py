"""Log scores of anchored rules: what max-rule, variational and product decoding maximise.

Le Roux et al. (2013, figure 2) write both objectives as a product of one
factor per anchored rule of the coarse tree (latent states summed out):

* max-rule-product (Petrov & Klein 2007): the rule's posterior
  ``r(a -> b c, i, k, j) = sum_xyz out(a,i,j)[x] T[x,y,z] in(b,i,k)[y] in(c,k,j)[z] / Z``,
  the same for unary rules ``r(a -> b, i, j)`` (``TOP -> X`` included), and
  for the preterminal of word i its posterior ``mu(t, i, i+1)``;
* variational (Matsuzaki et al. 2005): each rule posterior divided by the
  marginal of its parent item, ``r / mu(a, i, j)``, and 1 for preterminals:
  the anchored PCFG closest in KL divergence to the latent grammar's posterior.

Factors <= 0 (possible with signed spectral grammars, or after underflow) are
left out, i.e. treated as impossible: these decoders are meant for
non-negative grammars; ``mbr`` handles signed ones. A product of grammars
over the same rules (Petrov 2010) adds the log factors of its members.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..chart import ChartPosteriors
from ..errors import Errors
from ..grammar import LPCFG
from ..grammar.symbols import PRETERMINAL

OBJECTIVES = ("max_rule", "variational")


@dataclass(frozen=True)
class AnchoredScores:
    """Finite log factors of anchored rules and preterminal items for one sentence.

    n_words (int): sentence length n.
    tag_positions, tags (np.ndarray): int32[T], preterminal items (tags[e], p, p + 1).
    tag_scores (np.ndarray): float64[T], their log factors.
    binary_rules, binary_starts, binary_splits, binary_ends (np.ndarray): int32[B],
        anchored binary rules (a -> b c over [start, end), split k).
    binary_scores (np.ndarray): float64[B].
    unary_rules, unary_starts, unary_ends (np.ndarray): int32[U], anchored unary rules.
    unary_scores (np.ndarray): float64[U].
    tag_items, binary_items, unary_items (np.ndarray | None): int32[T], (B, 3) and
        (U, 2): the chart item ids of the tags and of each rule's parent and children
        (AnchoredRules.items); None when unknown (sums over grammars).
    """

    n_words: int
    tag_positions: np.ndarray
    tags: np.ndarray
    tag_scores: np.ndarray
    binary_rules: np.ndarray
    binary_starts: np.ndarray
    binary_splits: np.ndarray
    binary_ends: np.ndarray
    binary_scores: np.ndarray
    unary_rules: np.ndarray
    unary_starts: np.ndarray
    unary_ends: np.ndarray
    unary_scores: np.ndarray
    tag_items: np.ndarray | None = None
    binary_items: np.ndarray | None = None
    unary_items: np.ndarray | None = None


def anchored_scores(
    grammar: LPCFG, posteriors: ChartPosteriors, objective: str = "max_rule"
) -> AnchoredScores:
    """The log factors of one grammar's chart (see the module docstring).

    grammar (LPCFG): the grammar the posteriors were computed with.
    posteriors (ChartPosteriors): inside_outside(..., rule_posteriors=True).
    objective (str): "max_rule" or "variational".
    RETURNS (AnchoredScores): only finite factors (posteriors > 0).
    """
    if objective not in OBJECTIVES:
        raise ValueError(
            Errors.E303.format(name="objective", value=objective, known=", ".join(OBJECTIVES))
        )
    binary, unary = posteriors.binary, posteriors.unary
    if posteriors.has_parse and len(binary.rules) + len(unary.rules) == 0:
        # Every parse uses a rule above the tags (TOP is not a preterminal).
        raise ValueError(Errors.E307.format(decoder=objective))
    is_tag = grammar.symbols.kind_codes[posteriors.item_symbols] == PRETERMINAL
    tag_items = np.flatnonzero(is_tag).astype(np.int32)
    tag_marginals = posteriors.marginals[tag_items]
    if objective == "max_rule":
        tag_scores = _log_positive(tag_marginals)
        binary_scores = _log_positive(binary.scores)
        unary_scores = _log_positive(unary.scores)
    else:
        find = _marginal_lookup(posteriors, grammar.n_symbols)
        binary_parents = find(grammar.binary_rules[binary.rules, 0], binary.starts, binary.ends)
        unary_parents = find(grammar.unary_rules[unary.rules, 0], unary.starts, unary.ends)
        # score(t -> w) / norm(t) = mu / mu: the factor is 1 for every item in the chart.
        tag_scores = np.where(tag_marginals != 0, 0.0, -np.inf)
        binary_scores = _log_ratio(binary.scores, binary_parents)
        unary_scores = _log_ratio(unary.scores, unary_parents)
    tag_kept = _finite(tag_scores)
    b_kept = _finite(binary_scores)
    u_kept = _finite(unary_scores)
    return AnchoredScores(
        n_words=posteriors.n_words,
        tag_positions=posteriors.item_starts[tag_items][tag_kept],
        tags=posteriors.item_symbols[tag_items][tag_kept],
        tag_scores=tag_scores[tag_kept],
        binary_rules=binary.rules[b_kept],
        binary_starts=binary.starts[b_kept],
        binary_splits=cast(np.ndarray, binary.splits)[b_kept],  # rule posteriors have splits
        binary_ends=binary.ends[b_kept],
        binary_scores=binary_scores[b_kept],
        unary_rules=unary.rules[u_kept],
        unary_starts=unary.starts[u_kept],
        unary_ends=unary.ends[u_kept],
        unary_scores=unary_scores[u_kept],
        tag_items=tag_items[tag_kept],
        binary_items=None if binary.items is None else binary.items[b_kept],
        unary_items=None if unary.items is None else unary.items[u_kept],
    )


def _finite(scores: np.ndarray) -> np.ndarray | slice:
    """Where scores are finite: a mask, or a no-op slice when all are (the usual case
    with a non-negative grammar, which spares copying every array)."""
    finite = np.isfinite(scores)
    return slice(None) if finite.all() else finite


def sum_anchored_scores(parts: Sequence[AnchoredScores]) -> AnchoredScores:
    """The product of grammars over the same rules: log factors added per anchored rule.

    An anchored rule missing from one member has factor 0 there, so only those
    present in every member are kept.

    parts (Sequence[AnchoredScores]): one per grammar, same sentence, same rule ids.
    RETURNS (AnchoredScores): the summed log factors.
    """
    if len(parts) == 1:
        return parts[0]
    span = parts[0].n_words + 1

    def radix(name: str) -> int:
        return 1 + max(int(getattr(part, name).max(initial=0)) for part in parts)

    (positions, tags), tag_scores = _common_sums(
        [(part.tag_positions, part.tags) for part in parts],
        [part.tag_scores for part in parts],
        (span, radix("tags")),
    )
    (rules, starts, splits, ends), binary_scores = _common_sums(
        [(p.binary_rules, p.binary_starts, p.binary_splits, p.binary_ends) for p in parts],
        [part.binary_scores for part in parts],
        (radix("binary_rules"), span, span, span),
    )
    (u_rules, u_starts, u_ends), unary_scores = _common_sums(
        [(part.unary_rules, part.unary_starts, part.unary_ends) for part in parts],
        [part.unary_scores for part in parts],
        (radix("unary_rules"), span, span),
    )
    return AnchoredScores(
        span - 1,
        positions,
        tags,
        tag_scores,
        rules,
        starts,
        splits,
        ends,
        binary_scores,
        u_rules,
        u_starts,
        u_ends,
        unary_scores,
    )


def _pack(columns: Sequence[np.ndarray], radices: Sequence[int]) -> np.ndarray:
    """int64 mixed-radix keys of integer columns, column c in [0, radices[c])."""
    keys = np.zeros(len(columns[0]), dtype=np.int64)
    for column, radix in zip(columns, radices):
        keys = keys * radix + column
    return keys


def _unpack(keys: np.ndarray, radices: Sequence[int]) -> list[np.ndarray]:
    """The int32 columns of _pack's keys."""
    columns = []
    for radix in radices[:0:-1]:
        keys, column = np.divmod(keys, radix)
        columns.append(column.astype(np.int32))
    columns.append(keys.astype(np.int32))
    return columns[::-1]


def _common_sums(
    columns: list[tuple[np.ndarray, ...]], scores: list[np.ndarray], radices: tuple[int, ...]
) -> tuple[list[np.ndarray], np.ndarray]:
    """(the rows present in every part, as columns; their summed scores)."""
    unique, inverse, counts = np.unique(
        np.concatenate([_pack(part, radices) for part in columns]),
        return_inverse=True,
        return_counts=True,
    )
    totals = np.bincount(inverse, weights=np.concatenate(scores), minlength=len(unique))
    common = counts == len(columns)
    return _unpack(unique[common], radices), totals[common]


def _log_positive(values: np.ndarray) -> np.ndarray:
    out = np.full(values.shape, -np.inf)
    positive = values > 0
    out[positive] = np.log(values[positive])
    return out


def _log_ratio(values: np.ndarray, parents: np.ndarray) -> np.ndarray:
    ratios = np.divide(values, parents, out=np.zeros(values.shape), where=parents != 0)
    return _log_positive(ratios)


def _marginal_lookup(posteriors: ChartPosteriors, n_symbols: int):
    """A function (symbols, starts, ends) -> the marginals of those chart items."""
    radices = (posteriors.n_words + 1, posteriors.n_words + 1, n_symbols)
    keys = _pack((posteriors.item_starts, posteriors.item_ends, posteriors.item_symbols), radices)
    order = np.argsort(keys)

    def find(symbols: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        wanted = _pack((starts, ends, symbols), radices)
        # Every parent of an anchored rule is a chart item, so the search always hits.
        return posteriors.marginals[order[np.searchsorted(keys, wanted, sorter=order)]]

    return find
