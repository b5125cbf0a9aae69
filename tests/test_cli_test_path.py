"""``spacy-lpcfg test MODEL FILE`` scores a file of Penn brackets in the model's own
labels: a Floresta model on its test trees written out scores as on the named corpus."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from spacy_lpcfg.cli import app


def test_a_treebank_file_is_scored_in_the_models_labels(load_corpus, data_dir, tmp_path):
    runner = CliRunner()
    trained = runner.invoke(app, ["train", "floresta", str(tmp_path / "model"), "--estimator",
                                  "mle", "--limit", "300", "--data-dir", str(data_dir), "-q"])  # fmt: skip
    assert trained.exit_code == 0, trained.output
    test = load_corpus("floresta", "test")[:30]
    (tmp_path / "test.mrg").write_text("".join(f"{tree}\n" for tree in test), encoding="utf-8")
    by_name = runner.invoke(app, ["test", str(tmp_path / "model"), "floresta", "--limit", "30",
                                  "--data-dir", str(data_dir), "--json"])  # fmt: skip
    by_file = runner.invoke(app, ["test", str(tmp_path / "model"), str(tmp_path / "test.mrg"),
                                  "--json"])  # fmt: skip
    assert by_name.exit_code == 0 and by_file.exit_code == 0, by_name.output + by_file.output
    named, filed = json.loads(by_name.stdout), json.loads(by_file.stdout)
    assert named["bracketing_fscore"] > 50
    assert filed["bracketing_fscore"] == named["bracketing_fscore"]
    assert filed["labelled_function_fscore"] == named["labelled_function_fscore"]
