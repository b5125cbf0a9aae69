"""Treebank readers: Penn brackets, PPCHE ``.psd`` (IcePaHC), Floresta, CESS-ESP.

``read_treebank(path)`` streams ``TOP``-rooted, normalised trees whose labels
keep the corpus's own notation; ``FORMATS`` gives each format's label scheme.
"""

from .reader import (
    FORMAT_ENCODINGS,
    FORMATS,
    TREEBANK_SUFFIXES,
    TreebankReader,
    detect_format,
    read_treebank,
    treebank_files,
)

__all__ = [
    "FORMAT_ENCODINGS",
    "FORMATS",
    "TREEBANK_SUFFIXES",
    "TreebankReader",
    "detect_format",
    "read_treebank",
    "treebank_files",
]
