"""Compiled kernels are compiled once: an installation in a read-only folder does not
recompile in every process, and a cache travels between installations.

numba caches the package's kernels (``spacy_lpcfg.kernel_cache``) in its user-wide
folder (``$XDG_CACHE_HOME/numba``, by default ``~/.cache/numba``) or
``NUMBA_CACHE_DIR``, under the package version and the module's place in the
package, never beside the source. These tests copy the package into other folders,
run fresh processes importing it from there (``PYTHONPATH``), and check where the
kernels land, that a second process loads them instead of compiling again, and that
a cache exported from one copy and seeded into an empty folder serves another copy.

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
from compilations import COUNT_COMPILATIONS

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
FIRST_PARSE = COUNT_COMPILATIONS + textwrap.dedent(
    """
    import json, sys, time
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


SEED_THEN_SPAN_CKY = (
    "from spacy_lpcfg import kernel_cache; import sys; "
    + ("print(kernel_cache.seed(sys.argv[1]), file=sys.stderr)\n")
    + SPAN_CKY
)
EXPORT = "import sys; from spacy_lpcfg import kernel_cache; print(kernel_cache.export(sys.argv[1]))"


def _copy(tmp_path: Path, where: str) -> Path:
    site = tmp_path / where / "site"
    shutil.copytree(PACKAGE, site / "spacy_lpcfg", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _in(site: Path, cache: Path, script: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(cache))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        cwd=site.parent,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_an_exported_cache_serves_another_installation(tmp_path):
    first, second = _copy(tmp_path, "one"), _copy(tmp_path, "two/deeper")
    compiled = json.loads(_in(first, tmp_path / "cache1", SPAN_CKY))
    assert (compiled["hits"], compiled["misses"]) == (0, 1)
    assert Path(compiled["cache_path"]).is_relative_to(tmp_path / "cache1")
    assert int(_in(first, tmp_path / "cache1", EXPORT, str(tmp_path / "shipped"))) >= 2

    seeded = json.loads(
        _in(second, tmp_path / "cache2", SEED_THEN_SPAN_CKY, str(tmp_path / "shipped"))
    )
    assert Path(seeded["package"]).is_relative_to(second)
    assert Path(seeded["cache_path"]).is_relative_to(tmp_path / "cache2")
    assert (seeded["hits"], seeded["misses"]) == (1, 0)
    assert not list(second.rglob("__pycache__/*.nbi"))


def test_a_cache_of_other_source_is_compiled_anew_not_used(tmp_path):
    first, second = _copy(tmp_path, "one"), _copy(tmp_path, "two")
    _in(first, tmp_path / "cache1", SPAN_CKY)
    _in(first, tmp_path / "cache1", EXPORT, str(tmp_path / "shipped"))
    source = second / "spacy_lpcfg" / "chart" / "span_cky.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    seeded = json.loads(
        _in(second, tmp_path / "cache2", SEED_THEN_SPAN_CKY, str(tmp_path / "shipped"))
    )
    assert (seeded["hits"], seeded["misses"]) == (0, 1)


def test_seed_keeps_what_is_there_and_copies_cache_files_only(tmp_path, monkeypatch):
    from spacy_lpcfg import kernel_cache

    monkeypatch.setattr(kernel_cache, "cache_root", lambda: tmp_path / "root")
    shipped = tmp_path / "shipped"
    (shipped / "chart").mkdir(parents=True)
    (shipped / "chart" / "a.nbi").write_bytes(b"shipped index")
    (shipped / "chart" / "a.1.nbc").write_bytes(b"shipped data")
    (shipped / "chart" / "notes.txt").write_text("not a cache file")
    (shipped / "chart" / "b.nbi").symlink_to(tmp_path / "elsewhere.nbi")
    (tmp_path / "root" / "chart").mkdir(parents=True)
    (tmp_path / "root" / "chart" / "a.nbi").write_bytes(b"mine")
    assert kernel_cache.seed(shipped) == 1
    assert (tmp_path / "root" / "chart" / "a.nbi").read_bytes() == b"mine"
    assert (tmp_path / "root" / "chart" / "a.1.nbc").read_bytes() == b"shipped data"
    assert sorted(p.name for p in (tmp_path / "root" / "chart").iterdir()) == ["a.1.nbc", "a.nbi"]
    assert kernel_cache.seed(tmp_path / "missing") == 0


USED_EXPORT = (
    SPAN_CKY
    + """
from spacy_lpcfg import kernel_cache
used = kernel_cache.used_kernels()
print(json.dumps({"used": sorted(k.py_func.__qualname__ for k in used),
                  "exported": kernel_cache.export(sys.argv[1], used)}))
"""
).replace("import json\n", "import json, sys\n", 1)


def test_export_of_the_kernels_used_leaves_the_others_out(tmp_path):
    site = _copy(tmp_path, "one")
    other = tmp_path / "cache" / f"spacy_lpcfg-{spacy_lpcfg.__version__}" / "chart"
    other.mkdir(parents=True)
    (other / "coarse._coarse_inside-1.py311.nbi").write_bytes(b"another kernel's")
    found = json.loads(_in(site, tmp_path / "cache", USED_EXPORT, str(tmp_path / "out")))
    assert found["used"] == ["_cky"]
    names = sorted(path.name for path in (tmp_path / "out").rglob("*") if path.is_file())
    assert found["exported"] == len(names) == 2
    assert all(name.startswith("span_cky._cky-") for name in names)
