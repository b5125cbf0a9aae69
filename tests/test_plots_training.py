"""The figure of a split-merge training (``plots.plot_training``): each panel draws the
history's numbers, the history is read from a model or a checkpoint folder, and
``spacy-lpcfg plot training``."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.estimators.split_merge import SplitMergeEstimator
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.plots import (
    check_history,
    plot_training,
    read_training_history,
    select_training_symbols,
    training_figure,
)
from spacy_lpcfg.training import checkpoint_dir
from spacy_lpcfg.trees import Tree

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran) (PP (IN to) (NP (DT the) (NN park)))) (. .)))",
    "(TOP (S (NP (PRP It)) (VP (VBD was) (ADJP (JJ big))) (. .)))",
    "(TOP (S (NP (DT the) (NNS cats)) (VP (VBD sat) (PP (IN on) (NP (DT a) (NN mat)))) (. .)))",
]
TREES = [Tree.from_string(text) for text in TREEBANK]
SETTINGS = {"em_iterations": 3, "merge_em_iterations": 2, "random_state": 0}
DEV_SCORES = [70.0, 90.0, 80.0]

runner = CliRunner()


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def scores_by_cycle(scores):
    """A dev scorer that gives the n-th model the n-th score."""
    calls = iter(scores)
    return lambda model, trees: next(calls)


@pytest.fixture(scope="module")
def on_dev():
    """Three cycles, the second kept on dev."""
    return SplitMergeEstimator(n_cycles=3, **SETTINGS).fit(
        TREES, TREES[:2], dev_scorer=scores_by_cycle(DEV_SCORES)
    )


@pytest.fixture(scope="module")
def without_dev():
    return SplitMergeEstimator(n_cycles=2, **SETTINGS).fit(TREES)


def _lines(axes, prefix):
    return [line for line in axes.get_lines() if (line.get_gid() or "").startswith(prefix)]


def test_log_likelihood_panel_draws_every_phase_in_order(on_dev):
    pytest.importorskip("matplotlib")
    phases = on_dev.history_["log_likelihoods"]
    assert [(p["cycle"], p["phase"]) for p in phases] == [
        (cycle, phase) for cycle in (1, 2, 3) for phase in ("split", "merge")
    ]
    axes = training_figure(on_dev.history_).axes[0]
    lines = _lines(axes, "log_likelihood")
    assert [line.get_gid() for line in lines] == [
        f"log_likelihood {p['cycle']} {p['phase']}" for p in phases
    ]
    values = [value for phase in phases for value in phase["values"]]
    assert len(values) == 3 * (4 + 3)  # each phase: its grammar, then each M-step
    np.testing.assert_array_equal(np.concatenate([line.get_ydata() for line in lines]), values)
    # one x axis: the phases follow each other, an iteration apart
    np.testing.assert_array_equal(
        np.concatenate([line.get_xdata() for line in lines]), np.arange(len(values))
    )
    cycle_labels = [(text.get_position()[0], text.get_text().strip()) for text in axes.texts]
    assert cycle_labels == [(0, "cycle 1"), (7, "cycle 2"), (14, "cycle 3")]
    # a rule before each phase but the first: solid for a cycle, dotted for its merge phase
    rules = [
        (line.get_xdata()[0], line.get_linestyle())
        for line in axes.get_lines()
        if line.get_gid() is None and len(set(line.get_xdata())) == 1
    ]
    assert rules == [(3.5, ":"), (6.5, "-"), (10.5, ":"), (13.5, "-"), (17.5, ":")]


def test_dev_panel_marks_the_cycle_kept(on_dev):
    pytest.importorskip("matplotlib")
    assert on_dev.history_["dev_f1"] == DEV_SCORES and on_dev.selected_cycle_ == 2
    axes = training_figure(on_dev.history_).axes[1]
    (line,) = _lines(axes, "dev_f1")
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3])
    np.testing.assert_array_equal(line.get_ydata(), DEV_SCORES)
    (kept,) = _lines(axes, "best_cycle")
    assert (list(kept.get_xdata()), list(kept.get_ydata())) == ([2], [90.0])
    assert "kept: cycle 2" in [text.get_text() for text in axes.get_legend().get_texts()]


def test_without_dev_scores_the_panel_says_so(without_dev):
    pytest.importorskip("matplotlib")
    assert without_dev.history_["dev_f1"] == [] and without_dev.history_["best_cycle"] is None
    axes = training_figure(without_dev.history_).axes[1]
    assert not axes.get_lines() and not axes.axison
    (text,) = axes.texts
    assert text.get_text().startswith("No dev F1")


def test_states_panel_is_the_states_of_each_cycle(without_dev):
    """The last column is the fitted grammar's states (the last cycle is kept without dev)."""
    pytest.importorskip("matplotlib")
    history = without_dev.history_
    names = select_training_symbols(history, 100)
    grammar = without_dev.grammar_
    final = {name: int(grammar.n_states[grammar.symbols.index(name)]) for name in names}
    assert names == sorted(names, key=lambda name: -final[name])  # most states first
    assert set(names) == {name for states in history["n_states"] for name in states}
    axes = training_figure(history, symbols=100).axes[2]
    (image,) = axes.get_images()
    table = np.exp2(np.asarray(image.get_array()))
    assert table.shape == (len(names), 3)  # cycles 0, 1, 2
    np.testing.assert_allclose(table[:, 0], 1)
    np.testing.assert_allclose(table[:, -1], [final[name] for name in names])
    np.testing.assert_allclose(table[:, 1], [history["n_states"][0].get(n, 1) for n in names])
    assert [label.get_text() for label in axes.get_yticklabels()] == names
    cells = [int(text.get_text()) for text in axes.texts]
    np.testing.assert_allclose(cells, table.ravel())
    totals = [int(label.get_text().split("\n")[1]) for label in axes.get_xticklabels()]
    assert totals == [len(names), *(int(table[:, i].sum()) for i in (1, 2))]
    assert totals[-1] == sum(final.values())


def test_select_training_symbols(without_dev):
    history = without_dev.history_
    ranked = select_training_symbols(history, 100)
    assert len(ranked) >= 2
    assert select_training_symbols(history, 2) == ranked[:2]
    chosen = [ranked[-1], ranked[0]]  # names, in the order given
    assert select_training_symbols(history, chosen) == chosen
    with pytest.raises(ValueError, match="XX.*most split are: " + re.escape(ranked[0])):
        select_training_symbols(history, [ranked[0], "XX"])
    with pytest.raises(ValueError, match=">= 1"):
        select_training_symbols(history, 0)
    # symbols never split (one state after every cycle) have no row
    names = without_dev.grammar_.symbols.names
    unsplit = [name for name in names if name not in ranked and name != "TOP"]
    assert unsplit  # guards the test: the tiny treebank leaves some symbols unsplit
    match = "No symbol.*TOP, " + re.escape(unsplit[0]) + " among those that training split"
    with pytest.raises(ValueError, match=match):
        select_training_symbols(history, ["TOP", unsplit[0]])


def test_plot_training_writes_a_png_and_leaves_pyplot_alone(on_dev, tmp_path):
    pytest.importorskip("matplotlib")
    imported = "matplotlib.pyplot" in sys.modules
    written = plot_training(on_dev.history_, tmp_path / "figs" / "t.png", title="run 1")
    assert written == tmp_path / "figs" / "t.png"
    assert written.read_bytes().startswith(PNG_MAGIC)
    assert ("matplotlib.pyplot" in sys.modules) == imported
    assert training_figure(on_dev.history_, title="run 1").texts[0].get_text() == "run 1"


def test_history_read_from_a_model_and_from_checkpoints(on_dev, tmp_path):
    on_dev.model_.to_disk(tmp_path / "model")
    assert ParsingModel.from_disk(tmp_path / "model").training["history"] == on_dev.history_
    assert read_training_history(tmp_path / "model") == on_dev.history_
    folder = tmp_path / "checkpoints"
    fitted = SplitMergeEstimator(n_cycles=1, checkpoint_dir=folder, **SETTINGS).fit(TREES)
    assert (folder / "checkpoint.json").is_file()
    assert read_training_history(folder) == fitted.history_
    # the first cycle of a longer run (the same seed): what a plot during that run draws
    assert fitted.history_["n_states"] == on_dev.history_["n_states"][:1]
    assert fitted.history_["log_likelihoods"] == on_dev.history_["log_likelihoods"][:2]


def test_no_history_errors_name_the_path(tmp_path):
    mle = tmp_path / "mle"
    MLEEstimator(open_class_threshold=1).fit(TREES).model_.to_disk(mle)
    with pytest.raises(ValueError, match=r"\[LPCFG-E501\] .*mle has no .*'mle' estimator"):
        read_training_history(mle)
    with pytest.raises(ValueError, match=r"E501.*neither a model's cfg.json nor"):
        read_training_history(tmp_path)
    with pytest.raises(ValueError, match=r"E501.*nowhere has no.*no such directory"):
        read_training_history(tmp_path / "nowhere")
    product_run = tmp_path / "product_run"
    for seed in ("seed0", "seed1"):
        (product_run / seed).mkdir(parents=True)
    with pytest.raises(
        ValueError, match=r"E501.*a product's seeds: give one of \['seed0', 'seed1'\]"
    ):
        read_training_history(product_run)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "checkpoint.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"E502.*checkpoint.json"):
        read_training_history(broken)
    zero = tmp_path / "zero"
    SplitMergeEstimator(n_cycles=0).fit(TREES).model_.to_disk(zero)
    with pytest.raises(ValueError, match=r"E503.*zero\) has no complete cycle"):
        read_training_history(zero)


def _history(**changes):
    history = {
        "log_likelihoods": [{"cycle": 1, "phase": "split", "values": [-3.0, -2.0]}],
        "dev_f1": [],
        "n_states": [{"NP": 2}],
        "best_cycle": None,
    }
    return {**history, **changes}


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"dev_f1": [1.0, 2.0]}, "'dev_f1' must list a score for each of the 1 cycles"),
        ({"dev_f1": ["x"]}, "'dev_f1' must list numbers"),
        ({"dev_f1": [1.0], "best_cycle": 2}, "'best_cycle' 2"),
        ({"n_states": [{"NP": 0}]}, "'n_states'"),
        ({"log_likelihoods": [{"cycle": 1, "phase": "smooth", "values": []}]}, "split or merge"),
    ],
)
def test_malformed_histories(changes, message):
    assert check_history(_history()) == _history()
    with pytest.raises(ValueError, match=r"E502.*\(as given\).*" + message):
        check_history(_history(**changes))


def test_a_history_needs_its_keys_and_a_cycle():
    with pytest.raises(ValueError, match=r"E502.*no dev_f1"):
        check_history({"log_likelihoods": [], "n_states": []})
    with pytest.raises(ValueError, match=r"E503.*\(x\) has no complete cycle"):
        check_history(_history(n_states=[], log_likelihoods=[]), "x")


def test_cli_plot_training(on_dev, tmp_path):
    pytest.importorskip("matplotlib")
    model = tmp_path / "model"
    on_dev.model_.to_disk(model)
    output = tmp_path / "out" / "training.png"
    result = _invoke("plot", "training", model, output, "--symbols", "NP,VP")
    assert result.exit_code == 0, result.output
    assert output.read_bytes().startswith(PNG_MAGIC) and result.stdout == ""
    assert f"training history of 3 cycles ({model}) -> {output}" in result.stderr
    unknown = _invoke("plot", "training", model, tmp_path / "x.png", "--symbols", "XX")
    assert unknown.exit_code == 1 and "XX" in unknown.stderr
    assert not (tmp_path / "x.png").exists()


def test_cli_plot_training_of_an_inherit_model(tmp_path):
    """INHERIT records its stages (2 then 4 values) as split-merge records cycles."""
    pytest.importorskip("matplotlib")
    from spacy_lpcfg.estimators import InheritEstimator

    model = tmp_path / "inherit"
    estimator = InheritEstimator(n_states=4, em_iterations=2, open_class_threshold=1)
    estimator.fit(TREES).model_.to_disk(model)
    history = read_training_history(model)
    assert [phase["values"] for phase in history["log_likelihoods"]] == [
        estimator.log_likelihoods_[:3],
        estimator.log_likelihoods_[3:],
    ]
    assert [states["NP"] for states in history["n_states"]] == [2, 4]
    result = _invoke("plot", "training", model, tmp_path / "i.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "i.png").read_bytes().startswith(PNG_MAGIC)
    assert f"training history of 2 cycles ({model})" in result.stderr


def test_cli_plot_training_output_as_an_option_or_by_default(on_dev, tmp_path):
    """Like ``plot spectrum``: --output, else MODEL_DIR-training.png beside it; not both."""
    pytest.importorskip("matplotlib")
    model = tmp_path / "model"
    on_dev.model_.to_disk(model)
    result = _invoke("plot", "training", model, "--output", tmp_path / "o.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o.png").read_bytes().startswith(PNG_MAGIC)
    result = _invoke("plot", "training", model)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "model-training.png").read_bytes().startswith(PNG_MAGIC)
    both = _invoke("plot", "training", model, tmp_path / "a.png", "--output", tmp_path / "b.png")
    assert both.exit_code == 2 and "once" in both.stderr
    assert not (tmp_path / "a.png").exists() and not (tmp_path / "b.png").exists()


def test_cli_plot_training_of_a_run_in_progress(tmp_path):
    """A MODEL_DIR that train has not written yet: the checkpoints beside it."""
    pytest.importorskip("matplotlib")
    model = tmp_path / "model"
    folder = checkpoint_dir(model)
    SplitMergeEstimator(n_cycles=2, checkpoint_dir=folder, **SETTINGS).fit(TREES)
    record = json.loads((folder / "checkpoint.json").read_text())
    assert len(record["history"]["n_states"]) == 2
    result = _invoke("plot", "training", model, tmp_path / "t.png")
    assert result.exit_code == 0, result.output
    assert f"training history of 2 cycles ({folder})" in result.stderr
    assert (tmp_path / "t.png").read_bytes().startswith(PNG_MAGIC)


def test_cli_plot_training_errors(tmp_path):
    mle = tmp_path / "mle"
    MLEEstimator(open_class_threshold=1).fit(TREES).model_.to_disk(mle)
    result = _invoke("plot", "training", mle, tmp_path / "t.png")
    assert result.exit_code == 1 and "[LPCFG-E501]" in result.stderr and str(mle) in result.stderr
    assert "'mle' estimator" in result.stderr and not (tmp_path / "t.png").exists()
    missing = _invoke("plot", "training", tmp_path / "nowhere", tmp_path / "t.png")
    assert missing.exit_code == 1 and "no such directory" in missing.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cfg.json").write_text("{not json")
    corrupt = _invoke("plot", "training", broken, tmp_path / "t.png")
    assert corrupt.exit_code == 1 and "cfg.json" in corrupt.stderr
