"""``spacy-lpcfg parse PACKAGE``: an installed pipeline package's model, with the
compiled kernels it ships seeded into numba's cache, without importing the package."""

from __future__ import annotations

import os
import subprocess
import sys

import spacy_lpcfg
from spacy_lpcfg.estimators import MLEEstimator

FOLDER = f"spacy_lpcfg-{spacy_lpcfg.__version__}"


def test_parse_takes_an_installed_pipeline_package(tmp_path, ptb_small):
    package = tmp_path / "site" / "xx_lpcfg_fake"
    data = package / "xx_lpcfg_fake-0.1.0"
    MLEEstimator().fit(ptb_small[0]).model_.to_disk(data / "lpcfg_parser" / "model")
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    shipped = data / "kernels" / "chart"
    shipped.mkdir(parents=True)
    (shipped / "made_up-1.py311.nbi").write_bytes(b"an entry")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"), NUMBA_CACHE_DIR=str(tmp_path / "c"))
    done = subprocess.run(
        [sys.executable, "-m", "spacy_lpcfg", "parse", "xx_lpcfg_fake"],
        input="The cat sat .\n",
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("(TOP (S ")
    assert (tmp_path / "c" / FOLDER / "chart" / "made_up-1.py311.nbi").read_bytes() == b"an entry"


def test_a_missing_model_directory_is_still_an_error(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "spacy_lpcfg", "parse", "no_such_pipeline_package"],
        input="The cat sat .\n",
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "no_such_pipeline_package: no such model directory" in done.stderr
