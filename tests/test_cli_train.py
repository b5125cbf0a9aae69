"""``spacy-lpcfg train``: --limit, progress bars and --quiet, leftovers of killed runs,
Ctrl-C; and the warning for given tags that the grammar does not know."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.grammar.storage import WRITER
from spacy_lpcfg.progress import progress, quiet

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]

SMALL_TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
]


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _fails_cleanly(result, *needles: str, code: int = 1) -> str:
    """The one-line message of a command that failed without a traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a crash
    assert "Traceback" not in result.output
    message = result.stderr.strip()
    assert "\n" not in message, message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@pytest.fixture
def treebank(tmp_path) -> Path:
    path = tmp_path / "small.mrg"
    path.write_text("\n".join(SMALL_TREEBANK) + "\n")
    return path


def _snapshot(model_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(model_dir)): p.read_bytes() for p in model_dir.rglob("*") if p.is_file()
    }


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --limit ------------------------------------------------------------------------------


def test_train_limit_trains_on_the_first_trees(tmp_path, data_dir, treebank):
    model_dir = tmp_path / "m"
    result = _invoke(
        "train", "ptb_sample", model_dir, "--limit", "25", "--data-dir", data_dir, "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["trees"] == 25
    assert ParsingModel.from_disk(model_dir).training["trees"] == 25
    # a treebank path too, and a limit above the size takes every tree
    path_limit = _invoke("train", treebank, tmp_path / "p", "--limit", "3", "--json")
    assert json.loads(path_limit.stdout)["trees"] == 3
    everything = _invoke("train", treebank, tmp_path / "p", "--limit", "99", "--json")
    assert json.loads(everything.stdout)["trees"] == len(SMALL_TREEBANK)


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_train_rejects_a_limit_below_one_before_any_work(tmp_path, monkeypatch, limit):
    def no_reading(*args):
        raise AssertionError("read the treebank before checking --limit")

    monkeypatch.setattr("spacy_lpcfg.training.read_training_trees", no_reading)
    model_dir = tmp_path / "m"
    result = _invoke("train", "no_such_corpus", model_dir, "--limit", limit)
    message = _fails_cleanly(result, "--limit", f"not {limit}")
    assert message.startswith("error: ") and "corpus" not in message
    assert not model_dir.exists()


def test_train_refuses_a_directory_that_is_not_a_model_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr("spacy_lpcfg.training.read_training_trees", lambda *a: 1 / 0)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("keep me")
    _fails_cleanly(_invoke("train", "ptb_sample", folder), "E126", str(folder))
    assert (folder / "todo.txt").read_text() == "keep me"


# progress bars, --quiet, summary --------------------------------------------------------


def test_train_summary_line_and_quiet(tmp_path, treebank):
    model_dir = tmp_path / "m"
    loud = _invoke("train", treebank, model_dir)
    assert loud.exit_code == 0, loud.output
    # stderr is not a terminal here: no bars, only the summary line
    assert loud.stderr.count("\n") == 1 and "\r" not in loud.stderr
    assert re.fullmatch(
        rf"trained split_merge on 4 trees in [0-9.]+ s: .* -> {re.escape(str(model_dir))}\n",
        loud.stderr,
    ), loud.stderr
    silent = _invoke("train", treebank, model_dir, "--quiet")
    assert silent.exit_code == 0 and silent.stderr == "" and silent.stdout == ""
    as_json = _invoke("train", treebank, model_dir, "-q", "--json")
    assert as_json.stderr == "" and json.loads(as_json.stdout)["trees"] == 4


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bars_show_on_a_terminal_unless_quiet():
    shown = _Terminal()
    for _ in progress(range(3), desc="counting", file=shown):
        pass
    assert "counting:" in shown.getvalue()
    hidden = _Terminal()
    with quiet():
        bar = progress(range(3), desc="counting", file=hidden)
        with quiet(False):  # nested: the inner setting holds inside, then the outer again
            assert not progress(range(3), desc="inner", file=_Terminal()).disable
        assert bar.disable and progress(desc="later", file=hidden).disable
        list(bar)
    assert hidden.getvalue() == ""
    assert not progress(range(3), desc="after", file=_Terminal()).disable  # restored
    pipe = io.StringIO()  # not a terminal: tqdm's own rule
    list(progress(range(3), desc="counting", file=pipe))
    assert pipe.getvalue() == ""


def _run_on_terminal(*args: str, env: dict | None = None) -> tuple[int, str]:
    """Run ``python -m spacy_lpcfg ARGS`` with stderr on a pseudo-terminal (100 columns)."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_lpcfg", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env={**os.environ, **(env or {})},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return process.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def _bar_names(output: str) -> set[str]:
    """The descriptions of the progress bars drawn (``desc: 40%|...``)."""
    return set(re.findall(r"(?:^|[\r\n]|\x1b\[A)([\w /-]+): +\d+%\|", output))


def test_train_draws_a_bar_per_step_on_a_terminal(tmp_path, data_dir):
    args = ["train", "ptb_sample", str(tmp_path / "m"), "--limit", "60", "--data-dir"]
    args += [str(data_dir), "--estimator", "clustering", "--n-states", "2", "--n-models", "2"]
    code, output = _run_on_terminal(*args)
    assert code == 0, output
    expected = {"reading", "transforming", "counting rules", "flattening", "features", "SVD"}
    expected |= {"member 1/2", "member 2/2", "k-means", "counting states", "writing"}
    assert expected <= _bar_names(output), _bar_names(output)
    assert output.rstrip().splitlines()[-1].strip().startswith("trained clustering on 60 trees")
    code, output = _run_on_terminal(*args, "--quiet")
    assert code == 0 and output == ""


# leftovers of killed runs -------------------------------------------------------------


def _leftover(parent: Path, name: str, writer: str | None, age: float = 0.0) -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "cfg.json").write_text("{}")
    if writer is not None:
        (folder / WRITER).write_text(writer)
    if age:
        then = time.time() - age
        for path in (folder / "cfg.json", folder / WRITER, folder):
            if path.exists():
                os.utime(path, (then, then))
    return folder


@pytest.mark.skipif(os.name != "posix", reason="process checks are POSIX-only")
def test_train_clears_stale_leftovers_and_only_those(tmp_path, treebank):
    import socket

    host = socket.gethostname()
    dead, alive = f"{_dead_pid()} {host}\n", f"{os.getpid()} {host}\n"
    model_dir = tmp_path / "m"
    stale = [
        _leftover(tmp_path, ".m.0badc0de.partial", dead),  # its process is gone
        _leftover(tmp_path, ".m.a1b2c3d4.partial", None, age=2 * 3600),  # old, no writer
        _leftover(tmp_path, ".sibling.a1b2c3d4.partial", dead),  # another model's, ours
        _leftover(tmp_path, ".m.c0ffee00.old", f"{os.getpid()} {host}", age=2 * 3600),
    ]
    kept = [
        _leftover(tmp_path, ".m.5e1f5e1f.partial", alive),  # a write in progress
        _leftover(tmp_path, ".m.0f0f0f0f.partial", None),  # no writer, recent
        _leftover(tmp_path, ".other.a1b2c3d4.partial", None, age=2 * 3600),  # not provably ours
        _leftover(tmp_path, ".m.partial", dead),  # not our name pattern
        _leftover(tmp_path, "m.12345678.old", dead),
    ]
    result = _invoke("train", treebank, model_dir)
    assert result.exit_code == 0, result.output
    assert not any(folder.exists() for folder in stale)
    assert all(folder.exists() for folder in kept)
    assert WRITER not in os.listdir(model_dir)
    # a plain mkdir's permissions, not tempfile.mkdtemp's owner-only ones
    probe = tmp_path / "probe"
    probe.mkdir()
    assert model_dir.stat().st_mode == probe.stat().st_mode


@pytest.mark.skipif(os.name != "posix", reason="process checks are POSIX-only")
def test_a_killed_swap_gets_its_previous_model_back(tmp_path, treebank):
    """Killed between its two renames, a write leaves the old model in its .old holder
    and none in place: the next write beside it puts it back."""
    import socket

    model_dir = tmp_path / "m"
    assert _invoke("train", treebank, model_dir, "--limit", "2").exit_code == 0
    before = _snapshot(model_dir)
    holder = _leftover(tmp_path, ".m.d1e2a3d4.old", f"{_dead_pid()} {socket.gethostname()}")
    os.rename(model_dir, holder / "m")
    assert _invoke("train", treebank, tmp_path / "sibling").exit_code == 0
    assert _snapshot(model_dir) == before and not holder.exists()
    assert ParsingModel.from_disk(model_dir).training["trees"] == 2


KILLER = """
import os, pathlib, signal, sys
writes = [0]
write_bytes = pathlib.Path.write_bytes
def killing_write(self, data):
    # the model's own files (not a seed's, set aside in the checkpoint folder first)
    writes[0] += self.parent.name.startswith(".m.") and self.parent.name.endswith(".partial")
    if writes[0] == 3:  # mid-write: some files of the new model are on disk
        os.kill(os.getpid(), signal.SIGKILL)
    return write_bytes(self, data)
pathlib.Path.write_bytes = killing_write
from spacy_lpcfg.console import main
sys.argv = ["spacy-lpcfg", *sys.argv[1:]]
main()
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX-only")
def test_train_killed_mid_write_leaves_the_model_and_the_next_run_works(tmp_path, treebank):
    model_dir = tmp_path / "m"
    assert _invoke("train", treebank, model_dir, "--limit", "2").exit_code == 0
    before = _snapshot(model_dir)
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, "train", str(treebank), str(model_dir)],
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert _snapshot(model_dir) == before  # the previous model is untouched
    (partial,) = [name for name in _leftovers(tmp_path) if name.endswith(".partial")]
    assert partial.startswith(".m.")
    # leftovers trip up neither loading nor parsing with the model beside them
    text = tmp_path / "in.txt"
    text.write_text("the dog runs .\n")
    parsed = _invoke("parse", model_dir, text)
    assert parsed.exit_code == 0 and parsed.stdout.startswith("(TOP")
    # training again into the same directory works and clears the dead run's leftover
    again = _invoke("train", treebank, model_dir, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["trees"] == 4 and _leftovers(tmp_path) == []
    assert ParsingModel.from_disk(model_dir).training["trees"] == 4


# Ctrl-C ---------------------------------------------------------------------------------


def test_ctrl_c_while_fitting_exits_130_and_keeps_the_model(tmp_path, treebank, monkeypatch):
    from spacy_lpcfg.estimators import MLEEstimator

    model_dir = tmp_path / "m"
    assert _invoke("train", treebank, model_dir, "--limit", "2").exit_code == 0
    before = _snapshot(model_dir)

    def interrupted(self, trees, dev_trees=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(MLEEstimator, "fit", interrupted)
    result = _invoke("train", treebank, model_dir, "--estimator", "mle")
    message = _fails_cleanly(result, "interrupted", str(model_dir), code=130)
    assert not message.startswith("error")
    assert _snapshot(model_dir) == before and _leftovers(tmp_path) == []


def test_ctrl_c_while_writing_leaves_no_partial_model(tmp_path, treebank, monkeypatch):
    model_dir = tmp_path / "m"
    assert _invoke("train", treebank, model_dir, "--limit", "2").exit_code == 0
    before = _snapshot(model_dir)
    write_bytes = Path.write_bytes
    writes = []

    def interrupted_write(self, data):
        writes.append(self)
        if len(writes) == 3:
            raise KeyboardInterrupt
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted_write)
    result = _invoke("train", treebank, model_dir, "--estimator", "mle")  # no checkpoints
    _fails_cleanly(result, "interrupted", code=130)
    assert len(writes) == 3  # it was writing
    assert _snapshot(model_dir) == before and _leftovers(tmp_path) == []


SLOW_FIT = """
import sys, time
from spacy_lpcfg.estimators import MLEEstimator
def slow_fit(self, trees, dev_trees=None):
    sys.stderr.write("fitting\\n")
    sys.stderr.flush()
    time.sleep(60)
MLEEstimator.fit = slow_fit
from spacy_lpcfg.console import main
sys.argv = ["spacy-lpcfg", *sys.argv[1:]]
main()
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGINT is POSIX-only")
def test_sigint_exits_130_with_one_line(tmp_path, treebank):
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_FIT, "train", str(treebank), str(tmp_path / "m")]
        + ["--estimator", "mle"],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr.readline() == "fitting\n"
    process.send_signal(signal.SIGINT)
    rest = process.stderr.read()
    assert process.wait(timeout=60) == 130
    assert rest.count("\n") == 1 and rest.startswith("interrupted: ") and "Traceback" not in rest
    assert not (tmp_path / "m").exists() and _leftovers(tmp_path) == []


# unknown tags ---------------------------------------------------------------------------


@pytest.fixture
def small_model(tmp_path, treebank) -> Path:
    model_dir = tmp_path / "model"
    assert _invoke("train", treebank, model_dir, "-q").exit_code == 0
    return model_dir


def test_cli_parse_warns_once_at_the_end_about_unknown_tags(small_model, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("the/DT dog/nn runs/VBZ ./.\n\nthe/DT cat/nn sleeps/XYZ ./.\n")
    result = _invoke("parse", small_model, text, "--tagged")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().split("\n\n")) == 2  # both sentences parsed
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: [LPCFG-W301] 3 token(s)"), lines
    assert "'nn' on 'dog' (2 tokens; did you mean 'NN'?)" in lines[0]
    assert "'XYZ' on 'sleeps' (1 token)" in lines[0]
    text.write_text("the/DT dog/NN runs/VBZ ./.\n")
    known = _invoke("parse", small_model, text, "--tagged")
    assert known.exit_code == 0 and known.stderr == ""


def test_parser_warns_once_and_counts_every_unknown_tag(small_model):
    from spacy_lpcfg.decode.parser import Parser

    parser = Parser(ParsingModel.from_disk(small_model))
    words = ["the", "dog", "runs", "."]
    with pytest.warns(UserWarning, match=r"\[LPCFG-W301\] 1 token\(s\).*'XX' on 'dog'") as caught:
        parser.parse(words, ["DT", "XX", "VBZ", "."])
        parser.parse(words, ["DT", "XX", "YY", "."])
    (warned,) = [w for w in caught if "[LPCFG-W301]" in str(w.message)]
    assert warned.filename == __file__  # points at the caller
    assert parser.unknown_tags == {"XX": 2, "YY": 1}
    assert "3 token(s)" in parser.unknown_tags_warning()
    # tags the grammar has, untagged tokens, and ignored tags do not count
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh = Parser(ParsingModel.from_disk(small_model))
        fresh.parse(words, ["DT", None, "", "."])
        Parser(ParsingModel.from_disk(small_model), use_tags="ignore").parse(
            words, ["XX", "XX", "XX", "XX"]
        )
    assert fresh.unknown_tags_warning() is None


def test_spacy_component_warns_once_about_unknown_tags(small_model):
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("lpcfg_parser", config={"model": str(small_model)})
    docs = [nlp.make_doc("the dog runs ."), nlp.make_doc("the cat sleeps .")]
    for doc in docs:
        for token, tag in zip(doc, ["DT", "QQ", "VBZ", "."]):
            token.tag_ = tag
    with pytest.warns(UserWarning, match=r"\[LPCFG-W301\].*'QQ' on 'dog'") as caught:
        list(nlp.pipe(docs))
    assert len([w for w in caught if "[LPCFG-W301]" in str(w.message)]) == 1
    assert nlp.get_pipe("lpcfg_parser").parser.unknown_tags == {"QQ": 2}


def test_train_split_merge_uses_its_own_transforms_unless_given(tmp_path, data_dir):
    """--estimator split_merge trains over X-bar trees (h = 0, v = 1, no function
    tags) as the Berkeley parser does; transform options given replace them."""
    out = tmp_path / "sm"
    args = ["ptb_sample", "--data-dir", data_dir, "--limit", "60", "--n-cycles", "1", "-q"]
    result = _invoke("train", args[0], out, "--estimator", "split_merge", *args[1:])
    assert result.exit_code == 0, result.output
    model = ParsingModel.from_disk(out)
    assert model.estimator == "split_merge" and model.params["n_cycles"] == 1
    spec = model.transform
    assert (spec.h_markov, spec.v_markov, spec.keep_functions) == (0, 1, False)
    assert model.grammar.max_states == 2  # one cycle: every symbol split in two at most
    result = _invoke("train", args[0], out, "--estimator", "split_merge", "--functions", *args[1:])
    assert result.exit_code == 0, result.output
    assert ParsingModel.from_disk(out).transform.keep_functions


def test_train_inherit_over_x_bar_trees(tmp_path, data_dir):
    out = tmp_path / "inherit"
    args = ["--data-dir", data_dir, "--limit", "60", "--n-states", "4", "-q"]
    result = _invoke("train", "ptb_sample", out, "--estimator", "inherit", *args)
    assert result.exit_code == 0, result.output
    model = ParsingModel.from_disk(out)
    assert model.estimator == "inherit" and model.params["n_states"] == 4
    assert (model.transform.h_markov, model.transform.keep_functions) == (0, False)
    assert model.grammar.max_states == 4
    # annealed: 2 values, then 4
    history = model.training["history"]
    assert [len(phase["values"]) for phase in history["log_likelihoods"]] == [51, 51]
    assert [states["NP"] for states in history["n_states"]] == [2, 4]


def test_train_clone_some_is_split_merge_splitting_some_symbols(tmp_path, data_dir):
    out = tmp_path / "cs"
    args = ["--data-dir", data_dir, "--limit", "60", "--n-cycles", "2", "-q"]
    result = _invoke("train", "ptb_sample", out, "--estimator", "clone_some", *args)
    assert result.exit_code == 0, result.output
    model = ParsingModel.from_disk(out)
    assert model.estimator == "split_merge"
    assert (model.params["split"], model.params["merge_fraction"]) == ("some", 0.0)
    assert (model.transform.h_markov, model.transform.keep_functions) == (0, False)
    states = model.grammar.n_states[model.grammar.n_states > 1]
    assert set(states.tolist()) == {2, 4}  # all split once, some twice, none merged
