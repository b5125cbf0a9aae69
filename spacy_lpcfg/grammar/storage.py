"""Directories written atomically: a whole directory appears at once, or not at all.

``write_directory`` writes the files into a temporary directory beside the target
and renames it into place, replacing what was there; interrupted, it leaves the
target as it was. A write leaves two kinds of directories beside the target while
it runs, both removed when it ends: ".NAME.XXXXXXXX.partial", the directory being
written, and ".NAME.XXXXXXXX.old", holding the replaced directory during the swap.
A killed process (SIGKILL, power loss) leaves them behind; the next write beside
them clears them when they are stale. Each holds a ``WRITER`` file naming its
process. Nothing here knows what the files mean (``grammar.model`` writes model
directories through it).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..progress import progress
from .serialization import FileData, write_file

LEFTOVER = re.compile(r"\.(?P<name>.+)\.[0-9a-z_]{8}\.(?:partial|old)")
WRITER = ".spacy-lpcfg-writer"  # "PID HOST"
STALE_SECONDS = 3600.0  # untouched this long: stale, whatever its WRITER says


def write_directory(
    path: Path,
    groups: Iterable[Mapping[str, FileData]],
    n_groups: int,
    *,
    check: Callable[[Path], None],
) -> None:
    """Write the files of ``groups`` (relative '/'-separated name -> content) as the
    directory ``path``, atomically, with a "writing" progress bar counting the groups.

    n_groups (int): the number of groups, for the bar.
    check (Callable[[Path], None]): raises unless ``path`` may be replaced; called after
        stale leftovers are cleared (that may put back a directory a killed write moved).
    """
    remove_stale_leftovers(path)
    check(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = new_leftover(path, ".partial")
    try:
        with progress(desc="writing", total=n_groups, unit="part") as bar:
            for group in groups:
                for name, data in group.items():
                    target = partial.joinpath(*name.split("/"))
                    target.parent.mkdir(parents=True, exist_ok=True)
                    write_file(target, data)
                bar.update()
        replace_directory(partial, path)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    # Only now: until the swap is done, the WRITER file tells a dead write's leftover.
    (path / WRITER).unlink(missing_ok=True)


def replace_directory(source: Path, target: Path) -> None:
    """Rename `source` to `target`, replacing a directory already there."""
    if not target.exists():
        os.rename(source, target)
        return
    holder = new_leftover(target, ".old")
    previous = holder / target.name
    os.rename(target, previous)
    try:
        os.rename(source, target)
    except BaseException:
        os.rename(previous, target)
        shutil.rmtree(holder, ignore_errors=True)
        raise
    shutil.rmtree(holder, ignore_errors=True)


def new_leftover(path: Path, suffix: str) -> Path:
    """A new directory ``.NAME.XXXXXXXX<suffix>`` beside `path` with this process's
    WRITER file. Made with mkdir, so it gets the usual permissions (tempfile.mkdtemp's
    are owner-only, which the model directory it becomes would keep)."""
    for _ in range(100):
        folder = path.parent / f".{path.name}.{secrets.token_hex(4)}{suffix}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        try:
            (folder / WRITER).write_text(f"{os.getpid()} {socket.gethostname()}\n")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return folder
    raise FileExistsError(f"no free temporary name beside {path}")


def remove_stale_leftovers(path: Path) -> None:
    """Clear the stale leftovers of killed writes beside `path`, and put back a model
    that a killed swap had moved into its ``.old`` holder (if nothing took its place).

    A leftover is stale when the process its WRITER file names is dead (on this host)
    or when nothing in it changed for STALE_SECONDS. Leftovers of other models count
    only with a WRITER file (proof that they are ours); `path`'s own without one (from
    older versions) by age. Nothing here makes a write fail: what cannot be cleared
    stays.
    """
    try:
        entries = list(os.scandir(path.parent))
    except OSError:  # no parent directory yet: nothing to clear
        return
    now = time.time()
    for entry in entries:
        match = LEFTOVER.fullmatch(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        writer = _read_writer(folder)
        if writer is None and match["name"] != path.name:
            continue
        try:
            if _is_stale(folder, writer, now):
                _clear_leftover(folder, path.parent / match["name"])
        except OSError:  # cleared by another process meanwhile, or not ours to remove
            pass


def _read_writer(folder: Path) -> tuple[int, str] | None:
    """(pid, host) of the WRITER file in `folder`; None if it has none (or a bad one)."""
    try:
        pid, host = (folder / WRITER).read_text().split()
        return int(pid), host
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _is_stale(folder: Path, writer: tuple[int, str] | None, now: float) -> bool:
    if writer is not None and writer[1] == socket.gethostname() and not _is_alive(writer[0]):
        return True
    # Age guards against pids reused by other processes, and covers other hosts.
    return now - _last_change(folder) > STALE_SECONDS


def _is_alive(pid: int) -> bool:
    """Whether process `pid` runs (True when that cannot be told)."""
    if os.name != "posix" or pid == os.getpid():  # Windows: os.kill(pid, 0) would kill
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def _last_change(folder: Path) -> float:
    """The latest modification time in `folder`'s tree (a write in progress updates it)."""
    latest = folder.lstat().st_mtime
    for root, names, files in os.walk(folder):
        for name in names + files:
            latest = max(latest, os.lstat(os.path.join(root, name)).st_mtime)
    return latest


def _clear_leftover(folder: Path, model: Path) -> None:
    """Remove a stale leftover of the model directory `model`; first move the model an
    ``.old`` holder keeps back into place when `model` is missing (a killed swap)."""
    previous = folder / model.name
    if folder.name.endswith(".old") and previous.is_dir() and not os.path.lexists(model):
        os.rename(previous, model)
    shutil.rmtree(folder)
