"""Model directories from elsewhere: no symbolic link is followed out of (or within) a
model directory, and models of other languages or treebanks are not combined unawares."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator, SpectralEstimator
from spacy_lpcfg.estimators.function_labels import attach_function_labeller
from spacy_lpcfg.grammar.lpcfg import LPCFG
from spacy_lpcfg.grammar.model import (
    ParsingModel,
    combine_models,
    read_spectrum,
    treebank_name,
)
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformSpec

TREEBANK = [
    "(TOP (S (NP-SBJ (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP-SBJ (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP-SBJ (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP-SBJ (DT a) (JJ big) (NN dog)) (VP (VBD ran) (NP-TMP (NN today))) (. .)))",
]
SECRET = "TOPSECRET-do-not-quote"


@pytest.fixture(scope="module")
def trees() -> list[Tree]:
    return [Tree.from_string(text) for text in TREEBANK]


def _mle(trees, **params) -> ParsingModel:
    return MLEEstimator(open_class_threshold=1, **params).fit(trees).model_


@pytest.fixture(scope="module")
def models(trees) -> dict[str, ParsingModel]:
    """Models whose directories hold every kind of file: plain, with extra grammars and
    a spectrum, with a function labeller, with members."""
    mle = _mle(trees)
    left = _mle(trees, transform=TransformSpec(binarization="left"))
    return {
        "mle": mle,
        "spectral": SpectralEstimator(n_states=2).fit(trees).model_,
        "labelled": attach_function_labeller(mle, trees),
        "members": combine_models([mle, left]),
    }


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder beside the model directory, which a link may point into."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def _saved(model: ParsingModel, tmp_path: Path) -> Path:
    path = tmp_path / "model"
    model.to_disk(path)
    return path


def _link_out(path: Path, member: str, outside: Path) -> None:
    """Move the model's member (file or folder) out of the directory, and put a symbolic
    link to it in its place: a model that loads so reads files beyond its directory."""
    source = path.joinpath(*member.split("/"))
    target = outside / member.replace("/", "_")
    shutil.move(source, target)
    source.symlink_to(target, target_is_directory=target.is_dir())


def _check_refused(error: pytest.ExceptionInfo, path: Path, member: str) -> None:
    message = str(error.value)
    assert "E131" in message and str(path) in message and member in message
    assert "elsewhere" not in message and SECRET not in message


MEMBERS = [
    ("mle", "cfg.json"),
    ("mle", "transforms.json"),
    ("mle", "lexicon.json"),
    ("mle", "grammar.json"),
    ("mle", "symbols.json"),
    ("mle", "words.json"),
    ("mle", "grammar.npz"),
    ("spectral", "grammars/0/grammar.npz"),
    ("spectral", "grammars/0"),
    ("spectral", "spectrum.json"),
    ("spectral", "spectrum.npz"),
    ("labelled", "function_labeller.json"),
    ("labelled", "function_labeller.npz"),
    ("members", "members/0/cfg.json"),
    ("members", "members/0/grammar.npz"),
    ("members", "members/0"),
    ("members", "members"),
]


@pytest.mark.parametrize("kind, member", MEMBERS)
def test_model_refuses_a_member_linked_out_of_its_directory(
    models, tmp_path, outside, kind, member
):
    path = _saved(models[kind], tmp_path)
    _link_out(path, member, outside)
    with pytest.raises(GrammarError) as error:
        ParsingModel.from_disk(path)
    _check_refused(error, path, member)


@pytest.mark.parametrize("member", ["cfg.json", "spectrum.json", "spectrum.npz"])
def test_read_spectrum_refuses_linked_members(models, tmp_path, outside, member):
    path = _saved(models["spectral"], tmp_path)
    _link_out(path, member, outside)
    with pytest.raises(GrammarError) as error:
        read_spectrum(path)
    _check_refused(error, path, member)


@pytest.mark.parametrize("member", ["cfg.json", "transforms.json"])
def test_model_never_quotes_what_a_link_points_to(models, tmp_path, outside, member):
    """A link to a private file: refused before it is read, so nothing of it shows."""
    path = _saved(models["mle"], tmp_path)
    private = outside / "private.json"
    private.write_text(json.dumps({"format": SECRET, "format_version": SECRET}))
    (path / member).unlink()
    (path / member).symlink_to(Path("..") / "elsewhere" / "private.json")
    with pytest.raises(GrammarError) as error:
        ParsingModel.from_disk(path)
    _check_refused(error, path, member)


def test_model_refuses_a_link_to_a_system_file(models, tmp_path):
    path = _saved(models["mle"], tmp_path)
    (path / "cfg.json").unlink()
    (path / "cfg.json").symlink_to("/etc/passwd")
    with pytest.raises(GrammarError) as error:
        ParsingModel.from_disk(path)
    _check_refused(error, path, "cfg.json")
    assert "root:" not in str(error.value) and "passwd" not in str(error.value)


def test_model_refuses_a_link_within_its_directory(models, tmp_path):
    """No link at all is followed, even one to a file of the model itself."""
    path = _saved(models["mle"], tmp_path)
    (path / "copy.json").write_bytes((path / "lexicon.json").read_bytes())
    (path / "lexicon.json").unlink()
    (path / "lexicon.json").symlink_to("copy.json")
    with pytest.raises(GrammarError, match="E131"):
        ParsingModel.from_disk(path)


def test_a_model_directory_reached_through_a_link_loads(models, tmp_path):
    """The directory the user names may itself be a link: only its members may not."""
    path = _saved(models["mle"], tmp_path)
    (tmp_path / "alias").symlink_to(path, target_is_directory=True)
    assert ParsingModel.from_disk(tmp_path / "alias") == models["mle"]


def test_grammar_directory_refuses_linked_files(models, tmp_path, outside):
    path = tmp_path / "grammar"
    models["mle"].grammar.to_disk(path)
    _link_out(path, "grammar.npz", outside)
    with pytest.raises(GrammarError) as error:
        LPCFG.from_disk(path)
    _check_refused(error, path, "grammar.npz")


# Combining models of other languages or treebanks ---------------------------------


def test_models_record_their_treebank(models, tmp_path):
    model = models["members"].with_treebank("ptb_sample")
    assert model.treebank == "ptb_sample"
    assert [part.treebank for part in model.parts] == ["ptb_sample", "ptb_sample"]
    loaded = ParsingModel.from_disk(_saved(model, tmp_path))
    assert loaded.treebank == "ptb_sample" and loaded.members[0].treebank == "ptb_sample"
    assert models["mle"].treebank is None


def test_treebank_name_of_a_corpus_or_a_path(tmp_path):
    assert treebank_name("ptb_sample") == "ptb_sample"
    assert treebank_name(tmp_path / "icepahc" / "train.psd") == "train.psd"
    assert treebank_name(f"{tmp_path}/floresta/") == "floresta"


def test_combine_refuses_models_of_other_languages(models, trees):
    icelandic = _mle(trees, language="is", transform=TransformSpec(binarization="left"))
    with pytest.raises(GrammarError, match="E132") as error:
        combine_models([models["mle"], icelandic])
    assert "'en'" in str(error.value) and "'is'" in str(error.value)
    with pytest.raises(GrammarError, match="E132"):  # members are checked too
        combine_models([icelandic, models["members"]])
    combined = combine_models([models["mle"], icelandic], force=True)
    assert [part.language for part in combined.parts] == ["en", "is"]


def test_combine_refuses_models_of_other_treebanks(models, trees):
    """Both "penn" scheme and (without --language) English: only the treebank tells."""
    ptb = models["mle"].with_treebank("ptb_sample")
    icepahc = _mle(trees, transform=TransformSpec(binarization="left")).with_treebank("icepahc")
    with pytest.raises(GrammarError, match="E132") as error:
        combine_models([ptb, icepahc])
    assert "'ptb_sample'" in str(error.value) and "'icepahc'" in str(error.value)
    assert combine_models([ptb, icepahc], force=True).members[0].treebank == "icepahc"
    same = combine_models([ptb, icepahc.with_treebank("ptb_sample")])
    assert same.treebank == "ptb_sample"


def test_combine_treats_a_missing_treebank_as_unknown(models, tmp_path):
    """Models saved before the treebank was recorded load and combine (same language)."""
    old = tmp_path / "old"
    models["members"].members[0].to_disk(old)
    assert "treebank" not in json.loads((old / "cfg.json").read_text())["training"]
    loaded = ParsingModel.from_disk(old)
    combined = combine_models([models["mle"].with_treebank("ptb_sample"), loaded])
    assert [part.treebank for part in combined.parts] == ["ptb_sample", None]


def test_a_treebank_that_is_no_string_is_refused(models):
    with pytest.raises(GrammarError, match="E127.*treebank"):
        models["mle"]._replace(training={**models["mle"].training, "treebank": 3})


@pytest.mark.parametrize("extra", [0, 1])
def test_json_nesting_is_refused_just_past_the_limit(extra):
    from spacy_lpcfg.grammar.serialization import MAX_JSON_DEPTH, read_json

    value: object = ["x"] * 100  # depth 1
    for level in range(MAX_JSON_DEPTH + extra - 1):  # lists and dicts alternate
        value = {"a": value, "b": list(range(50))} if level % 2 else [value, "y", 3]

    def fail(message):
        return ValueError(message)

    data = json.dumps(value).encode()
    if extra:
        with pytest.raises(ValueError, match=f"cfg.json nests deeper than {MAX_JSON_DEPTH}"):
            read_json(data, "cfg.json", fail)
    else:
        assert read_json(data, "cfg.json", fail) == value


def _npz(arrays, compressed=False):
    import io

    import numpy as np

    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_members_read_as_numpy_reads_them(compressed):
    import numpy as np

    from spacy_lpcfg.grammar.serialization import read_npz

    arrays = {
        "weights": np.linspace(-1, 1, 1001),
        "rules": np.arange(30, dtype=np.int32).reshape(10, 3),
        "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        "empty": np.zeros(0, dtype=np.int64),
    }
    specs = {
        "weights": ("float64", (None,)),
        "rules": ("int32", (None, 3)),
        "fortran": ("float64", (3, 4)),
        "empty": ("int64", (None,)),
    }
    read = read_npz(_npz(arrays, compressed), "grammar.npz", specs, GrammarError)
    for key, array in arrays.items():
        assert read[key].dtype == array.dtype and not read[key].flags.writeable
        assert read[key].flags.aligned and np.array_equal(read[key], array), key


@pytest.mark.parametrize("name_length", range(1, 70, 3))
def test_pack_npz_aligns_every_member_so_reading_copies_nothing(name_length):
    import io

    import numpy as np

    from spacy_lpcfg.grammar.serialization import NPY_ALIGNMENT, pack_npz, read_npz

    # names of every length move the next member's header by every offset mod 64
    arrays = {
        "a" * name_length: np.linspace(-1, 1, 7 + name_length),
        "b" * (name_length + 5): np.arange(name_length, dtype=np.int32).reshape(-1, 1),
        "c": np.arange(3, dtype=np.int64),
        "empty": np.zeros(0),
        "scalar": np.asarray(2.5),  # 0-d stays 0-d
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),  # written in C order
    }
    data = pack_npz(arrays)
    loaded = np.load(io.BytesIO(data), allow_pickle=False)  # still a plain .npz
    specs = {key: (str(a.dtype), (None,) * a.ndim) for key, a in arrays.items()}
    read = read_npz(data, "arrays.npz", specs, GrammarError)
    for key, array in arrays.items():
        assert np.array_equal(loaded[key], array) and np.array_equal(read[key], array)
        assert loaded[key].shape == read[key].shape == array.shape
        assert read[key].dtype == array.dtype and not read[key].flags.writeable
        if array.size:  # a view of the archive's bytes, at an aligned offset
            assert read[key].base is not None and not read[key].flags.owndata
            offset = read[key].ctypes.data - np.frombuffer(data, np.uint8).ctypes.data
            assert offset % NPY_ALIGNMENT == 0, key


def test_an_npz_archive_streams_into_its_file_without_a_copy(tmp_path):
    """A model directory's writer streams a grammar's arrays into grammar.npz: the
    file holds pack_npz's bytes, and writing it allocates nothing of the arrays' size."""
    import tracemalloc

    import numpy as np

    from spacy_lpcfg.grammar.serialization import NpzArchive, pack_npz, write_file

    arrays = {"w": np.linspace(0, 1, 2_000_000), "p": np.arange(1_000_000, dtype=np.int32)}
    archive = NpzArchive(arrays)
    tracemalloc.start()
    try:
        write_file(tmp_path / "grammar.npz", archive)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # the arrays: 20 MB
    assert (tmp_path / "grammar.npz").read_bytes() == pack_npz(arrays) == bytes(archive)


def test_members_of_mutable_bytes_or_unaligned_are_copied():
    import numpy as np

    from spacy_lpcfg.grammar.serialization import pack_npz, read_npz

    weights = np.linspace(0, 1, 100)
    specs = {"w": ("float64", (None,))}
    data = bytearray(pack_npz({"w": weights}))
    read = read_npz(data, "arrays.npz", specs, GrammarError)["w"]
    data[-8:] = bytes(8)  # the caller may change its buffer later: the array keeps its values
    assert read.flags.owndata and not read.flags.writeable and read[-1] == 1.0
    unaligned = _npz({"w": weights})  # np.savez aligns nothing
    read = read_npz(unaligned, "arrays.npz", specs, GrammarError)["w"]
    assert read.flags.aligned and np.array_equal(read, weights)


@pytest.mark.parametrize("where", ["data", "header"])
def test_a_stored_npz_member_with_a_flipped_byte_is_refused_by_name(where):
    import numpy as np

    from spacy_lpcfg.grammar.serialization import read_npz

    data = bytearray(_npz({"weights": np.linspace(0, 1, 500)}))
    start = data.index(b"\x93NUMPY")  # the member's .npy bytes
    data[start + (200 if where == "data" else 20)] ^= 0x10
    with pytest.raises(GrammarError, match="grammar.npz: weights.npy"):
        read_npz(bytes(data), "grammar.npz", {"weights": ("float64", (None,))}, GrammarError)
