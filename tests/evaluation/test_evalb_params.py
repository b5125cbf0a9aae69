"""EVALB parameter sets and .prm parsing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spacy_lpcfg.evaluation import EvalbParams, get_params

REPO = Path(__file__).resolve().parents[2]
REF = Path(os.environ.get("SPACY_LPCFG_EVALB_REF") or REPO.parent / "shared" / "evalb_reference")
needs_reference = pytest.mark.skipif(
    not (REF / "COLLINS.prm").is_file(),
    reason="EVALB reference data not found: set SPACY_LPCFG_EVALB_REF",
)


@needs_reference
def test_collins_is_collins_prm():
    assert EvalbParams.from_prm(REF / "COLLINS.prm") == EvalbParams.collins()


@needs_reference
def test_spmrl_is_spmrl_prm_with_the_spmrl_program():
    assert EvalbParams.from_prm(REF / "spmrl.prm", program="evalb_spmrl") == EvalbParams.spmrl()
    # The same file under plain evalb keeps evalb's behaviours.
    plain = EvalbParams.from_prm(REF / "spmrl.prm")
    assert plain.delete_terminals and plain.label_cut_chars == "-="
    assert plain.cutoff_len == 70 and plain.max_error == 10000


def test_from_prm_reads_every_keyword(tmp_path):
    prm = tmp_path / "my.prm"
    prm.write_text(
        "# a comment\n"
        "\n"
        "DEBUG 1\n"
        "MAX_ERROR 3   \n"
        "CUTOFF_LEN 25\n"
        "LABELED 0\n"
        "DELETE_LABEL TOP\n"
        "DELETE_LABEL PU\r\n"
        "DELETE_LABEL_FOR_LENGTH -NONE-\n"
        "QUOTE_LABEL POS\n"
        "EQ_LABEL ADVP PRT\n"
        "EQ_WORD colour color\n"
        "#EQ_LABEL NP NX\n"
    )
    params = EvalbParams.from_prm(prm)
    assert params == EvalbParams(
        delete_labels=("TOP", "PU"),
        delete_labels_for_length=("-NONE-",),
        equivalent_labels=(("ADVP", "PRT"),),
        equivalent_words=(("colour", "color"),),
        quote_labels=("POS",),
        cutoff_len=25,
        max_error=3,
        labeled=False,
    )


def test_defaults_are_evalb_without_prm(tmp_path):
    prm = tmp_path / "empty.prm"
    prm.write_text("# nothing\n")
    params = EvalbParams.from_prm(prm)
    assert (params.cutoff_len, params.max_error, params.labeled) == (40, 10, True)
    assert params.delete_labels == ()


@pytest.mark.parametrize(
    "line,detail",
    [
        ("DELETE_LABELS TOP", "unknown keyword"),
        ("  DELETE_LABEL TOP", "unknown keyword"),
        ("MAX_ERROR", "takes 1 value"),
        ("EQ_LABEL ADVP", "takes 2 value"),
        ("DELETE_LABEL A B", "takes 1 value"),
        ("CUTOFF_LEN forty", "needs an integer"),
    ],
)
def test_bad_prm_line_names_file_and_line(tmp_path, line, detail):
    prm = tmp_path / "bad.prm"
    prm.write_text(f"# header\nMAX_ERROR 10\n{line}\n")
    with pytest.raises(ValueError, match=r"\[LPCFG-E013\]") as info:
        EvalbParams.from_prm(prm)
    message = str(info.value)
    assert str(prm) in message and "line 3" in message and detail in message


def test_get_params(tmp_path):
    assert get_params("collins") == EvalbParams.collins()
    assert get_params("spmrl") == EvalbParams.spmrl()
    custom = EvalbParams(cutoff_len=10)
    assert get_params(custom) is custom
    prm = tmp_path / "cut.prm"
    prm.write_text("CUTOFF_LEN 15\n")
    assert get_params(prm).cutoff_len == 15
    assert get_params(str(prm), program="evalb_spmrl").label_cut_chars == "-=#"
    with pytest.raises(ValueError, match=r"\[LPCFG-E012\]"):
        get_params("colins")
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\]"):
        get_params(prm, program="evalb_arabic")


def test_replace():
    unlabelled = EvalbParams.collins().replace(labeled=False)
    assert not unlabelled.labeled
    assert unlabelled.delete_labels == EvalbParams.collins().delete_labels
