"""Where numba caches this package's compiled kernels, so that a cache travels.

numba keys its on-disk cache by where a source file lies: beside it
(``__pycache__``) when that folder is writable, else in a user-wide folder under
a hash of the file's absolute folder. A cache compiled in one installation is
then never found by another (a wheel's build, a virtual environment, a read-only
site-packages), and the first parse of every new installation compiles for half
a minute. This module installs a cache locator for the package's own kernels
that keys them by the package's version and the module's place in the package
instead: ``<root>/spacy_lpcfg-<version>/<subpackage>/``, where ``<root>`` is
numba's: ``NUMBA_CACHE_DIR`` if set, else its user-wide folder
(``~/.cache/numba``). Each entry is still checked by numba against a hash of
its source file, its numba version and the CPU it was compiled for, so a stale
or foreign entry is compiled anew, never used.

``seed`` copies a cache folder into that place (entries already there are
kept); a pipeline package built by ``projects/pipelines`` ships the kernels its
first parse needs and seeds them when it is imported, which is what makes its
first parse take seconds. ``export`` copies the package's entries out, to ship
them. numba's cache files are pickles: only a Python package (code, trusted as
code) seeds a cache; a pipeline folder read by ``spacy.load(path)`` never does.

The locator uses numba's caching internals (``numba.core.caching``); where they
differ from what it expects, numba's own locators stay in charge.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .about import __version__

PACKAGE_DIR = Path(__file__).resolve().parent
FOLDER = f"spacy_lpcfg-{__version__}"  # one per version: sources differ between them
SUFFIXES = (".nbi", ".nbc")  # numba's index and data files


def cache_root() -> Path:
    """The folder this version's kernels are cached in."""
    from numba.core import config

    chosen = getattr(config, "CACHE_DIR", "")  # set from NUMBA_CACHE_DIR when numba loads
    if chosen:
        return Path(chosen) / FOLDER
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / FOLDER


@functools.cache
def _source_hash(path: str, mtime: float, size: int) -> bytes:
    # mtime and size in the key: a file edited while the process runs is hashed again
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).digest()


def _make_locator_class():
    """The locator class, or None when numba's internals are not what it expects."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    base = getattr(caching, "_CacheLocator", None)
    if base is None:
        return None

    class PackageCacheLocator(base):
        """Caches the package's kernels under ``cache_root()``, by module place."""

        def __init__(self, py_func, py_file: str, relative: Path):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache_root() / relative)

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self) -> bytes:
            status = os.stat(self._py_file)
            return _source_hash(self._py_file, status.st_mtime, status.st_size)

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file: str):
            try:
                relative = Path(py_file).resolve().parent.relative_to(PACKAGE_DIR)
            except ValueError:
                return None  # not this package's: numba's locators decide
            locator = cls(py_func, py_file, relative)
            try:
                locator.ensure_cache_path()
            except OSError:
                return None  # not writable: numba's locators decide
            return locator

    return PackageCacheLocator


def install() -> bool:
    """Put the package's locator first in numba's list (idempotent). Kernel modules
    call it before their decorators run. RETURNS (bool): whether it is installed."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):
        return False
    if any(getattr(cls, "__name__", "") == "PackageCacheLocator" for cls in classes):
        return True
    locator = _make_locator_class()
    if locator is None:
        return False
    classes.insert(0, locator)
    return True


def seed(folder: str | Path) -> int:
    """Copy the cache entries under ``folder`` (as ``export`` wrote them) into
    ``cache_root()``, keeping every entry already there. Links and other files are
    skipped. RETURNS (int): the number of files copied."""
    source = Path(folder)
    if not source.is_dir():
        return 0
    root = cache_root()
    copied = 0
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix not in SUFFIXES:
            continue
        target = root / path.relative_to(source)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + f".{os.getpid()}.part")
        shutil.copyfile(path, partial)
        os.replace(partial, target)  # a concurrent reader never sees half a file
        copied += 1
    return copied


def export(destination: str | Path, kernels: Iterable[Any] | None = None) -> int:
    """Copy this version's cache entries into ``destination`` (for ``seed``): those of
    ``kernels`` (numba dispatchers, e.g. ``used_kernels()``), or all.
    RETURNS (int): the number of files copied."""
    root = cache_root()
    wanted = None if kernels is None else {_entry_name(kernel) for kernel in kernels}
    target = Path(destination)
    copied = 0
    for path in sorted(root.rglob("*")) if root.is_dir() else ():
        if not (path.is_file() and path.suffix in SUFFIXES):
            continue
        if wanted is not None and (path.parent.relative_to(root), _base(path.name)) not in wanted:
            continue
        out = target / path.relative_to(root)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        copied += 1
    return copied


def _base(name: str) -> str:
    """The entry a cache file belongs to: index ``<base>.nbi``, data ``<base>.<n>.nbc``."""
    return name[: -len(".nbi")] if name.endswith(".nbi") else name.rsplit(".", 2)[0]


def used_kernels() -> list[Any]:
    """The package's kernels that this process loaded from the cache or compiled: their
    entries are what another run like this one needs (the helpers compiled into them
    are not)."""
    import sys

    from numba.core.registry import CPUDispatcher

    found = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "spacy_lpcfg":
            for value in vars(module).values():
                if isinstance(value, CPUDispatcher) and _was_used(value.stats):
                    found[id(value)] = value
    return list(found.values())


def _was_used(stats: Any) -> bool:
    return any(stats.cache_hits.values()) or any(stats.cache_misses.values())


def _entry_name(kernel: Any) -> tuple[Path, str] | None:
    """(folder under ``cache_root()``, file name base) of a dispatcher's cache entry;
    None for one cached elsewhere."""
    try:
        folder = Path(kernel._cache._cache_path).relative_to(cache_root())
    except (AttributeError, ValueError):
        return None
    return folder, kernel._cache._impl.filename_base
