"""The decoders by name: one registry for every kind of model.

Each decoder has a kind, which says what it decodes:

``grammar``   one grammar's chart: viterbi, max_rule, variational, mbr;
``ensemble``  the charts of an ensemble's grammars, pruned once per sentence and
              decoded jointly: product, product_mbr (on a model without an
              ensemble they decode its one grammar);
``members``   the parses of a model's members (models trained apart, combined by
              ``combine_models``), each parsed by its own grammar parser:
              members_product, members_mbr (their span marginals, ``decode.members``)
              and dual (dual decomposition of their trees, ``decode.dual``).

A model with members takes the ``members`` decoders, any other model the
``grammar`` and ``ensemble`` ones (``decoder_for``). Names are unique across kinds;
the member decoders also answer to the names they had before they had their own
("product", "mbr": what ``combine`` stored with models), on models with members
only. Functions are registered as "module:function" and imported on first use, so
reading the names (the CLI's help, the spaCy component's check) loads no kernels.

A ``grammar`` or ``ensemble`` decoder gets the grammars it decodes, their lexical
scores, the pruning mask, the chart posteriors when the caller computed them, and
optional extra ``SpanScores`` (``span_scores``: what dual decomposition adds), and
returns a ``ParseResult`` in the grammars' transformed labels (failed when there is
no parse). Decoders keep no state between calls, so one parser may parse from
several threads (the chart kernels release the GIL).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import defaults
from ..errors import Errors

if TYPE_CHECKING:  # the kernels load when a decoder first runs
    import numpy as np

    from ..chart import ChartPosteriors, MergedMask
    from ..grammar import LPCFG, LexicalScores
    from .result import ParseResult
    from .span_scores import SpanScores

KINDS = ("grammar", "ensemble", "members")
AUTO = defaults.DECODER  # "auto": the model's own decoder (``decode.parser.default_decoder``)


@dataclass(frozen=True)
class Decoder:
    """A registered decoder.

    name (str): its name.
    target (Callable | str): the function, or "module:function" to import on first use.
        ``grammar``: ``function(grammar, lexical, mask, *, posteriors=None,
        span_scores=None)``; ``ensemble``: the same with sequences of grammars,
        lexical scores, masks and posteriors; ``members``: ``function(marginals,
        keeps_functions, scheme, *, span_scores=None)`` over the members' span
        marginals, or without ``posteriors`` ``function(subproblems, labels, scheme,
        n_words)`` over their trees (``decode.dual``).
    kind (str): "grammar", "ensemble" or "members" (module docstring).
    signed (bool): correct for grammars with negative weights (spectral).
    posteriors (bool): decodes posteriors (chart posteriors, or the members' span
        marginals); Viterbi and dual decomposition maximise instead.
    rule_posteriors (bool): needs the charts' anchored rule posteriors.
    span_scores (bool): takes ``span_scores``.
    aliases (tuple[str, ...]): other names it answers to on models of its kind.
    """

    name: str
    target: Callable[..., Any] | str
    kind: str = "grammar"
    signed: bool = False
    posteriors: bool = True
    rule_posteriors: bool = True
    span_scores: bool = True
    aliases: tuple[str, ...] = ()

    @property
    def function(self) -> Callable[..., Any]:
        return _resolve(self.target)

    @property
    def joint(self) -> bool:
        """Whether it decodes all of an ensemble's grammars at once."""
        return self.kind == "ensemble"

    def __call__(
        self,
        grammars: Sequence[LPCFG],
        lexicals: Sequence[LexicalScores],
        mask: np.ndarray | MergedMask | None = None,
        *,
        posteriors: Sequence[ChartPosteriors] | None = None,
        span_scores: SpanScores | None = None,
    ) -> ParseResult:
        """Decode one sentence's charts (a ``grammar`` or ``ensemble`` decoder; see the
        module docstring)."""
        if self.kind == "members":
            expected = "a grammar or ensemble decoder (members decode span marginals)"
            raise ValueError(Errors.E011.format(name="decoder", value=self.name, expected=expected))
        options: dict[str, Any] = {}
        if span_scores is not None:
            if not self.span_scores:
                known = ", ".join(
                    name for name, d in DECODERS.items() if d.span_scores and d.kind != "members"
                )
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
    function: Callable[..., Any] | str,
    *,
    kind: str = "grammar",
    signed: bool = False,
    posteriors: bool = True,
    rule_posteriors: bool = True,
    span_scores: bool = True,
    aliases: Sequence[str] = (),
) -> Decoder:
    """Register ``function`` under ``name`` (replacing a decoder of that name); the
    options are the ``Decoder`` fields. RAISES ValueError: an unknown kind, or a name
    or alias that a decoder for the same models answers to already."""
    if kind not in KINDS:
        expected = "one of " + ", ".join(KINDS)
        raise ValueError(Errors.E011.format(name="kind", value=kind, expected=expected))
    group = model_kinds(kind == "members")
    for other in DECODERS.values():
        taken = {name, *aliases} & {other.name, *other.aliases}
        if other.name != name and other.kind in group and taken:
            expected = f"a name no other decoder answers to ({other.name} does)"
            raise ValueError(
                Errors.E011.format(name="decoder", value=taken.pop(), expected=expected)
            )
    decoder = Decoder(
        name, function, kind, signed, posteriors, rule_posteriors, span_scores, tuple(aliases)
    )
    DECODERS[name] = decoder
    return decoder


def decoder_names(*kinds: str) -> tuple[str, ...]:
    """The registered names of those kinds (every kind when none is given), in the
    order they were registered; aliases aside."""
    return tuple(name for name, d in DECODERS.items() if not kinds or d.kind in kinds)


def model_kinds(members: bool) -> tuple[str, ...]:
    """The kinds of decoder a model takes: "members" ones for a model with members."""
    return ("members",) if members else ("grammar", "ensemble")


def decoder_for(name: str, *, members: bool) -> Decoder:
    """The decoder ``name`` (or alias) for a model with or without members.

    RAISES ValueError: no decoder of that name for such a model (E011, naming the
        choices, "auto" first).
    """
    kinds = model_kinds(members)
    found = DECODERS.get(name)
    if found is None or found.kind not in kinds:
        found = next((d for d in DECODERS.values() if d.kind in kinds and name in d.aliases), None)
    if found is None:
        expected = "one of " + ", ".join((AUTO, *decoder_names(*kinds)))
        raise ValueError(Errors.E011.format(name="decoder", value=name, expected=expected))
    return found


def accepted_names(*kinds: str) -> tuple[str, ...]:
    """Every name a decoder of those kinds answers to (every kind when none is given),
    aliases included, "auto" first: what a setting checked before its model is read
    may be."""
    names = [AUTO]
    for decoder in DECODERS.values():
        if not kinds or decoder.kind in kinds:
            names.extend((decoder.name, *decoder.aliases))
    return tuple(dict.fromkeys(names))


@functools.cache
def _resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(target):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module, __package__), attribute)


register_decoder("max_rule", ".max_rule:max_rule_parse")
register_decoder("variational", ".max_rule:variational_parse")
register_decoder(
    "viterbi", ".viterbi:viterbi_parse", posteriors=False, rule_posteriors=False, span_scores=False
)
register_decoder("mbr", ".mbr:mbr_parse", signed=True, rule_posteriors=False)
register_decoder("product", ".product:product_parse", kind="ensemble")
register_decoder(
    "product_mbr",
    ".product:product_mbr_parse",
    kind="ensemble",
    signed=True,
    rule_posteriors=False,
)
register_decoder(
    "members_product",
    ".members:members_product",
    kind="members",
    rule_posteriors=False,
    aliases=("product",),
)
register_decoder(
    "members_mbr",
    ".members:members_mbr",
    kind="members",
    signed=True,
    rule_posteriors=False,
    aliases=("mbr",),
)
register_decoder(
    "dual",
    ".dual:dual_decompose",
    kind="members",
    posteriors=False,
    rule_posteriors=False,
    span_scores=False,
)
