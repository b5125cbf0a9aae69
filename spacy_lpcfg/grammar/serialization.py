"""The on-disk and in-memory format of an LPCFG.

A grammar is four members: ``grammar.json`` (header: format name and version,
counts, array dtypes and shapes), ``symbols.json``, ``words.json`` and
``grammar.npz`` (the arrays, one ``.npy`` each). ``to_disk`` writes them as
files of a directory; ``to_bytes`` packs the same members into one zip
archive. Nothing is pickled, and archives are written with fixed timestamps
so that equal grammars give identical bytes.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Errors, GrammarError
from .symbols import SymbolTable

FORMAT_NAME = "spacy-lpcfg grammar"
FORMAT_VERSION = 1
HEADER, SYMBOLS, WORDS, ARRAYS = "grammar.json", "symbols.json", "words.json", "grammar.npz"
MEMBERS = (HEADER, SYMBOLS, WORDS, ARRAYS)
# Array name -> (dtype, trailing shape). Rows of the *_rules arrays are rules.
ARRAY_SPECS = {
    "n_states": ("int32", ()),
    "binary_rules": ("int32", (3,)),
    "binary_offsets": ("int64", ()),
    "binary_weights": ("float64", ()),
    "unary_rules": ("int32", (2,)),
    "unary_offsets": ("int64", ()),
    "unary_weights": ("float64", ()),
    "lexical_rules": ("int32", (2,)),
    "lexical_offsets": ("int64", ()),
    "lexical_weights": ("float64", ()),
}
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member timestamps: byte-identical output


def encode_members(
    symbols: SymbolTable, arrays: Mapping[str, np.ndarray], words: tuple[str, ...]
) -> dict[str, bytes]:
    """Serialise a grammar's parts into the bytes of the four members."""
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "counts": _counts(len(symbols), arrays, len(words)),
        "arrays": {
            name: {"dtype": str(arrays[name].dtype), "shape": list(arrays[name].shape)}
            for name in ARRAY_SPECS
        },
    }
    npy = {f"{name}.npy": _npy_bytes(arrays[name]) for name in ARRAY_SPECS}
    return {
        HEADER: _json_bytes(header),
        SYMBOLS: _json_bytes(symbols.to_dict()),
        WORDS: _json_bytes(list(words)),
        ARRAYS: pack_zip(npy),
    }


def decode_members(
    members: Mapping[str, bytes], source: str
) -> tuple[SymbolTable, dict[str, np.ndarray], list[str]]:
    """Parse and check the four members. Raises GrammarError naming `source`."""
    missing = [name for name in MEMBERS if name not in members]
    if HEADER in missing:
        raise GrammarError(Errors.E115.format(source=source, detail=f"no {HEADER}"))
    header = _read_json(members[HEADER], HEADER, source)
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise GrammarError(Errors.E115.format(source=source, detail=f"{HEADER} has no format tag"))
    version = header.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"bad format_version {version!r}")
        )
    if version > FORMAT_VERSION:
        raise GrammarError(
            Errors.E116.format(found=version, source=source, supported=FORMAT_VERSION)
        )
    if missing:
        raise GrammarError(Errors.E114.format(source=source, detail=f"missing {missing}"))
    try:
        counts = {key: int(header["counts"][key]) for key in _COUNT_KEYS}
        declared = {
            name: (header["arrays"][name]["dtype"], tuple(header["arrays"][name]["shape"]))
            for name in ARRAY_SPECS
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"bad header ({exc!r})")
        ) from None
    symbols = _read_symbols(members[SYMBOLS], source)
    words = _read_json(members[WORDS], WORDS, source)
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"{WORDS} is not a list of strings")
        )
    arrays = _read_arrays(members[ARRAYS], source)
    for name, (dtype, shape) in declared.items():
        array = arrays[name]
        if str(array.dtype) != dtype or array.shape != shape or dtype != ARRAY_SPECS[name][0]:
            raise GrammarError(
                Errors.E114.format(
                    source=source,
                    detail=f"array {name} is {array.dtype}{list(array.shape)}, header says "
                    f"{dtype}{list(shape)}, format needs {ARRAY_SPECS[name][0]}",
                )
            )
    found = _counts(len(symbols), arrays, len(words))
    if found != counts:
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"counts {found} differ from header {counts}")
        )
    return symbols, arrays, words


def pack_zip(members: Mapping[str, bytes]) -> bytes:
    """An uncompressed zip archive of the members, with fixed timestamps."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=_ZIP_DATE), data)
    return buffer.getvalue()


def unpack_zip(data: bytes, source: str) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"not a readable archive ({exc})")
        ) from None


def write_directory(members: Mapping[str, bytes], path: str | Path) -> None:
    """Write the members as files; each file appears whole (written then renamed)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, data in members.items():
        partial = path / f".{name}.partial"
        partial.write_bytes(data)
        os.replace(partial, path / name)


def read_directory(path: str | Path) -> dict[str, bytes]:
    path = Path(path)
    if not path.is_dir():
        raise GrammarError(Errors.E115.format(source=path, detail="not a directory"))
    return {name: (path / name).read_bytes() for name in MEMBERS if (path / name).is_file()}


_COUNT_KEYS = ("symbols", "binary_rules", "unary_rules", "lexical_rules", "words")


def _counts(n_symbols: int, arrays: Mapping[str, np.ndarray], n_words: int) -> dict[str, int]:
    return {
        "symbols": n_symbols,
        "binary_rules": len(arrays["binary_rules"]),
        "unary_rules": len(arrays["unary_rules"]),
        "lexical_rules": len(arrays["lexical_rules"]),
        "words": n_words,
    }


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).encode("utf8")


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _read_json(data: bytes, name: str, source: str) -> Any:
    try:
        return json.loads(data.decode("utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GrammarError(Errors.E114.format(source=source, detail=f"{name}: {exc}")) from None


def _read_symbols(data: bytes, source: str) -> SymbolTable:
    try:
        return SymbolTable.from_dict(_read_json(data, SYMBOLS, source))
    except GrammarError as exc:
        raise GrammarError(Errors.E114.format(source=source, detail=f"{SYMBOLS}: {exc}")) from None


def _read_arrays(data: bytes, source: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            names = set(npz.files)
            if names != set(ARRAY_SPECS):
                raise GrammarError(
                    Errors.E114.format(
                        source=source,
                        detail=f"{ARRAYS} holds {sorted(names)}, expected {sorted(ARRAY_SPECS)}",
                    )
                )
            return {name: npz[name] for name in ARRAY_SPECS}
    except GrammarError:
        raise
    except Exception as exc:  # np.load raises many types on corrupt input
        raise GrammarError(
            Errors.E114.format(source=source, detail=f"{ARRAYS} is corrupt or truncated ({exc!r})")
        ) from None
