"""``spacy-lpcfg train --estimator split_merge``: checkpoints beside MODEL_DIR, Ctrl-C
and --resume, and --dev (the cycle kept chosen by the dev trees' F1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.estimators.em import ShardedTreebank
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.training import checkpoint_dir

runner = CliRunner()


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def train_args(data_dir):
    return ["ptb_sample", "--data-dir", data_dir, "--limit", "80", "-q"]


def _train(out, train_args, *options):
    corpus, *rest = train_args
    return _invoke("train", corpus, out, "--estimator", "split_merge", *rest, *options)


def test_ctrl_c_keeps_the_last_cycle_and_resume_finishes_the_same_model(
    tmp_path, train_args, monkeypatch
):
    whole = tmp_path / "whole"
    result = _train(whole, train_args, "--n-cycles", "2")
    assert result.exit_code == 0, result.output
    assert not checkpoint_dir(whole).exists()  # gone once the model is written

    out = tmp_path / "model"
    calls = []
    merge_losses = ShardedTreebank.merge_losses

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 2:  # inside cycle 2
            raise KeyboardInterrupt
        return merge_losses(self, *args)

    monkeypatch.setattr(ShardedTreebank, "merge_losses", interrupted)
    result = _train(out, train_args, "--n-cycles", "2")
    assert result.exit_code == 130, result.output
    folder = checkpoint_dir(out)
    assert f"cycle 1 is checkpointed in {folder}" in result.stderr
    assert "--resume" in result.stderr
    assert not out.exists() and (folder / "checkpoint.json").is_file()
    assert folder.name == ".model.checkpoints" and folder.parent == out.absolute().parent

    monkeypatch.undo()
    result = _train(out, train_args, "--n-cycles", "2", "--resume")
    assert result.exit_code == 0, result.output
    assert ParsingModel.from_disk(out).to_bytes() == ParsingModel.from_disk(whole).to_bytes()
    assert not folder.exists()


def test_ctrl_c_before_any_cycle_says_there_is_nothing_to_resume(tmp_path, train_args, monkeypatch):
    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(ShardedTreebank, "merge_losses", interrupted)
    result = _train(tmp_path / "model", train_args, "--n-cycles", "2")
    assert result.exit_code == 130
    assert "no split-merge cycle was complete: nothing to resume" in result.stderr


def test_resume_refuses_the_checkpoint_of_other_options(tmp_path, train_args, monkeypatch):
    out = tmp_path / "model"
    calls = []
    merge_losses = ShardedTreebank.merge_losses

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return merge_losses(self, *args)

    monkeypatch.setattr(ShardedTreebank, "merge_losses", interrupted)
    assert _train(out, train_args, "--n-cycles", "2").exit_code == 130
    monkeypatch.undo()
    result = _train(out, train_args, "--n-cycles", "2", "--resume", "--random-state", "3")
    assert result.exit_code == 1
    assert "[LPCFG-E407]" in result.stderr and "random_state 0 (now 3)" in result.stderr
    assert not out.exists()


def test_a_product_checkpoints_its_seeds_and_resumes_each(tmp_path, train_args, monkeypatch):
    """--n-models 2: Ctrl-C in the second seed names each seed's last cycle; --resume
    finishes the model an uninterrupted run trains (the first seed's is seed 0's)."""
    options = ("--n-cycles", "1", "--n-models", "2")
    whole = tmp_path / "whole"
    assert _train(whole, train_args, *options).exit_code == 0
    single = tmp_path / "single"
    assert _train(single, train_args, "--n-cycles", "1").exit_code == 0
    assert ParsingModel.from_disk(whole).grammar == ParsingModel.from_disk(single).grammar

    out = tmp_path / "model"
    calls = []
    merge_losses = ShardedTreebank.merge_losses

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 2:  # the second seed's first cycle
            raise KeyboardInterrupt
        return merge_losses(self, *args)

    monkeypatch.setattr(ShardedTreebank, "merge_losses", interrupted)
    result = _train(out, train_args, *options)
    assert result.exit_code == 130, result.output
    folder = checkpoint_dir(out)
    message = " ".join(result.stderr.split())  # the console wraps long lines
    assert f"the last complete cycles (seed0: 1, seed1: none) are checkpointed in {folder}" in (
        message
    )
    monkeypatch.undo()
    calls.clear()

    def counted(self, *args):
        calls.append(1)
        return merge_losses(self, *args)

    monkeypatch.setattr(ShardedTreebank, "merge_losses", counted)
    result = _train(out, train_args, *options, "--resume")
    assert result.exit_code == 0, result.output
    assert ParsingModel.from_disk(out).to_bytes() == ParsingModel.from_disk(whole).to_bytes()
    assert len(calls) == 1  # seed 1's cycle only: seed 0's came from its checkpoint


def test_a_product_trains_its_seeds_in_processes(tmp_path, train_args):
    options = ("--n-cycles", "1", "--n-models", "2")
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    assert _train(serial, train_args, *options).exit_code == 0
    result = _train(parallel, train_args, *options, "--n-jobs", "2")
    assert result.exit_code == 0, result.output
    assert ParsingModel.from_disk(parallel).to_bytes() == ParsingModel.from_disk(serial).to_bytes()
    result = _invoke("plot", "training", parallel, tmp_path / "training.png")
    assert result.exit_code == 0, result.output
    assert "the first of its 2 seeds" in " ".join(result.stderr.split())


def test_n_jobs_needs_split_merge_and_a_worker(tmp_path, train_args):
    corpus, *rest = train_args
    result = _invoke("train", corpus, tmp_path / "m", "--estimator", "mle", *rest, "--n-jobs", "2")
    assert result.exit_code == 2 and "--n-jobs is an option of --estimator split_merge" in (
        result.stderr
    )
    result = _train(tmp_path / "m", train_args, "--n-jobs", "0")
    assert result.exit_code == 2 and "--n-jobs must be from 1 to 64, not 0" in result.stderr
    result = _invoke(
        "train", corpus, tmp_path / "m", "--estimator", "right", *rest, "--n-jobs", "2"
    )
    assert result.exit_code == 2 and "--n-jobs is an option" in result.stderr
    assert not (tmp_path / "m").exists()


def test_resume_and_dev_are_split_merge_options(tmp_path, train_args):
    corpus, *rest = train_args
    for option in (["--resume"], ["--dev", "dev"]):
        result = _invoke("train", corpus, tmp_path / "m", "--estimator", "mle", *rest, *option)
        assert result.exit_code == 2
        assert "--resume and --dev are options of --estimator split_merge" in result.stderr
        assert "clone_some" in result.stderr


def test_dev_trees_choose_the_cycle(tmp_path, train_args, load_corpus):
    dev = tmp_path / "dev.mrg"
    dev.write_text("".join(f"{tree}\n" for tree in load_corpus("ptb_sample", "dev")[:15]))
    out = tmp_path / "model"
    result = _train(out, train_args, "--n-cycles", "2", "--dev", dev)
    assert result.exit_code == 0, result.output
    history = ParsingModel.from_disk(out).training["history"]
    scores = history["dev_f1"]
    assert len(scores) == 2 and all(0 < score <= 100 for score in scores)
    assert history["best_cycle"] == 1 + scores.index(max(scores))
    result = _train(out, train_args, "--n-cycles", "1", "--dev", tmp_path / "missing.mrg")
    assert result.exit_code == 1 and "missing.mrg" in result.stderr


@pytest.mark.skipif(os.name != "posix", reason="SIGINT is POSIX-only")
def test_sigint_in_a_cycle_exits_130_and_resume_finishes(tmp_path, data_dir):
    """A real Ctrl-C, most likely inside a numba kernel (where numba reports it as a
    SystemError): exit 130 with the resume hint, no traceback; --resume then finishes."""
    out = tmp_path / "model"
    folder = checkpoint_dir(out)
    command = [sys.executable, "-m", "spacy_lpcfg", "train", "ptb_sample", str(out)]
    options = ["--estimator", "split_merge", "--n-cycles", "3", "--limit", "800", "-q"]
    options += ["--data-dir", str(data_dir)]
    process = subprocess.Popen([*command, *options], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (folder / "checkpoint.json").exists() and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)  # into cycle 2's EM
    process.send_signal(signal.SIGINT)
    message = process.stderr.read()
    assert process.wait(timeout=60) == 130, message
    assert "Traceback" not in message and message.startswith("interrupted: ")
    assert f"is checkpointed in {folder}" in message and "--resume" in message
    result = subprocess.run(
        [*command, *options, "--resume"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert ParsingModel.from_disk(out).training["history"]["n_states"][2]
    assert not folder.exists()
