"""The decoders by name, behind one protocol.

A decoder turns one sentence's charts into a tree: it gets the grammars it
decodes (one, or an ensemble's members), their lexical scores, the pruning
mask, the chart posteriors when the caller computed them, and optional extra
``SpanScores`` (``span_scores``: what dual decomposition adds), and returns a
``ParseResult`` in the grammars' transformed labels (failed when there is no
parse). ``register_decoder`` adds one; ``Parser(decoder=NAME)`` looks it up.
Decoders keep no state between calls, so one parser may parse from several
threads (the chart kernels release the GIL).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..chart import ChartPosteriors, MergedMask
from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from .max_rule import max_rule_parse, variational_parse
from .mbr import mbr_parse
from .product import product_mbr_parse, product_parse
from .result import ParseResult
from .span_scores import SpanScores
from .viterbi import viterbi_parse


@dataclass(frozen=True)
class Decoder:
    """A registered decoder.

    name (str): its name.
    function (Callable): ``function(grammar, lexical, mask, *, posteriors=None,
        span_scores=None)`` for a single-grammar decoder, or the same with sequences
        of grammars, lexical scores, masks and posteriors for a ``joint`` one.
    joint (bool): decodes all the grammars it is given at once (ensembles); a
        single-grammar decoder decodes the first.
    signed (bool): correct for grammars with negative weights (spectral).
    posteriors (bool): decodes chart posteriors (Viterbi maximises instead).
    rule_posteriors (bool): needs the charts' anchored rule posteriors.
    span_scores (bool): takes ``span_scores``.
    """

    name: str
    function: Callable[..., ParseResult]
    joint: bool = False
    signed: bool = False
    posteriors: bool = True
    rule_posteriors: bool = True
    span_scores: bool = True

    def __call__(
        self,
        grammars: Sequence[LPCFG],
        lexicals: Sequence[LexicalScores],
        mask: np.ndarray | MergedMask | None = None,
        *,
        posteriors: Sequence[ChartPosteriors] | None = None,
        span_scores: SpanScores | None = None,
    ) -> ParseResult:
        """Decode one sentence (see the module docstring)."""
        options: dict[str, Any] = {}
        if span_scores is not None:
            if not self.span_scores:
                known = ", ".join(name for name, d in DECODERS.items() if d.span_scores)
                raise ValueError(Errors.E310.format(decoder=self.name, known=known))
            options["span_scores"] = span_scores
        if self.joint:
            masks = [mask] * len(grammars)
            return self.function(grammars, lexicals, masks, posteriors=posteriors, **options)
        chart = None if posteriors is None else posteriors[0]
        return self.function(grammars[0], lexicals[0], mask, posteriors=chart, **options)


DECODERS: dict[str, Decoder] = {}


def register_decoder(
    name: str,
    function: Callable[..., ParseResult],
    *,
    joint: bool = False,
    signed: bool = False,
    posteriors: bool = True,
    rule_posteriors: bool = True,
    span_scores: bool = True,
) -> Decoder:
    """Register ``function`` under ``name`` (replacing a decoder of that name); the
    flags are the ``Decoder`` fields."""
    decoder = Decoder(name, function, joint, signed, posteriors, rule_posteriors, span_scores)
    DECODERS[name] = decoder
    return decoder


register_decoder("max_rule", max_rule_parse)
register_decoder("variational", variational_parse)
register_decoder(
    "viterbi", viterbi_parse, posteriors=False, rule_posteriors=False, span_scores=False
)
register_decoder("mbr", mbr_parse, signed=True, rule_posteriors=False)
register_decoder("product", product_parse, joint=True)
register_decoder("product_mbr", product_mbr_parse, joint=True, signed=True, rule_posteriors=False)
