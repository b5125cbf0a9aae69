"""Decoders: one chart pass per sentence, turned into a tree by one objective.

Every decoder takes the grammar (or K grammars), the sentence's
LexicalScores, an optional pruning mask, when already computed the chart
posteriors and, except Viterbi, optional extra ``SpanScores`` of brackets
(``span_scores``), and returns a ParseResult in the grammar's transformed
label space (``TransformPipeline.invert`` maps its tree back). A failed
result (``has_parse`` False) asks the caller to fall back.

=================  ================================================  ==================
decoder            objective                                         grammars
=================  ================================================  ==================
viterbi_parse      best derivation                                   non-negative
max_rule_parse     product of anchored rule posteriors               non-negative
variational_parse  product of rule posteriors / parent marginals     non-negative
mbr_parse          expected labelled recall, a cost per bracket      any (spectral)
product_parse      product of K grammars' max-rule scores            non-negative
product_mbr_parse  mbr on the K members' mean marginals              any
=================  ================================================  ==================

``kbest_parse`` lists the K best trees of a chart under the viterbi, max_rule or
variational objective (``kbest``; ``Parser.kbest``), and ``scores`` gives a parse
its sentence log-likelihood and constituent posteriors (``Parse.log_likelihood``,
``Parse.span_posteriors``).

``registry.DECODERS`` holds them by name behind one calling convention
(``Decoder``); ``register_decoder`` adds more.
"""

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

__all__ = [
    "DECODERS",
    "KBEST_DECODERS",
    "AnchoredScores",
    "Decoder",
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
