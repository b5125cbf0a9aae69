"""The command-line contract of DESIGN.md section 15 (keys, exit codes, stdout hygiene)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_lpcfg.cli import app
from spacy_lpcfg.trees import Tree

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


@pytest.mark.parametrize("command", ["parse", "test", "render", "combine"])
def test_cli_decoder_help_reads_the_registry(command):
    """--decoder's help names every registered decoder its command can use."""
    from spacy_lpcfg.decode.registry import decoder_names

    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    kinds = ("members",) if command == "combine" else ()
    assert all(name in result.stdout for name in decoder_names(*kinds))


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


@pytest.fixture(scope="module")
def mle_model_dir(tmp_path_factory, data_dir):
    model_dir = tmp_path_factory.mktemp("models") / "mle"
    result = _invoke(
        "train", "ptb_sample", model_dir, "--estimator", "mle", "--data-dir", data_dir, "--json"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["trees"] == 3396 and summary["symbols"] > 1000
    assert (model_dir / "cfg.json").exists()
    return model_dir


def _fails_cleanly(result, *needles: str, code: int = 1) -> str:
    """The one-line ``error: ...`` message of a command that failed without a traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a crash
    assert "Traceback" not in result.output
    message = result.stderr.strip()
    assert message.startswith("error: ") and "\n" not in message, message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


def test_cli_parse_plain_tagged_and_empty_lines(mle_model_dir, tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("The dog barks ( loudly ) .\n\nPierre/NNP Vinken/NNP joined/VBD ./.\nHi\n")
    result = _invoke("parse", mle_model_dir, text)
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")
    assert lines[1] == "" and len(lines) == 5
    first = Tree.from_string(lines[0])
    assert first.words() == ["The", "dog", "barks", "-LRB-", "loudly", "-RRB-", "."]
    assert Tree.from_string(lines[2]).words()[0] == "Pierre/NNP"  # tags only with --tagged
    assert Tree.from_string(lines[3]).words() == ["Hi"]
    text.write_text("Hi/UH\n\nPierre/NNP Vinken/NNP joined/VBD ./.\n")
    tagged = _invoke("parse", mle_model_dir, text, "--tagged")
    assert tagged.exit_code == 0, tagged.output
    tree = Tree.from_string(tagged.stdout.split("\n")[2])
    assert tree.words() == ["Pierre", "Vinken", "joined", "."]
    assert tree.tags() == ["NNP", "NNP", "VBD", "."]  # given tags constrain the parse


def test_cli_parse_reads_slashes_as_words_unless_tagged(mle_model_dir):
    """Tokens that all hold "/" are words, not word/TAG, unless --tagged says so."""
    plain = runner.invoke(app, ["parse", str(mle_model_dir)], input="1/2 km/h\n")
    assert plain.exit_code == 0, plain.output
    assert Tree.from_string(plain.stdout).words() == ["1/2", "km/h"]
    tagged = runner.invoke(app, ["parse", str(mle_model_dir), "--tagged"], input="1/2/CD km/h/NN\n")
    assert tagged.exit_code == 0, tagged.output
    assert Tree.from_string(tagged.stdout).words() == ["1/2", "km/h"]
    assert Tree.from_string(tagged.stdout).tags() == ["CD", "NN"]


def test_cli_parse_output_reads_back_as_the_input_tokens(mle_model_dir, tmp_path):
    """Brackets in words are written as PTB escapes: every line reads back, and
    unescaping gives the tokens (-LRB- being the treebank spelling of "(")."""
    from spacy_lpcfg.trees.brackets import unescape_word

    sentences = [
        ":) is a smile",
        "f(x) = ( a)b(c ) ((",
        "-LRB- -RRB- [x] {y} -LCB-x",
        "naïve 日本語 (ü) 😀",
    ]
    text = tmp_path / "tricky.txt"
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    result = _invoke("parse", mle_model_dir, text)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(sentences)
    spelled = {"-LRB-": "(", "-RRB-": ")", "-LCB-x": "{x"}
    for sentence, line in zip(sentences, lines):
        words = [unescape_word(word) for word in Tree.from_string(line).words()]
        assert words == [spelled.get(token, token) for token in sentence.split()], line


def test_cli_parse_reports_malformed_tagged_input(mle_model_dir, tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("fine/JJ words/NNS\nbad/ input/NN\n")
    result = _invoke("parse", mle_model_dir, text, "--tagged")
    message = _fails_cleanly(result, "input.txt, line 2, column 1", "'bad/'", "word/TAG")
    huge = tmp_path / "huge.txt"
    huge.write_text("a/DT " + "x" * 1_000_000 + " b/NN\n")
    message = _fails_cleanly(_invoke("parse", mle_model_dir, huge, "--tagged"), "column 6", "…")
    assert len(message) < 200 + len(str(huge))


def test_cli_parse_input_file_errors(mle_model_dir, tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("fine words\nun café noir\n".encode("latin-1"))
    _fails_cleanly(
        _invoke("parse", mle_model_dir, latin), "latin.txt, line 2, column 7", "0xe9", "--encoding"
    )
    fixed = _invoke("parse", mle_model_dir, latin, "--encoding", "latin-1")
    assert fixed.exit_code == 0, fixed.output
    assert Tree.from_string(fixed.stdout.splitlines()[1]).words() == ["un", "café", "noir"]
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfHi there\n")
    assert Tree.from_string(_invoke("parse", mle_model_dir, bom).stdout).words() == ["Hi", "there"]
    _fails_cleanly(_invoke("parse", mle_model_dir, latin, "--encoding", "klingon"), "klingon")
    _fails_cleanly(_invoke("parse", mle_model_dir, tmp_path / "missing.txt"), "missing.txt")
    _fails_cleanly(_invoke("parse", mle_model_dir, tmp_path), str(tmp_path), "directory")
    _fails_cleanly(_invoke("parse", tmp_path / "no_model", latin), "no_model")


def test_cli_test_scores_a_split(mle_model_dir, data_dir, tmp_path):
    output = tmp_path / "parses.txt"
    result = _invoke(
        "test", mle_model_dir, "ptb_sample", "--split", "dev", "--data-dir", data_dir,
        "--limit", "40", "--output", output, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    for key in ("bracketing_fscore", "bracketing_fscore_40", "sentences", "seconds",
                "sentences_per_second", "fallbacks"):  # fmt: skip
        assert key in scores
    assert scores["sentences"] == 40
    assert scores["bracketing_fscore"] > 70  # the MLE grammar scores about 79 on dev
    # The written parses score the same through `evaluate` against the gold lines.
    gold = tmp_path / "gold.txt"
    from spacy_lpcfg.corpora import load_split

    gold_trees = load_split("ptb_sample", "dev", data_dir=data_dir)[:40]
    gold.write_text("".join(t.pformat() + "\n" for t in gold_trees))
    evaluated = json.loads(_invoke("evaluate", gold, output, "--json").stdout)
    assert evaluated["bracketing_fscore"] == scores["bracketing_fscore"]


def test_cli_test_rejects_a_corrupt_model(tmp_path, data_dir):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cfg.json").write_text("{not json")
    result = _invoke("test", broken, "ptb_sample", "--data-dir", data_dir)
    assert result.exit_code == 1 and "cfg.json" in result.stderr


def test_cli_spectral_model_prunes_with_its_treebank_grammar(tmp_path, data_dir):
    """Signed grammars cannot be projected; the Parser prunes with the stored MLE grammar."""
    model_dir = tmp_path / "spectral"
    trained = _invoke(
        "train", "ptb_sample", model_dir, "--estimator", "spectral", "--n-states", "2",
        "--data-dir", data_dir,
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    result = _invoke(
        "test", model_dir, "ptb_sample", "--split", "dev", "--limit", "10", "--decoder", "mbr",
        "--data-dir", data_dir, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["bracketing_fscore"] > 60


def test_cli_noisy_ensemble_decodes_its_members_jointly(tmp_path, data_dir):
    model_dir = tmp_path / "ensemble"
    trained = _invoke(
        "train", "ptb_sample", model_dir, "--estimator", "clustering", "--n-states", "2",
        "--n-models", "2", "--noise", "gaussian", "--data-dir", data_dir,
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    scores = {}
    for decoder in ("auto", "product"):
        result = _invoke(
            "test", model_dir, "ptb_sample", "--split", "dev", "--limit", "10",
            "--decoder", decoder, "--data-dir", data_dir, "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        scores[decoder] = json.loads(result.stdout)
    assert scores["auto"]["decoder"] == "product_mbr"
    assert scores["product"]["decoder"] == "product"
    assert min(s["bracketing_fscore"] for s in scores.values()) > 60
    # the members after the first parse what the first supports, unless told not to
    unpruned = _invoke(
        "test", model_dir, "ptb_sample", "--split", "dev", "--limit", "10",
        "--ensemble-threshold", "0", "--data-dir", data_dir, "--json",
    )  # fmt: skip
    assert unpruned.exit_code == 0, unpruned.output
    assert json.loads(unpruned.stdout)["bracketing_fscore"] > 60
    parsed = runner.invoke(
        app, ["parse", str(model_dir), "--ensemble-threshold", "0"], input="the dog runs .\n"
    )
    assert parsed.exit_code == 0 and parsed.stdout.startswith("(TOP "), parsed.output
    bad = _invoke(
        "test", model_dir, "ptb_sample", "--ensemble-threshold", "1.5", "--data-dir", data_dir
    )
    assert bad.exit_code != 0 and "ensemble_threshold" in bad.output and "1.5" in bad.output


# plot ---------------------------------------------------------------------------------

SMALL_TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
]


def _small_model_dir(path: Path, estimator: str) -> Path:
    from spacy_lpcfg.estimators import MLEEstimator, SpectralEstimator

    trees = [Tree.from_string(text) for text in SMALL_TREEBANK]
    settings = {"open_class_threshold": 1}
    if estimator == "spectral":
        fitted = SpectralEstimator(n_states=2, min_count_per_state=1, **settings).fit(trees)
    else:
        fitted = MLEEstimator(**settings).fit(trees)
    fitted.model_.to_disk(path)
    return path


def test_cli_plot_spectrum_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    model_dir = _small_model_dir(tmp_path / "spectral", "spectral")
    result = _invoke("plot", "spectrum", model_dir)
    assert result.exit_code == 0, result.output
    png = model_dir.parent / "spectral-spectrum.png"  # beside the model, never in it
    assert png.read_bytes().startswith(b"\x89PNG") and result.stdout == ""
    chosen = tmp_path / "out" / "np.png"
    result = _invoke(
        "plot", "spectrum", model_dir, "--output", chosen, "--symbols", "NP^S,NN",
        "--no-normalise",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert chosen.stat().st_size > 0
    assert _invoke("plot", "spectrum", model_dir, "--symbols", "3").exit_code == 0


def test_cli_plot_spectrum_errors(tmp_path):
    model_dir = _small_model_dir(tmp_path / "mle", "mle")
    result = _invoke("plot", "spectrum", model_dir)
    assert result.exit_code == 1 and "no singular-value spectrum" in result.stderr
    assert not (model_dir.parent / "mle-spectrum.png").exists()
    spectral = _small_model_dir(tmp_path / "spectral", "spectral")
    unknown = _invoke("plot", "spectrum", spectral, "--symbols", "NP^S,XX")
    assert unknown.exit_code == 1 and "XX" in unknown.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cfg.json").write_text("{not json")
    corrupt = _invoke("plot", "spectrum", broken)
    assert corrupt.exit_code == 1 and "cfg.json" in corrupt.stderr


def test_parse_in_processes_prints_what_one_process_prints(mle_model_dir, tmp_path):
    """--n-process 2: the same trees in the same order (blank lines kept), and a
    malformed --tagged line stops the output after the lines before it."""
    lines = ["The cat sat .", "", "Pierre Vinken will join the board ."] * 20
    path = tmp_path / "input.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    serial = _invoke("parse", mle_model_dir, path)
    parallel = _invoke("parse", mle_model_dir, path, "--n-process", "2")
    assert serial.exit_code == parallel.exit_code == 0, parallel.output
    assert parallel.stdout == serial.stdout and parallel.stdout.count("\n") == len(lines)
    path.write_text("a/DT cat/NN\nthe/DT\nbad\nnever/RB\n", encoding="utf-8")
    broken = _invoke("parse", mle_model_dir, path, "--tagged", "--n-process", "2")
    assert broken.exit_code == 1
    assert broken.stdout.count("\n") == 2 and "line 3, column 1" in broken.stderr
    assert _invoke("parse", mle_model_dir, path, "--n-process", "0").exit_code == 2


def test_evaluate_unlabeled_scores_bracketings(tmp_path):
    """--unlabeled: punctuation removed, no sentence span, no single words; a right-
    branching guess of a left-branching gold tree matches nothing."""
    gold = tmp_path / "gold.mrg"
    test = tmp_path / "test.mrg"
    gold.write_text(
        "(TOP (S (NP (NP (DT a) (NN b)) (NN c)) (VB d) (. .)))\n"
        "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs) (ADVP (RB fast)))))\n",
        encoding="utf-8",
    )
    test.write_text(
        "(TOP (X (X (X (DT a) (NN b)) (NN c)) (VB d) (. .)))\n"
        "(TOP (X (DT the) (X (NN dog) (X (VBZ runs) (RB fast)))))\n",
        encoding="utf-8",
    )
    result = _invoke("evaluate", gold, test, "--unlabeled", "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    # gold brackets: {ab, abc} and {the dog, runs fast}; test: {ab, abc} and {dog runs fast,
    # runs fast}: 3 of 4 match either way
    assert (scores["matched"], scores["gold"], scores["predicted"]) == (3, 4, 4)
    assert scores["f1"] == pytest.approx(75.0)
    short = _invoke("evaluate", gold, test, "--unlabeled", "--max-length", "3", "--json")
    assert short.exit_code == 0 and json.loads(short.stdout)["n_sentences"] == 0  # 4 words each
    test.write_text("(TOP (X a b)\n", encoding="utf-8")
    bad = _invoke("evaluate", gold, test, "--unlabeled")
    assert bad.exit_code == 1 and "tree 1" in bad.stderr


def test_train_and_parse_with_an_unsupervised_bracketer(tmp_path, data_dir):
    """--estimator spectral_unsup reads only words and tags; parse gives one unlabelled
    tree per line over the same words; a baseline name works the same way."""
    from spacy_lpcfg.training import BRACKETER_NAMES
    from spacy_lpcfg.unsupervised import BRACKETERS

    assert set(BRACKETER_NAMES) == set(BRACKETERS)
    model = tmp_path / "spectral"
    trained = _invoke(
        "train", "ptb_sample", model, "--estimator", "spectral_unsup", "--limit", "200",
        "--data-dir", data_dir, "-q",
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    assert (model / "bracketer.json").is_file()
    path = tmp_path / "input.txt"
    path.write_text("the/DT cat/NN sat/VBD on/IN the/DT mat/NN ./.\n\nit/PRP ran/VBD\n")
    parsed = _invoke("parse", model, path, "--tagged")
    assert parsed.exit_code == 0, parsed.output
    lines = parsed.stdout.split("\n")
    assert Tree.from_string(lines[0]).words() == ["the", "cat", "sat", "on", "the", "mat", "."]
    assert lines[1] == "" and Tree.from_string(lines[2]).words() == ["it", "ran"]
    right = _invoke("train", "ptb_sample", tmp_path / "right", "--estimator", "right",
                    "--limit", "5", "--data-dir", data_dir, "-q")  # fmt: skip
    assert right.exit_code == 0, right.output
