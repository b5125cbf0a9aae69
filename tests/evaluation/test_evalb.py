"""Parity with the reference outputs of EVALB (COLLINS.prm) and evalb_spmrl (spmrl.prm).

The reference folder is ``../shared/evalb_reference`` beside the repository, or
``$SPACY_LPCFG_EVALB_REF``; see its README for what each case exercises.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from spacy_lpcfg.errors import TreebankFormatError
from spacy_lpcfg.evaluation import EvalbParams, evaluate_files, score_lines, score_trees
from spacy_lpcfg.trees import parse_tree

REPO = Path(__file__).resolve().parents[2]


def _reference_dir() -> Path | None:
    path = Path(
        os.environ.get("SPACY_LPCFG_EVALB_REF") or REPO.parent / "shared" / "evalb_reference"
    )
    return path if (path / "cases" / "expected.json").is_file() else None


REF = _reference_dir()
CASES = sorted(json.loads((REF / "cases" / "expected.json").read_text())) if REF else ["missing"]
PROGRAMS = ["collins", "spmrl"]
# Keys of expected.json's summary sections -> keys of EvalbResult.to_dict().
SUMMARY_KEYS = {
    "recall": "bracketing_recall",
    "precision": "bracketing_precision",
    "f1": "bracketing_fscore",
}

pytestmark = pytest.mark.skipif(
    REF is None, reason="EVALB reference data not found: set SPACY_LPCFG_EVALB_REF"
)


def _case(name: str) -> tuple[Path, Path]:
    return REF / "cases" / f"{name}.gold", REF / "cases" / f"{name}.test"


def _expected(name: str, program: str) -> dict:
    return json.loads((REF / "cases" / "expected.json").read_text())[name][program]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _trees(path: Path) -> list:
    trees = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            trees.append(parse_tree(line))
        except TreebankFormatError:  # "(())", a parser failure
            trees.append(None)
    return trees


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("name", CASES)
def test_output_is_evalb_byte_for_byte(name, program):
    gold, test = _case(name)
    result = evaluate_files(gold, test, program)
    assert result.format() == (REF / "cases" / f"{name}.{program}.out").read_text()
    assert result.format_messages() == (REF / "cases" / f"{name}.{program}.err").read_text()


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("name", CASES)
def test_figures_match_expected_json(name, program):
    expected = _expected(name, program)
    result = evaluate_files(*_case(name), program)
    assert result.messages == expected["stderr_lines"]
    assert result.exit_status == expected["exit_status"]
    assert result.aborted == (expected["exit_status"] == 1)
    if result.aborted:
        assert "all" not in expected
        return
    figures = result.to_dict()
    cutoff = result.params.cutoff_len
    for section, suffix in (("all", ""), (f"len_le_{cutoff}", f"_{cutoff}")):
        for key, value in expected[section].items():
            assert _same(figures[SUMMARY_KEYS.get(key, key) + suffix], value), (section, key)
    total = result.summary()
    totals = expected["totals_line"]
    assert (total.words, total.correct_tags) == (totals["words"], totals["correct_tags"])
    if "matched" in totals:
        counts = (total.matched, total.gold_brackets, total.test_brackets, total.crossing)
        assert counts == tuple(
            totals[k] for k in ("matched", "gold_brackets", "test_brackets", "crossing")
        )


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize(
    "name",
    [
        "13_wsj0180_0199_perturbed",
        "14_wsj0180_0199_perturbed_noempty",
        "15_berkeley_sm6_wsj0180_0199",
    ],
)
def test_trees_score_as_their_lines(name, program):
    # These files root every tree at TOP, so parse_tree keeps them as EVALB reads them.
    gold, test = _case(name)
    result = score_trees(_trees(gold), _trees(test), program)
    assert result.format() == (REF / "cases" / f"{name}.{program}.out").read_text()
    assert result.format_messages() == (REF / "cases" / f"{name}.{program}.err").read_text()


def test_lines_and_files_agree():
    gold, test = _case("09_mismatch_and_skip")
    from_lines = score_lines(gold.read_text().splitlines(), test.read_text().splitlines())
    from_text = score_lines(gold.read_text(), test.read_text())
    assert from_lines.format() == from_text.format() == evaluate_files(gold, test).format()


def test_to_dict_keys_follow_the_cutoff():
    gold, test = _case("06_length_cutoff_40")
    collins = evaluate_files(gold, test, "collins").to_dict()
    spmrl = evaluate_files(gold, test, "spmrl").to_dict()
    for key in (
        "sentences",
        "bracketing_fscore",
        "complete_match",
        "average_crossing",
        "tagging_accuracy",
    ):
        assert key in collins and key + "_40" in collins
        assert key in spmrl and key + "_70" in spmrl
    assert (collins["sentences_40"], collins["sentences"]) == (3, 5)
    assert (collins["cutoff_len"], spmrl["cutoff_len"]) == (40, 70)


def test_nan_fscore_is_nan():
    gold, test = _case("04_none_empty_elements")
    result = evaluate_files(gold, test, "spmrl")
    assert math.isnan(result.to_dict()["bracketing_fscore"])
    assert "Bracketing FMeasure       =   -nan\n" in result.format()


def test_abort_keeps_rows_before_it():
    gold, test = _case("12_max_error_abort")
    result = evaluate_files(gold, test, "collins")
    assert result.aborted and len(result.rows) == 11 and len(result.messages) == 12
    assert "Summary" not in result.format()
    relaxed = evaluate_files(gold, test, EvalbParams.collins().replace(max_error=100))
    assert not relaxed.aborted and relaxed.summary().error_sentences == 13


def test_evalb_repeated_corpus_scores_add_up():
    """Scoring a corpus k times gives k times the counts and the same percentages."""
    gold, test = _case("15_berkeley_sm6_wsj0180_0199")
    gold_lines = gold.read_text().splitlines()
    test_lines = test.read_text().splitlines()
    once = score_lines(gold_lines, test_lines)
    params = EvalbParams.collins().replace(max_error=10**6)
    thrice = score_lines(gold_lines * 3, test_lines * 3, params)
    assert thrice.summary().sentences == 3 * len(gold_lines)
    assert thrice.summary().fscore == once.summary().fscore
    assert thrice.summary().matched == 3 * once.summary().matched
