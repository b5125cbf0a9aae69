"""release_freed_memory: the heap's free pages go back to the operating system."""

from __future__ import annotations

import sys

import pytest

from spacy_lpcfg.memory import release_freed_memory


def _resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc only")
def test_freed_heap_memory_in_the_middle_of_the_heap_is_given_back():
    if not release_freed_memory():
        pytest.skip("not glibc")
    # 200 MB of heap blocks (under the mmap threshold), every 50th kept so that the heap
    # cannot shrink from its top: what free() alone leaves resident
    blocks = [bytearray(64 * 1024) for _ in range(3200)]
    kept = blocks[::50]
    del blocks
    before = _resident_mb()
    assert release_freed_memory()
    after = _resident_mb()
    assert before - after > 100, (before, after)
    assert len(kept) == 64
