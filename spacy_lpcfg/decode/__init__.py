"""Decoders: one chart pass per sentence, turned into a tree by one objective.

Every grammar decoder takes the grammar (or an ensemble's K grammars), the
sentence's LexicalScores, an optional pruning mask, when already computed the
chart posteriors and, except Viterbi, optional extra ``SpanScores`` of brackets
(``span_scores``), and returns a ParseResult in the grammar's transformed label
space (``TransformPipeline.invert`` maps its tree back). A failed result
(``has_parse`` False) asks the caller to fall back.

=================  ================================================  ==================
decoder            objective                                         grammars
=================  ================================================  ==================
viterbi_parse      best derivation                                   non-negative
max_rule_parse     product of anchored rule posteriors               non-negative
variational_parse  product of rule posteriors / parent marginals     non-negative
mbr_parse          expected labelled recall, a cost per bracket      any (spectral)
product_parse      product of K grammars' max-rule scores            non-negative
product_mbr_parse  mbr on the K grammars' mean marginals             any
=================  ================================================  ==================

A model with members (models trained apart) is decoded by combining its
members' parses: ``members.members_product``, ``members.members_mbr`` and
``dual.dual_decompose``. ``registry.DECODERS`` holds every decoder by name, with
its kind (``Decoder``); ``register_decoder`` adds more. ``Parser(model)``
(``parser``) makes the parser a model needs: ``grammar_parser.GrammarParser``
or ``combined_parser.CombinedParser``.

``kbest_parse`` lists the K best trees of a chart under the viterbi, max_rule or
variational objective (``kbest``; ``Parser.kbest``), and ``scores`` gives a parse
its sentence log-likelihood and constituent posteriors (``Parse.log_likelihood``,
``Parse.span_posteriors``).

The names below load on first use: importing ``spacy_lpcfg.decode.registry`` (the
decoder names, for a command line's help) loads no kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .anchored import AnchoredScores, anchored_scores, sum_anchored_scores
    from .kbest import KBEST_DECODERS, format_kbest, kbest_parse
    from .max_rule import max_rule_parse, variational_parse
    from .mbr import mbr_parse, mbr_tree, span_tree
    from .parser import Parse, Parser
    from .product import product_mbr_parse, product_parse, shares_rules
    from .registry import DECODERS, Decoder, register_decoder
    from .result import ParseResult
    from .rule_cky import rule_cky
    from .span_marginals import SpanMarginals, span_marginals
    from .span_scores import SpanScores
    from .viterbi import viterbi_parse

# name -> the module that defines it
_MODULES = {
    "AnchoredScores": "anchored",
    "anchored_scores": "anchored",
    "sum_anchored_scores": "anchored",
    "KBEST_DECODERS": "kbest",
    "format_kbest": "kbest",
    "kbest_parse": "kbest",
    "max_rule_parse": "max_rule",
    "variational_parse": "max_rule",
    "mbr_parse": "mbr",
    "mbr_tree": "mbr",
    "span_tree": "mbr",
    "Parse": "parser",
    "Parser": "parser",
    "product_mbr_parse": "product",
    "product_parse": "product",
    "shares_rules": "product",
    "DECODERS": "registry",
    "Decoder": "registry",
    "register_decoder": "registry",
    "ParseResult": "result",
    "rule_cky": "rule_cky",
    "SpanMarginals": "span_marginals",
    "span_marginals": "span_marginals",
    "SpanScores": "span_scores",
    "viterbi_parse": "viterbi",
}

__all__ = [
    "AnchoredScores",
    "DECODERS",
    "Decoder",
    "KBEST_DECODERS",
    "Parse",
    "ParseResult",
    "Parser",
    "SpanMarginals",
    "SpanScores",
    "anchored_scores",
    "format_kbest",
    "kbest_parse",
    "max_rule_parse",
    "mbr_parse",
    "mbr_tree",
    "product_mbr_parse",
    "product_parse",
    "register_decoder",
    "rule_cky",
    "shares_rules",
    "span_marginals",
    "span_tree",
    "sum_anchored_scores",
    "variational_parse",
    "viterbi_parse",
]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)
