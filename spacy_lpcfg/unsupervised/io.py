"""Fitted bracketers on disk: ``bracketer.json`` and ``arrays.npz`` in a directory, never pickled.

The JSON file holds the bracketer's name, its parameters, its fitted scalars
and tables (the tag index, the tagger's word and suffix tags) and the format
version; the arrays (spectra, CCM log ratios) go to the npz file, read back
with ``allow_pickle=False``. Parameters that are not JSON values (word vectors
given to the spectral learner, used only in ``fit``) are stored as null.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from .base import Bracketer
from .baselines import LeftBranching, RandomBranching, RightBranching
from .ccm import CCM
from .spectral import SpectralBracketer
from .tagger import MostFrequentTagger

FORMAT_VERSION = 1
META, ARRAYS = "bracketer.json", "arrays.npz"
CLASSES = {
    cls.name: cls
    for cls in (SpectralBracketer, CCM, RightBranching, LeftBranching, RandomBranching)
}


def _json_value(value):
    try:
        json.dumps(value)
    except TypeError:
        return None
    return value


def save_bracketer(model: Bracketer, path: str | Path) -> None:
    """Write a fitted bracketer to the directory ``path`` (created if needed).

    model (Bracketer): a fitted bracketer.
    path (str | Path): the directory.
    """
    model.check_is_fitted("n_sentences_")
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    fitted = {name: value for name, value in vars(model).items() if name.endswith("_")}
    arrays = {name: value for name, value in fitted.items() if isinstance(value, np.ndarray)}
    tagger = fitted.pop("tagger_", None)
    meta: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "name": model.name,
        "params": {name: _json_value(value) for name, value in model.get_params().items()},
        "fitted": {
            name: value.item() if isinstance(value, np.generic) else value
            for name, value in fitted.items()
            if name not in arrays
        },
        "tagger": None
        if tagger is None
        else {
            "word_tags": tagger.word_tags,
            "suffix_tags": tagger.suffix_tags,
            "default_tag": tagger.default_tag,
        },
    }
    meta["fitted"] = {name: _json_value(value) for name, value in meta["fitted"].items()}
    (path / META).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    np.savez(path / ARRAYS, **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds vs allow_pickle


def load_bracketer(path: str | Path) -> Bracketer:
    """Read a bracketer written by ``save_bracketer``.

    path (str | Path): the directory.
    RETURNS (Bracketer): the fitted bracketer.
    RAISES ValueError: the files are not a bracketer of a known kind and version;
        GrammarError (a ValueError, E131) when one is a link or lies outside ``path``.
    """
    path = Path(path)
    meta = json.loads(_read(path, META).decode("utf-8"))
    if meta.get("format_version") != FORMAT_VERSION or meta.get("name") not in CLASSES:
        raise ValueError(f"{path} is not a bracketer of format {FORMAT_VERSION}")
    try:
        model = CLASSES[meta["name"]](**meta["params"])
    except TypeError:  # a parameter this version does not know (a newer file)
        known = CLASSES[meta["name"]]().get_params()
        unknown = sorted(set(meta["params"]) - set(known))
        raise ValueError(f"{path} has parameters this version does not know: {unknown}") from None
    for name, value in meta["fitted"].items():
        setattr(model, name, [float(v) for v in value] if name == "log_likelihoods_" else value)
    with np.load(io.BytesIO(_read(path, ARRAYS)), allow_pickle=False) as arrays:
        for name in arrays.files:
            setattr(model, name, arrays[name])
    if meta["tagger"] is not None:
        tagger = MostFrequentTagger([])
        tagger.word_tags = meta["tagger"]["word_tags"]
        tagger.suffix_tags = meta["tagger"]["suffix_tags"]
        tagger.default_tag = meta["tagger"]["default_tag"]
        model.tagger_ = tagger
    return model


def _read(path: Path, name: str) -> bytes:
    """A bracketer file's bytes: a regular file inside ``path``, never through a link
    (``grammar.serialization.member_path``). RAISES GrammarError."""
    from ..errors import Errors, GrammarError
    from ..grammar.serialization import member_path, read_file

    def fail(detail: str) -> GrammarError:
        return GrammarError(Errors.E124.format(source=path, detail=detail))

    file = member_path(path, name)
    if not file.is_file():
        raise fail(f"missing file {name}")
    return read_file(file, name, fail)
