"""Package-level guarantees: cheap, side-effect-free import and the layering of
ARCHITECTURE.md, for every unit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "spacy_lpcfg"

# Each unit (a subpackage or a top-level module) may import only the units listed for
# it: the layers of ARCHITECTURE.md. TOP_LEVEL modules are importable anywhere.
ENGINE = {"trees", "grammar", "chart", "decode"}
ALLOWED = {
    "trees": set(),
    "grammar": {"trees"},
    "chart": {"trees", "grammar"},
    "decode": {"trees", "grammar", "chart"},
    "evaluation": {"trees"},
    "estimators": {"trees", "grammar", "chart"},
    "unsupervised": {"trees", "grammar", "chart", "evaluation", "estimators"},
    "corpora": {"trees"},
    "pictures": {"trees"},
    "plots": {"trees", "grammar", "estimators"},
    "recipes": {"trees", "estimators"},
    "search": ENGINE | {"corpora", "evaluation", "estimators", "plots", "recipes"},
    "training": ENGINE | {"corpora", "evaluation", "estimators", "recipes", "unsupervised"},
    "pipeline": ENGINE
    | {"corpora", "evaluation", "estimators", "pictures", "recipes", "training", "unsupervised"},
    "showing": {"pictures", "pipeline"},
    "cli": ENGINE
    | {
        "corpora",
        "evaluation",
        "estimators",
        "pictures",
        "pipeline",
        "plots",
        "recipes",
        "search",
        "training",
        "unsupervised",
    },  # fmt: skip
    "console": {"cli"},
    "__main__": {"console"},
    # the package's lazy attributes (``spacy_lpcfg.evaluate``, ``spacy_lpcfg.show``...)
    "__init__": {"trees", "evaluation", "pipeline", "showing"},
}
TOP_LEVEL = {
    "errors",
    "about",
    "progress",
    "defaults",
    "interrupts",
    "kernel_cache",
    "memory",
}  # importable anywhere
# Units inside a unit, with a layer of their own: the EM core is below the estimators
# that use it. Each may import the units listed and, of the unit around it, only the
# modules listed.
INNER = {
    "estimators/em": ({"trees", "grammar", "chart"}, {"estimators.base", "estimators.mle"}),
}
# Units whose modules import only public names from each other: what one module offers
# another is its interface, not its helpers.
PUBLIC_ONLY = {"estimators"}


def _unit(path: Path) -> str:
    """The unit a source file belongs to: its subpackage, or itself at the top level."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


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


def _imported_modules(path: Path) -> list[tuple[str, list[str]]]:
    """(module imported from, names imported) for each of the file's imports of the
    package, the module as a dotted path below ``spacy_lpcfg``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = list(path.relative_to(PACKAGE).parent.parts)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("spacy_lpcfg."):
                    found.append((node.module.split(".", 1)[1], [a.name for a in node.names]))
                continue
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                found.append((".".join([*base, node.module]), [a.name for a in node.names]))
            else:  # from . import module: each name is a module
                found.extend((".".join([*base, a.name]), []) for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spacy_lpcfg."):
                    found.append((alias.name.split(".", 1)[1], []))
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


def test_package_every_unit_has_its_layer():
    units = {_unit(path) for path in PACKAGE.rglob("*.py")} - TOP_LEVEL
    assert units == set(ALLOWED), "declare the layer of a new unit in ALLOWED"


@pytest.mark.parametrize("unit", sorted(ALLOWED))
def test_package_layering(unit):
    paths = [path for path in PACKAGE.rglob("*.py") if _unit(path) == unit]
    assert paths
    for path in paths:
        used = _imported_subpackages(path) - TOP_LEVEL - {unit}
        assert used <= ALLOWED[unit], f"{path.relative_to(PACKAGE)} imports {used - ALLOWED[unit]}"


@pytest.mark.parametrize("inner", sorted(INNER))
def test_package_inner_layering(inner):
    units, modules = INNER[inner]
    own = inner.replace("/", ".")
    paths = list((PACKAGE / inner).rglob("*.py"))
    assert paths
    for path in paths:
        for module, _ in _imported_modules(path):
            allowed = (
                module == own
                or module.startswith(own + ".")
                or module.split(".")[0] in units | TOP_LEVEL
                or any(module == m or module.startswith(m + ".") for m in modules)
            )
            assert allowed, f"{path.relative_to(PACKAGE)} imports {module}"


@pytest.mark.parametrize("unit", sorted(PUBLIC_ONLY))
def test_package_modules_import_public_names(unit):
    for path in (PACKAGE / unit).rglob("*.py"):
        for module, names in _imported_modules(path):
            private = [name for name in names if name.startswith("_")]
            assert module.split(".")[0] != unit or not private, (
                f"{path.relative_to(PACKAGE)} imports {private} from {module}"
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
