"""spaCy integration: the ``lpcfg_parser`` and ``lpcfg_bracketer`` components, the
parser's getters, reader and scorer.

The only package that imports spaCy. spaCy imports it through the entry points
in setup.cfg (``spacy_factories``, ``spacy_scorers``, ``spacy_readers``,
``spacy_misc``) whenever it builds a pipeline, so it stays light: the parser,
estimators and EVALB code are imported when first used.
"""

from .bracketer import LPCFGBracketer, make_lpcfg_bracketer
from .component import LPCFGParser, SentenceParse, make_lpcfg_parser
from .docs import SPANS_KEY, TokenNormalizer, doc_trees, tree_to_doc
from .extensions import install_extensions
from .readers import TreebankCorpus, create_treebank_reader, trees_to_docbin
from .registry import make_mle_estimator
from .scorer import make_constituency_scorer, score_constituents

__all__ = [
    "SPANS_KEY",
    "LPCFGBracketer",
    "LPCFGParser",
    "SentenceParse",
    "TokenNormalizer",
    "TreebankCorpus",
    "create_treebank_reader",
    "doc_trees",
    "install_extensions",
    "make_constituency_scorer",
    "make_lpcfg_bracketer",
    "make_lpcfg_parser",
    "make_mle_estimator",
    "score_constituents",
    "tree_to_doc",
    "trees_to_docbin",
]
