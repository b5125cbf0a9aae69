"""Chart posteriors for decoders: computed once per sentence, or reused when given."""

from __future__ import annotations

import numpy as np

from ..chart import ChartPosteriors, inside_outside
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
