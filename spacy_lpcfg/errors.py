"""Exception types and the message catalogue.

Messages carry a code (``[E001]``) so users can search for them and tests can
match them; call sites fill the named placeholders with ``str.format``.
"""

from __future__ import annotations

from pathlib import Path


class _CodedMessages(type):
    def __getattribute__(cls, code: str) -> str:
        message = super().__getattribute__(code)
        if code.startswith("__"):
            return message
        return f"[{code}] {message}"


class Errors(metaclass=_CodedMessages):
    E001 = "Unbalanced brackets: {detail}"
    E002 = "Empty tree"
    E003 = "Unknown treebank format '{name}'. Known formats: {known}"
    E004 = (
        "No treebank data directory. Pass --data-dir, or set SPACY_LPCFG_DATA to a folder "
        "holding ptb_sample/, icepahc/, floresta/, cess_esp/ and splits.json. The PTB sample "
        "comes with NLTK (python -m nltk.downloader treebank; files in "
        "nltk_data/corpora/treebank/combined), IcePaHC from github.com/antonkarl/icecorpus "
        "(finished/*.psd), Floresta and CESS-ESP with NLTK (floresta, cess_esp)."
    )
    E005 = "Data directory '{path}' does not exist or has no '{corpus}' folder."
    E006 = "Unknown corpus '{name}'. Known corpora: {known}. A path to a treebank file also works."
    E007 = "Unknown split '{split}' for corpus '{corpus}'. Splits: {known}"
    E008 = "Label '{label}' contains the reserved separator '{sep}' used by tree transforms."
    E009 = "A preterminal must have a word and no children (label '{label}')."
    E010 = "Unknown label scheme '{name}'. Known schemes: {known}"
    E011 = "Cannot invert transform '{name}': {detail}"
    E012 = "Invalid value {value!r} for '{name}': {expected}"
    E013 = "Unknown EVALB parameter set '{name}'. Use 'collins', 'spmrl' or a .prm file path."
    E014 = "Cannot read EVALB parameter file {path}, line {line}: {detail}"
    E015 = "Gold and test files have different numbers of lines ({gold} vs {test})."
    E016 = "{path}: not a file or directory"


class TreebankFormatError(ValueError):
    """Malformed treebank input, with the file and line where it was found."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.detail = message
        where = ""
        if self.path is not None:
            where = f"{self.path}, line {line}: " if line is not None else f"{self.path}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)

    def __reduce__(self):  # keep the keyword arguments when copied across processes
        return (_rebuild_format_error, (self.detail, self.path, self.line))


def _rebuild_format_error(detail, path, line):
    return TreebankFormatError(detail, path=path, line=line)


class TransformError(ValueError):
    """A tree cannot be transformed or inverted (reserved characters, malformed input)."""


class DataNotFoundError(FileNotFoundError):
    """The treebank data directory or a corpus in it is missing."""
