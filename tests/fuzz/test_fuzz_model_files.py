"""Fuzzing model loading: corrupt, truncated and crafted model files.

``ParsingModel.from_disk`` / ``from_bytes`` and ``LPCFG.from_disk`` / ``from_bytes``
either load or raise ``GrammarError`` naming the source, whatever the files hold:
flipped, swapped or cut bytes in any file; JSON values replaced by random JSON;
``.npy`` members with another dtype, shape, order, version or size than declared,
lying zip headers, zip bombs; random bytes. A model that loads parses a sentence
(or refuses it with a project error).
"""

from __future__ import annotations

import functools
import io
import json
import shutil
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from fuzz_support import ShortRepr, fuzz, mutated, only_project_errors, outcome
from hypothesis import assume, given
from hypothesis import strategies as st

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.grammar.lpcfg import LPCFG
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.grammar.serialization import pack_zip, unpack_zip

MODELS = st.sampled_from(["mle", "spectral"])
SENTENCE = ["The", "cat", "sat", "on", "the", "mat", "."]


def _members(directory: Path) -> dict[str, bytes]:
    """Relative path ('/'-separated) -> bytes of every file in a model directory."""
    return {
        file.relative_to(directory).as_posix(): file.read_bytes()
        for file in sorted(directory.rglob("*"))
        if file.is_file()
    }


def _write(members: dict[str, bytes], root: Path) -> Path:
    directory = Path(tempfile.mkdtemp(dir=root))
    for name, data in members.items():
        target = directory.joinpath(*name.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return directory


def _check_loads_or_refuses(members: dict[str, bytes], root: Path) -> None:
    """from_disk and from_bytes load the files or raise GrammarError; a loaded model parses."""
    directory = _write(members, root)
    for load, source in (
        (ParsingModel.from_disk, directory),
        (ParsingModel.from_bytes, pack_zip(members)),
    ):
        model, error = outcome(load, source)
        if error is not None:
            assert isinstance(error, GrammarError), repr(error)
            assert len(str(error)) < 2000, "messages quote excerpts"
            continue
        _check_parses(model)


def _check_parses(model: ParsingModel) -> None:
    from spacy_lpcfg.decode.parser import Parser

    parser, error = outcome(Parser, model)
    if error is None:
        parse, error = outcome(parser.parse, SENTENCE)
        if error is None:
            assert parse.tree.words() == SENTENCE


@pytest.fixture(scope="session")
def model_members(tiny_models) -> dict[str, dict[str, bytes]]:
    return ShortRepr({name: _members(path) for name, path in tiny_models.items()})


@pytest.mark.parametrize("load", ["from_disk", "from_bytes"])
def test_cfg_without_extra_grammars(model_members, fuzz_dir, load):
    """Found by the fuzzer: cfg.json without the optional "extra_grammars" key raised
    KeyError from grammar/model.py; it loads now (or fails with GrammarError)."""
    members = dict(model_members["mle"])
    cfg = json.loads(members["cfg.json"])
    del cfg["extra_grammars"]
    members["cfg.json"] = json.dumps(cfg).encode()
    source = _write(members, fuzz_dir) if load == "from_disk" else pack_zip(members)
    model, error = outcome(getattr(ParsingModel, load), source)
    assert error is None or isinstance(error, GrammarError)


# Links -----------------------------------------------------------------------------


@fuzz(30)
@given(data=st.data(), model=MODELS, noise=st.binary(max_size=200))
def test_a_linked_member_is_refused_unread(model_members, fuzz_dir, data, model, noise):
    """A file, or a folder on its way, replaced by a link (out of the directory, or to
    another of its files) is refused by name (E131): its target is never read, so no
    error message quotes it."""
    members = dict(model_members[model])
    content = b'{"format": "PRIVATE' + noise + b'"}'
    name = data.draw(st.sampled_from(sorted(members)))
    parts = name.split("/")
    linked = "/".join(parts[: data.draw(st.integers(1, len(parts)))])
    directory = _write(members, fuzz_dir)
    path = directory.joinpath(*linked.split("/"))
    target = Path(tempfile.mkdtemp(dir=fuzz_dir)) / "target"
    if path.is_dir():
        shutil.move(path, target)
        for file in target.rglob("*"):
            if file.is_file():
                file.write_bytes(content)
    elif data.draw(st.booleans()):
        path.unlink()
        target.write_bytes(content)
    else:  # a link within the directory is refused too
        path.unlink()
        target = directory / "elsewhere.bin"
        target.write_bytes(content)
    path.symlink_to(target, target_is_directory=target.is_dir())
    with pytest.raises(GrammarError, match="E131") as error:
        ParsingModel.from_disk(directory)
    message = str(error.value)
    assert f"'{linked}'" in message and "target" not in message
    assert "elsewhere" not in message and "PRIVATE" not in message


# Bytes ---------------------------------------------------------------------------


@fuzz(80)
@given(data=st.data(), model=MODELS)
def test_corrupt_file_in_a_model_directory(model_members, fuzz_dir, data, model):
    members = dict(model_members[model])
    name = data.draw(st.sampled_from(sorted(members)))
    members[name] = data.draw(mutated(members[name], max_steps=3))
    _check_loads_or_refuses(members, fuzz_dir)


@fuzz(20)
@given(data=st.data(), model=MODELS)
def test_missing_or_extra_file(model_members, fuzz_dir, data, model):
    members = dict(model_members[model])
    name = data.draw(st.sampled_from(sorted(members)))
    if data.draw(st.booleans()):
        del members[name]
    else:  # a file moved into another place of the directory
        members[data.draw(st.sampled_from(["grammars/0/" + name, "grammars/1/" + name]))] = (
            members.pop(name)
        )
    _check_loads_or_refuses(members, fuzz_dir)


@fuzz(60)
@given(data=st.one_of(st.binary(max_size=400), st.binary(max_size=40).map(lambda b: b"PK" + b)))
def test_random_bytes(data):
    for load in (ParsingModel.from_bytes, LPCFG.from_bytes):
        with pytest.raises(GrammarError):
            load(data)


@fuzz(40)
@given(data=st.data(), model=MODELS)
def test_mutated_model_bytes(model_members, data, model):
    packed = pack_zip(model_members[model])
    model_, error = outcome(ParsingModel.from_bytes, data.draw(mutated(packed, max_steps=3)))
    if error is None:
        _check_parses(model_)
    else:
        assert isinstance(error, GrammarError), repr(error)


# JSON ----------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([0, 1, -1, 2**31, 2**63, 10**400])
    | st.floats()  # NaN and Infinity: json writes them, and reads them back
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


def _paths(value, prefix=()) -> list[tuple]:
    """Every path (keys and indices) into a JSON value, the root included."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


def _replace(document, path: tuple, value, delete: bool):
    if not path:
        return value
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return document


@st.composite
def near_value(draw, old, document):
    """A value like the one replaced: a number off by a little, another string of the
    same file (duplicates), a list with an item dropped or repeated."""
    if isinstance(old, bool) or old is None:
        return draw(JSON_VALUES)
    if isinstance(old, int):
        return old + draw(st.sampled_from([-(old + 1), -1, 1, 2**31, 10**12]))
    if isinstance(old, float):
        return draw(st.sampled_from([-old, old * 1e300, float("nan"), float("inf"), 0.0]))
    if isinstance(old, str):
        strings = [v for path in _paths(document) if isinstance(v := _get(document, path), str)]
        return draw(st.sampled_from(strings + ["", old * 2, "TOP", "UNK"]))
    if isinstance(old, list) and old:
        index = draw(st.integers(0, len(old) - 1))
        return old[:index] + old[index + 1 :] if draw(st.booleans()) else old + [old[index]]
    return draw(JSON_VALUES)


def _get(document, path):
    for step in path:
        document = document[step]
    return document


@fuzz(200)
@given(data=st.data(), model=MODELS)
def test_json_values_replaced(model_members, fuzz_dir, data, model):
    members = dict(model_members[model])
    name = data.draw(st.sampled_from(sorted(n for n in members if n.endswith(".json"))))
    document = json.loads(members[name])
    paths = _paths(document)
    path = paths[data.draw(st.integers(0, len(paths) - 1))]
    delete = bool(path) and data.draw(st.integers(0, 4)) == 0
    old = _get(document, path)
    value = data.draw(st.one_of(JSON_VALUES, near_value(old, document)))
    document = _replace(document, path, value, delete)
    members[name] = json.dumps(document).encode("utf-8")
    _check_loads_or_refuses(members, fuzz_dir)


# npz archives --------------------------------------------------------------------

DESCRS = ["<i4", "<i8", "<f8", "<f4", ">f8", ">i4", "|u1", "|b1", "<c16", "|O", "<U3", "|V8"]


@st.composite
def crafted_npy(draw, like: bytes) -> bytes:
    """An .npy member: the real one with its header's dtype, order, shape, version or
    data length changed, or a header that is no Python literal."""
    array = np.load(io.BytesIO(like), allow_pickle=False)
    descr = draw(st.sampled_from([array.dtype.str, array.dtype.str, *DESCRS]))
    fortran = draw(st.booleans()) if array.ndim > 1 else draw(st.sampled_from([False, False, True]))
    shape = draw(
        st.sampled_from(
            [
                array.shape,
                array.shape,
                (),
                (0,),
                (array.size + 1,),
                tuple(max(0, n - 1) for n in array.shape),
                (*array.shape, 1),
                (2**40,),
                (2**62, 2**62),
                (-1,),
                tuple(reversed(array.shape)),
            ]
        )
    )
    version = draw(st.sampled_from([(1, 0), (1, 0), (2, 0), (3, 0), (0, 9)]))
    header = draw(
        st.sampled_from(
            [
                f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}",
                f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}",
                "{'descr': '<f8', 'fortran_order': False}",
                "__import__('os').getcwd()",
                "{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 300 + ")" * 300 + "}",
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': [" * 3,
                "[]",
            ]
        )
    )
    payload = array.tobytes(order="F" if fortran else "C")
    payload = draw(
        st.sampled_from(
            [payload, payload, payload[: len(payload) // 2], payload + b"\0" * 8, b"", b"\xff" * 7]
        )
    )
    encoded = header.encode("latin-1") + b" "
    size = 10 + len(encoded) + 1 if version == (1, 0) else 12 + len(encoded) + 1
    encoded += b" " * (-size % 64) + b"\n"
    length = struct.pack(
        "<H" if version[0] == 1 else "<I", len(encoded) % (1 << 16 if version[0] == 1 else 1 << 32)
    )
    return b"\x93NUMPY" + bytes(version) + length + encoded + payload


def _npz(members: dict[str, bytes], deflate: bool = False) -> bytes:
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@fuzz(200)
@given(data=st.data(), model=MODELS)
def test_crafted_npz_members(model_members, fuzz_dir, data, model):
    members = dict(model_members[model])
    name = data.draw(st.sampled_from(sorted(n for n in members if n.endswith(".npz"))))
    arrays = unpack_zip(members[name], name)
    member = data.draw(st.sampled_from(sorted(arrays)))
    change = data.draw(st.sampled_from(["craft", "craft", "craft", "rename", "drop", "extra"]))
    if change == "craft":
        arrays[member] = data.draw(crafted_npy(arrays[member]))
    elif change == "rename":
        new = data.draw(
            st.sampled_from(["../x.npy", "n_states", "n_states.npy", "a/b.npy", "/abs.npy"])
        )
        arrays[new] = arrays.pop(member)
    elif change == "drop":
        del arrays[member]
    else:
        arrays["extra.npy"] = arrays[member]
    members[name] = _npz(arrays, deflate=data.draw(st.booleans()))
    _check_loads_or_refuses(members, fuzz_dir)


def _patch_sizes(archive: bytes, compress_size: int, file_size: int) -> bytes:
    """The archive with the sizes of its first member changed in the local header
    and the central directory (what a lying or bomb-like archive declares)."""
    data = bytearray(archive)
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<II", data, local + 18, compress_size, file_size)
    struct.pack_into("<II", data, central + 20, compress_size, file_size)
    return bytes(data)


@fuzz(60)
@given(
    data=st.data(),
    model=MODELS,
    sizes=st.tuples(
        st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2**31, 2**32 - 1])),
        st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2**31, 2**32 - 1])),
    ),
)
def test_lying_zip_sizes(model_members, fuzz_dir, data, model, sizes):
    members = dict(model_members[model])
    name = data.draw(st.sampled_from(sorted(n for n in members if n.endswith(".npz"))))
    members[name] = _patch_sizes(members[name], *sizes)
    _check_loads_or_refuses(members, fuzz_dir)
    archive = pack_zip(model_members[model])
    first = zipfile.ZipFile(io.BytesIO(archive)).infolist()[0]
    assume(sizes != (first.compress_size, first.file_size))  # the truth is no lie
    with pytest.raises(GrammarError):
        ParsingModel.from_bytes(_patch_sizes(archive, *sizes))


@pytest.fixture(scope="session")
def bomb_member() -> bytes:
    """200 MB of zeros, deflated to a few hundred kB."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    body = b"".join(compressor.compress(chunk) for _ in range(200)) + compressor.flush()
    return body


def _bomb_archive(name: str, deflated: bytes, size: int, copies: int = 1) -> bytes:
    """A zip whose members (``copies`` names, one shared payload when several) inflate to
    ``size`` bytes each."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, b"")
    plain = bytearray(buffer.getvalue())
    # Rebuild by hand: local header + payload, then one central entry per copy.
    local_end = 30 + len(name)
    header = bytearray(plain[:local_end])
    crc = zlib.crc32(b"")  # deliberately wrong: a bomb is refused before any CRC check
    struct.pack_into("<III", header, 14, crc, len(deflated), size)
    out = bytearray(header + deflated)
    directory = bytearray()
    for copy in range(copies):
        entry_name = name if copy == 0 else f"{copy}{name}"
        entry = bytearray(b"PK\x01\x02" + bytes(42) + entry_name.encode())
        fields = (20, 20, 0, 8, 0, 0x21, crc, len(deflated), size, len(entry_name), 0, 0, 0, 0)
        struct.pack_into("<HHHHHHIIIHHHHHII", entry, 4, *fields, 0, 0)
        directory += entry
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, copies, copies, len(directory), len(out), 0
    )
    return bytes(out + directory + end)


@pytest.mark.parametrize("copies", [1, 50])
def test_zip_bombs_are_refused_before_inflating(model_members, fuzz_dir, bomb_member, copies):
    """A member that would inflate 200 MB from a few hundred kB, and an archive whose
    50 members share that payload, are refused without allocating it."""
    import tracemalloc

    for model, members in model_members.items():
        for name in sorted(n for n in members if n.endswith(".npz")):
            changed = dict(members)
            changed[name] = _bomb_archive("binary_weights.npy", bomb_member, 200 << 20, copies)
            tracemalloc.start()
            try:
                with pytest.raises(GrammarError, match="inflate|claim|unexpected or repeated"):
                    ParsingModel.from_disk(_write(changed, fuzz_dir))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 64 << 20, f"{model} {name}: {peak} bytes allocated"
    bomb = _bomb_archive("cfg.json", bomb_member, 200 << 20, copies)
    with pytest.raises(GrammarError, match="inflate|claim"):
        ParsingModel.from_bytes(bomb)


# LPCFG grammar files -------------------------------------------------------------


@fuzz(40)
@given(data=st.data())
def test_corrupt_grammar_directory(model_members, fuzz_dir, data):
    """``LPCFG.from_disk`` / ``from_bytes`` on a grammar whose files are damaged."""
    grammar = {
        n: b
        for n, b in model_members["mle"].items()
        if "/" not in n and n.startswith(("grammar", "symbols", "words"))
    }
    name = data.draw(st.sampled_from(sorted(grammar)))
    grammar[name] = data.draw(mutated(grammar[name], max_steps=3))
    directory = _write(grammar, fuzz_dir)
    for load, source in ((LPCFG.from_disk, directory), (LPCFG.from_bytes, pack_zip(grammar))):
        loaded, error = outcome(load, source)
        assert error is None or isinstance(error, GrammarError), repr(error)


# The spaCy component's bytes ----------------------------------------------------


@functools.cache
def _blank():
    import spacy

    return spacy.blank("en")


def _fresh_component():
    """A new, untrained ``lpcfg_parser`` (not added to any pipeline)."""
    return _blank().create_pipe("lpcfg_parser")


@fuzz(25)
@given(data=st.data(), model=MODELS)
def test_component_from_bytes_with_a_damaged_model(model_members, data, model):
    """``LPCFGParser.from_bytes``: a well-formed container around damaged model bytes
    loads or raises GrammarError, and a loaded component parses."""
    import srsly
    from spacy.tokens import Doc

    payload = data.draw(mutated(pack_zip(model_members[model]), max_steps=2))
    component = _fresh_component()
    _, error = outcome(component.from_bytes, srsly.msgpack_dumps({"model": payload}))
    if error is not None:
        assert isinstance(error, GrammarError), repr(error)
        return
    doc = Doc(component.vocab, words=SENTENCE)
    with only_project_errors():
        component(doc)
        assert "constituents" in doc.spans


@fuzz(60)
@given(data=st.binary(max_size=60))
def test_component_from_bytes_with_random_bytes(data):
    """Found by the fuzzer: msgpack's errors (FormatError, ExtraData, ValueError,
    TypeError) came through ``LPCFGParser.from_bytes``; now GrammarError."""
    component = _fresh_component()
    _, error = outcome(component.from_bytes, data)
    assert error is None or isinstance(error, GrammarError), repr(error)


def test_component_from_bytes_refuses_a_list():
    with pytest.raises(GrammarError):
        _fresh_component().from_bytes(b"\x91\x01")
