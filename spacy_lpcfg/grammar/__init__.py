"""Grammars: symbol tables, the LPCFG container and per-sentence lexical scores."""

from .lexical_scores import LexicalScores
from .lexicon import Lexicon
from .lpcfg import LPCFG
from .model import ParsingModel
from .symbols import SYMBOL_KINDS, SymbolTable

__all__ = ["LPCFG", "SYMBOL_KINDS", "LexicalScores", "Lexicon", "ParsingModel", "SymbolTable"]
