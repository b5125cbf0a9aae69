"""ParsingModel: directory and bytes round trips, validation on load, atomic saves, spectra."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator, SpectralEstimator
from spacy_lpcfg.grammar.model import ParsingModel, Spectrum, read_spectrum
from spacy_lpcfg.trees import Tree

TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food))) (. .)))",
    "(TOP (S (NP (NNS dogs)) (VP (VBP eat) (NP (DT the) (NN food))) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
]
GRAMMAR_FILES = ("grammar.json", "symbols.json", "words.json", "grammar.npz")


@pytest.fixture(scope="module")
def model() -> ParsingModel:
    trees = [Tree.from_string(text) for text in TREEBANK]
    return MLEEstimator(open_class_threshold=1).fit(trees).model_


@pytest.fixture
def saved(model, tmp_path) -> Path:
    path = tmp_path / "model"
    model.to_disk(path)
    return path


def test_model_to_disk_layout(saved, model):
    files = sorted(str(p.relative_to(saved)) for p in saved.rglob("*") if p.is_file())
    assert files == sorted(["cfg.json", "lexicon.json", "transforms.json", *GRAMMAR_FILES])
    cfg = json.loads((saved / "cfg.json").read_text())
    assert cfg["format_version"] == 1 and cfg["estimator"]["name"] == "mle"
    assert cfg["estimator"]["params"]["open_class_threshold"] == 1
    assert cfg["estimator"]["params"]["transform"]["binarization"] == "right"
    assert cfg["language"] == "en" and cfg["label_scheme"] == "penn"
    assert cfg["grammar"] == {"symbols": model.grammar.n_symbols, "words": len(model.grammar.words)}
    assert cfg["training"] == {"trees": 4, "words": 19}


def test_model_disk_roundtrip(saved, model):
    loaded = ParsingModel.from_disk(saved)
    assert loaded == model
    assert loaded.grammar == model.grammar
    assert loaded.transform == model.transform
    assert loaded.lexicon.entries == model.lexicon.entries
    assert loaded.params == model.params and loaded.training == model.training
    words = ["The", "cat", "jumped", "."]
    assert (
        loaded.lexical_scores(words).values.tolist() == model.lexical_scores(words).values.tolist()
    )


def test_model_bytes_roundtrip(model):
    data = model.to_bytes()
    loaded = ParsingModel.from_bytes(data)
    assert loaded == model and loaded.to_bytes() == data


def test_model_extra_grammars_roundtrip(model, tmp_path):
    extra = ParsingModel(
        model.grammar,
        model.lexicon,
        model.transform,
        estimator="mle",
        extra_grammars=[model.grammar.project(), model.grammar],
    )
    extra.to_disk(tmp_path / "m")
    assert (tmp_path / "m" / "grammars" / "1" / "grammar.npz").is_file()
    loaded = ParsingModel.from_disk(tmp_path / "m")
    assert loaded.extra_grammars == extra.extra_grammars and loaded == extra
    assert ParsingModel.from_bytes(extra.to_bytes()) == extra


def test_model_overwrites_a_model_directory(saved, model):
    other = ParsingModel(model.grammar, model.lexicon, model.transform, estimator="other")
    other.to_disk(saved)
    assert ParsingModel.from_disk(saved).estimator == "other"
    assert [p.name for p in saved.parent.iterdir()] == ["model"]  # no leftovers


@pytest.mark.parametrize("content", [None, "notes.txt"])
def test_model_refuses_to_overwrite_other_paths(model, tmp_path, content):
    path = tmp_path / "target"
    if content is None:
        path.write_text("a file")
    else:
        path.mkdir()
        (path / content).write_text("keep me")
    with pytest.raises(GrammarError, match="E126"):
        model.to_disk(path)
    assert path.exists()


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_a_grammar_archive_failing_mid_stream_leaves_the_old_model(
    model, tmp_path, monkeypatch, error
):
    """grammar.npz is streamed from the arrays into its file: a failure half-way
    through leaves the previous model as it was and no partial directory."""
    from spacy_lpcfg.grammar import serialization

    path = tmp_path / "model"
    model.to_disk(path)
    before = {p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file()}
    write = serialization.NpzArchive.write

    def failing(self, file):
        write(self, file)
        file.truncate(file.tell() // 2)  # half of it written
        raise error

    monkeypatch.setattr(serialization.NpzArchive, "write", failing)
    with pytest.raises(type(error)):
        ParsingModel(model.grammar, model.lexicon, model.transform, estimator="x").to_disk(path)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    assert {p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("existing", [False, True])
def test_model_interrupted_save_leaves_nothing(model, tmp_path, monkeypatch, existing):
    path = tmp_path / "model"
    if existing:
        model.to_disk(path)
    before = (path / "cfg.json").read_bytes() if existing else None
    calls = []
    original = Path.write_bytes

    def failing_write(self, data):
        calls.append(self)
        if len(calls) == 3:
            raise OSError("disk full")
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    changed = ParsingModel(model.grammar, model.lexicon, model.transform, estimator="changed")
    with pytest.raises(OSError, match="disk full"):
        changed.to_disk(path)
    monkeypatch.undo()
    leftovers = [p.name for p in tmp_path.iterdir()]
    if existing:
        assert leftovers == ["model"] and (path / "cfg.json").read_bytes() == before
    else:
        assert leftovers == []


@pytest.mark.parametrize("name", ["cfg.json", "lexicon.json", "transforms.json", *GRAMMAR_FILES])
def test_model_missing_file_is_named(saved, name):
    (saved / name).unlink()
    with pytest.raises(GrammarError, match=name.replace(".", r"\.")):
        ParsingModel.from_disk(saved)


@pytest.mark.parametrize("name", ["cfg.json", "lexicon.json", "transforms.json", "symbols.json"])
def test_model_corrupt_json_is_named(saved, name):
    (saved / name).write_text('{"format": ')
    with pytest.raises(GrammarError, match=name.replace(".", r"\.")):
        ParsingModel.from_disk(saved)


def test_model_corrupt_arrays(saved):
    data = (saved / "grammar.npz").read_bytes()
    (saved / "grammar.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(GrammarError, match=r"grammar\.npz"):
        ParsingModel.from_disk(saved)


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_model_newer_version(saved):
    edit_json(saved / "cfg.json", lambda cfg: cfg.update(format_version=3))
    with pytest.raises(GrammarError, match="E125.*version 3"):
        ParsingModel.from_disk(saved)


@pytest.mark.parametrize(
    "file,change,message",
    [
        ("cfg.json", lambda d: d["grammar"].update(symbols=3), r"3 symbols, symbols\.json"),
        ("cfg.json", lambda d: d["grammar"].update(words=3), r"3 words, words\.json"),
        ("cfg.json", lambda d: d.update(format="other"), r"cfg\.json is not"),
        ("cfg.json", lambda d: d.update(language="is"), "language"),
        ("lexicon.json", lambda d: d["known_words"].pop(), r"lexicon\.json has \d+ vocabulary"),
        ("transforms.json", lambda d: d.update(binarization="middle"), r"transforms\.json"),
        ("cfg.json", lambda d: d.update(estimator=["mle"]), r"'estimator'"),
    ],
)
def test_model_inconsistent_files(saved, file, change, message):
    edit_json(saved / file, change)
    with pytest.raises(GrammarError, match=message):
        ParsingModel.from_disk(saved)


def test_model_missing_directory(tmp_path):
    with pytest.raises(GrammarError, match="not a directory"):
        ParsingModel.from_disk(tmp_path / "nothing")


def test_model_bad_bytes():
    with pytest.raises(GrammarError, match="E124"):
        ParsingModel.from_bytes(b"not a zip")


def test_model_parts_must_fit(model):
    other = MLEEstimator().fit([Tree.from_string(TREEBANK[0])]).model_
    with pytest.raises(GrammarError, match="E127"):
        ParsingModel(model.grammar, other.lexicon, model.transform)
    with pytest.raises(GrammarError, match="E127"):
        ParsingModel(model.grammar, model.lexicon, model.transform, extra_grammars=[other.grammar])
    with pytest.raises(GrammarError, match="JSON"):
        ParsingModel(model.grammar, model.lexicon, model.transform, params={"x": object()})


# The singular-value spectrum of latent models --------------------------------------


@pytest.fixture(scope="module")
def spectral_model() -> ParsingModel:
    trees = [Tree.from_string(text) for text in TREEBANK]
    settings = {"n_states": 2, "min_count_per_state": 1, "open_class_threshold": 1}
    return SpectralEstimator(**settings).fit(trees).model_


@pytest.fixture
def spectral_saved(spectral_model, tmp_path) -> Path:
    path = tmp_path / "spectral"
    spectral_model.to_disk(path)
    return path


def _same_spectrum(first: Spectrum, second: Spectrum) -> bool:
    return (
        list(first.values) == list(second.values)
        and all(
            a.dtype == b.dtype and np.array_equal(a, b)
            for a, b in zip(first.values.values(), second.values.values())
        )
        and first.counts == second.counts
    )


def test_model_spectrum_roundtrip(spectral_model, spectral_saved):
    assert {"spectrum.json", "spectrum.npz"} <= {p.name for p in spectral_saved.iterdir()}
    cfg = json.loads((spectral_saved / "cfg.json").read_text())
    assert cfg["spectrum"] == {"symbols": len(spectral_model.spectrum)}
    for loaded in (
        ParsingModel.from_disk(spectral_saved),
        ParsingModel.from_bytes(spectral_model.to_bytes()),
    ):
        assert loaded == spectral_model
        assert _same_spectrum(loaded.spectrum, spectral_model.spectrum)
    assert _same_spectrum(read_spectrum(spectral_saved), spectral_model.spectrum)


def test_model_spectrum_is_none_without_one(model, saved):
    assert model.spectrum is None and ParsingModel.from_disk(saved).spectrum is None
    assert read_spectrum(saved) is None
    assert "spectrum" not in json.loads((saved / "cfg.json").read_text())


def test_model_spectrum_without_counts_roundtrips(spectral_model):
    bare = Spectrum(spectral_model.spectrum.values)
    with_bare = ParsingModel(
        spectral_model.grammar, spectral_model.lexicon, spectral_model.transform, spectrum=bare
    )
    loaded = ParsingModel.from_bytes(with_bare.to_bytes())
    assert loaded.spectrum.counts is None and _same_spectrum(loaded.spectrum, bare)


def _rewrite_spectrum_arrays(path: Path, **arrays) -> None:
    import io
    import zipfile

    with np.load(path / "spectrum.npz", allow_pickle=False) as npz:
        contents = {name: npz[name] for name in npz.files}
    contents.update(arrays)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in contents.items():
            member = io.BytesIO()
            np.save(member, array, allow_pickle=True)
            archive.writestr(f"{name}.npy", member.getvalue())
    (path / "spectrum.npz").write_bytes(buffer.getvalue())


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda p: (p / "spectrum.npz").unlink(), r"missing file spectrum\.npz"),
        (lambda p: (p / "spectrum.json").write_text("[1"), r"spectrum\.json is not valid JSON"),
        (
            lambda p: (p / "spectrum.npz").write_bytes(b"PK\x03\x04broken"),
            r"spectrum\.npz is not a readable zip archive",
        ),
        (lambda p: edit_json(p / "spectrum.json", lambda d: d.update(format="x")), "not the index"),
        (
            lambda p: edit_json(p / "spectrum.json", lambda d: d.update(format_version=9)),
            "E125.*version 9",
        ),
        (lambda p: edit_json(p / "spectrum.json", lambda d: d["symbols"].pop()), "offsets"),
        (
            lambda p: edit_json(p / "spectrum.json", lambda d: d["symbols"].__setitem__(0, "ZZ")),
            "E127.*ZZ",
        ),
        (lambda p: edit_json(p / "cfg.json", lambda d: d["spectrum"].update(symbols=1)), "says 1"),
        (lambda p: edit_json(p / "cfg.json", lambda d: d.update(spectrum=3)), "'spectrum' entry"),
        (
            lambda p: _rewrite_spectrum_arrays(p, values=np.array([object()])),
            r"values\.npy holds 'object' values, expected float64",  # would need pickle
        ),
        (lambda p: _rewrite_spectrum_arrays(p, values=np.zeros(2, np.float32)), "float64"),
        (lambda p: _rewrite_spectrum_arrays(p, counts=np.zeros(1, np.int64)), "counts"),
        (lambda p: _rewrite_spectrum_arrays(p, extra=np.zeros(1)), "extra"),
    ],
)
def test_model_bad_spectrum_is_a_clear_error(spectral_saved, damage, message):
    damage(spectral_saved)
    with pytest.raises(GrammarError, match=message):
        ParsingModel.from_disk(spectral_saved)


def test_model_spectrum_values_are_checked():
    with pytest.raises(GrammarError, match="E127.*float64"):
        Spectrum({"NP": np.array([1, 2])})
    with pytest.raises(GrammarError, match="E127.*negative or non-finite"):
        Spectrum({"NP": np.array([1.0, np.nan])})
    with pytest.raises(GrammarError, match="E127.*counts"):
        Spectrum({"NP": np.array([1.0])}, {"VP": 3})
