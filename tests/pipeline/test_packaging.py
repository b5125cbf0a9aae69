"""`spacy package` -> wheel -> install into a fresh virtual environment -> spacy.load(name).

Offline: the environment gets spaCy and the other dependencies from this
interpreter's site-packages (through a .pth file; everything but spacy-lpcfg
itself), and the two wheels, this package's and the pipeline's, are installed
with ``--no-index --no-deps``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("setup.cfg", "pyproject.toml", "README.md", "spacy_lpcfg")


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    out = subprocess.run([str(arg) for arg in args], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, f"{args}\n{out.stdout}\n{out.stderr}"
    return out


def build_own_wheel(tmp_path: Path) -> Path:
    """spacy-lpcfg as a wheel, built from a copy of the sources (no build files in the repo)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in PACKAGE_FILES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy(REPO / name, source / name)
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-q", "-w", wheels, source)  # fmt: skip
    (wheel,) = wheels.glob("spacy_lpcfg-*.whl")
    return wheel


def make_environment(tmp_path: Path) -> Path:
    """A virtual environment that sees this interpreter's packages except spacy-lpcfg."""
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    env_site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))")
                    .stdout.strip())  # fmt: skip
    shared = tmp_path / "shared-site-packages"
    shared.mkdir()
    for directory in site.getsitepackages():
        for entry in Path(directory).iterdir():
            name = entry.name.lower()
            if (
                name.startswith(("spacy_lpcfg", "__editable__", "en_lpcfg"))
                or entry.suffix == ".pth"
            ):
                continue
            if not (shared / entry.name).exists():
                (shared / entry.name).symlink_to(entry)
    (env_site / "shared.pth").write_text(f"{shared}\n", encoding="utf8")
    return python


def test_packaging_spacy_package_wheel_installs_and_loads(ptb_pipeline_dir, tmp_path):
    packages = tmp_path / "packages"
    packages.mkdir()
    run(sys.executable, "-m", "spacy", "package", ptb_pipeline_dir, packages,
        "--name", "lpcfg_test", "--version", "0.0.1", "--build", "wheel", "--force")  # fmt: skip
    package_dir = packages / "en_lpcfg_test-0.0.1"
    meta = json.loads((package_dir / "meta.json").read_text())
    # spaCy found our package through top_level.txt and made it a requirement.
    assert any(req.startswith("spacy-lpcfg>=0.1") for req in meta["requirements"])
    (model_wheel,) = (package_dir / "dist").glob("*.whl")

    python = make_environment(tmp_path)
    run(python, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
        build_own_wheel(tmp_path), model_wheel)  # fmt: skip
    check = """
import importlib.metadata, json, sys
import spacy
nlp = spacy.load("en_lpcfg_test")
import spacy_lpcfg
doc = nlp("The company said it will sell its stake .")
print(json.dumps({
    "package": spacy_lpcfg.__file__,
    "parse": doc[:]._.parse_string,
    "requires": importlib.metadata.requires("en_lpcfg_test"),
}))
"""
    # Not from the repository (the current directory is on sys.path with -c).
    env = {**os.environ, "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [str(python), "-c", check], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["package"].startswith(str(tmp_path / "env"))  # our wheel, not the source tree
    assert result["parse"].startswith("(S ") and "(NN stake)" in result["parse"]
    assert any(req.startswith("spacy-lpcfg") for req in result["requires"])
