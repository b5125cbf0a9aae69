"""Minimum Bayes risk decoding: expected labelled recall (Goodman 1996) with a bracket cost.

Every span of a binary bracketing either carries one natural label (see
``span_marginals``: annotations stripped, a collapsed chain ``S::VP`` standing
for two brackets) or stays unlabelled (an intermediate node, spliced away by
``TransformPipeline.invert``). A label gains, per bracket it stands for, the
probability that the gold tree has that bracket over the span (counted as
EVALB counts: a second NP over the same span matches only if the gold has
two) minus ``threshold``; the tree maximises the total.

With ``threshold=0`` this is Goodman's maximum expected recall, which labels
every span of the binary bracketing that has any positive marginal: with a
one-state MLE grammar (parent annotation, right binarisation, unary chains
collapsed) on the PTB sample dev set (sentences <= 40 words) its precision, and
so its F1, collapse. A bracket pays off for expected F1 when its probability
beats about F/2; there, thresholds 0.4 and 0.5 tied as the best of 0.3 / 0.4 /
0.5, above max-rule-product and Viterbi, and without parent annotation 0.3 was
the best and 0.4 still above max-rule-product. Hence the default 0.4 (BENCHMARKS.md
"Decoders of single grammars (ptb_sample)" compares mbr with the other decoders).

Spectral grammars give negative marginals. They are used as they are (they
estimate probabilities, and summing them over the labels that fill a slot
lets errors cancel): a span whose labels all gain <= 0 stays unlabelled, so a
negative marginal never creates a bracket, and the span CKY is defined for
any finite scores. Each word gets the tag with the largest marginal.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..chart import ChartPosteriors, span_cky
from ..chart.scaled import KERNEL
from ..grammar import LPCFG, LexicalScores
from ..trees.transforms import UNARY_SEP
from ..trees.tree import ROOT_LABEL
from .charts import chart_posteriors
from .result import ParseResult
from .span_marginals import SpanMarginals, span_marginals
from .span_scores import SpanScores

DEFAULT_THRESHOLD = 0.4


def mbr_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None = None,
    *,
    posteriors: ChartPosteriors | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The tree of natural labels with the largest expected labelled recall, each
    bracket costing `threshold` (see the module docstring). Works with signed grammars.

    grammar (LPCFG): the grammar.
    lexical (LexicalScores): the preterminal scores of the sentence.
    mask (np.ndarray | None): bool (n+1, n+1, n_symbols), the items allowed.
    posteriors (ChartPosteriors | None): inside_outside(grammar, lexical, mask) when
        already computed; then `mask` is not used again.
    threshold (float): the cost of a bracket. Defaults to 0.4; 0 is Goodman's objective.
    span_scores (SpanScores | None): added to the gain of each bracket (``span_scores``).
    RETURNS (ParseResult): TOP over natural labels with annotations stripped, the
        score being the objective; a failed result when the chart has no parse.
    """
    posteriors = chart_posteriors(grammar, lexical, mask, posteriors, rule_posteriors=False)
    if not posteriors.has_parse:
        return ParseResult.failure(lexical.n_words, "mbr")
    return mbr_tree(
        span_marginals(grammar, posteriors), threshold=threshold, span_scores=span_scores
    )


def mbr_tree(
    spans: SpanMarginals,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    decoder: str = "mbr",
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The minimum Bayes risk tree for given marginals (see mbr_parse), plus the
    ``span_scores`` of its brackets when given."""
    slots = _bracket_slots(spans.labels)
    if span_scores is not None:
        span_scores.check_length(spans.n_words)
        gains = _all_gains(spans.marginals, float(threshold), slots)
        gains += span_scores.for_labels(slots.labels)
        return span_tree(gains, slots.labels, spans.tag_marginals, spans.tags, decoder)
    best_scores, best_labels = _best_labels(
        spans.marginals,
        float(threshold),
        slots.slot_offsets,
        slots.slot_labels,
        slots.label_offsets,
        slots.label_slots,
    )
    return _bracketing(
        best_scores, best_labels, slots.labels, spans.tag_marginals, spans.tags, decoder
    )


def span_tree(
    label_scores: np.ndarray,
    labels: tuple[str, ...],
    tag_scores: np.ndarray,
    tags: tuple[str, ...],
    decoder: str,
) -> ParseResult:
    """The bracketing maximising the sum over its labelled spans of their label's score,
    a span staying unlabelled (score 0) when no label scores above 0.

    label_scores (np.ndarray): float64 (n+1, n+1, L), the scores of the labels.
    labels (tuple[str, ...]): their names.
    tag_scores (np.ndarray): float64 (n, T); each word gets its best tag.
    tags (tuple[str, ...]): the tag names.
    decoder (str): the name recorded in the result.
    RETURNS (ParseResult): TOP over the labelled spans; label_names are TOP, labels, tags.
    """
    if not labels:
        size = label_scores.shape[:2]
        return _bracketing(np.zeros(size), np.zeros(size, np.int64), (), tag_scores, tags, decoder)
    return _bracketing(
        label_scores.max(axis=2), label_scores.argmax(axis=2), labels, tag_scores, tags, decoder
    )


def _bracketing(
    span_scores: np.ndarray,
    span_labels: np.ndarray,
    labels: tuple[str, ...],
    tag_scores: np.ndarray,
    tags: tuple[str, ...],
    decoder: str,
) -> ParseResult:
    """span_tree given each span's best score (n+1, n+1) and label (n+1, n+1)."""
    n = tag_scores.shape[0]
    # Column 0 is "no bracket"; ties go to it, so zero-score spans stay unlabelled.
    tree = span_cky(np.stack([np.zeros((n + 1, n + 1)), span_scores], axis=2))
    labelled = tree.labels == 1
    starts, ends = tree.starts[labelled], tree.ends[labelled]
    return ParseResult(
        n_words=n,
        label_names=(ROOT_LABEL, *labels, *tags),
        labels=np.concatenate([[0], 1 + span_labels[starts, ends]]).astype(np.int32),
        starts=np.concatenate([[0], starts]).astype(np.int32),
        ends=np.concatenate([[n], ends]).astype(np.int32),
        tags=(1 + len(labels) + tag_scores.argmax(axis=1)).astype(np.int32),
        score=tree.score,
        decoder=decoder,
    )


@dataclass(frozen=True)
class _Slots:
    """The bracket *slots* each label fills, in CSR form.

    A slot is a category and a multiplicity, (c, m) for "at least m brackets c
    over the span": ``NP::NP`` fills (NP, 1) and (NP, 2), ``S::VP`` (S, 1) and
    (VP, 1). With EVALB's multiset matching, a label's expected matched brackets
    are the sum over its slots of the probability that the gold span fills them.

    labels (tuple[str, ...]): the labels, fewer slots first (so that ties, such as
        zero-probability chain parts when threshold is 0, go to the shorter chain).
    label_offsets, label_slots (np.ndarray): int64; the slots of labels[l] are
        label_slots[label_offsets[l]:label_offsets[l + 1]].
    slot_offsets, slot_labels (np.ndarray): int64; the labels filling slot s, likewise,
        as positions in the *given* label tuple (the marginals' last axis).
    """

    labels: tuple[str, ...]
    label_offsets: np.ndarray
    label_slots: np.ndarray
    slot_offsets: np.ndarray
    slot_labels: np.ndarray


@functools.lru_cache(maxsize=64)
def _bracket_slots(labels: tuple[str, ...]) -> _Slots:
    chains = [label.split(UNARY_SEP) for label in labels]
    filled = [
        [(c, m) for c in dict.fromkeys(chain) for m in range(chain.count(c))] for chain in chains
    ]
    order = np.argsort([len(slots) for slots in filled], kind="stable")
    ids: dict[tuple[str, int], int] = {}
    # (position in the new order, position in `labels`, slot), sorted by the first
    pairs = np.array(
        [
            (new, old, ids.setdefault(slot, len(ids)))
            for new, old in enumerate(order)
            for slot in filled[old]
        ],
        dtype=np.int64,
    ).reshape(-1, 3)
    by_slot = pairs[np.argsort(pairs[:, 2], kind="stable")]
    return _Slots(
        labels=tuple(labels[old] for old in order),
        label_offsets=np.searchsorted(pairs[:, 0], np.arange(len(labels) + 1)),
        label_slots=pairs[:, 2],
        slot_offsets=np.searchsorted(by_slot[:, 2], np.arange(len(ids) + 1)),
        slot_labels=by_slot[:, 1],
    )


def _all_gains(marginals: np.ndarray, threshold: float, slots: _Slots) -> np.ndarray:
    """float64 (n+1, n+1, L): every label's gain (what _best_labels maximises), in the
    _Slots order of labels."""
    n_given, n_slots, n_labels = marginals.shape[2], len(slots.slot_offsets) - 1, len(slots.labels)
    fills = np.zeros((n_given, n_slots))  # given label -> the slots it fills
    slot_of = np.repeat(np.arange(n_slots), np.diff(slots.slot_offsets))
    fills[slots.slot_labels, slot_of] = 1.0
    counts = np.zeros((n_slots, n_labels))  # slot -> the labels that need it
    label_of = np.repeat(np.arange(n_labels), np.diff(slots.label_offsets))
    np.add.at(counts, (slots.label_slots, label_of), 1.0)
    gains = (marginals @ fills) @ counts - threshold * counts.sum(axis=0)
    size = marginals.shape[0]
    gains[~np.triu(np.ones((size, size), dtype=bool), k=1)] = -np.inf
    return gains


@njit(**KERNEL)
def _best_labels(marginals, threshold, slot_offsets, slot_labels, label_offsets, label_slots):
    """Each span's best label and its gain (sum over its slots of P(filled) - threshold).

    marginals (n+1, n+1, L) in the given label order; RETURNS (scores float64 (n+1, n+1),
    labels int64 (n+1, n+1)) with labels in the _Slots order; -inf / -1 when L = 0.
    """
    size = marginals.shape[0]
    n_slots = slot_offsets.shape[0] - 1
    n_labels = label_offsets.shape[0] - 1
    scores = np.full((size, size), -np.inf)
    best = np.full((size, size), -1, np.int64)
    filled = np.empty(n_slots)
    for i in range(size):
        for j in range(i + 1, size):
            for s in range(n_slots):
                total = 0.0
                for p in range(slot_offsets[s], slot_offsets[s + 1]):
                    total += marginals[i, j, slot_labels[p]]
                filled[s] = total
            for label in range(n_labels):
                gain = 0.0
                for p in range(label_offsets[label], label_offsets[label + 1]):
                    gain += filled[label_slots[p]] - threshold
                if gain > scores[i, j]:
                    scores[i, j] = gain
                    best[i, j] = label
    return scores, best
