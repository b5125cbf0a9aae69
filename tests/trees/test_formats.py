"""Treebank readers on small snippets: each format's syntax and quirks, errors, skipping."""

from __future__ import annotations

import pytest

from spacy_lpcfg.errors import TreebankFormatError
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.formats import (
    FORMATS,
    TreebankReader,
    detect_format,
    read_treebank,
    treebank_files,
)
from spacy_lpcfg.trees.formats.psd import iter_records, leaf_word
from spacy_lpcfg.trees.normalize import NormalizeOptions

RAW = NormalizeOptions(remove_empty=False, strip_indices=False)


def write(folder, name: str, text: str, encoding: str = "utf-8"):
    path = folder / name
    path.write_bytes(text.encode(encoding))
    return path


def read(folder, name: str, text: str, *, encoding: str = "utf-8", **kwargs) -> list[str]:
    return [str(tree) for tree in read_treebank(write(folder, name, text, encoding), **kwargs)]


# --- Penn --------------------------------------------------------------------

MRG = """
( (S
    (NP-SBJ-1 (NNP Vinken) )
    (VP (VBZ is)
      (S (NP-SBJ (-NONE- *-1) )
        (ADJP-PRD (JJ old) )))
    (. .) ))
((NP-HLN (NN Headline) ))
"""


def test_formats_penn_mrg_roots_empties_and_indices(tmp_path):
    assert read(tmp_path, "a.mrg", MRG) == [
        "(TOP (S (NP-SBJ (NNP Vinken)) (VP (VBZ is) (S (ADJP-PRD (JJ old)))) (. .)))",
        "(TOP (NP-HLN (NN Headline)))",
    ]


def test_formats_penn_one_per_line_and_root_labels(tmp_path):
    text = "(TOP (S (NN a)))\n(ROOT (S (NN b)))\n(S (NN c))\n(S (NN d)) (S (NN e))\n"
    assert read(tmp_path, "a.txt", text, format="penn") == [
        "(TOP (S (NN a)))",
        "(TOP (S (NN b)))",
        "(TOP (S (NN c)))",
        "(TOP (S (NN d)))",
        "(TOP (S (NN e)))",
    ]


def test_formats_penn_options(tmp_path):
    path = write(tmp_path, "a.mrg", MRG)
    raw = next(read_treebank(path, options=RAW))
    assert "(NP-SBJ-1 (NNP Vinken))" in str(raw) and "(-NONE- *-1)" in str(raw)
    bare = next(read_treebank(path, options=NormalizeOptions(keep_functions=False)))
    assert str(bare) == "(TOP (S (NP (NNP Vinken)) (VP (VBZ is) (S (ADJP (JJ old)))) (. .)))"


def test_formats_penn_tree_of_empty_elements_is_not_yielded(tmp_path):
    text = "( (S (-NONE- *)))\n( (S (NN a)))\n"
    assert read(tmp_path, "a.mrg", text) == ["(TOP (S (NN a)))"]
    assert len(read(tmp_path, "a.mrg", text, options=RAW)) == 2


def test_formats_penn_odd_labels_do_not_crash(tmp_path):
    text = "( (S-TPC- (NP- (NN a)) (ADVP|PRT (RB up)) (-LRB- -LRB-) (NP=2 (NN b))))\n"
    assert read(tmp_path, "a.mrg", text) == [
        "(TOP (S-TPC (NP (NN a)) (ADVP|PRT (RB up)) (-LRB- -LRB-) (NP (NN b))))"
    ]


@pytest.mark.parametrize(
    "text,line,message",
    [
        ("( (S (NN a)))\n\n( (S (NN b))\n( (S (NN c)))\n", 3, "unlabelled bracket at line 4"),
        ("( (S (NN a)))\n(S (NN b)\n", 2, "not closed"),
        ("( (S (NN a))))\n", 1, "without '\\('"),
        ("( (S (NN a)))\nstray\n", 2, "outside brackets"),
        ("( (S\n  (NN a b)))\n", 2, "exactly one word"),
        ("( (S (NP (NN a)) word))\n", 1, "mixes words and phrases"),
        ("( (S (NP) (NN a)))\n", 1, "has no children"),
        ("( (S\n  ( (NN a))))\n", 1, "unlabelled bracket at line 2"),
        ("()\n", 1, "E002"),
    ],
)
def test_formats_penn_malformed_input_names_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, "bad.mrg", text)
    with pytest.raises(TreebankFormatError, match=message) as info:
        list(read_treebank(path))
    assert info.value.path == str(path)
    assert info.value.line == line
    assert str(path) in str(info.value)


def test_formats_penn_bad_encoding_names_file_and_line(tmp_path):
    path = tmp_path / "latin.mrg"
    path.write_bytes("( (S (NN a)))\n( (S (NN caf\u00e9)))\n".encode("latin-1"))
    with pytest.raises(TreebankFormatError, match=r"0xe9 as utf-8.*encoding=") as info:
        list(read_treebank(path))
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert [str(t) for t in read_treebank(path, encoding="latin-1")][1] == "(TOP (S (NN café)))"


def test_formats_skip_mode_records_and_resumes(tmp_path):
    text = "( (S (NN a)))\n( (S (NN b c)))\n( (S (NN d))\n( (S (NN e)))\n(S (NN f)\n"
    path = write(tmp_path, "a.mrg", text)
    reader = TreebankReader(path, errors="skip")
    assert [tree.words() for tree in reader] == [["a"], ["e"]]
    assert [(p, line) for p, line, _ in reader.skipped] == [(str(path), n) for n in (2, 3, 5)]
    assert "exactly one word" in reader.skipped[0][2]


def test_formats_skip_mode_skips_undecodable_file(tmp_path):
    (tmp_path / "a.mrg").write_bytes(b"( (S (NN \xff)))\n")
    write(tmp_path, "b.mrg", "( (S (NN b)))\n")
    reader = TreebankReader(tmp_path, errors="skip")
    assert [tree.words() for tree in reader] == [["b"]]
    assert reader.skipped[0][:2] == (str(tmp_path / "a.mrg"), 1)


def test_formats_reader_arguments_are_checked(tmp_path):
    path = write(tmp_path, "a.mrg", "( (S (NN a)))\n")
    with pytest.raises(ValueError, match="E003"):
        TreebankReader(path, "tiger")
    with pytest.raises(ValueError, match="E011"):
        TreebankReader(path, errors="ignore")
    with pytest.raises(FileNotFoundError, match="E015"):
        TreebankReader(tmp_path / "missing.mrg")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README").write_text("not a treebank")
    with pytest.raises(FileNotFoundError, match="E017"):
        TreebankReader(empty)


# --- directories and format detection ----------------------------------------


def test_formats_directory_reads_treebank_files_in_str_order(tmp_path):
    write(tmp_path, "b.mrg", "( (S (NN b)))\n")
    write(tmp_path, "B.mrg", "( (S (NN B)))\n")
    write(tmp_path, "a_1.mrg", "( (S (NN a)))\n")
    write(tmp_path, "README", "( (S (NN readme)))\n")
    write(tmp_path, "licence.txt", "text")
    assert [p.name for p in treebank_files(tmp_path)] == ["B.mrg", "a_1.mrg", "b.mrg"]
    assert [t.words()[0] for t in read_treebank(tmp_path)] == ["B", "a", "b"]


def test_formats_detect_format(tmp_path):
    assert detect_format(write(tmp_path, "x.psd", "")) == "psd"
    assert detect_format(write(tmp_path, "x.tbf", "")) == "cess"
    assert (
        detect_format(write(tmp_path, "x.ptb", "\n#1 CP1 Olá\n(STA+fcl (H+n Olá))")) == "floresta"
    )
    assert detect_format(write(tmp_path, "x.mrg", "( (S (NN a)))")) == "penn"
    assert FORMATS == {"penn": "penn", "psd": "penn", "floresta": "floresta", "cess": "cess"}


def test_formats_reader_scheme(tmp_path):
    write(tmp_path, "a.mrg", "( (S (NN a)))\n")
    assert TreebankReader(tmp_path).scheme == "penn"
    write(tmp_path, "b.tbf", "(\n  (S (ncms000 a a)))\n")
    with pytest.raises(ValueError, match="E018"):
        TreebankReader(tmp_path).scheme  # noqa: B018


# --- PPCHE .psd (IcePaHC) ----------------------------------------------------

PSD = """( (IP-MAT (CODE {COM:unsure})
\t  (NP-SBJ *pro*)
\t  (VBDI Reið-ríða)
\t  (NP-OB1 (NS-N tungur$-tunga) (D-N $nar-hinn) (N-N Gull<dash/>Harald-gullharaldur))
\t  (CP-REL (WNP-1 0) (C 0) (IP-SUB (NP-SBJ *T*-1) (ADV heim-heim)))
\t  (, ---) (, -----) (, -) (" "-"-") (. *-*) (P {á}))
  (ID TEST,.1))

( (CODE (CODE <heading>) (NP (N-N kapítuli-kapítuli)) (CODE </heading>)) (ID TEST,.2))

( (IP-MAT=2 (ADJP tólfti-tólf) (CODE <P_3>)) (CODE FINES))
"""


def test_formats_psd_records(tmp_path):
    path = write(tmp_path, "t.psd", PSD)
    trees = list(read_treebank(path))
    assert [str(t) for t in trees] == [
        "(TOP (IP-MAT (VBDI Reið) (NP-OB1 (NS-N tungur$) (D-N $nar) (N-N Gull-Harald)) "
        '(CP-REL (IP-SUB (ADV heim))) (, -) (, --) (, -) (" ") (. *) (P {á})))',
        "(TOP (IP-MAT (ADJP tólfti)))",
    ]

    def fail(error):
        raise error

    records = list(iter_records(PSD.split("\n"), "t.psd", fail))
    assert [(r.index, r.ident, r.line) for r in records] == [
        (0, "TEST,.1", 1),
        (1, "TEST,.2", 9),
        (2, None, 11),
    ]
    assert str(records[1].tree) == "(TOP)"
    assert "(NP-SBJ (-NONE- *pro*))" in str(records[0].tree)
    assert "(WNP-1 (-NONE- 0))" in str(records[0].tree)


@pytest.mark.parametrize(
    "leaf,word",
    [
        ("menn-maður", "menn"),
        ("mynda--mynd", "mynda"),
        ('"-"-"', '"'),
        ("*-*", "*"),
        ("-", "-"),
        ("---", "-"),
        ("-----", "--"),
        ("<dash/>", "-"),
        ("Gull<dash>Haraldur-gullharaldur", "Gull-Haraldur"),
        ("{á}", "{á}"),
    ],
)
def test_formats_psd_leaf_word(leaf, word):
    assert leaf_word(leaf) == word


def test_formats_psd_errors(tmp_path):
    path = write(tmp_path, "t.psd", "( (IP-MAT (N-N a-a b-b)) (ID X,.1))\n\n( (IP-MAT (N-N c-c))\n")
    with pytest.raises(TreebankFormatError, match="one word-lemma leaf") as info:
        list(read_treebank(path))
    assert info.value.line == 1
    reader = TreebankReader(path, errors="skip")
    assert list(reader) == []
    assert [line for _, line, _ in reader.skipped] == [1, 3]


# --- Floresta ------------------------------------------------------------------

FLORESTA = """######
#Floresta header
######

#1 CP1-1 Um revivalismo refrescante
(UTT+np (>N+art Um)
        (H+n revivalismo)
        (N<+adj refrescante))

#2 CP4-6 João Pedro
(UTT+prop João_Pedro

#3 CP5-1 Folha Olá, disse.
(UTT+prop Folha (QUE+fcl (SUBJ+n Olá)
         (, (P+v-fin disse))
         (.))

#4 CP6-1 A B
(STA+fcl- (H+n A))
  (-STA+fcl (H+n B) (N<PRED+prop' M S} Caso_{B}) (N<{'1/2'} 1/2))

#5 CP7-1 Futebol --
(?+?
"""


def test_formats_floresta_blocks_and_quirks(tmp_path):
    trees = read(tmp_path, "f.ptb", FLORESTA, encoding="latin-1")
    assert trees == [
        "(TOP (UTT+np (>N+art Um) (H+n revivalismo) (N<+adj refrescante)))",
        "(TOP (UTT+prop João_Pedro))",
        "(TOP (UTT+prop (UTT+prop Folha) (QUE+fcl (SUBJ+n Olá) (, ,) (P+v-fin disse) (. .))))",
        "(TOP (STA+fcl (H+n A)) (STA+fcl (H+n B) (N<PRED+prop' Caso_{B}) "
        "(N<{'1/2'} N<{'1/2'}) (N<{'1/2'} 1/2)))",
        "(TOP (?+? ?+?))",
    ]
    raw = read(tmp_path, "f.ptb", FLORESTA, encoding="latin-1", options=RAW)
    assert raw[3].startswith("(TOP (STA+fcl- (H+n A)) (-STA+fcl (H+n B)")


def test_formats_floresta_errors(tmp_path):
    text = "#1 CP1-1 a\n(STA+fcl (H+n a)))\n\n#2 CP1-2 b\n(STA+fcl (H+n b))\n"
    path = write(tmp_path, "f.ptb", text)
    with pytest.raises(TreebankFormatError, match="without '\\('") as info:
        list(read_treebank(path))
    assert info.value.line == 2
    reader = TreebankReader(path, errors="skip")
    assert [t.words() for t in reader] == [["b"]]
    assert len(reader.skipped) == 1


# --- CESS-ESP ------------------------------------------------------------------

CESS = """
(
  (S
    (sn.e-SUJ *0*)
    (grup.verb
      (vmis3s0 anunció anunciar))
    (sn-CD
      (grup.nom.ms (W jueves [jueves:??/??/??:??.??])))
    (Fp . .)))

(
  (S
    (sn-SUJ (grup.nom (np00000 Niño niño)))

(
  (S.co
    (grup.verb (vmis3s0 fue ser)))
  (Fp . .)))
)
"""


def test_formats_cess_chunks(tmp_path):
    assert read(tmp_path, "c.tbf", CESS, encoding="latin-1") == [
        "(TOP (S (grup.verb (vmis3s0 anunció)) (sn-CD (grup.nom.ms (W jueves))) (Fp .)))",
        "(TOP (S (sn-SUJ (grup.nom (np00000 Niño)))))",
        "(TOP (S.co (grup.verb (vmis3s0 fue))) (Fp .))",
    ]


@pytest.mark.parametrize(
    "chunk,message",
    [
        ("(\n  (S (Fp . .)))) (S (Fp . .))\n", "'\\(' after a surplus"),
        ("(\n  (S (Fp .)))\n", "POS word lemma"),
        ("(\n  (S (Fp . .)))\n  (S (Fp . .))\n", "one tree, found 2"),
        ("text\n(\n  (S (Fp . .)))\n", "before the first tree"),
    ],
)
def test_formats_cess_errors(tmp_path, chunk, message):
    with pytest.raises(TreebankFormatError, match=message):
        read(tmp_path, "c.tbf", chunk)


def test_formats_trees_are_tree_objects(tmp_path):
    tree = next(read_treebank(write(tmp_path, "a.mrg", "( (S (NN a)))\n")))
    assert tree == Tree("TOP", (Tree("S", (Tree.leaf("NN", "a"),)),))


def test_formats_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "bom.mrg"
    path.write_bytes(b"\xef\xbb\xbf( (S (NN a)))\n")
    assert [str(t) for t in read_treebank(path)] == ["(TOP (S (NN a)))"]
