"""Coarse POS tags for the spectral learner.

Paper 002 found its method better with the universal tags of Petrov et al.
(2011) than with the treebank's fine tags (the covariances are estimated per
tag pair, so fine tags spread few sentences over many keys). ``coarse_tag``
maps the Penn tags to the universal ones and reduces the other bundled tag sets
the same way, to their word class: IcePaHC drops the case (``N-A`` -> ``N``),
Floresta keeps the form after the function (``H+n`` -> ``n``, ``P+v-fin`` ->
``v-fin``), AnCora (CESS-ESP) keeps the first two letters (``ncms000`` ->
``nc``). Anything else is kept as it is.
"""

from __future__ import annotations

# Petrov, Das & McDonald (2011), en-ptb.map
PTB_UNIVERSAL = {
    "!": ".", "#": ".", "$": ".", "''": ".", "(": ".", ")": ".", ",": ".", "-LRB-": ".",
    "-RRB-": ".", ".": ".", ":": ".", "?": ".", "CC": "CONJ", "CD": "NUM", "DT": "DET",
    "EX": "DET", "FW": "X", "IN": "ADP", "JJ": "ADJ", "JJR": "ADJ", "JJRJR": "ADJ",
    "JJS": "ADJ", "LS": "X", "MD": "VERB", "NN": "NOUN", "NNP": "NOUN", "NNPS": "NOUN",
    "NNS": "NOUN", "NP": "NOUN", "PDT": "DET", "POS": "PRT", "PRP": "PRON", "PRP$": "PRON",
    "PRT": "PRT", "RB": "ADV", "RBR": "ADV", "RBS": "ADV", "RN": "X", "RP": "PRT",
    "SYM": "X", "TO": "PRT", "UH": "X", "VB": "VERB", "VBD": "VERB", "VBG": "VERB",
    "VBN": "VERB", "VBP": "VERB", "VBZ": "VERB", "VP": "VERB", "WDT": "DET", "WH": "X",
    "WP": "PRON", "WP$": "PRON", "WRB": "ADV", "``": ".",
}  # fmt: skip


def coarse_tag(tag: str) -> str:
    """The word class of a tag (see the module docstring).

    tag (str): a POS tag of one of the bundled treebanks.
    RETURNS (str): its coarse form.
    """
    if tag in PTB_UNIVERSAL:
        return PTB_UNIVERSAL[tag]
    if "+" in tag:  # Floresta: function+form
        return tag.rsplit("+", 1)[1]
    if tag[:1].islower():  # AnCora: category letters then features
        return tag[:2]
    if "-" in tag.strip("-"):  # IcePaHC: category-case
        return tag.rsplit("-", 1)[0]
    return tag
