"""The package as a user gets it: built into an sdist and a wheel, installed (not
editable) into a fresh virtual environment with the newest and with the oldest
supported dependencies, then trained, run and added to a spaCy pipeline.

Slow (a venv and its downloads from the package index): ``pytest -m slow tests/test_wheel.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

USE_IT = """
import spacy
nlp = spacy.blank("en")
nlp.add_pipe("sentencizer")
nlp.add_pipe("lpcfg_parser", config={"model": MODEL})
doc = nlp("The cat sat on the mat. Then it slept.")
sentences = list(doc.sents)
assert len(sentences) == 2, sentences
for sentence in sentences:
    print(sentence._.parse_string)
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True,
                   capture_output=True)  # fmt: skip
    return out


def test_sdist_and_wheel_carry_the_licence_and_the_metadata(dist):
    (wheel,) = dist.glob("spacy_lpcfg-*.whl")
    (sdist,) = dist.glob("spacy_lpcfg-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert any(n.endswith("licenses/LICENSE") or n.endswith("/LICENSE") for n in names)
    for field in ("Author: The spacy-lpcfg developers", "License: MIT", "Requires-Dist: numba",
                  "Provides-Extra: dask", "Provides-Extra: plot"):  # fmt: skip
        assert field in text, field
    assert "Requires-Dist: distributed" not in text.split("Provides-Extra")[0]  # an extra
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/LICENSE") for name in archive.getnames())


@pytest.mark.parametrize("dependencies", ["newest", "oldest"])
def test_the_wheel_installs_trains_parses_and_joins_a_pipeline(dist, tmp_path, data_dir,
                                                               dependencies):  # fmt: skip
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    (wheel,) = dist.glob("spacy_lpcfg-*.whl")
    constraints = ["-c", str(ROOT / "constraints" / "oldest.txt")] * (dependencies == "oldest")
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel), *constraints], check=True)
    cli = str(venv / "bin" / "spacy-lpcfg")
    env = {**os.environ, "SPACY_LPCFG_DATA": str(data_dir)}
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("spacy-lpcfg ")
    model = tmp_path / "model"
    subprocess.run([cli, "train", "ptb_sample", str(model), "--estimator", "mle", "-q"],
                   check=True, env=env, cwd=tmp_path)  # fmt: skip
    parsed = subprocess.run([cli, "parse", str(model)], input="The old man saw a dog .\n",
                            capture_output=True, text=True, check=True, cwd=tmp_path)  # fmt: skip
    assert parsed.stdout.startswith("(TOP (S ")
    joined = subprocess.run([python, "-c", f"MODEL = {str(model)!r}\n{USE_IT}"],
                            capture_output=True, text=True, check=True, cwd=tmp_path)  # fmt: skip
    assert joined.stdout.count("(S ") >= 2, joined.stdout
