"""Corpus registry, data directory, splits: every count of ``splits.json`` is reproduced."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from spacy_lpcfg.corpora import (
    CORPORA,
    DATA_ENV,
    SPLITS,
    iter_corpus,
    load_split,
    load_splits,
    open_treebank,
    resolve_data_dir,
)
from spacy_lpcfg.errors import DataNotFoundError
from spacy_lpcfg.trees.formats import read_treebank, treebank_files
from spacy_lpcfg.trees.formats.psd import iter_records
from spacy_lpcfg.trees.tree import EMPTY_TAG


@pytest.fixture(scope="module")
def splits_json(data_dir) -> dict:
    return json.loads((data_dir / "splits.json").read_text(encoding="utf-8"))


def _n_tokens(trees) -> int:
    return sum(tree.n_words for tree in trees)


def test_corpora_registry():
    assert {name: (c.format, c.scheme, c.lang) for name, c in CORPORA.items()} == {
        "ptb_sample": ("penn", "penn", "en"),
        "icepahc": ("psd", "penn", "is"),
        "floresta": ("floresta", "floresta", "pt"),
        "cess_esp": ("cess", "cess", "es"),
    }


def test_corpora_resolve_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(DataNotFoundError, match=r"E004.*SPACY_LPCFG_DATA.*nltk"):
        resolve_data_dir()
    assert resolve_data_dir(tmp_path) == tmp_path
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path) == tmp_path


def test_corpora_errors(tmp_path):
    with pytest.raises(ValueError, match="E006"):
        load_split("wsj", data_dir=tmp_path)
    with pytest.raises(ValueError, match="E007"):
        load_split("ptb_sample", "validation", data_dir=tmp_path)
    with pytest.raises(DataNotFoundError, match="E005"):
        iter_corpus("ptb_sample", data_dir=tmp_path)  # raised on the call, not on next()
    with pytest.raises(ValueError, match="E020.*nothing.mrg' is not a corpus name"):
        open_treebank(str(tmp_path / "nothing.mrg"))
    with pytest.raises(ValueError, match="E006"):
        open_treebank("wsj")


@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("split", SPLITS)
def test_corpora_split_counts_match_splits_json(load_corpus, splits_json, corpus, split):
    info = splits_json[corpus]
    expected = info["splits"][split] if "splits" in info else info["totals"][split]
    trees = load_corpus(corpus, split)
    assert (len(trees), _n_tokens(trees)) == (expected["trees"], expected["tokens"])


@pytest.mark.parametrize(
    "corpus,trees,tokens",
    [
        ("ptb_sample", 3914, 94084),
        ("icepahc", 72973, 1017294),
        ("floresta", 9369, 212780),
        ("cess_esp", 6016, 188803),
    ],
)
def test_corpora_whole_corpus(load_corpus, corpus, trees, tokens):
    found = load_corpus(corpus)
    assert (len(found), _n_tokens(found)) == (trees, tokens)


@pytest.mark.parametrize("corpus", ["ptb_sample", "cess_esp"])
def test_corpora_load_split_equals_load_splits(load_corpus, data_dir, corpus):
    for split in SPLITS:
        assert tuple(load_split(corpus, split, data_dir=data_dir)) == load_corpus(corpus, split)


def test_corpora_per_file_shares_on_a_subset(data_dir, tmp_path, splits_json):
    # Two IcePaHC files in a data directory of their own: cheap, and tests the per-file rule.
    names = ["1150.firstgrammar.sci-lin.psd", "1210.jartein.rel-sag.psd"]
    (tmp_path / "icepahc").mkdir()
    for name in names:
        (tmp_path / "icepahc" / name).symlink_to(data_dir / "icepahc" / name)
    every = load_split("icepahc", data_dir=tmp_path)
    per_split = load_splits("icepahc", data_dir=tmp_path)
    assert isinstance(iter_corpus("icepahc", data_dir=tmp_path), Iterator)
    for split in SPLITS:
        trees = load_split("icepahc", split, data_dir=tmp_path)
        assert trees == per_split[split]
        info = [splits_json["icepahc"]["files"][name][split] for name in names]
        assert len(trees) == sum(part["range"][1] - part["range"][0] for part in info)
        assert _n_tokens(trees) == sum(part["tokens"] for part in info)
    first_file = list(read_treebank(tmp_path / "icepahc" / names[0]))
    assert every[: len(first_file)] == first_file  # split None: all trees in corpus order
    assert len(every) == sum(len(trees) for trees in per_split.values())


def test_corpora_whole_file_assignments_match_splits_json(data_dir, splits_json):
    cess = CORPORA["cess_esp"].split_rule
    files = treebank_files(data_dir / "cess_esp")
    for split in SPLITS:
        chosen = [f.name for i, f in enumerate(files) if cess.assign(i, f.name) == split]
        assert chosen == splits_json["cess_esp"]["splits"][split]["files"]
    ptb = CORPORA["ptb_sample"].split_rule
    files = treebank_files(data_dir / "ptb_sample")
    for split in SPLITS:
        chosen = [f.name for i, f in enumerate(files) if ptb.assign(i, f.name) == split]
        expected = splits_json["ptb_sample"]["splits"][split]
        assert [chosen[0], chosen[-1]] == expected["files_inclusive"]
        assert len(chosen) == expected["num_files"]


def test_corpora_icepahc_records_match_splits_json(data_dir, splits_json):
    """Every file's tree count, split ranges, tokens, first/last IDs and record indices."""

    def fail(error):
        raise error

    rule = CORPORA["icepahc"].split_rule
    records = empties = 0
    dropped = []
    for name, info in splits_json["icepahc"]["files"].items():
        path = data_dir / "icepahc" / name
        kept = []  # (record, tokens) of the records that are trees
        for record in iter_records(path.read_text(encoding="utf-8").split("\n"), name, fail):
            records += 1
            tags = record.tree.tags()
            n_empty = tags.count(EMPTY_TAG)
            empties += n_empty
            if len(tags) > n_empty:
                kept.append((record, len(tags) - n_empty))
            else:
                dropped.append((name, record.index))
        assert len(kept) == info["trees_in_file"], name
        for split, (start, end) in rule.bounds(len(kept)).items():
            first, last = kept[start][0], kept[end - 1][0]
            assert {
                "range": [start, end],
                "tokens": sum(tokens for _, tokens in kept[start:end]),
                "first_id": first.ident,
                "last_id": last.ident,
                "first_record_index": first.index,
                "last_record_index": last.index,
            } == info[split], (name, split)
    assert (records, len(dropped), empties) == (73051, 78, 104708)
    for record in [
        ("1275.morkin.nar-his.psd", 1748),
        ("1888.vordraumur.nar-fic.psd", 640),
        ("1888.vordraumur.nar-fic.psd", 706),
    ]:
        assert record in dropped


def test_corpora_open_treebank(load_corpus, data_dir):
    trees, scheme = open_treebank("cess_esp", "dev", data_dir=data_dir)
    assert scheme == "cess" and tuple(trees) == load_corpus("cess_esp", "dev")
    trees, scheme = open_treebank(data_dir / "ptb_sample" / "wsj_0001.mrg", "dev")
    assert scheme == "penn" and len(trees) == 2
    trees, scheme = open_treebank(str(data_dir / "floresta"), keep_functions=False)
    assert scheme == "floresta" and len(trees) == 9369
    assert trees[0].children[0].label == "np"


def test_spread_takes_every_kth_tree_over_the_whole_list():
    from spacy_lpcfg.corpora import spread

    items = list(range(100))
    assert spread(items, None) is items and spread(items, 100) is items
    assert spread(items, 30) == list(range(0, 100, 4))  # 25 items, from start to end
    assert spread(items, 50) == list(range(0, 100, 2))
    assert spread(items, 1) == [0]
