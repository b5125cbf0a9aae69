"""Nothing lost, nothing unbounded: outputs that would destroy an input are refused,
interruptions and write errors end in one line, every numeric option has a ceiling.

Each test reproduces a fault an adversarial run found (exit 0 with an input
overwritten, tracebacks, MemoryError) and checks the command now refuses or
reports it in one line, with its inputs intact.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.defaults import CEILINGS

runner = CliRunner()
TREES = (
    "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)) )\n"
    "( (S (NP-SBJ (PRP It)) (VP (VBD slept)) (. .)) )\n"
)
SENTENCE = "The cat sat on the mat ."


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_error(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    return errors[0]


@pytest.fixture(scope="module")
def work(tmp_path_factory, data_dir) -> Path:
    """A folder with a small treebank file, a tiny MLE model, a PTB-sample MLE model
    and a spectral model (for plot spectrum)."""
    folder = tmp_path_factory.mktemp("safety")
    (folder / "corpus.mrg").write_text(TREES, encoding="utf-8")
    sample = (data_dir / "ptb_sample" / "wsj_0001.mrg").read_text(encoding="utf-8")
    (folder / "sample.mrg").write_text(sample, encoding="utf-8")
    for name, options in (("mle", ["--estimator", "mle"]), ("spectral", ["--estimator",
                          "spectral", "--n-states", "2"])):  # fmt: skip
        result = _invoke("train", folder / "sample.mrg", folder / name, *options)
        assert result.exit_code == 0, result.output
    result = _invoke(
        "train", "ptb_sample", folder / "ptb", "--estimator", "mle", "--data-dir", data_dir
    )
    assert result.exit_code == 0, result.output
    return folder


def _snapshot(*paths: Path) -> dict[Path, bytes]:
    files = [p for path in paths for p in ([path] if path.is_file() else path.rglob("*"))]
    return {file: file.read_bytes() for file in files if file.is_file()}


# 1. An output that is an input, or lies in an input model directory -----------------


@pytest.mark.parametrize(
    "args",
    [
        ["test", "{mle}", "{corpus}", "--output", "{corpus}"],
        ["test", "{mle}", "{corpus}", "--output", "{mle}/lexicon.json"],
        ["test", "{mle}", "{corpus}", "--output", "{mle}/new.txt"],
        ["render", "{corpus}", "-o", "{corpus}"],
        ["render", "{sentences}", "--model", "{mle}", "-o", "{mle}/grammar.npz"],
        ["render", "{sentences}", "--model", "{mle}", "-o", "{sentences}"],
        ["plot", "spectrum", "{spectral}", "--output", "{spectral}/cfg.json"],
        ["plot", "training", "{mle}", "--output", "{mle}/cfg.json"],
        ["combine", "{mle}", "{spectral}", "{mle}"],
        ["train", "{inside}/corpus.mrg", "{inside}", "--estimator", "mle"],
        ["convert", "{treebank_dir}", "{treebank_dir}"],
        ["optimize", "{corpus}", "{work}", "--dev", "{work}/trace.jsonl"],
    ],
)
def test_an_output_that_would_destroy_an_input_is_refused(work, tmp_path, args):
    (tmp_path / "sentences.txt").write_text(SENTENCE + "\n", encoding="utf-8")
    inside = tmp_path / "model_with_corpus"
    inside.mkdir()
    (inside / "corpus.mrg").write_text(TREES, encoding="utf-8")
    treebank_dir = tmp_path / "treebank"
    treebank_dir.mkdir()
    (treebank_dir / "treebank.mrg").write_text(TREES, encoding="utf-8")
    (work / "trace.jsonl").write_text("{}\n", encoding="utf-8")
    names = {
        "mle": work / "mle",
        "spectral": work / "spectral",
        "corpus": work / "corpus.mrg",
        "sentences": tmp_path / "sentences.txt",
        "inside": inside,
        "treebank_dir": treebank_dir,
        "work": work,
    }
    before = _snapshot(work, tmp_path)
    error = _one_error(_invoke(*[arg.format(**names) for arg in args]))
    assert "input" in error
    assert _snapshot(work, tmp_path) == before  # nothing written, nothing lost


@pytest.mark.parametrize("folder", [".default.checkpoints", ".finalists"])
def test_optimize_refuses_dev_trees_where_its_scratch_folders_go(work, tmp_path, folder):
    from spacy_lpcfg.search.optimize import DEFAULT_CHECKPOINTS, FINALISTS

    assert folder in (DEFAULT_CHECKPOINTS, FINALISTS)
    dev = tmp_path / "out" / folder / "dev.mrg"
    dev.parent.mkdir(parents=True)
    dev.write_text(TREES, encoding="utf-8")
    error = _one_error(_invoke("optimize", work / "corpus.mrg", tmp_path / "out", "--dev", dev))
    assert "input" in error and folder in error
    assert dev.read_text(encoding="utf-8") == TREES


def test_an_output_linked_to_an_input_is_refused(work, tmp_path):
    link = tmp_path / "parses.txt"
    link.symlink_to(work / "corpus.mrg")
    _one_error(_invoke("test", work / "mle", work / "corpus.mrg", "--output", link))
    assert (work / "corpus.mrg").read_text(encoding="utf-8") == TREES


def test_plot_spectrum_writes_beside_the_model_by_default(work):
    pytest.importorskip("matplotlib")
    result = _invoke("plot", "spectrum", work / "spectral")
    assert result.exit_code == 0, result.output
    assert (work / "spectral-spectrum.png").is_file()
    assert not (work / "spectral" / "spectrum.png").exists()


def test_convert_into_the_folder_of_its_input_file_still_works(work, tmp_path):
    corpus = tmp_path / "corpus.mrg"
    corpus.write_text(TREES, encoding="utf-8")
    result = _invoke("convert", corpus, tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "corpus.spacy").is_file() and corpus.read_text() == TREES


def test_parse_refuses_to_append_to_its_own_input(work, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text(SENTENCE + "\n", encoding="utf-8")
    with text.open("a") as out:
        run = subprocess.run(
            [sys.executable, "-m", "spacy_lpcfg", "parse", str(work / "mle"), str(text)],
            stdout=out, stderr=subprocess.PIPE, text=True, timeout=300,
        )  # fmt: skip
    assert run.returncode == 1 and run.stderr.startswith("error: standard output is the input")
    assert text.read_text(encoding="utf-8") == SENTENCE + "\n"


# 2. Ctrl-C and SIGTERM: one line and 130 / 143, inside numba kernels too --------------


def _interrupt_parse(work: Path, tmp_path: Path, sig: int, command: list[str]) -> tuple:
    """Start a parsing command, wait until trees come out (the parser is then in its
    kernels most of the time), send ``sig``; RETURNS (exit code, stderr)."""
    text = tmp_path / "many.txt"
    text.write_text((SENTENCE + " and the dog ran .\n") * 5000, encoding="utf-8")
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "spacy_lpcfg", *command, str(text)],
            stdout=stdout, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while out.stat().st_size < 2000 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read()
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")])  # fmt: skip
def test_parse_interrupted_mid_kernel_says_so_in_one_line(work, tmp_path, sig, code, word):
    returncode, stderr = _interrupt_parse(work, tmp_path, sig, ["parse", str(work / "ptb")])
    assert returncode == code, stderr
    assert stderr.startswith(word) and len(stderr.splitlines()) == 1, stderr
    assert "SystemError" not in stderr and "Exception ignored" not in stderr


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: parse uses one process")
@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")])  # fmt: skip
def test_parse_in_processes_interrupted_says_so_in_one_line(work, tmp_path, sig, code, word):
    """Ctrl-C reaches the whole process group (the workers ignore it), SIGTERM only the
    command: either way one line, and no worker is left running."""
    text = tmp_path / "many.txt"
    text.write_text((SENTENCE + " and the dog ran .\n") * 5000, encoding="utf-8")
    out = tmp_path / "out.txt"
    command = ["parse", str(work / "ptb"), str(text), "--n-process", "2"]
    with out.open("w") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "spacy_lpcfg", *command],
            stdout=stdout, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while out.stat().st_size < 2000 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read()
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        assert len(children) >= 2, children
        if sig == signal.SIGINT:
            os.killpg(process.pid, sig)  # as a terminal's Ctrl-C
        else:
            process.send_signal(sig)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stderr
    assert stderr.startswith(word) and len(stderr.splitlines()) == 1, stderr
    deadline = time.monotonic() + 10
    while (
        any(Path(f"/proc/{child}").exists() for child in children) and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert not [child for child in children if Path(f"/proc/{child}").exists()]


def test_kernel_calls_hold_ctrl_c_back_to_the_end_of_the_block():
    from spacy_lpcfg.interrupts import kernel_calls

    reached = []
    with pytest.raises(KeyboardInterrupt), kernel_calls():
        signal.raise_signal(signal.SIGINT)
        reached.append("after the signal")  # a kernel would have gone on too
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_kernel_calls_deliver_sigterm_as_terminated():
    from spacy_lpcfg.interrupts import Terminated, exit_status, handle_sigterm, kernel_calls

    previous = signal.getsignal(signal.SIGTERM)
    try:
        handle_sigterm()
        # nested: one delivery, at the outer end
        with pytest.raises(Terminated) as caught, kernel_calls(), kernel_calls():
            signal.raise_signal(signal.SIGTERM)
        assert exit_status(caught.value) == 143
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_kernel_calls_unwrap_numbas_system_error():
    from spacy_lpcfg.interrupts import kernel_calls

    def kernel():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") from err

    with pytest.raises(KeyboardInterrupt), kernel_calls():
        kernel()


# 3. Write errors: one line ----------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["parse", "{mle}", "{sentences}"],
        ["stats", "{corpus}"],
        ["stats", "{corpus}", "--json"],
        ["evaluate", "{corpus}", "{corpus}"],
        ["render", "{corpus}", "-o", "/dev/full"],
        ["render", "{corpus}", "-o", "-"],
        ["plot", "spectrum", "{spectral}", "--output", "/dev/full"],
    ],
)
def test_a_full_disk_gives_one_error_line(work, tmp_path, args):
    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    (tmp_path / "sentences.txt").write_text(SENTENCE + "\n", encoding="utf-8")
    names = {
        "mle": work / "mle",
        "spectral": work / "spectral",
        "corpus": work / "corpus.mrg",
        "sentences": tmp_path / "sentences.txt",
    }
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "spacy_lpcfg", *[a.format(**names) for a in args]],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
        )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr
    assert run.stderr.startswith("error: ") and "No space left" in run.stderr, run.stderr
    assert len(run.stderr.splitlines()) == 1, run.stderr


def test_convert_leaves_nothing_partial_when_the_disk_is_full(work, tmp_path, monkeypatch):
    from spacy.tokens import DocBin

    def full_disk(self, path):
        Path(path).write_bytes(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(DocBin, "to_disk", full_disk)
    out = tmp_path / "out"
    error = _one_error(_invoke("convert", work / "corpus.mrg", out))
    assert "No space left" in error
    assert list(out.iterdir()) == []


# 4, 5. Ceilings ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,option",
    [
        (["train", "{corpus}", "{out}", "--limit", "100000000000"], "--limit"),
        (["train", "{corpus}", "{out}", "--estimator", "split_merge", "--n-cycles", "1000"],
         "--n-cycles"),
        (["train", "{corpus}", "{out}", "--estimator", "spectral", "--n-states", "100000"],
         "--n-states"),
        (["train", "{corpus}", "{out}", "--estimator", "clustering", "--n-models", "10000"],
         "--n-models"),
        (["train", "{corpus}", "{out}", "--h-markov", "-5"], "--h-markov"),
        (["train", "{corpus}", "{out}", "--v-markov", "1000"], "--v-markov"),
        (["train", "{corpus}", "{out}", "--random-state", "-1"], "--random-state"),
        (["optimize", "{corpus}", "{out}", "--dev", "{corpus}", "--limit", "100000000000"],
         "--limit"),
        (["optimize", "{corpus}", "{out}", "--dev", "{corpus}", "--dev-limit", "0"],
         "--dev-limit"),
        (["optimize", "{corpus}", "{out}", "--dev", "{corpus}", "--search-limit", "0"],
         "--search-limit"),
        (["optimize", "{corpus}", "{out}", "--dev", "{corpus}", "--max-states", "10000000000"],
         "max_states"),
        (["optimize", "{corpus}", "{out}", "--dev", "{corpus}", "--n-models", "100000"],
         "n_models"),
        (["parse", "{mle}", "--max-length", "100000000"], "max_length"),
        (["evaluate", "{corpus}", "{corpus}", "--unlabeled", "--max-length", "-1"],
         "--max-length"),
        (["evaluate", "{corpus}", "{corpus}", "--max-length", "10"], "--max-length"),
        (["render", "{corpus}", "-o", "{out}.html", "--limit", "0"], "--limit"),
    ],
)  # fmt: skip
def test_numeric_options_beyond_their_ceiling_are_refused_up_front(work, tmp_path, args, option):
    names = {"corpus": work / "corpus.mrg", "out": tmp_path / "out", "mle": work / "mle"}
    result = runner.invoke(app, [a.format(**names) for a in args], input=SENTENCE + "\n")
    assert result.exit_code in (1, 2), result.output
    assert option in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_the_ceilings_are_the_documented_ones():
    assert CEILINGS.n_cycles == 6 and CEILINGS.n_states == 64
    assert CEILINGS.trees >= 10**6  # the largest treebanks fit


def test_n_process_is_capped_at_the_cpus_and_the_lines(work, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text(f"{SENTENCE}\n{SENTENCE}\n", encoding="utf-8")
    result = _invoke("parse", work / "mle", text, "--n-process", "100000")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 2
    workers = min(2, len(os.sched_getaffinity(0)))
    assert f"note: parsing in {workers} processes, not 100000" in result.stderr


def test_unknown_tags_in_processes_warn_once(work, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The/DT cat/XYZ sat/VBD ./.\n" * 70, encoding="utf-8")
    result = _invoke("parse", work / "mle", text, "--tagged", "--n-process", "2")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("W301") == 1 and "UserWarning" not in result.stderr


def test_resume_with_an_undecodable_trace_names_it(work, tmp_path):
    out = tmp_path / "search"
    out.mkdir()
    (out / "trace.jsonl").write_bytes(b"\xff\xfe not a trace\n")
    result = _invoke(
        "optimize", work / "corpus.mrg", out, "--dev", work / "corpus.mrg", "--resume",
        "--max-time", "5", "-q",
    )  # fmt: skip
    assert "E601" in _one_error(result)


NLP_LOOP = """
import sys, spacy
nlp = spacy.blank("en")
nlp.add_pipe("lpcfg_parser", config={"model": sys.argv[1]})
sys.stdout.write("ready\\n"); sys.stdout.flush()
caught = 0
while caught < 10:
    try:
        nlp("The cat sat on the mat and the dog ran after the ball in the garden .")
    except KeyboardInterrupt:
        caught += 1
        sys.stdout.write("KeyboardInterrupt\\n"); sys.stdout.flush()
"""


def _next_line(stream, seconds: float) -> bytes | None:
    """The child's next line (unbuffered pipe), or None when none comes in time."""
    ready, _, _ = select.select([stream], [], [], seconds)
    return stream.readline() if ready else None


def test_ctrl_c_in_nlp_is_a_keyboard_interrupt(work):
    """In a user's program: Ctrl-C inside the component's kernels arrives as the
    KeyboardInterrupt it is, not as numba's SystemError (ten times, at random moments,
    parsing most of the time inside a kernel). Every wait is bounded: a SIGINT that
    Python runs where it cannot raise (a callback of spaCy's compiled code prints
    "Exception ignored" and goes on) is sent once more, not waited for forever."""
    process = subprocess.Popen(
        [sys.executable, "-c", NLP_LOOP, str(work / "ptb")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
    )  # fmt: skip
    try:
        assert _next_line(process.stdout, 120) == b"ready\n"
        time.sleep(1)
        lines = []
        for _ in range(10):
            time.sleep(random.uniform(0.05, 0.3))
            process.send_signal(signal.SIGINT)
            line = _next_line(process.stdout, 30)
            if line is None:  # swallowed once; a second one must come through
                process.send_signal(signal.SIGINT)
                line = _next_line(process.stdout, 30)
            lines.append(line)
            if line != b"KeyboardInterrupt\n":
                break
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert lines == [b"KeyboardInterrupt\n"] * 10, lines
    assert process.returncode == 0 and b"SystemError" not in err, err[-1000:]


# One CLI style: --json and --quiet where a command has a summary -----------------------


def test_json_and_quiet_on_convert_render_combine_and_parse(work, tmp_path):
    result = _invoke("convert", work / "corpus.mrg", tmp_path / "spacy", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["outputs"]["corpus"]["trees"] == 2
    quiet = _invoke("convert", work / "corpus.mrg", tmp_path / "spacy2", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""
    page = _invoke("render", work / "corpus.mrg", "-o", tmp_path / "p.html", "--json")
    assert json.loads(page.stdout) == {"trees": 2, "output": str(tmp_path / "p.html")}
    both = _invoke("render", work / "corpus.mrg", "-o", "-", "--json")
    assert both.exit_code == 2 and "--json" in both.stderr
    joined = _invoke("combine", work / "mle", work / "mle", tmp_path / "c", "--json")
    assert joined.exit_code == 0 and json.loads(joined.stdout)["output"] == str(tmp_path / "c")
    parsed = runner.invoke(app, ["parse", str(work / "mle"), "--json"], input=f"{SENTENCE}\n\n")
    lines = [json.loads(line) for line in parsed.stdout.splitlines()]
    assert lines[0]["tree"].startswith("(TOP ") and lines[1] == {"tree": None}


def test_parse_kbest_writes_k_scored_trees_then_an_empty_line(work, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text(f"{SENTENCE}\nA dog ran .\n", encoding="utf-8")
    result = _invoke("parse", work / "ptb", text, "--kbest", "3")
    assert result.exit_code == 0, result.output
    blocks = result.stdout.split("\n\n")
    assert len([b for b in blocks if b.strip()]) == 2
    for block in filter(str.strip, blocks):
        scores = [float(line.split("\t")[0]) for line in block.strip().splitlines()]
        assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    assert _invoke("parse", work / "ptb", text, "--kbest", "0").exit_code == 2
    unsupported = _invoke("parse", work / "ptb", text, "--kbest", "2", "--decoder", "mbr")
    assert unsupported.exit_code == 2 and "E311" in unsupported.stderr


def test_once_an_interruption_is_reported_further_signals_are_ignored():
    """The executable ignores SIGINT and SIGTERM once it has said "interrupted" and is
    exiting: a second signal cannot turn exit 130 into a kill by the default action."""
    code = (
        "import os, signal; from spacy_lpcfg.interrupts import ignore_further_signals\n"
        "ignore_further_signals()\n"
        "os.kill(os.getpid(), signal.SIGINT); os.kill(os.getpid(), signal.SIGTERM)\n"
        "print('still here')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "still here\n"), done.stderr
