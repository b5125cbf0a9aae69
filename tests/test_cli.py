"""The command-line contract of DESIGN.md section 15 (keys, exit codes, stdout hygiene)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app

EVALB_CASES = Path(__file__).resolve().parents[1].parent / "shared" / "evalb_reference" / "cases"

runner = CliRunner()


def _invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_cli_module_entry_point_help():
    out = subprocess.run(
        [sys.executable, "-m", "spacy_lpcfg", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert "stats" in out.stdout and "evaluate" in out.stdout


def test_cli_stats_json(data_dir):
    result = _invoke("stats", "ptb_sample", "--split", "test", "--data-dir", data_dir, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["trees"] == 245 and stats["tokens"] == 5964
    assert stats["empty_elements"] > 0  # counted before normalisation removes them


def test_cli_stats_text_and_file_path(data_dir, tmp_path):
    path = tmp_path / "two.trees"
    path.write_text("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))\n( (NP (NN dog)) )\n")
    result = _invoke("stats", path, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["trees"] == 2 and stats["tokens"] == 4
    text = _invoke("stats", "ptb_sample", "--split", "dev", "--data-dir", data_dir)
    assert text.exit_code == 0 and "273" in text.stdout


def test_cli_stats_reports_bad_input(tmp_path, data_dir):
    broken = tmp_path / "broken.mrg"
    broken.write_text("( (S (NP (DT The) (NN cat)) (VP (VBD sat)))\n")
    result = _invoke("stats", broken)
    assert result.exit_code == 1
    assert "broken.mrg" in result.stderr and "line 1" in result.stderr
    unknown = _invoke("stats", "no_such_corpus", "--data-dir", data_dir)
    assert unknown.exit_code == 1 and "no_such_corpus" in unknown.stderr


def test_cli_stats_without_data_dir_says_how_to_get_data(monkeypatch):
    monkeypatch.delenv("SPACY_LPCFG_DATA", raising=False)
    result = _invoke("stats", "ptb_sample")
    assert result.exit_code == 1
    assert "SPACY_LPCFG_DATA" in result.stderr and "nltk" in result.stderr.lower()


@pytest.fixture
def evalb_case():
    if not EVALB_CASES.is_dir():
        pytest.skip("EVALB reference cases not found")
    return lambda name: (EVALB_CASES / f"{name}.gold", EVALB_CASES / f"{name}.test")


def test_cli_evaluate_reproduces_evalb_stdout(evalb_case):
    gold, test = evalb_case("15_berkeley_sm6_wsj0180_0199")
    result = _invoke("evaluate", gold, test)
    assert result.exit_code == 0
    expected = (EVALB_CASES / "15_berkeley_sm6_wsj0180_0199.collins.out").read_text()
    assert result.stdout == expected


def test_cli_evaluate_json_keys(evalb_case):
    gold, test = evalb_case("15_berkeley_sm6_wsj0180_0199")
    result = _invoke("evaluate", gold, test, "--json")
    assert result.exit_code == 0
    scores = json.loads(result.stdout)
    for key in (
        "sentences",
        "bracketing_recall",
        "bracketing_precision",
        "bracketing_fscore",
        "complete_match",
        "average_crossing",
        "tagging_accuracy",
    ):
        assert key in scores and f"{key}_40" in scores
    assert scores["bracketing_fscore"] == 82.69 and scores["bracketing_fscore_40"] == 84.08
    assert scores["sentences"] == 245


def test_cli_evaluate_abort_exits_nonzero(evalb_case):
    gold, test = evalb_case("12_max_error_abort")
    result = _invoke("evaluate", gold, test)
    assert result.exit_code == 1
    assert "Summary" not in result.stdout


def test_cli_evaluate_spmrl_nan_is_null(evalb_case):
    gold, test = evalb_case("04_none_empty_elements")
    result = _invoke("evaluate", gold, test, "--params", "spmrl", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["bracketing_fscore"] is None
