"""Products of grammars (Petrov 2010) and summed marginals of noisy models.

``product_parse`` scores a coarse tree by the product over K grammars of
their max-rule-product scores (Le Roux et al. 2013, equations 4-6). When the
grammars share their rules (same symbols, same binary and unary rules: EM
runs from different seeds, noisy clustering models) the log factors of each
anchored rule are added and the rule CKY decodes the sum. Otherwise (different
binarisations, say) the product is taken over span-factored posteriors of
natural labels (``span_marginals``: annotations stripped, matched by name):
each of the n(n+1)/2 spans carries label l with probability mu(l) or no
natural label with probability 1 - sum_l mu(l), spans outside the tree carry
none, so a tree's log score is a constant plus the sum over its labelled
spans of ``sum_k log(mu_k(l) / (1 - sum_l' mu_k(l')))`` (probabilities
clipped to [1e-10, 1], which also covers signed grammars); the span CKY
decodes it.

``product_mbr_parse`` averages the K grammars' marginals and decodes them
with ``mbr`` (the combination used for noisy spectral models, whose
marginals can be negative).

Grammars whose chart has no parse are left out; the result fails only when no
grammar parses (or, for shared rules, when no tree uses only anchored rules
that every parsing grammar has). ``span_product`` also serves the product of a
combined model's members (``decode.members``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..chart import ChartPosteriors
from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from .anchored import anchored_scores, sum_anchored_scores
from .charts import chart_posteriors
from .mbr import DEFAULT_THRESHOLD, mbr_tree, span_tree
from .result import ParseResult
from .rule_cky import rule_cky
from .span_marginals import SpanMarginals, aligned, mean_marginals, span_marginals
from .span_scores import SpanScores, add_to_rules

MIN_PROBABILITY = 1e-10  # clip for span-level log probabilities (zero or negative marginals)


def product_parse(
    grammars: Sequence[LPCFG],
    lexicals: Sequence[LexicalScores],
    masks: Sequence[np.ndarray | None] | None = None,
    *,
    posteriors: Sequence[ChartPosteriors] | None = None,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The coarse tree maximising the product of K grammars' scores (module docstring).

    grammars (Sequence[LPCFG]): the K >= 1 grammars (non-negative weights).
    lexicals (Sequence[LexicalScores]): the sentence's preterminal scores for each grammar.
    masks (Sequence[np.ndarray | None] | None): a pruning mask per grammar, or None.
    posteriors (Sequence[ChartPosteriors] | None): the grammars' inside_outside results
        when already computed (with rule posteriors when the grammars share rules).
    span_scores (SpanScores | None): added to the log score of each bracket.
    RETURNS (ParseResult): the parse, or a failed result.
    """
    shared = bool(grammars) and shares_rules(grammars)
    charts = _charts_of(grammars, lexicals, masks, posteriors, rule_posteriors=shared)
    parsed = [(grammar, chart) for grammar, chart in zip(grammars, charts) if chart.has_parse]
    if not parsed:
        return ParseResult.failure(lexicals[0].n_words, "product")
    if shared:
        parts = [anchored_scores(grammar, chart, "max_rule") for grammar, chart in parsed]
        summed = sum_anchored_scores(parts)
        if span_scores is not None:
            summed = add_to_rules(grammars[0], summed, span_scores)
        return rule_cky(grammars[0], summed, "product")
    return span_product(
        aligned([span_marginals(grammar, chart) for grammar, chart in parsed]),
        "product",
        span_scores,
    )


def product_mbr_parse(
    grammars: Sequence[LPCFG],
    lexicals: Sequence[LexicalScores],
    masks: Sequence[np.ndarray | None] | None = None,
    *,
    posteriors: Sequence[ChartPosteriors] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The maximum expected recall tree for the K grammars' mean marginals.

    Arguments as for product_parse (signed grammars welcome); `threshold` and
    `span_scores` as for mbr_parse.
    RETURNS (ParseResult): the parse, or a failed result.
    """
    charts = _charts_of(grammars, lexicals, masks, posteriors, rule_posteriors=False)
    parsed = [(grammar, chart) for grammar, chart in zip(grammars, charts) if chart.has_parse]
    parts = aligned([span_marginals(grammar, chart) for grammar, chart in parsed])
    if not parts:
        return ParseResult.failure(lexicals[0].n_words, "product_mbr")
    return mbr_tree(
        mean_marginals(parts), threshold=threshold, decoder="product_mbr", span_scores=span_scores
    )


def span_product(
    parts: Sequence[SpanMarginals], decoder: str, span_scores: SpanScores | None = None
) -> ParseResult:
    """The tree maximising the span-factored product of aligned marginals (module
    docstring), plus the ``span_scores`` of its brackets."""
    label_scores = np.sum([span_log_odds(part) for part in parts], axis=0)
    tag_scores = np.sum(
        [np.log(np.clip(part.tag_marginals, MIN_PROBABILITY, 1.0)) for part in parts], axis=0
    )
    if span_scores is not None:
        span_scores.check_length(parts[0].n_words)
        label_scores += span_scores.for_labels(parts[0].labels)
    return span_tree(label_scores, parts[0].labels, tag_scores, parts[0].tags, decoder)


def shares_rules(grammars: Sequence[LPCFG]) -> bool:
    """Whether the grammars have the same symbols and binary and unary rules."""
    first = grammars[0]
    return all(
        grammar is first
        or (
            grammar.symbols == first.symbols
            and np.array_equal(grammar.binary_rules, first.binary_rules)
            and np.array_equal(grammar.unary_rules, first.unary_rules)
        )
        for grammar in grammars[1:]
    )


def span_log_odds(part: SpanMarginals) -> np.ndarray:
    """float64 (n+1, n+1, L): log(mu(l) / (1 - sum_l' mu(l'))) per span, clipped."""
    labelled = np.clip(part.marginals, MIN_PROBABILITY, 1.0)
    unlabelled = np.clip(1.0 - part.marginals.sum(axis=2, keepdims=True), MIN_PROBABILITY, 1.0)
    return np.log(labelled) - np.log(unlabelled)


def _charts_of(
    grammars: Sequence[LPCFG],
    lexicals: Sequence[LexicalScores],
    masks: Sequence[np.ndarray | None] | None,
    posteriors: Sequence[ChartPosteriors] | None,
    *,
    rule_posteriors: bool,
) -> list[ChartPosteriors]:
    """Each grammar's chart posteriors, after checking the arguments fit together."""
    k = len(grammars)
    if k == 0:
        raise ValueError(Errors.E308)
    for what, given in (("lexical scores", lexicals), ("mask", masks), ("posteriors", posteriors)):
        if given is not None and len(given) != k:
            raise ValueError(Errors.E305.format(what=what, found=len(given), expected=k))
    lengths = sorted({lexical.n_words for lexical in lexicals})
    if len(lengths) > 1:
        raise ValueError(Errors.E306.format(lengths=lengths))
    return [
        chart_posteriors(
            grammar,
            lexical,
            None if masks is None else masks[i],
            None if posteriors is None else posteriors[i],
            rule_posteriors=rule_posteriors,
        )
        for i, (grammar, lexical) in enumerate(zip(grammars, lexicals))
    ]
