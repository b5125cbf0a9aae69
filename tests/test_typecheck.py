"""The type checker over the package (configuration in pyproject.toml), as part of the
test suite so that CI runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_mypy_passes():
    pytest.importorskip("mypy", reason="mypy comes with the dev extras")
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
