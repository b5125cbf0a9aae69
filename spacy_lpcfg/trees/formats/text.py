"""Decoding user files: encodings checked up front, a UTF-8 byte-order mark
accepted, and undecodable bytes reported with file, line, column and a short
excerpt (never a traceback from deep inside a codec, never the whole line).
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ...errors import Errors, TreebankFormatError, excerpt

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what "surrogateescape" makes of a bad byte


def check_encoding(encoding: str) -> str:
    """The codec to read ``encoding`` with: its canonical name, ``utf-8-sig`` for
    UTF-8 (so a byte-order mark is dropped). RAISES ValueError: unknown encoding."""
    try:
        name = codecs.lookup(encoding).name
    except (LookupError, TypeError, ValueError):
        raise ValueError(Errors.E023.format(name=excerpt(str(encoding)))) from None
    return "utf-8-sig" if name == "utf-8" else name


def decode_text(data: bytes, encoding: str, path: str | Path) -> str:
    """The text of a file's bytes (see ``check_encoding``).

    RAISES TreebankFormatError: a byte the encoding cannot decode (file, line, column).
    ValueError: unknown encoding.
    """
    codec = check_encoding(encoding)
    try:
        return data.decode(codec).removeprefix("\ufeff")
    except UnicodeDecodeError:
        text = data.decode(codec, "surrogateescape")
    bad = _ESCAPED_BYTE.search(text)
    line = text.count("\n", 0, bad.start()) + 1
    start = text.rfind("\n", 0, bad.start()) + 1
    end = text.find("\n", bad.start())
    raise _undecodable(
        text[start : end if end >= 0 else len(text)], bad.start() - start, encoding, path, line
    )


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of a file (see ``decode_text``). RAISES TreebankFormatError: the file
    cannot be read or decoded. ValueError: unknown encoding."""
    check_encoding(encoding)
    return decode_text(read_bytes(path), encoding, path)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file. RAISES TreebankFormatError: it cannot be read (a directory,
    no permission, ...), naming the file and the reason."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise TreebankFormatError(Errors.E025.format(reason=reason), path=path) from None


def iter_lines(stream: BinaryIO, encoding: str, path: str | Path) -> Iterator[str]:
    """The lines of a binary stream, decoded as they are read (stdin stays interactive),
    without their line ends. RAISES TreebankFormatError as ``decode_text``."""
    text = io.TextIOWrapper(stream, encoding=check_encoding(encoding), errors="surrogateescape")
    try:
        for number, line in enumerate(text, 1):
            line = line.rstrip("\n")
            if not line.isascii():
                bad = _ESCAPED_BYTE.search(line)
                if bad is not None:
                    raise _undecodable(line, bad.start(), encoding, path, number)
            yield line
    finally:
        text.detach()  # leave the caller's stream (sys.stdin.buffer) open


def _undecodable(
    line: str, offset: int, encoding: str, path: str | Path, number: int
) -> TreebankFormatError:
    near = _ESCAPED_BYTE.sub("\ufffd", line)
    message = Errors.E017.format(
        byte=ord(line[offset]) - 0xDC00, encoding=encoding, near=excerpt(near, at=offset)
    )
    return TreebankFormatError(message, path=path, line=number, column=offset + 1)
