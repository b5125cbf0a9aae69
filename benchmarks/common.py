"""Shared benchmark plumbing: machine description, timing medians, BENCHMARKS.md sections.

Each benchmark script owns one section of BENCHMARKS.md, delimited by
``<!-- bench:NAME -->`` / ``<!-- /bench:NAME -->`` markers, and rewrites only
that section, so scripts can be rerun independently.
"""

from __future__ import annotations

import os
import platform
import re
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = REPO / "BENCHMARKS.md"
DEFAULT_DATA = REPO.parent / "shared" / "treebanks"


def data_dir() -> Path:
    return Path(os.environ.get("SPACY_LPCFG_DATA") or DEFAULT_DATA)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{mem_kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        mem = "?"
    return f"{cpu}, {os.cpu_count()} cores, {mem} RAM, Python {platform.python_version()}"


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return out.stdout.strip() + (" (+ uncommitted changes)" if dirty else "")
    except OSError:
        return "unknown"


def timed_median(fn: Callable[[], object], repeat: int) -> tuple[float, list[float], object]:
    """Run ``fn`` ``repeat`` times; return (median seconds, all times, last result)."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_section(name: str, body: str) -> None:
    """Replace (or append) the BENCHMARKS.md section ``name`` with ``body``."""
    header = f"_Measured {date.today().isoformat()} on {machine()}; commit {commit()}._\n\n"
    block = f"<!-- bench:{name} -->\n{header}{body.rstrip()}\n<!-- /bench:{name} -->"
    text = (
        BENCHMARKS_MD.read_text(encoding="utf-8")
        if BENCHMARKS_MD.exists()
        else (
            "# Benchmarks\n\nFigures written by the scripts in `benchmarks/` "
            "(`python benchmarks/<script>.py`); each script rewrites its own section.\n"
        )
    )
    pattern = re.compile(
        rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S
    )
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS_MD.write_text(text, encoding="utf-8")
