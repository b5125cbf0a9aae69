"""The on-disk and in-memory format of an LPCFG, and safe readers of JSON and npz files.

A grammar is four members: ``grammar.json`` (header: format name and version,
counts, array dtypes and shapes), ``symbols.json``, ``words.json`` and
``grammar.npz`` (the arrays, one ``.npy`` each). ``to_disk`` writes them as
files of a directory; ``to_bytes`` packs the same members into one zip
archive. Nothing is pickled, and archives are written with fixed timestamps
so that equal grammars give identical bytes.

Model files may be corrupt or crafted, so the readers check before they
allocate: every zip member's size against the archive's (a member may not
inflate past ``MAX_COMPRESSION_RATIO`` times its compressed size), every
``.npy`` header's dtype and shape against the JSON metadata, and nesting
depth of JSON. Each failure is a ``GrammarError`` naming the file and the
field, with a short excerpt of the offending value.
"""

from __future__ import annotations

import io
import json
import math
import os
import reprlib
import stat
import tokenize
import warnings
import zipfile
import zlib
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, BinaryIO, cast

import numpy as np

from ..errors import Errors, GrammarError
from .sparse_weights import SparseWeights, position_dtype
from .symbols import SYMBOL_KINDS, SymbolTable

FORMAT_NAME = "spacy-lpcfg grammar"
FORMAT_VERSION = 2  # 2: weights may be stored sparse; written only when they are
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
WEIGHTS = ("binary_weights", "unary_weights", "lexical_weights")
# Weights with at most SPARSE_FRACTION non-zero values are stored as the non-zero values
# and their positions: clustering grammars are ~2% non-zero, so their files shrink
# about 25-fold. Binary weights stay so in memory (LPCFG.binary_sparse).
POSITIONS = "_positions"  # suffix of the positions array of sparse weights
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member timestamps: byte-identical output

# Limits on untrusted files. We write JSON a few levels deep and uncompressed
# archives; float weights barely compress, so a member inflating more than
# MAX_COMPRESSION_RATIO times (beyond a small allowance) is a zip bomb.
MAX_JSON_DEPTH = 64
MAX_COMPRESSION_RATIO = 32
INFLATE_ALLOWANCE = 64 << 20  # bytes any compressed member may inflate to
# The largest array accepted: 64 GiB, far above real grammars (the largest we train,
# IcePaHC's at 16 states, has its binary weights counted in BENCHMARKS.md "Latent
# estimators: training cost").
MAX_ARRAY_BYTES = 1 << 36

Fail = Callable[[str], Exception]  # detail -> the exception to raise, naming the source
_EXCERPT = reprlib.Repr()
_EXCERPT.maxlevel, _EXCERPT.maxlist, _EXCERPT.maxdict = 2, 4, 4
_EXCERPT.maxstring = _EXCERPT.maxother = _EXCERPT.maxlong = 40


def excerpt(value: Any, limit: int = 60) -> str:
    """A short repr of a value of any size or depth, for error messages."""
    text = _EXCERPT.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shorten(text: str, limit: int = 400) -> str:
    """The text, cut to `limit` characters (messages that quote other messages)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Grammar members -------------------------------------------------------------


def encode_members(
    symbols: SymbolTable,
    arrays: Mapping[str, np.ndarray | SparseWeights],
    words: tuple[str, ...],
) -> dict[str, FileData]:
    """Serialise a grammar's parts into its four members: bytes, and the arrays as an
    ``NpzArchive`` not yet encoded. Mostly-zero weights (``SparseWeights.worth_it``),
    and weights given as SparseWeights, are stored sparse, and only then is the format
    version 2, so that files without them stay readable by version-1 readers."""
    stored: dict[str, np.ndarray] = {}
    sparse = {}
    for name, weights in arrays.items():
        if (
            name in WEIGHTS
            and not isinstance(weights, SparseWeights)
            and SparseWeights.worth_it(weights)
        ):
            weights = SparseWeights.from_dense(weights)
        if isinstance(weights, SparseWeights):
            stored[name] = weights.values
            # int32 where the length allows (as in memory), so that a reader can use
            # the file's positions where they lie (read_npz)
            stored[name + POSITIONS] = np.asarray(
                weights.positions, dtype=position_dtype(weights.length)
            )
            sparse[name] = weights.length
        else:
            stored[name] = weights
    entries: dict[str, dict[str, Any]] = {}
    for name in stored:
        entries[name] = {"dtype": str(stored[name].dtype), "shape": list(stored[name].shape)}
        if name in sparse:
            entries[name]["length"] = sparse[name]
    header = {
        "format": FORMAT_NAME,
        "format_version": 2 if sparse else 1,
        "counts": _counts(len(symbols), stored, len(words)),
        "arrays": entries,
    }
    return {
        HEADER: _json_bytes(header),
        SYMBOLS: _json_bytes(symbols.to_dict()),
        WORDS: _json_bytes(list(words)),
        ARRAYS: NpzArchive(stored),
    }


def decode_members(
    members: Mapping[str, bytes], source: str
) -> tuple[SymbolTable, dict[str, Any], list[str]]:
    """Parse and check the four members. Raises GrammarError naming `source` and the file.

    The arrays are read only after their ``.npy`` headers match the shapes that
    grammar.json declares, and those shapes match its counts. Binary weights stored
    sparse come back as SparseWeights (the LPCFG keeps them so), other sparse
    weights dense.
    """

    def fail(detail: str) -> GrammarError:
        return GrammarError(Errors.E114.format(source=source, detail=detail))

    missing = [name for name in MEMBERS if name not in members]
    if HEADER in missing:
        raise GrammarError(Errors.E115.format(source=source, detail=f"no {HEADER}"))
    header = read_json(members[HEADER], HEADER, fail)
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise GrammarError(Errors.E115.format(source=source, detail=f"{HEADER} has no format tag"))
    check_version(header.get("format_version"), HEADER, FORMAT_VERSION, source, newer_code="E116")
    if missing:
        raise fail(f"missing {', '.join(missing)}")
    counts = _header_counts(header, fail)
    shapes = _header_shapes(header, counts, fail)
    symbols = _read_symbols(members[SYMBOLS], fail)
    words = read_json(members[WORDS], WORDS, fail)
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise fail(f"{WORDS} must be a list of strings, not {excerpt(words)}")
    found = {"symbols": len(symbols), "words": len(words)}
    for key, name in (("symbols", SYMBOLS), ("words", WORDS)):
        if found[key] != counts[key]:
            raise fail(f"{name} has {found[key]} {key}, {HEADER} 'counts.{key}' says {counts[key]}")
    specs = {name: (ARRAY_SPECS[name][0], shapes[name]) for name in ARRAY_SPECS}
    lengths = _sparse_lengths(header, shapes, fail)
    for name, length in lengths.items():
        specs[name + POSITIONS] = (_positions_dtype(header, name, length, fail), shapes[name])
    # Views of the file's bytes keep all of them alive: only when the grammar keeps every
    # array as stored (no weights made dense, no positions of another width).
    kept_as_stored = all(
        name == "binary_weights"
        and np.dtype(specs[name + POSITIONS][0]) == np.dtype(position_dtype(length))
        for name, length in lengths.items()
    )
    arrays = read_npz(members[ARRAYS], ARRAYS, specs, fail, views=kept_as_stored)
    decoded: dict[str, Any] = dict(arrays)
    for name, length in lengths.items():
        weights = _sparse_weights(arrays, name, length, fail)
        decoded[name] = weights if name == "binary_weights" else weights.to_dense()
        del decoded[name + POSITIONS]
    return symbols, decoded, words


def _sparse_lengths(
    header: Mapping[str, Any], shapes: Mapping[str, tuple[int, ...]], fail: Fail
) -> dict[str, int]:
    """The weights stored sparse: name -> the length of the dense array."""
    lengths = {}
    for name in WEIGHTS:
        length = header["arrays"][name].get("length")
        if length is None:
            continue
        if not _is_count(length) or length < shapes[name][0] or length * 8 > MAX_ARRAY_BYTES:
            raise fail(
                f"{HEADER}: 'arrays.{name}.length' must be an integer from the number of "
                f"stored values ({shapes[name][0]}) to {MAX_ARRAY_BYTES // 8}, not "
                f"{excerpt(length)}"
            )
        lengths[name] = length
    return lengths


def _positions_dtype(header: Mapping[str, Any], name: str, length: int, fail: Fail) -> str:
    """The stored positions' dtype, "int64" or, when `length` allows, "int32" (the
    writer's choice since positions are stored as they are kept)."""
    entry = header["arrays"].get(name + POSITIONS)
    declared = entry.get("dtype", "int64") if isinstance(entry, dict) else "int64"
    allowed = ("int32", "int64") if position_dtype(length) == np.int32 else ("int64",)
    if declared not in allowed:
        raise fail(
            f"{HEADER}: 'arrays.{name}{POSITIONS}.dtype' must be {' or '.join(allowed)} "
            f"for length {length}, not {excerpt(declared)}"
        )
    return str(declared)


def _sparse_weights(
    arrays: Mapping[str, np.ndarray], name: str, length: int, fail: Fail
) -> SparseWeights:
    """Sparse weights, checked so that ``to_dense`` may allocate."""
    weights = SparseWeights(arrays[name + POSITIONS], arrays[name], length)
    kind = name.partition("_")[0]
    offsets = arrays[f"{kind}_offsets"]
    if len(offsets) and offsets[-1] != length:
        raise fail(f"{ARRAYS}: {name} has length {length}, its offsets end at {offsets[-1]}")
    if weights.check():
        raise fail(f"{ARRAYS}: {name}{POSITIONS} must increase within [0, {length})")
    return weights


def _header_counts(header: Mapping[str, Any], fail: Fail) -> dict[str, int]:
    counts = header.get("counts")
    if not isinstance(counts, dict):
        raise fail(f"{HEADER}: 'counts' must be an object, not {excerpt(counts)}")
    for key in _COUNT_KEYS:
        if not _is_count(counts.get(key)):
            raise fail(
                f"{HEADER}: 'counts.{key}' must be an integer >= 0, not {excerpt(counts.get(key))}"
            )
    return {key: counts[key] for key in _COUNT_KEYS}


def _header_shapes(
    header: Mapping[str, Any], counts: Mapping[str, int], fail: Fail
) -> dict[str, tuple[int, ...]]:
    """The declared shape of each array, checked against the dtypes and counts."""
    declared = header.get("arrays")
    if not isinstance(declared, dict):
        raise fail(f"{HEADER}: 'arrays' must be an object, not {excerpt(declared)}")
    shapes = {}
    for name, (dtype, trailing) in ARRAY_SPECS.items():
        field = f"{HEADER}: 'arrays.{name}'"
        entry = declared.get(name)
        if not isinstance(entry, dict):
            raise fail(f"{field} must be an object with dtype and shape, not {excerpt(entry)}")
        if entry.get("dtype") != dtype:
            raise fail(f"{field}.dtype must be {dtype!r}, not {excerpt(entry.get('dtype'))}")
        shape = entry.get("shape")
        if not (isinstance(shape, list) and all(map(_is_count, shape))):
            raise fail(f"{field}.shape must be a list of integers >= 0, not {excerpt(shape)}")
        kind, _, part = name.partition("_")
        expected: list[int | None]
        if name == "n_states":
            expected = [counts["symbols"]]
        elif part == "rules":
            expected = [counts[name], *trailing]
        elif part == "offsets":
            expected = [counts[f"{kind}_rules"] + 1]
        else:  # weights: any length (LPCFG checks it against the offsets)
            expected = [shape[0] if len(shape) == 1 else None]
        if shape != expected:
            shown = ", ".join("n" if size is None else str(size) for size in expected)
            raise fail(f"{field}.shape is {excerpt(shape)}; the counts give [{shown}]")
        shapes[name] = tuple(shape)
    return shapes


def check_version(
    version: Any, name: str, supported: int, source: str | Path, *, newer_code: str
) -> None:
    """Raise GrammarError unless `version` is a format version from 1 to `supported`.

    newer_code (str): the Errors code for a version newer than this package reads.
    """
    if not _is_count(version) or version < 1:
        raise GrammarError(
            Errors.E128.format(
                name=name, source=source, found=excerpt(version), supported=supported
            )
        )
    if version > supported:
        message = getattr(Errors, newer_code)
        raise GrammarError(message.format(found=version, source=source, supported=supported))


# Zip archives ------------------------------------------------------------------


def pack_zip(members: Mapping[str, bytes]) -> bytes:
    """An uncompressed zip archive of the members, with fixed timestamps."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=_ZIP_DATE), data)
    return buffer.getvalue()


def pack_npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    """An uncompressed zip archive of the arrays' ``.npy`` files (``NAME.npy``), as
    ``np.savez`` writes them, except that each member's data starts at a multiple of
    ``NPY_ALIGNMENT`` bytes in the archive (padding in its local header's extra field,
    as zipalign pads): a reader then uses the arrays where they lie in the file's
    bytes instead of copying them (``read_npz``)."""
    buffer = io.BytesIO()
    _write_npz(buffer, arrays)
    return buffer.getvalue()


class NpzArchive:
    """A ``.npz`` member not encoded yet: ``bytes(archive)`` is ``pack_npz(arrays)``, and
    ``write(file)`` writes those bytes into an open file straight from the arrays'
    memory, so that writing a model directory holds no archive of a grammar's size."""

    __slots__ = ("arrays",)

    def __init__(self, arrays: Mapping[str, np.ndarray]):
        self.arrays = arrays

    def write(self, file: BinaryIO) -> None:
        _write_npz(file, self.arrays)

    def __bytes__(self) -> bytes:
        return pack_npz(self.arrays)


FileData = bytes | NpzArchive
"""A model file's content: bytes, or an archive written on demand (``write_file``)."""


def write_file(path: Path, data: FileData) -> None:
    """Write one model file (an ``NpzArchive`` streamed, without its bytes in memory)."""
    if isinstance(data, NpzArchive):
        with open(path, "wb") as file:
            data.write(file)
    else:
        path.write_bytes(data)


def _write_npz(target: BinaryIO, arrays: Mapping[str, np.ndarray]) -> None:
    """``pack_npz``'s archive into ``target`` (seekable, at its start). Each array is
    written from its own memory: no ``.npy`` copy of it first."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            array = np.asarray(array, order="C")  # ascontiguousarray makes 0-d arrays 1-d
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                header, np.lib.format.header_data_from_array_1_0(array)
            )
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            # what writestr sets before it opens the member (its zip64 choice reads it)
            info.file_size = header.tell() + array.nbytes
            info.extra = _alignment_padding(target.tell(), info)
            with archive.open(info, mode="w") as member:
                member.write(header.getvalue())
                if array.size:
                    member.write(array.data.cast("B"))


# The .npy header pads the data to a multiple of 64 bytes from the member's start.
NPY_ALIGNMENT = 64
_PADDING_ID = 0xD935  # the extra field's id Android's zipalign pads with


def _alignment_padding(offset: int, info: zipfile.ZipInfo) -> bytes:
    """An extra field that makes the member whose local header starts at `offset`
    begin at a multiple of NPY_ALIGNMENT. A local header is 30 bytes, the name and
    the extra field, and the zip64 sizes (20 bytes) that zipfile adds to a member
    it expects near 4 GiB (its rule in ZipFile.open)."""
    zip64 = 20 if info.file_size * 1.05 > zipfile.ZIP64_LIMIT else 0
    start = offset + 30 + len(info.filename.encode("utf-8")) + zip64
    padding = -start % NPY_ALIGNMENT
    if padding and padding < 4:  # a field is at least its 4-byte id and size
        padding += NPY_ALIGNMENT
    if not padding:
        return b""
    return (
        _PADDING_ID.to_bytes(2, "little") + (padding - 4).to_bytes(2, "little") + bytes(padding - 4)
    )


def unpack_zip(data: bytes, source: str, fail: Fail | None = None) -> dict[str, bytes]:
    """The members of a zip archive, each checked for its size before it is inflated.

    fail (Fail | None): makes the exception from a detail; defaults to E114 for `source`.
    """
    if fail is None:

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E114.format(source=source, detail=detail))

    try:
        with _open_zip(data, "archive", fail) as archive:
            infos = archive.infolist()
            _check_sizes(infos, len(data), "archive", fail)
            return {info.filename: archive.read(info) for info in infos}
    except GrammarError:
        raise
    except _ZIP_ERRORS as exc:
        raise fail(f"not a readable archive ({_exception(exc)})") from None


def read_npz(
    data: bytes,
    name: str,
    specs: Mapping[str, tuple[str, tuple[int | None, ...]]],
    fail: Fail,
    optional: Collection[str] = (),
    views: bool = True,
) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` archive, without pickle, checked before allocation.

    name (str): the file name, for messages.
    specs (Mapping): array name -> (dtype, shape); None in a shape accepts any size.
        Each member's ``.npy`` header must give exactly that dtype and shape, and
        the member must hold exactly the bytes the header implies.
    optional (Collection[str]): names of specs that may be absent.
    views (bool): whether arrays may be views of `data` (``_read_npy``); False when the
        caller keeps only some of them, as a view keeps all of `data` alive.
    RETURNS (dict[str, np.ndarray]): the arrays present, by name, read-only.
    """
    try:
        with _open_zip(data, name, fail) as archive:
            infos = {}
            for info in archive.infolist():
                key = info.filename.removesuffix(".npy")
                if key not in specs or key in infos or key == info.filename:
                    listed = ", ".join(f"{key}.npy" for key in specs)
                    raise fail(
                        f"{name} has an unexpected or repeated member {excerpt(info.filename)} "
                        f"(it holds {listed})"
                    )
                infos[key] = info
            _check_sizes(list(infos.values()), len(data), name, fail)
            absent = [key for key in specs if key not in infos and key not in optional]
            if absent:
                raise fail(f"{name} lacks {', '.join(f'{key}.npy' for key in absent)}")
            return {
                key: _read_npy(archive, infos[key], specs[key], name, fail, data, views)
                for key in specs
                if key in infos
            }
    except GrammarError:
        raise
    except _ZIP_ERRORS as exc:
        raise fail(f"{name} is corrupt or truncated ({_exception(exc)})") from None


# zipfile, zlib and numpy's header parser raise these on corrupt input.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,  # an unsupported compression method
    RuntimeError,  # an encrypted member
    SyntaxError,  # a .npy header that is not a Python literal
    tokenize.TokenError,  # ... nor close to one (numpy retries it as a Python 2 header)
    TypeError,
    OverflowError,
)


def _open_zip(data: bytes, name: str, fail: Fail) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise fail(f"{name} is not a readable zip archive ({_exception(exc)})") from None


def _check_sizes(infos: list[zipfile.ZipInfo], archive_size: int, name: str, fail: Fail) -> None:
    """Refuse members whose inflated size the archive cannot honestly hold: before
    anything is read, so that a zip bomb allocates nothing."""
    stored = 0
    for info in infos:
        member = f"{name} member {excerpt(info.filename)}"
        if info.compress_type == zipfile.ZIP_STORED:
            limit = info.compress_size
        else:
            limit = max(INFLATE_ALLOWANCE, MAX_COMPRESSION_RATIO * info.compress_size)
        if info.file_size > min(limit, MAX_ARRAY_BYTES):
            raise fail(
                f"{member} would inflate {info.compress_size} bytes to {info.file_size} "
                f"(more than {MAX_COMPRESSION_RATIO} times, or over {MAX_ARRAY_BYTES} bytes): "
                "a corrupt or malicious archive"
            )
        stored += info.compress_size
    # Members of an honest archive do not overlap (overlapping ones multiply one payload).
    if stored > archive_size:
        raise fail(f"{name}: its members claim {stored} bytes in a {archive_size}-byte archive")


def _read_npy(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    spec: tuple[str, tuple[int | None, ...]],
    name: str,
    fail: Fail,
    data: bytes,
    views: bool,
) -> np.ndarray:
    """One member's array, its header checked against `spec` and the member's size.

    data (bytes): the whole archive. A stored (uncompressed) member, as ``np.savez``
        writes them, is read from it in place, its CRC checked, and returned as a
        view of `data` when `views`, aligned (``pack_npz`` aligns them) and `data` is
        ``bytes``, else as an aligned copy; going through ``zipfile``'s stream copies every byte three times more,
        which a parser's first sentence waits for. Every array returned is read-only.
    """
    where = f"{name}: {info.filename}"
    plain = info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1  # not encrypted
    stored = _stored_member(info, data, where, fail) if plain else None
    with (
        (
            io.BytesIO(stored[:_NPY_HEADER_BYTES]) if stored is not None else archive.open(info)
        ) as stream,
        warnings.catch_warnings(),
    ):
        # A header numpy cannot parse is retried as a Python 2 one, with a UserWarning
        # that would only mislead about a corrupt file.
        warnings.simplefilter("ignore", UserWarning)
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise fail(f"{where} has .npy format version {version}, expected 1.0 or 2.0")
        expected_dtype, expected_shape = np.dtype(spec[0]), spec[1]
        if dtype != expected_dtype:
            raise fail(f"{where} holds {excerpt(str(dtype))} values, expected {expected_dtype}")
        if len(shape) != len(expected_shape) or any(
            want is not None and size != want for size, want in zip(shape, expected_shape)
        ):
            shown = ", ".join("n" if size is None else str(size) for size in expected_shape)
            raise fail(f"{where} has shape {excerpt(list(shape))}, expected [{shown}]")
        n_bytes = math.prod(shape) * dtype.itemsize
        header = stream.tell()
        if header + n_bytes != info.file_size:
            raise fail(
                f"{where} holds {info.file_size - header} bytes of data, its header says {n_bytes}"
            )
        # C order in memory; a Fortran-order array is its transpose's C-order data.
        layout = shape[::-1] if fortran else shape
        if stored is not None:
            values = np.frombuffer(stored, dtype=dtype, count=math.prod(shape), offset=header)
            # Read-only, in the archive's bytes: used where it lies when aligned (as
            # pack_npz writes members), else copied, as compiled kernels want it aligned.
            array = values.reshape(layout)
            # exactly bytes: immutable (a subclass may hand out another buffer)
            if not (views and array.flags.aligned and type(data) is bytes and stored.readonly):
                array = array.copy()
        else:
            array = np.empty(layout, dtype=dtype)
            # stubs: a zipfile stream has readinto, an ndarray is a buffer
            if (
                n_bytes
                and stream.readinto(  # type: ignore[attr-defined]
                    memoryview(array.reshape(-1)).cast("B")  # type: ignore[arg-type]
                )
                != n_bytes
            ):
                raise fail(f"{where} is truncated")
            stream.read(1)  # reach the end of the member, which checks its CRC
    array.flags.writeable = False  # alike however stored; a grammar shares it uncopied
    return array.T if fortran else array


# What numpy's header readers read at most: magic, length and a header of up to their
# max_header_size (10,000 bytes).
_NPY_HEADER_BYTES = 12 + 10_000


def _stored_member(info: zipfile.ZipInfo, data: bytes, where: str, fail: Fail) -> memoryview:
    """The bytes of a stored member of the archive `data`, found through its local
    header as ``zipfile`` finds them, with the checks it makes and its CRC."""
    start = info.header_offset
    local = data[start : start + 30]
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise fail(f"{where}: the archive is corrupt (no local header where the index says)")
    name_length = int.from_bytes(local[26:28], "little")
    extra_length = int.from_bytes(local[28:30], "little")
    encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"  # as zipfile decodes names
    if data[start + 30 : start + 30 + name_length] != info.orig_filename.encode(encoding):
        raise fail(f"{where}: the archive is corrupt (its index and a header disagree)")
    begin = start + 30 + name_length + extra_length
    end = begin + info.compress_size
    if info.compress_size != info.file_size or end > len(data):
        raise fail(f"{where} is truncated")
    member = memoryview(data)[begin:end]
    if zlib.crc32(member) != info.CRC:
        raise fail(f"{where} is corrupt (its CRC does not match)")
    return member


# Directories -------------------------------------------------------------------


def write_directory(members: Mapping[str, FileData], path: str | Path) -> None:
    """Write the members as files; each file appears whole (written then renamed)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, data in members.items():
        partial = path / f".{name}.partial"
        write_file(partial, data)
        os.replace(partial, path / name)


def read_directory(path: str | Path) -> dict[str, bytes]:
    path = Path(path)
    if not path.is_dir():
        raise GrammarError(Errors.E115.format(source=path, detail="not a directory"))

    def fail(detail: str) -> GrammarError:
        return GrammarError(Errors.E114.format(source=path, detail=detail))

    files = {name: member_path(path, name) for name in MEMBERS}
    return {name: read_file(file, name, fail) for name, file in files.items() if file.is_file()}


def member_path(directory: Path, name: str) -> Path:
    """The path of the file or folder `name` ('/'-separated) of `directory`, which need
    not exist. Model files may be crafted: a link would make us read (and quote in error
    messages) any file, so no link is followed, on the way or at the end.

    RAISES GrammarError (E131): `name` or a folder on its way is a symbolic link (the
        message names that one), or it resolves outside `directory`. The message names
        `directory` and the member only, never the link's target.
    """
    path = directory
    parts = name.split("/")
    for i, part in enumerate(parts):
        path = path / part
        if path.is_symlink():
            linked = "/".join(parts[: i + 1])
            raise GrammarError(Errors.E131.format(source=directory, name=linked))
    # Other redirections (Windows junctions) show only once resolved.
    if os.path.lexists(path) and not path.resolve().is_relative_to(directory.resolve()):
        raise GrammarError(Errors.E131.format(source=directory, name=name))
    return path


def read_file(path: Path, name: str, fail: Fail) -> bytes:
    """A regular file's bytes; OSError becomes `fail`'s error naming the file. The file
    is opened without following a link (where the system can), so a link put in place
    after ``member_path`` checked it is not read either."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        # Non-blocking: opening a FIFO must not wait for a writer.
        with open(os.open(path, flags | getattr(os, "O_NONBLOCK", 0)), "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                raise fail(f"{name} is not a regular file")
            return stream.read()
    except OSError as exc:
        raise fail(f"cannot read {name} ({_exception(exc)})") from None


# JSON --------------------------------------------------------------------------


def read_json(data: bytes, name: str, fail: Fail) -> Any:
    """Parse a JSON file's bytes; malformed or too deeply nested JSON fails, naming `name`."""
    try:
        value = json.loads(data.decode("utf8"))
    except UnicodeDecodeError as exc:
        raise fail(f"{name} is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise fail(f"{name} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, or an integer with too many digits
        raise fail(f"{name} is not valid JSON ({shorten(str(exc), 120)})") from None
    if _too_deep(value, MAX_JSON_DEPTH):
        raise fail(f"{name} nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def _too_deep(value: Any, limit: int) -> bool:
    # Level by level over the containers only: models hold long lists of strings.
    level, depth = [value], 1
    while level:
        containers = [item for item in level if isinstance(item, (dict, list))]
        if not containers:
            return False
        if depth > limit:
            return True
        level = [
            child
            for item in containers
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        depth += 1
    return False


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _exception(exc: BaseException) -> str:
    return shorten(f"{type(exc).__name__}: {exc}", 120)


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
    np.lib.format.write_array(buffer, np.asarray(array, order="C"), allow_pickle=False)
    return buffer.getvalue()


def _read_symbols(data: bytes, fail: Fail) -> SymbolTable:
    table = read_json(data, SYMBOLS, fail)
    if not isinstance(table, dict):
        raise fail(f"{SYMBOLS} must be an object with 'names' and 'kinds', not {excerpt(table)}")
    names, kinds = table.get("names"), table.get("kinds")
    for field, values in (("names", names), ("kinds", kinds)):
        if not isinstance(values, list):
            raise fail(f"{SYMBOLS}: '{field}' must be a list of strings, not {excerpt(values)}")
        bad = next((value for value in values if not isinstance(value, str)), None)
        if bad is not None:
            raise fail(f"{SYMBOLS}: '{field}' must hold strings, not {excerpt(bad)}")
    names, kinds = cast("list[str]", names), cast("list[str]", kinds)  # checked above
    if len(names) != len(kinds):
        raise fail(f"{SYMBOLS} has {len(names)} names and {len(kinds)} kinds")
    unknown = next((kind for kind in kinds if kind not in SYMBOL_KINDS), None)
    if unknown is not None:
        raise fail(f"{SYMBOLS}: unknown kind {excerpt(unknown)} (kinds: {', '.join(SYMBOL_KINDS)})")
    try:
        return SymbolTable(names, kinds)
    except GrammarError as exc:
        raise fail(f"{SYMBOLS}: {shorten(str(exc))}") from None
