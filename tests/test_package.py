"""Package-level guarantees: cheap, side-effect-free import and the layering of DESIGN.md."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "spacy_lpcfg"

# Each package may import only the packages listed for it (DESIGN.md section 2).
ALLOWED = {
    "trees": set(),
    "grammar": {"trees"},
    "chart": {"trees", "grammar"},
    "decode": {"trees", "grammar", "chart"},
    "evaluation": {"trees"},
    "estimators": {"trees", "grammar", "chart"},
    "unsupervised": {"trees", "grammar", "chart", "evaluation", "estimators"},
}
TOP_LEVEL = {
    "errors",
    "about",
    "types",
    "corpora",
    "progress",
    "defaults",
    "interrupts",
    "kernel_cache",
}  # importable anywhere


def _imported_subpackages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth_of_file = len(path.relative_to(PACKAGE).parts) - 1
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("spacy_lpcfg."):
                    found.add(node.module.split(".")[1])
                continue
            up = node.level - 1
            if up < depth_of_file:  # stays inside this subpackage
                continue
            target = (node.module or "").split(".")[0]
            found.update({target} if target else {alias.name for alias in node.names})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spacy_lpcfg."):
                    found.add(alias.name.split(".")[1])
    return found


def _imports_spacy(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(name == "spacy" or name.startswith("spacy.") for name in names):
            return True
    return False


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_layering(package):
    folder = PACKAGE / package
    if not folder.is_dir():
        pytest.skip(f"{package} not written yet")
    for path in folder.rglob("*.py"):
        used = _imported_subpackages(path) - TOP_LEVEL - {package}
        assert used <= ALLOWED[package], (
            f"{path.relative_to(PACKAGE)} imports {used - ALLOWED[package]}"
        )


def test_package_only_pipeline_imports_spacy():
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "pipeline" not in path.relative_to(PACKAGE).parts and _imports_spacy(path)
    ]
    assert offenders == []


def test_package_import_is_cheap_and_lazy():
    code = (
        "import sys, time; t = time.perf_counter(); import spacy_lpcfg, spacy_lpcfg.trees; "
        "dt = time.perf_counter() - t; "
        "heavy = [m for m in ('spacy', 'numba', 'scipy', 'sklearn', 'thinc') if m in sys.modules]; "
        "print(dt, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, heavy = out.stdout.split(" ", 1)
    assert heavy.strip() == "[]"
    assert float(seconds) < 0.5
