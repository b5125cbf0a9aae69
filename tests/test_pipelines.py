"""The ready pipelines as a user installs them: each wheel built by
``projects/pipelines`` (``spacy project run all``) goes into a fresh virtual
environment with the spacy-lpcfg wheel, and ``spacy.load`` of the installed
package parses raw text of several sentences: one tree per sentence. With an empty
numba cache (``NUMBA_CACHE_DIR`` a new folder) that first parse compiles nothing: the
package ships the compiled kernels and seeds the cache with them (on a machine with
the CPU that built it; elsewhere numba compiles them).

Slow, and only for the pipelines built: ``pytest -m slow tests/test_pipelines.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compilations import COUNT_COMPILATIONS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "projects" / "pipelines" / "packages"
pytestmark = pytest.mark.slow

TEXTS = {
    "en_lpcfg_ptb_sample": "The old man saw a dog. It ran away. Then the rain stopped.",
    "is_lpcfg_icepahc": "Maðurinn sá hundinn. Hann hljóp heim. Þá var kalt úti.",
    "pt_lpcfg_floresta": "O gato dormiu na cama. A menina leu o livro. Depois choveu muito.",
    "es_lpcfg_cess_esp": "El gato duerme en la cama. La niña leyó el libro. Después llovió mucho.",
}

PARSE = (
    COUNT_COMPILATIONS
    + """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp(sys.argv[2])
print(json.dumps({"pipes": nlp.pipe_names, "meta": nlp.meta, "compiled": compiled,
                  "trees": [s._.parse_string for s in doc.sents]}))
"""
)


def _wheel(name: str) -> Path | None:
    found = sorted(PACKAGES.glob(f"{name}-*/dist/{name}-*.whl"))
    return found[-1] if found else None


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> str:
    """A fresh venv with the spacy-lpcfg wheel (not editable)."""
    folder = tmp_path_factory.mktemp("pipelines")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(folder / "dist"),
                    str(ROOT)], check=True, capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    (wheel,) = (folder / "dist").glob("spacy_lpcfg-*.whl")
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True)
    return python


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_an_installed_pipeline_parses_each_sentence(venv, tmp_path, name):
    wheel = _wheel(name)
    if wheel is None:
        pytest.skip(f"{name} is not built: spacy project run all projects/pipelines ...")
    subprocess.run([venv, "-m", "pip", "install", "-q", str(wheel)], check=True)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"))
    run = subprocess.run([venv, "-c", PARSE, name, TEXTS[name]], capture_output=True,
                         text=True, check=True, cwd=tmp_path, env=env)  # fmt: skip
    result = json.loads(run.stdout)
    assert result["compiled"] == []  # every kernel came with the package
    assert result["pipes"] == ["sentencizer", "lpcfg_parser"]
    assert len(result["trees"]) == 3, result["trees"]
    assert all(tree.startswith("(") and tree.count("(") > 3 for tree in result["trees"])
    meta = result["meta"]
    assert meta["sources"] and meta["sources"][0]["license"]
    assert 0.5 < meta["performance"]["constituents_f"] < 1.0  # the test split's score
    assert meta["lpcfg"]["test"]["bracketing_fscore"] == pytest.approx(
        100 * meta["performance"]["constituents_f"], abs=0.01
    )
