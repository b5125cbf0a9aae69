"""The atomic directory layer under ``ParsingModel.to_disk`` (``grammar.storage``), on
directories of plain files: it knows nothing of models."""

from __future__ import annotations

import os

import pytest

from spacy_lpcfg.grammar.storage import STALE_SECONDS, WRITER, write_directory


def _refuse_files(path):
    if path.is_file():
        raise ValueError("not a directory")


def test_write_directory_replaces_the_directory_whole(tmp_path):
    target = tmp_path / "out"
    write_directory(target, [{"a.txt": b"1", "sub/b.txt": b"2"}], 1, check=_refuse_files)
    write_directory(target, [{"c.txt": b"3"}], 1, check=_refuse_files)
    assert sorted(p.name for p in target.rglob("*")) == ["c.txt"]
    assert os.listdir(tmp_path) == ["out"]  # no partial or old holder left beside it


def test_write_directory_checks_the_target_before_writing(tmp_path):
    target = tmp_path / "out"
    target.write_text("a file")
    with pytest.raises(ValueError, match="not a directory"):
        write_directory(target, [{"a.txt": b"1"}], 1, check=_refuse_files)
    assert target.read_text() == "a file" and os.listdir(tmp_path) == ["out"]


def test_write_directory_clears_a_stale_leftover_and_puts_back_a_moved_directory(tmp_path):
    # a swap killed after moving the old directory into its holder
    holder = tmp_path / ".out.0123abcd.old"
    (holder / "out").mkdir(parents=True)
    (holder / "out" / "kept.txt").write_text("old")
    (holder / WRITER).write_text(f"{os.getpid()} elsewhere\n")
    old = os.stat(holder).st_mtime - 2 * STALE_SECONDS
    for path in (holder / "out" / "kept.txt", holder / "out", holder / WRITER, holder):
        os.utime(path, (old, old))
    seen = []  # what the check found: the old directory, back in place

    def check(path):
        seen.append((path / "kept.txt").read_text())

    write_directory(tmp_path / "out", [{"new.txt": b"1"}], 1, check=check)
    assert seen == ["old"] and os.listdir(tmp_path) == ["out"]
    assert os.listdir(tmp_path / "out") == ["new.txt"]
