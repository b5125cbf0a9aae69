"""EVALB parameters: the settings of a ``.prm`` file plus the behaviours of the program.

A ``.prm`` file sets the labels to delete, label equivalences, the length
cutoff and the error limit. The SPMRL 2013 variant of the program
(``evalb_spmrl``) also changes how labels, terminals and length mismatches
are treated whatever its ``.prm`` says; those changes are explicit fields
here, so ``EvalbParams.spmrl()`` reproduces ``evalb_spmrl -p spmrl.prm``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Errors

# Behaviours of each EVALB program that no .prm setting controls.
PROGRAMS: dict[str, dict[str, Any]] = {
    "evalb": {},
    "evalb_spmrl": {
        "delete_terminals": False,
        "label_cut_chars": "-=#",
        "cut_compared_labels": True,
        "count_length_mismatch_as_valid": True,
        "ignore_one_word_length_mismatch": True,
    },
}
_WHITESPACE = " \t\n\v\f\r"  # C isspace() in the "C" locale


@dataclass(frozen=True)
class EvalbParams:
    """How to score: the ``.prm`` settings and the EVALB program's behaviours.

    The defaults are those of the ``evalb`` program run without a ``.prm`` file.

    delete_labels (tuple[str, ...]): DELETE_LABEL. A preterminal with such a tag is
        removed with its word; a phrase with such a (cut) label loses only its bracket.
    delete_labels_for_length (tuple[str, ...]): DELETE_LABEL_FOR_LENGTH: tags whose
        words do not count toward the sentence length used by the cutoff.
    equivalent_labels (tuple[tuple[str, str], ...]): EQ_LABEL pairs that match each other.
    equivalent_words (tuple[tuple[str, str], ...]): EQ_WORD pairs that match each other.
    quote_labels (tuple[str, ...]): QUOTE_LABEL: tags of quote-like terminals (``'``,
        ``"``, ``/``) that are reinserted when only one side deleted them.
    cutoff_len (int): CUTOFF_LEN, the length bound of the second summary section.
    max_error (int): MAX_ERROR. EVALB stops without a summary at error number
        ``max_error + 2``.
    labeled (bool): LABELED. False scores unlabelled brackets.
    delete_terminals (bool): whether preterminals with a deleted tag are removed.
        False in evalb_spmrl, where every terminal stays (so ``-NONE-`` leaves in
        the gold cause length mismatches).
    label_cut_chars (str): a phrase label is cut at the first of these characters
        (``NP-SBJ=2`` -> ``NP``). evalb_spmrl also cuts at ``#`` (morphology).
    cut_compared_labels (bool): cut every label when it is compared, as evalb_spmrl
        does: POS tags are compared cut (``-LRB-`` and ``-RRB-`` both become ``""``)
        and DELETE_LABEL entries are cut too (``-NONE-`` becomes ``""``, which
        deletes brackets with an empty label, such as the unlabelled PTB root).
    count_length_mismatch_as_valid (bool): evalb_spmrl records a sentence whose
        lengths differ before flagging the error, so it counts as a valid sentence
        with no brackets and no words (a complete match) instead of an error.
    ignore_one_word_length_mismatch (bool): evalb_spmrl raises no length error when
        the gold sentence has at most one word and scores the sentence anyway
        (with ``count_length_mismatch_as_valid`` it then has two rows).
    """

    delete_labels: tuple[str, ...] = ()
    delete_labels_for_length: tuple[str, ...] = ()
    equivalent_labels: tuple[tuple[str, str], ...] = ()
    equivalent_words: tuple[tuple[str, str], ...] = ()
    quote_labels: tuple[str, ...] = ()
    cutoff_len: int = 40
    max_error: int = 10
    labeled: bool = True
    delete_terminals: bool = True
    label_cut_chars: str = "-="
    cut_compared_labels: bool = False
    count_length_mismatch_as_valid: bool = False
    ignore_one_word_length_mismatch: bool = False

    @classmethod
    def collins(cls) -> EvalbParams:
        """``evalb -p COLLINS.prm``: the standard PTB setting."""
        return cls(
            delete_labels=("TOP", "-NONE-", ",", ":", "``", "''", "."),
            delete_labels_for_length=("-NONE-",),
            equivalent_labels=(("ADVP", "PRT"),),
            cutoff_len=40,
            max_error=10,
        )

    @classmethod
    def spmrl(cls) -> EvalbParams:
        """``evalb_spmrl -p spmrl.prm`` (SPMRL 2013 shared task)."""
        return cls(
            delete_labels=("TOP", "ROOT", "S1", "-NONE-", "VROOT"),
            delete_labels_for_length=("-NONE-",),
            cutoff_len=70,
            max_error=10000,
            **PROGRAMS["evalb_spmrl"],
        )

    @classmethod
    def from_prm(cls, path: str | Path, *, program: str = "evalb") -> EvalbParams:
        """Read a ``.prm`` parameter file.

        path (str | Path): the parameter file.
        program (str): the EVALB program whose behaviours apply, "evalb" or
            "evalb_spmrl". Defaults to "evalb".
        RAISES ValueError: a line EVALB would warn about or misread (unknown keyword,
            missing or extra value, non-integer number), naming the file and line.
        """
        if program not in PROGRAMS:
            raise ValueError(
                Errors.E011.format(value=program, name="program", expected=" or ".join(PROGRAMS))
            )
        settings: dict[str, Any] = dict(PROGRAMS[program])
        lists: dict[str, list] = {
            "delete_labels": [],
            "delete_labels_for_length": [],
            "equivalent_labels": [],
            "equivalent_words": [],
            "quote_labels": [],
        }
        text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
        for number, line in enumerate(text.split("\n"), 1):
            # EVALB strips trailing space and skips comments and lines under 3 characters.
            line = line.rstrip(_WHITESPACE)
            if line.startswith("#") or len(line) < 3:
                continue
            try:
                key, value = _parse_setting(line)
            except ValueError as err:
                raise ValueError(Errors.E013.format(path=path, line=number, detail=err)) from None
            if key in lists:
                lists[key].append(value)
            elif key is not None:  # None: DEBUG, which only adds debugging output
                settings[key] = value
        settings.update({key: tuple(values) for key, values in lists.items()})
        return cls(**settings)

    def replace(self, **changes) -> EvalbParams:
        """A copy with some fields changed (``params.replace(labeled=False)``)."""
        return dataclasses.replace(self, **changes)


# keyword -> (field, kind): kind "int", "bool", "label", "pair" or "ignored".
_KEYWORDS = {
    "DEBUG": (None, "ignored"),
    "MAX_ERROR": ("max_error", "int"),
    "CUTOFF_LEN": ("cutoff_len", "int"),
    "LABELED": ("labeled", "bool"),
    "DELETE_LABEL": ("delete_labels", "label"),
    "DELETE_LABEL_FOR_LENGTH": ("delete_labels_for_length", "label"),
    "QUOTE_LABEL": ("quote_labels", "label"),
    "EQ_LABEL": ("equivalent_labels", "pair"),
    "EQ_WORD": ("equivalent_words", "pair"),
}


def _parse_setting(line: str) -> tuple[str | None, object]:
    keyword, *values = line.split()
    if line[0] in _WHITESPACE or keyword not in _KEYWORDS:
        raise ValueError(f"unknown keyword in {line!r}")
    field, kind = _KEYWORDS[keyword]
    expected = 2 if kind == "pair" else 1
    if len(values) != expected:
        raise ValueError(f"{keyword} takes {expected} value(s), got {len(values)}")
    if kind == "pair":
        return field, (values[0], values[1])
    if kind == "label" or kind == "ignored":
        return field, values[0]
    try:
        number = int(values[0])
    except ValueError:
        raise ValueError(f"{keyword} needs an integer, got {values[0]!r}") from None
    # EVALB's LABELED test is "== 0": any other number means labelled.
    return field, (number != 0 if kind == "bool" else number)


def get_params(
    spec: str | Path | EvalbParams = "collins", *, program: str = "evalb"
) -> EvalbParams:
    """Resolve a parameter set: "collins", "spmrl", a ``.prm`` path or an ``EvalbParams``.

    program (str): the program behaviours for a ``.prm`` path ("evalb" or
        "evalb_spmrl"). Defaults to "evalb".
    RAISES ValueError: an unknown name that is not an existing file.
    """
    if isinstance(spec, EvalbParams):
        return spec
    if spec == "collins":
        return EvalbParams.collins()
    if spec == "spmrl":
        return EvalbParams.spmrl()
    if not Path(spec).is_file():
        raise ValueError(Errors.E012.format(name=spec))
    return EvalbParams.from_prm(spec, program=program)
