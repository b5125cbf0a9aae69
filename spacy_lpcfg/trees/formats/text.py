"""Decoding user files: encodings checked up front, a UTF-8 byte-order mark
accepted, and undecodable bytes reported with file, line, column and a short
excerpt (never a traceback from deep inside a codec, never the whole line).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ...errors import Errors, TreebankFormatError, excerpt

# What ``ESCAPE`` makes of an undecodable byte b: the lone surrogate U+DC00 + b. Python's
# "surrogateescape" does the same for bytes >= 0x80 only, and fails on the others,
# which UTF-16 and UTF-32 (a truncated code unit) also leave undecodable.
ESCAPE = "spacy_lpcfg.escape"
_ESCAPED_BYTE = re.compile("[\udc00-\udcff]")


def _escape_bytes(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(chr(0xDC00 + byte) for byte in bad), error.end


codecs.register_error(ESCAPE, _escape_bytes)


def check_encoding(encoding: str) -> str:
    """The codec to read ``encoding`` with: its canonical name, ``utf-8-sig`` for
    UTF-8 (so a byte-order mark is dropped). RAISES ValueError: unknown encoding."""
    try:
        name = codecs.lookup(encoding).name
        _decodes_text(name)
    except (LookupError, TypeError, ValueError):
        raise ValueError(Errors.E022.format(name=excerpt(str(encoding)))) from None
    return "utf-8-sig" if name == "utf-8" else name


def _decodes_text(codec: str) -> None:
    """RAISES LookupError: ``codec`` does not decode bytes to text (base64, rot13, zlib)."""
    with contextlib.suppress(UnicodeError):  # a text codec that cannot decode this one byte
        b"a".decode(codec)


def decode_text(data: bytes, encoding: str, path: str | Path) -> str:
    """The text of a file's bytes (see ``check_encoding``).

    RAISES TreebankFormatError: a byte the encoding cannot decode (file, line, column).
    ValueError: unknown encoding.
    """
    codec = check_encoding(encoding)
    try:
        return data.decode(codec).removeprefix("\ufeff")
    except UnicodeError as error:
        problem = error
    try:
        text = data.decode(codec, ESCAPE)
    except UnicodeError:  # not a bad byte but the codec's own complaint
        text = ""
    bad = _ESCAPED_BYTE.search(text)
    if bad is None:
        reason = f"Cannot decode the file as {encoding}: {problem}"
        raise TreebankFormatError(reason, path=path) from None
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
        raise TreebankFormatError(Errors.E024.format(reason=reason), path=path) from None


def iter_lines(stream: BinaryIO, encoding: str, path: str | Path) -> Iterator[str]:
    """The lines of a binary stream, decoded as they are read (stdin stays interactive),
    without their line ends. RAISES TreebankFormatError as ``decode_text``."""
    codec = check_encoding(encoding)
    # The byte-order mark is dropped here: Python's incremental utf-8-sig decoder
    # silently drops an input of one or two bytes that begins like one (b"\xef").
    sig = codec == "utf-8-sig"
    text = io.TextIOWrapper(stream, encoding="utf-8" if sig else codec, errors=ESCAPE)
    number = 0
    try:
        for number, line in enumerate(text, 1):
            if sig and number == 1:
                line = line.removeprefix("\ufeff")
                if not line:  # the input is a byte-order mark alone: no line at all
                    return
            line = line.rstrip("\n")
            if not line.isascii():
                bad = _ESCAPED_BYTE.search(line)
                if bad is not None:
                    raise _undecodable(line, bad.start(), encoding, path, number)
            yield line
    except UnicodeError as error:  # the codec's own ("UTF-16 stream does not start with BOM")
        reason = f"Cannot decode the input as {encoding}: {error}"
        raise TreebankFormatError(reason, path=path, line=number + 1) from None
    finally:
        text.detach()  # leave the caller's stream (sys.stdin.buffer) open


def _undecodable(
    line: str, offset: int, encoding: str, path: str | Path, number: int
) -> TreebankFormatError:
    near = _ESCAPED_BYTE.sub("\ufffd", line)
    message = Errors.E016.format(
        byte=ord(line[offset]) - 0xDC00, encoding=encoding, near=excerpt(near, at=offset)
    )
    return TreebankFormatError(message, path=path, line=number, column=offset + 1)
