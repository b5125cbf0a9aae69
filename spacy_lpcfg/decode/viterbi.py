"""Viterbi decoding: the best derivation, latent states projected away."""

from __future__ import annotations

import numpy as np

from ..chart import ChartPosteriors
from ..chart import viterbi as best_derivation
from ..grammar import LPCFG, LexicalScores
from ..grammar.symbols import PRETERMINAL
from .result import ParseResult


def viterbi_parse(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: np.ndarray | None = None,
    *,
    posteriors: ChartPosteriors | None = None,
) -> ParseResult:
    """The tree of the highest-weight derivation (max over trees and latent states).

    Meant for non-negative grammars: weights <= 0 count as impossible (see
    ``chart.viterbi``). The score is the log weight of the derivation.

    grammar (LPCFG): the grammar.
    lexical (LexicalScores): the preterminal scores of the sentence.
    mask (np.ndarray | None): bool (n+1, n+1, n_symbols), the items allowed.
    posteriors (ChartPosteriors | None): unused (Viterbi maximises, it needs no
        posteriors); accepted so that every decoder has the same signature.
    RETURNS (ParseResult): the parse, or a failed result when nothing derives the sentence.
    """
    derivation = best_derivation(grammar, lexical, mask)
    if not derivation.has_parse:
        return ParseResult.failure(lexical.n_words, "viterbi")
    symbols, starts = derivation.symbols, derivation.starts
    is_tag = grammar.symbols.kind_codes[symbols] == PRETERMINAL
    tags = np.empty(lexical.n_words, dtype=np.int32)
    tags[starts[is_tag]] = symbols[is_tag]  # one preterminal per word
    return ParseResult(
        n_words=lexical.n_words,
        label_names=grammar.symbols.names,
        labels=symbols[~is_tag],
        starts=starts[~is_tag],
        ends=derivation.ends[~is_tag],
        tags=tags,
        score=derivation.log_score,
        decoder="viterbi",
    )
