"""Giving the memory a finished stage of a long fit freed back to the operating system.

glibc keeps freed heap memory for the process: arrays under its mmap threshold (which
rises up to 32 MB as large arrays are freed) come from the heap, and a freed run of
them in the middle of it stays resident. The next stage's peak would count it again
(a seed of IcePaHC's product left some 0.2 GB per fit)."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system (glibc's ``malloc_trim``).
    RETURNS (bool): whether there was a way to (False off glibc: nothing done)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    try:  # the process's own symbols: libc's where it is glibc
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # another libc, or Windows
        return None
