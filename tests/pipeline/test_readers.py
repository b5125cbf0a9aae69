"""The treebank corpus reader and `spacy-lpcfg convert` (.spacy training data)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_lpcfg.pipeline import doc_trees, install_extensions


def test_readers_treebank_corpus_yields_gold_examples(data_dir, load_corpus):
    reader = registry.readers.get("spacy_lpcfg.TreebankCorpus.v1")
    corpus = reader("ptb_sample", split="dev", data_dir=data_dir, limit=20)
    nlp = spacy.blank("en")
    examples = list(corpus(nlp))
    trees = load_corpus("ptb_sample", "dev")[:20]
    assert len(examples) == 20
    for example, tree in zip(examples, trees):
        assert [t.text for t in example.predicted] == tree.words()
        assert not example.predicted.has_annotation("TAG")  # the parser sees no gold tags
        assert "constituents" not in example.predicted.spans
        assert doc_trees(example.reference) == [tree]
    assert [e.reference.text for e in corpus(nlp)] == [e.reference.text for e in examples]


def test_readers_treebank_corpus_reads_files_and_refuses_spacy_files(data_dir, tmp_path):
    reader = registry.readers.get("spacy_lpcfg.TreebankCorpus.v1")
    examples = list(reader(str(data_dir / "ptb_sample" / "wsj_0001.mrg"))(spacy.blank("en")))
    assert len(examples) == 2 and examples[0].reference[0].text == "Pierre"
    with pytest.raises(ValueError, match="E710.*spacy.Corpus.v1"):
        reader(str(tmp_path / "train.spacy"))
    with pytest.raises(ValueError, match="E006"):
        list(reader("no_such_corpus")(spacy.blank("en")))


def run_convert(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spacy_lpcfg", "convert", *args], capture_output=True, text=True
    )


def test_readers_convert_writes_one_doc_per_tree(data_dir, load_corpus, tmp_path):
    out = run_convert("ptb_sample", str(tmp_path), "--split", "dev", "--data-dir", str(data_dir))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.spacy"]
    assert "273 trees" in out.stderr
    docs = list(DocBin().from_disk(tmp_path / "dev.spacy").get_docs(spacy.blank("en").vocab))
    trees = load_corpus("ptb_sample", "dev")
    assert [tree for doc in docs for tree in doc_trees(doc)] == list(trees)
    assert all(doc.has_unknown_spaces for doc in docs)


def test_readers_convert_a_treebank_file_with_its_label_scheme(data_dir, tmp_path):
    source = sorted((data_dir / "cess_esp").glob("*.tbf"))[0]
    out = run_convert(str(source), str(tmp_path))
    assert out.returncode == 0, out.stderr
    (written,) = tmp_path.iterdir()
    assert written.name == f"{source.name.split('.')[0]}.spacy"
    doc = next(DocBin().from_disk(written).get_docs(spacy.blank("es").vocab))
    assert doc.spans["constituents"].attrs["scheme"] == "cess"
    install_extensions()
    subject = next(span for span in doc.spans["constituents"] if span.label_ == "sn-SUJ")
    assert (subject._.labels, subject._.function_labels) == (("sn",), ("SUJ",))


def test_readers_convert_errors_exit_nonzero(tmp_path):
    out = run_convert("no_such_corpus", str(tmp_path))
    assert out.returncode == 1 and "E006" in out.stderr
    assert not any(tmp_path.iterdir())
