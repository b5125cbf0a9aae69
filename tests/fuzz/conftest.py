"""Session fixtures of the fuzz tests: seed treebank excerpts, trained models, pipelines.

Everything expensive is made once per session: the PTB-sample MLE model the
``parse`` command and the spaCy component fuzz (trained with ``spacy-lpcfg
train``), and two tiny models (MLE, and spectral with its extra grammar and
spectrum files) whose files the model-loading tests corrupt.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fuzz_support import ShortRepr

# Seed excerpts of each format: (folder, file glob, where to cut, trees kept).
_SEEDS = {
    "penn": ("ptb_sample", "wsj_0003.mrg", rb"\n\( \(", 3),
    "psd": ("icepahc", "1150.firstgrammar.sci-lin.psd", rb"\n\n\( \(", 4),
    "floresta": ("floresta", "Floresta_7.4.ptb", rb"\n#\d+ ", 5),
    "cess": ("cess_esp", "10017_20000413.tbf", rb"\n\(\s*\n", 2),
}


def _excerpt(data: bytes, cut: bytes, keep: int) -> bytes:
    """The start of a treebank file up to the ``keep``-th tree boundary after the first."""
    boundaries = [match.start() for match in re.finditer(cut, data)]
    return data[: boundaries[keep]] + b"\n" if len(boundaries) > keep else data


@pytest.fixture(scope="session")
def seeds(data_dir) -> ShortRepr:
    """Format name -> the bytes of a few real trees of that format (in its own encoding)."""
    out = ShortRepr()
    for name, (folder, file, cut, keep) in _SEEDS.items():
        out[name] = _excerpt((data_dir / folder / file).read_bytes(), cut, keep)
    return out


@pytest.fixture(scope="session")
def fuzz_dir(tmp_path_factory) -> Path:
    """A scratch directory the properties write their inputs into."""
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="session")
def ptb_model_dir(data_dir, tmp_path_factory) -> Path:
    """An MLE model of the PTB sample's train split, made by ``spacy-lpcfg train``."""
    from typer.testing import CliRunner

    from spacy_lpcfg.cli import app

    path = tmp_path_factory.mktemp("models") / "ptb_mle"
    result = CliRunner().invoke(
        app, ["train", "ptb_sample", str(path), "--estimator", "mle", "--data-dir", str(data_dir)]
    )
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="session")
def ptb_parser(ptb_model_dir):
    from spacy_lpcfg.decode.parser import Parser
    from spacy_lpcfg.grammar.model import ParsingModel

    return Parser(ParsingModel.from_disk(ptb_model_dir))


@pytest.fixture(scope="session")
def tiny_models(load_corpus, tmp_path_factory) -> dict[str, Path]:
    """Estimator name -> a model directory fitted on 40 short PTB trees (fast to load)."""
    from spacy_lpcfg.estimators import MLEEstimator, SpectralEstimator
    from spacy_lpcfg.trees.transforms import TransformSpec

    trees = [tree for tree in load_corpus("ptb_sample", "train") if tree.n_words <= 12][:40]
    root = tmp_path_factory.mktemp("tiny_models")
    estimators = {
        "mle": MLEEstimator(transform=TransformSpec()),
        "spectral": SpectralEstimator(transform=TransformSpec(), n_states=2),
    }
    out = {}
    for name, estimator in estimators.items():
        estimator.fit(trees).model_.to_disk(root / name)
        out[name] = root / name
    return out


def _pipeline(model_dir: Path, sentencizer: bool):
    import spacy

    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"model": str(model_dir)})
    return nlp


@pytest.fixture(scope="session")
def nlp_whole_doc(ptb_model_dir):
    """A blank English pipeline with only the parser: each Doc is one sentence."""
    return _pipeline(ptb_model_dir, sentencizer=False)


@pytest.fixture(scope="session")
def nlp_sentences(ptb_model_dir):
    """The same with a sentencizer before the parser."""
    return _pipeline(ptb_model_dir, sentencizer=True)
