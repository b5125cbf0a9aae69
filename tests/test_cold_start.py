"""An installation in a read-only folder compiles its kernels once, not in every process.

numba caches compiled kernels beside their source (``__pycache__``) when that folder
is writable, else in a user-wide folder (``$XDG_CACHE_HOME/numba``, by default
``~/.cache/numba``). These tests copy the package into a folder no process can write
to, run fresh processes importing it from there (``PYTHONPATH``), and check that the
compiled kernels land in the user-wide folder and that a second process loads them
instead of compiling again.

Root ignores permission bits, so as root the copy is made read-only with a read-only
bind mount in a private mount namespace (``unshare``); without one the tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spacy_lpcfg

PACKAGE = Path(spacy_lpcfg.__file__).resolve().parent

# One small kernel: the chart's span CKY.
SPAN_CKY = textwrap.dedent(
    """
    import json
    import numpy as np
    import spacy_lpcfg
    from spacy_lpcfg.chart import span_cky
    from spacy_lpcfg.chart.span_cky import _cky

    span_cky(np.random.default_rng(0).random((6, 6, 3)))
    stats = _cky.stats
    print(json.dumps({"package": spacy_lpcfg.__file__, "cache_path": stats.cache_path,
                      "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values())}))
    """
)

# A whole first parse, counting what numba compiles (the package's own functions).
FIRST_PARSE = textwrap.dedent(
    """
    import json, sys, time
    import numba.core.event as ev

    compiled = []

    class Listener(ev.Listener):
        def on_start(self, event):
            function = event.data["dispatcher"].py_func
            if function.__module__.startswith("spacy_lpcfg"):
                compiled.append(function.__qualname__)

        def on_end(self, event):
            pass

    ev.register("numba:compile", Listener())
    import spacy_lpcfg
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.grammar import ParsingModel

    parser = Parser(ParsingModel.from_disk(sys.argv[1]))
    start = time.perf_counter()
    tree = parser.parse("The old man saw a dog .".split()).tree
    print(json.dumps({"package": spacy_lpcfg.__file__, "compiled": compiled,
                      "seconds": time.perf_counter() - start, "tree": str(tree)}))
    """
)


def _read_only_copy(tmp_path: Path) -> Path:
    """The package copied into tmp_path/site (no caches), with its folders read-only."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "spacy_lpcfg", ignore=shutil.ignore_patterns("__pycache__"))
    for folder, _, _ in os.walk(site):
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    return site


def _writable_again(site: Path) -> None:
    for folder, _, _ in os.walk(site):
        os.chmod(folder, stat.S_IRWXU)


def _runner(site: Path) -> list[str]:
    """The command prefix that runs a process seeing ``site`` read-only."""
    if os.geteuid() != 0:  # the permission bits suffice
        return []
    unshare = shutil.which("unshare")
    probe = [unshare or "unshare", "--map-root-user", "--mount", "true"]
    if unshare is None or subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("root ignores permissions, and no mount namespace for a read-only mount")
    mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return [unshare, "--map-root-user", "--mount", "sh", "-c", mount, str(site)]


def _run(prefix: list[str], site: Path, cache_home: Path, script: str, *args: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(cache_home), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(  # not from the repository: ``python -c`` imports from its cwd first
        [*prefix, sys.executable, "-c", script, *args],
        env=env,
        cwd=cache_home.parent,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_read_only_install_caches_kernels_in_the_user_wide_folder(tmp_path):
    site = _read_only_copy(tmp_path)
    try:
        prefix = _runner(site)
        probe = [*prefix, sys.executable, "-c", f"open({str(site / 'probe')!r}, 'w')"]
        assert subprocess.run(probe, capture_output=True).returncode != 0  # really read-only
        cache_home = tmp_path / "cache"
        first = _run(prefix, site, cache_home, SPAN_CKY)
        second = _run(prefix, site, cache_home, SPAN_CKY)
    finally:
        _writable_again(site)
    assert Path(first["package"]).is_relative_to(site)
    assert Path(first["cache_path"]).is_relative_to(cache_home / "numba")
    assert (first["hits"], first["misses"]) == (0, 1)
    assert (second["hits"], second["misses"]) == (1, 0)
    assert list(Path(first["cache_path"]).glob("span_cky._cky-*.nbi"))
    assert not list(site.rglob("__pycache__"))


@pytest.mark.slow
def test_read_only_install_compiles_a_first_parse_once(tmp_path, ptb_small):
    """The second process's first parse compiles nothing: every kernel comes from the
    user-wide cache the first process filled."""
    from spacy_lpcfg.estimators.mle import MLEEstimator

    model = tmp_path / "model"
    MLEEstimator().fit(ptb_small[0]).model_.to_disk(model)
    site = _read_only_copy(tmp_path)
    try:
        prefix = _runner(site)
        cache_home = tmp_path / "cache"
        first = _run(prefix, site, cache_home, FIRST_PARSE, str(model))
        second = _run(prefix, site, cache_home, FIRST_PARSE, str(model))
    finally:
        _writable_again(site)
    assert Path(first["package"]).is_relative_to(site)
    assert "one_state_inside" in first["compiled"]
    assert second["compiled"] == []
    assert second["tree"] == first["tree"]
    assert list((cache_home / "numba").rglob("*.nbi"))
