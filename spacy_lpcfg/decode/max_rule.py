"""Max-rule-product and variational decoding (Le Roux et al. 2013, figure 2)."""

from __future__ import annotations

import numpy as np

from ..chart import ChartPosteriors
from ..grammar import LPCFG, LexicalScores
from .anchored import anchored_scores
from .charts import chart_posteriors
from .result import ParseResult
from .rule_cky import rule_cky
from .span_scores import SpanScores, add_to_rules


def max_rule_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None = None,
    *,
    posteriors: ChartPosteriors | None = None,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The coarse tree maximising the product of its anchored rule posteriors
    (and of its preterminals' posteriors): Petrov & Klein (2007).

    Meant for non-negative grammars: rules with a posterior <= 0 are not used.
    The score is the log of that product.

    grammar (LPCFG): the grammar.
    lexical (LexicalScores): the preterminal scores of the sentence.
    mask (np.ndarray | None): bool (n+1, n+1, n_symbols), the items allowed.
    posteriors (ChartPosteriors | None): inside_outside(grammar, lexical, mask) when
        already computed (with rule posteriors); then `mask` is not used again.
    span_scores (SpanScores | None): added to the log score of each bracket.
    RETURNS (ParseResult): the parse, or a failed result when there is none.
    """
    return _rule_parse(grammar, lexical, mask, posteriors, "max_rule", span_scores)


def variational_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None = None,
    *,
    posteriors: ChartPosteriors | None = None,
    span_scores: SpanScores | None = None,
) -> ParseResult:
    """The coarse tree maximising the product of its anchored rule posteriors each
    divided by its parent item's marginal: Matsuzaki et al. (2005)'s variational
    approximation. Arguments and result as for max_rule_parse.
    """
    return _rule_parse(grammar, lexical, mask, posteriors, "variational", span_scores)


def _rule_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None,
    posteriors: ChartPosteriors | None,
    objective: str,
    span_scores: SpanScores | None,
) -> ParseResult:
    posteriors = chart_posteriors(grammar, lexical, mask, posteriors)
    if not posteriors.has_parse:
        return ParseResult.failure(lexical.n_words, objective)
    scores = anchored_scores(grammar, posteriors, objective)
    if span_scores is not None:
        scores = add_to_rules(grammar, scores, span_scores)
    return rule_cky(grammar, scores, objective)
