"""Split-merge checkpoints and resuming, and the cycle chosen on dev trees.

A fit resumed from a checkpoint must give the uninterrupted fit's grammar bit for
bit; a checkpoint survives an interruption at any point of training or of its own
writing; one of another run (trees, dev trees, parameters) is refused.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_estimator_contract import TREES

from spacy_lpcfg.estimators.em import KINDS, ShardedTreebank
from spacy_lpcfg.estimators.em import checkpoints as checkpoint_module
from spacy_lpcfg.estimators.em import shards as em_shards
from spacy_lpcfg.estimators.em.checkpoints import (
    INDEX,
    CheckpointFolder,
    generator_state,
    latest_cycle,
    restore_generator,
)
from spacy_lpcfg.estimators.split_merge import SplitMergeEstimator

SETTINGS = {"em_iterations": 3, "merge_em_iterations": 2}


@pytest.fixture(scope="module")
def ptb_150(load_corpus):
    return load_corpus("ptb_sample", "train")[:150]


@pytest.fixture(scope="module")
def two_cycles(ptb_150):
    """The uninterrupted fit that every resumed fit must equal."""
    return SplitMergeEstimator(n_cycles=2, **SETTINGS).fit(ptb_150)


def assert_same_fit(resumed, full):
    """The same grammar (every array), lexicon, history and model bytes."""
    np.testing.assert_array_equal(resumed.em_grammar_.n_states, full.em_grammar_.n_states)
    for kind in KINDS:
        np.testing.assert_array_equal(
            resumed.em_grammar_.weights[kind], full.em_grammar_.weights[kind]
        )
    for name in ("binary_weights", "unary_weights", "lexical_weights"):
        np.testing.assert_array_equal(getattr(resumed.grammar_, name), getattr(full.grammar_, name))
    assert resumed.log_likelihoods_ == full.log_likelihoods_
    assert resumed.history_ == full.history_
    assert resumed.model_.to_bytes() == full.model_.to_bytes()


def interrupt(function, at: int):
    """``function``, raising KeyboardInterrupt at its ``at``-th call (a plain function,
    so that it binds as a method too); ``.calls`` counts the calls."""

    def wrapper(*args, **kwargs):
        wrapper.calls += 1  # type: ignore[attr-defined]
        if wrapper.calls == at:  # type: ignore[attr-defined]
            raise KeyboardInterrupt
        return function(*args, **kwargs)

    wrapper.calls = 0  # type: ignore[attr-defined]
    return wrapper


def test_one_cycle_then_resume_equals_two_cycles(tmp_path, ptb_150, two_cycles):
    folder = tmp_path / "checkpoints"
    one = SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS).fit(ptb_150)
    assert sorted(p.name for p in folder.iterdir()) == [INDEX, "cycle-001.npz"]
    assert latest_cycle(folder) == 1 and one.selected_cycle_ == 1
    resumed = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS)
    resumed.fit(ptb_150, resume=True)
    assert_same_fit(resumed, two_cycles)
    assert len(resumed.cycle_seconds_) == 2 and resumed.cycle_seconds_[0] == one.cycle_seconds_[0]
    # the older cycle's file goes once the index no longer names it
    assert sorted(p.name for p in folder.iterdir()) == [INDEX, "cycle-002.npz"]
    # resuming a finished run only rebuilds the model
    again = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS)
    assert_same_fit(again.fit(ptb_150, resume=True), two_cycles)


def test_ctrl_c_during_a_cycle_keeps_the_last_complete_cycle(
    tmp_path, ptb_150, two_cycles, monkeypatch
):
    folder = tmp_path / "checkpoints"
    # merge_losses runs once per cycle: the second call is inside cycle 2
    stop = interrupt(ShardedTreebank.merge_losses, at=2)
    monkeypatch.setattr(ShardedTreebank, "merge_losses", stop)
    estimator = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS)
    with pytest.raises(KeyboardInterrupt):
        estimator.fit(ptb_150)
    assert stop.calls == 2 and latest_cycle(folder) == 1
    assert sorted(p.name for p in folder.iterdir()) == [INDEX, "cycle-001.npz"]
    monkeypatch.undo()
    assert_same_fit(estimator.fit(ptb_150, resume=True), two_cycles)


@pytest.mark.parametrize("stopped", ["cycle file", "index"])
def test_interrupted_checkpoint_writes_leave_the_previous_checkpoint(
    tmp_path, ptb_150, two_cycles, monkeypatch, stopped
):
    """os.replace renames each file into place: stopped before the cycle file's or the
    index's rename of cycle 2, the folder still holds cycle 1's checkpoint, whole."""
    folder = tmp_path / "checkpoints"
    real_replace = checkpoint_module.os.replace

    def replace(source, target):
        name = str(target).rsplit("/", 1)[-1]
        if name == ("cycle-002.npz" if stopped == "cycle file" else INDEX) and latest_cycle(folder):
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(checkpoint_module.os, "replace", replace)
    estimator = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS)
    with pytest.raises(KeyboardInterrupt):
        estimator.fit(ptb_150)
    monkeypatch.undo()
    assert latest_cycle(folder) == 1
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert_same_fit(estimator.fit(ptb_150, resume=True), two_cycles)


def test_leftovers_of_a_killed_write_are_cleared(tmp_path, ptb_150):
    """A killed process leaves its temporary file: the next save removes it."""
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    leftover = folder / ".cycle-001.npz.0123abcd.tmp"
    leftover.write_bytes(b"half a file")
    SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS).fit(ptb_150, resume=True)
    assert sorted(p.name for p in folder.iterdir()) == [INDEX, "cycle-001.npz"]


def test_resuming_with_other_trees_or_parameters_is_refused(tmp_path, ptb_150):
    folder = tmp_path / "checkpoints"
    SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS).fit(ptb_150)
    saved = (folder / INDEX).read_bytes()

    def resume(trees, **params):
        estimator = SplitMergeEstimator(checkpoint_dir=folder, **{**SETTINGS, **params})
        return estimator.fit(trees, resume=True)

    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*other training trees"):
        resume(ptb_150[:149], n_cycles=2)
    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*smoothing 0\.01 \(now 0\.02\)"):
        resume(ptb_150, n_cycles=2, smoothing=0.02)
    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*random_state 0 \(now 1\)"):
        resume(ptb_150, n_cycles=2, random_state=1)
    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*rare_threshold"):
        resume(ptb_150, n_cycles=2, rare_threshold=2)
    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*split None \(now 'some'\)"):
        resume(ptb_150, n_cycles=2, split="some", merge_fraction=0.0)
    with pytest.raises(ValueError, match=r"\[LPCFG-E409\].*cycle 1, beyond n_cycles=0"):
        resume(ptb_150, n_cycles=0)
    assert (folder / INDEX).read_bytes() == saved  # refused runs leave it alone
    # split="all", the default, is not in the fingerprint: checkpoints written before
    # the parameter existed resume
    index = json.loads((folder / INDEX).read_text())
    assert "split" not in index["fingerprint"]["params"]
    # where training runs is no part of the run: other n_jobs resume the same run
    assert resume(ptb_150, n_cycles=1, n_jobs=2).selected_cycle_ == 1


def test_damaged_or_newer_checkpoints_are_refused(tmp_path, ptb_150):
    folder = tmp_path / "checkpoints"
    estimator = SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS)
    estimator.fit(ptb_150)
    cycle_file, index = folder / "cycle-001.npz", folder / INDEX
    data, record = cycle_file.read_bytes(), json.loads(index.read_text())

    cycle_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"\[LPCFG-E406\].*cycle-001\.npz does not match"):
        estimator.fit(ptb_150, resume=True)
    cycle_file.unlink()
    with pytest.raises(ValueError, match=r"\[LPCFG-E406\].*cannot read cycle-001\.npz"):
        estimator.fit(ptb_150, resume=True)
    cycle_file.write_bytes(data)
    index.write_text('{"format": "spacy-lpcfg split-merge checkpoint", "format_vers')
    with pytest.raises(ValueError, match=r"\[LPCFG-E406\]"):
        estimator.fit(ptb_150, resume=True)
    index.write_text(json.dumps({**record, "format_version": 99}))
    with pytest.raises(ValueError, match=r"\[LPCFG-E408\].*format version 99"):
        estimator.fit(ptb_150, resume=True)
    index.write_text(json.dumps({key: v for key, v in record.items() if key != "history"}))
    with pytest.raises(ValueError, match=r"\[LPCFG-E406\].*history"):
        estimator.fit(ptb_150, resume=True)
    # without resuming, a new run replaces whatever is there
    assert estimator.fit(ptb_150).selected_cycle_ == 1 and latest_cycle(folder) == 1


def test_resume_needs_a_folder_and_starts_afresh_in_an_empty_one(tmp_path, ptb_150):
    with pytest.raises(ValueError, match=r"\[LPCFG-E405\]"):
        SplitMergeEstimator(n_cycles=1, **SETTINGS).fit(ptb_150, resume=True)
    fresh = SplitMergeEstimator(n_cycles=1, **SETTINGS).fit(ptb_150)
    resumed = SplitMergeEstimator(n_cycles=1, checkpoint_dir=tmp_path / "new", **SETTINGS)
    assert_same_fit(resumed.fit(ptb_150, resume=True), fresh)


def test_checkpoint_files_are_json_and_npz_without_pickle(tmp_path, ptb_150):
    folder = tmp_path / "checkpoints"
    estimator = SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS)
    estimator.fit(ptb_150)
    record = json.loads((folder / INDEX).read_text())
    assert record["cycle"] == 1 and record["best_cycle"] is None
    assert record["history"] == estimator.history_
    with np.load(folder / "cycle-001.npz", allow_pickle=False) as arrays:
        np.testing.assert_array_equal(arrays["n_states"], estimator.em_grammar_.n_states)
        for kind in KINDS:
            np.testing.assert_array_equal(
                arrays[f"weights_{kind}"], estimator.em_grammar_.weights[kind]
            )
    # the generator's state goes through JSON and back exactly
    rng = restore_generator(record["random_state"])
    again = restore_generator(json.loads(json.dumps(generator_state(rng))))
    assert rng.random(3).tolist() == again.random(3).tolist()
    mt = np.random.Generator(np.random.MT19937(5))
    copy = restore_generator(json.loads(json.dumps(generator_state(mt))))
    assert mt.random(3).tolist() == copy.random(3).tolist()


# A checkpoint written before the EM core moved to ``estimators.em`` (commit d97846b):
# ``SplitMergeEstimator(n_cycles=1, checkpoint_dir=..., **OLD_SETTINGS).fit(TREES)``.
OLD_CHECKPOINT = Path(__file__).parent / "data" / "checkpoint_v1"
OLD_SETTINGS = {"em_iterations": 2, "merge_em_iterations": 1, "open_class_threshold": 1}


def test_a_checkpoint_of_an_earlier_version_resumes(tmp_path):
    """Checkpoints name no module (JSON and arrays only), so one written by earlier code
    still matches a fresh run's and resumes to the uninterrupted fit's grammar."""
    folder = tmp_path / "old"
    shutil.copytree(OLD_CHECKPOINT, folder)
    now = SplitMergeEstimator(n_cycles=1, checkpoint_dir=tmp_path / "now", **OLD_SETTINGS)
    now.fit(TREES)
    old_index = json.loads((folder / INDEX).read_text())
    new_index = json.loads((tmp_path / "now" / INDEX).read_text())
    assert old_index["fingerprint"] == new_index["fingerprint"]
    assert old_index["history"] == new_index["history"]
    with (
        np.load(folder / "cycle-001.npz", allow_pickle=False) as old,
        np.load(tmp_path / "now" / "cycle-001.npz", allow_pickle=False) as new,
    ):
        assert sorted(old.files) == sorted(new.files)
        for name in old.files:
            np.testing.assert_array_equal(old[name], new[name])
    resumed = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **OLD_SETTINGS)
    resumed.fit(TREES, resume=True)
    assert_same_fit(resumed, SplitMergeEstimator(n_cycles=2, **OLD_SETTINGS).fit(TREES))


def test_a_cycle_file_is_streamed_and_is_np_savez_with_its_digest(tmp_path):
    """A cycle's arrays go straight into the file (no archive of the grammar's size in
    memory at the end of a cycle); the file is what np.savez writes, and the index
    holds its SHA-256."""
    import hashlib
    import io
    import tracemalloc

    from spacy_lpcfg.estimators.em.checkpoints import CycleState

    # 40 MB of one kind: np.savez writes an array in chunks of at most 16 MB
    weights = {kind: np.linspace(0, 1, 5_000_000 if k == 0 else 10) for k, kind in enumerate(KINDS)}
    state = CycleState(1, np.array([1, 2], dtype=np.int64), weights, np.ones(3))
    folder = CheckpointFolder(tmp_path, {"treebank": "a", "dev": None, "params": {}})

    tracemalloc.start()
    try:
        digest = folder._write_cycle("cycle-001.npz", state)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # an archive in memory would hold the 40 MB
    buffer = io.BytesIO()
    np.savez(
        buffer, n_states=state.n_states, **{f"weights_{k}": weights[k] for k in KINDS},
        state_counts=state.state_counts,
    )  # fmt: skip
    data = (tmp_path / "cycle-001.npz").read_bytes()
    assert data == buffer.getvalue() and digest == hashlib.sha256(data).hexdigest()


def test_checkpoint_folder_refuses_another_fingerprint(tmp_path):
    folder = CheckpointFolder(tmp_path, {"treebank": "a", "dev": None, "params": {"x": 1}})
    assert folder.load() is None  # nothing there yet
    (tmp_path / INDEX).write_text(
        json.dumps(
            {
                "format": checkpoint_module.CHECKPOINT_FORMAT,
                "format_version": 1,
                "fingerprint": {"treebank": "a", "dev": "d", "params": {"x": 2}},
            }
        )
    )
    with pytest.raises(ValueError, match=r"other dev trees; x 2 \(now 1\)"):
        folder.load()


# The cycle chosen on dev -----------------------------------------------------------------


class ScoreByCycle:
    """A dev scorer that gives cycle k (counted by calls) ``scores[k - 1]``."""

    def __init__(self, *scores: float):
        self.scores, self.calls = scores, []

    def __call__(self, model, trees):
        self.calls.append((model, list(trees)))
        return self.scores[len(self.calls) - 1]


def test_dev_choice_keeps_the_best_cycle(ptb_150, two_cycles, load_corpus):
    """Cycle 2 of 3 scores best: its grammar is the 2-cycle fit's, exactly."""
    dev = load_corpus("ptb_sample", "dev")[:30]
    scorer = ScoreByCycle(70.0, 90.0, 80.0)
    estimator = SplitMergeEstimator(n_cycles=3, **SETTINGS).fit(ptb_150, dev, dev_scorer=scorer)
    assert len(scorer.calls) == 3 and all(trees == list(dev) for _, trees in scorer.calls)
    assert estimator.selected_cycle_ == 2 and estimator.history_["best_cycle"] == 2
    assert estimator.history_["dev_f1"] == [70.0, 90.0, 80.0]
    for kind in KINDS:
        np.testing.assert_array_equal(
            estimator.em_grammar_.weights[kind], two_cycles.em_grammar_.weights[kind]
        )
    assert estimator.n_states_ == two_cycles.n_states_
    assert [len(states) > 0 for states in estimator.history_["n_states"]] == [True] * 3
    assert estimator.history_["n_states"][1] == two_cycles.n_states_
    # the history of every cycle (3 cycles, 2 phases) goes with the model
    assert estimator.model_.training["history"] == estimator.history_
    assert len(estimator.history_["log_likelihoods"]) == 6
    # the scorer parsed cycle 2's model: same grammar as the one kept
    scored = scorer.calls[1][0]
    np.testing.assert_array_equal(scored.grammar.binary_weights, estimator.grammar_.binary_weights)


def test_dev_sample_is_spread_over_the_dev_trees(ptb_150, load_corpus):
    dev = list(load_corpus("ptb_sample", "dev")[:50])
    scorer = ScoreByCycle(1.0)
    SplitMergeEstimator(n_cycles=1, dev_sample=10, **SETTINGS).fit(ptb_150, dev, dev_scorer=scorer)
    assert scorer.calls[0][1] == dev[::5]


def test_dev_trees_need_a_scorer_unless_the_choice_is_off(ptb_150, load_corpus):
    dev = load_corpus("ptb_sample", "dev")[:5]
    with pytest.raises(ValueError, match=r"\[LPCFG-E410\]"):
        SplitMergeEstimator(n_cycles=1, **SETTINGS).fit(ptb_150, dev)
    estimator = SplitMergeEstimator(n_cycles=1, select_cycle_on_dev=False, **SETTINGS)
    assert estimator.fit(ptb_150, dev).history_["dev_f1"] == []
    with pytest.raises(ValueError, match=r"\[LPCFG-E411\].*nan.*cycle 1"):
        SplitMergeEstimator(n_cycles=1, **SETTINGS).fit(
            ptb_150, dev, dev_scorer=ScoreByCycle(math.nan)
        )
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\].*select_cycle_on_dev"):
        SplitMergeEstimator(select_cycle_on_dev="yes").fit(ptb_150)
    with pytest.raises(ValueError, match=r"\[LPCFG-E011\].*dev_sample"):
        SplitMergeEstimator(dev_sample=0).fit(ptb_150)


def test_resume_keeps_the_best_cycle_of_before_the_interruption(tmp_path, ptb_150, load_corpus):
    """The best cycle (1) was checkpointed before the interruption: a resumed fit to 3
    cycles keeps it, as the uninterrupted fit does; its file stays beside the last."""
    dev = load_corpus("ptb_sample", "dev")[:10]

    def fewer_states_better(model, trees):  # deterministic: a function of the grammar
        return -float(model.grammar.n_states.sum())

    def fit(n_cycles, **options):
        estimator = SplitMergeEstimator(n_cycles=n_cycles, **SETTINGS, **options)
        return estimator.fit(ptb_150, dev, dev_scorer=fewer_states_better, **options_of(options))

    def options_of(options):
        return {"resume": True} if "checkpoint_dir" in options else {}

    full = fit(3)
    assert full.selected_cycle_ == 1 and len(full.history_["dev_f1"]) == 3
    folder = tmp_path / "checkpoints"
    fit(1, checkpoint_dir=folder)
    resumed = fit(3, checkpoint_dir=folder)
    assert_same_fit(resumed, full)
    assert sorted(p.name for p in folder.iterdir()) == [INDEX, "cycle-001.npz", "cycle-003.npz"]
    with pytest.raises(ValueError, match=r"\[LPCFG-E407\].*other dev trees"):
        SplitMergeEstimator(n_cycles=3, checkpoint_dir=folder, **SETTINGS).fit(
            ptb_150, dev[:9], dev_scorer=fewer_states_better, resume=True
        )


def test_dev_scores_are_the_parser_f1_of_each_cycle(ptb_150, load_corpus):
    """With the real parser: the score recorded for the kept cycle is the EVALB F1 of
    the fitted model on the same dev sample."""
    import spacy_lpcfg
    from spacy_lpcfg.decode import Parser

    dev = list(load_corpus("ptb_sample", "dev")[:40])

    def dev_f1(model, trees):
        return spacy_lpcfg.evaluate(Parser(model), trees).fscore

    estimator = SplitMergeEstimator(n_cycles=2, dev_sample=20, **SETTINGS)
    estimator.fit(ptb_150, dev, dev_scorer=dev_f1)
    scores = estimator.history_["dev_f1"]
    assert len(scores) == 2 and all(0 < score <= 100 for score in scores)
    assert estimator.selected_cycle_ == 1 + int(np.argmax(scores))
    sample = dev[::2]
    kept = spacy_lpcfg.evaluate(Parser(estimator.model_), sample).fscore
    assert kept == scores[estimator.selected_cycle_ - 1]


def test_ctrl_c_inside_a_kernel_is_a_keyboard_interrupt(tmp_path, ptb_150, monkeypatch):
    """Numba reports a Ctrl-C that lands in a kernel as a SystemError caused by the
    KeyboardInterrupt (where signals cannot be held back: a kernel in another thread):
    fit raises the KeyboardInterrupt, the checkpoint stays. Other SystemErrors stay
    what they are."""
    shard_pass = em_shards.shard_pass

    def failing(error):
        def kernel(*args, **options):
            if latest_cycle(folder) != 1:  # cycle 1 runs as usual
                return shard_pass(*args, **options)
            try:
                raise error
            except BaseException as err:
                raise SystemError("returned a result with an exception set") from err

        return kernel

    folder = tmp_path / "checkpoints"
    estimator = SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS)
    monkeypatch.setattr(em_shards, "shard_pass", failing(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        estimator.fit(ptb_150)
    assert latest_cycle(folder) == 1
    monkeypatch.setattr(em_shards, "shard_pass", failing(ValueError("bad")))
    with pytest.raises(SystemError) as caught:
        estimator.fit(ptb_150, resume=True)
    assert isinstance(caught.value.__cause__, ValueError)
