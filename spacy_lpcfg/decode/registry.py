"""The single-grammar decoders by name."""

from .max_rule import max_rule_parse, variational_parse
from .mbr import mbr_parse
from .viterbi import viterbi_parse

# decoder(grammar, lexical, mask=None, *, posteriors=None) -> ParseResult
DECODERS = {
    "viterbi": viterbi_parse,
    "max_rule": max_rule_parse,
    "variational": variational_parse,
    "mbr": mbr_parse,
}
