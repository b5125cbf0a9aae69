"""Treebank statistics: definitions on toy trees, and the README's summary table."""

from __future__ import annotations

import pytest

from spacy_lpcfg.corpora import CORPORA
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.formats import read_treebank
from spacy_lpcfg.trees.normalize import NormalizeOptions
from spacy_lpcfg.trees.stats import treebank_stats

TABLE_KEYS = [
    "trees",
    "tokens",
    "vocabulary",
    "pos_tags",
    "categories_with_function",
    "categories_without_function",
    "phrasal_nodes",
    "phrasal_nodes_with_function",
    "distinct_function_tags",
    "max_length",
    "length_one_trees",
]

# The README's summary table, except where noted (icepahc: see README_DIFFERENCES).
README_TABLE = {
    "ptb_sample": [3914, 94084, 11968, 45, 143, 27, 73461, 16345, 20, 249, 1],
    "icepahc": [72973, 1017294, 69069, 419, 347, 83, 750019, 475693, 59, 317, 172],
    "floresta": [9369, 212780, 29515, 51, 278, 16, 109573, 109573, 81, 188, 109],
    "cess_esp": [6016, 188803, 25463, 282, 554, 208, 284794, 44569, 52, 143, 0],
}
# README: icepahc vocabulary 69,079, categories with function 349, function tags 61.
# * vocabulary: the reader writes the in-word hyphen markup '<dash/>' (also '<dash>',
#   '</dash>') as '-', which merges 9 word types; and it reads the 437 lone '-' leaves as
#   the word '-', where the README's count has an empty word (split at the first '-').
# * 2 labels: the README keeps 'IP-SUB=X' (2 nodes) whole, giving a category 'IP-SUB=X'
#   and a function 'SUB=X' (hence SUB 62,772, not 62,774), and reads 'IP-SUB-=17' as
#   'IP-SUB-', a category with an empty function tag. The Penn label scheme reads '=X' as a
#   gapping index and ignores empty parts, so both are 'IP-SUB'.
README_AVERAGE_LENGTH = {
    "ptb_sample": 24.04,
    "icepahc": 13.94,
    "floresta": 22.71,
    "cess_esp": 31.38,
}
README_EMPTY_ELEMENTS = {
    "ptb_sample": 6592,
    "floresta": 0,
    "cess_esp": 3883,
}  # icepahc: test_corpora

README_FUNCTION_TAGS = {
    "ptb_sample": "SBJ 6903, TMP 1966, LOC 1549, CLR 1521, PRD 1391, ADV 735, DIR 487, NOM 409, "
    "TPC 369, MNR 361, PRP 322, LGS 237, EXT 150, TTL 65, HLN 57, DTV 29, PUT 17, BNF 7, CLF 7, "
    "VOC 2",
    "icepahc": "SBJ 104283, MAT 78551, SUB 62774, SPE 46463, OB1 42555, POS 32489, TMP 23865, "
    "PRN 21410, INF 19914, REL 14916, THT 13016, ADV 12561, PRD 8305, OB2 7386, LOC 6481, "
    "CMP 5489, QUE 5187, MSR 5122, SMC 3862, DIR 3421, RSP 2810, LFD 2773, IMP 2461, VOC 1823, "
    "DEG 1533, SPR 1442, COM 1339, PPL 1210, PRP 1190, ADT 800",  # README: SUB 62772, see above
    "floresta": "P< 25698, N< 19599, ADVL 10697, ACC 8942, CJT 8205, SUBJ 8198, STA 8146, "
    "P 3404, N<PRED 3323, PIV 2757, SC 2430, A< 1234, UTT 1122, ? 897, ADVS 772, PASS 735, H 688, "
    ">N 482, APP 335, PRED 285, KOMP< 254, OC 226, QUE 182, ADVO 159, PCJT 105, S< 97, >A 96, "
    "ADVL/N<[+1] 83, AS< 62, EXC 53",
    "cess_esp": "CC 11132, SUJ 10815, CD 9036, ATR 2498, CREG 1717, MOD 1701, CCT 1488, CI 1058, "
    "CCL 831, AO 774, CD.Q 689, PASS 676, ET 577, CAG 454, CPRED.SUJ 364, CPRED.CD 226, "
    "IMPERS 151, CI.r 74, CD.r 60, CPRED 53, CD.NFc 31, CD.NFn 28, SUJ.p 13, VOC 12, "
    "CREG.NFc 11, SUJ.Fc 9, ATR.d 8, SUJ.NFn 7, NEG 7, .NFn 7",
}
README_CATEGORIES = {
    "ptb_sample": "NP 31207, VP 14492, S 9467, PP 9323, SBAR 2877, ADVP 1867",
    "icepahc": "NP 317420, IP 168805, PP 102344, ADVP 54267, CP 53286, CONJP 23197",
    "floresta": "np 42869, pp 31945, fcl 15490, icl 5592, cu 5439, vp 3443",
    "cess_esp": "sn 35056, prep 28698, sp 28559, grup.nom.ms 19791, grup.verb 15395, "
    "grup.nom.fs 13233",
}


def _parse_counts(text: str) -> list[tuple[str, int]]:
    return [(item.rsplit(" ", 1)[0], int(item.rsplit(" ", 1)[1])) for item in text.split(", ")]


@pytest.fixture(scope="module")
def corpus_stats(load_corpus):
    cache = {}

    def get(name: str) -> dict:
        if name not in cache:
            cache[name] = treebank_stats(load_corpus(name), CORPORA[name].scheme)
        return cache[name]

    return get


def test_stats_definitions_penn():
    trees = [
        Tree.from_string("( (S (NP-SBJ-1 (DT The) (NN cat)) (VP (VBD sat)) (. .)))"),
        Tree.from_string("( (FRAG (NP-TMP-CLR (NN Today))))"),
        Tree.from_string("( (S (NP-SBJ (-NONE- *)) (VP (VBD ran))))"),
    ]
    stats = treebank_stats(trees, "penn")
    assert {key: stats[key] for key in TABLE_KEYS} == {
        "trees": 3,
        "tokens": 6,
        "vocabulary": 6,
        "pos_tags": 4,
        "categories_with_function": 5,  # S NP-SBJ VP FRAG NP-TMP-CLR
        "categories_without_function": 4,
        "phrasal_nodes": 7,  # the NP-SBJ over the empty element is not counted
        "phrasal_nodes_with_function": 2,
        "distinct_function_tags": 3,
        "max_length": 4,
        "length_one_trees": 2,
    }
    assert stats["empty_elements"] == 1
    assert stats["function_tags"] == {"SBJ": 1, "TMP": 1, "CLR": 1}
    assert stats["top_categories"] == {"S": 2, "NP": 2, "VP": 2, "FRAG": 1}
    assert stats["average_length"] == 2.0


def test_stats_floresta_pos_tags_are_word_classes():
    tree = Tree("TOP", (Tree("STA+fcl", (Tree.leaf("SUBJ+n", "a"), Tree.leaf("P+v-fin", "b"))),))
    stats = treebank_stats([tree], "floresta")
    assert stats["pos_tags"] == 2
    assert stats["function_tags"] == {"STA": 1}


@pytest.mark.parametrize("corpus", sorted(README_TABLE))
def test_stats_readme_table(corpus_stats, corpus):
    stats = corpus_stats(corpus)
    assert [stats[key] for key in TABLE_KEYS] == README_TABLE[corpus]
    assert round(stats["average_length"], 2) == README_AVERAGE_LENGTH[corpus]
    assert stats["empty_elements"] == 0  # the corpora are read normalised


@pytest.mark.parametrize("corpus", sorted(README_FUNCTION_TAGS))
def test_stats_readme_function_tags_and_categories(corpus_stats, corpus):
    stats = corpus_stats(corpus)
    expected = _parse_counts(README_FUNCTION_TAGS[corpus])
    assert list(stats["function_tags"].items())[: len(expected)] == expected
    expected = _parse_counts(README_CATEGORIES[corpus])
    assert list(stats["top_categories"].items())[: len(expected)] == expected


def test_stats_readme_parentheticals(load_corpus):
    ice_tags = {tag for tree in load_corpus("icepahc") for tag in tree.tags()}
    assert len({tag.split("-")[0] for tag in ice_tags}) == 190  # POS tags without case suffix
    cess = treebank_stats(load_corpus("cess_esp"), "cess")
    assert cess["categories_without_function"] == 208
    categories = {
        node.label.split("-")[0].split(".")[0]
        for tree in load_corpus("cess_esp")
        for node in tree.subtrees()
        if node.word is None and node is not tree
    }
    assert len(categories) == 28


@pytest.mark.parametrize("corpus", sorted(README_EMPTY_ELEMENTS))
def test_stats_empty_elements_need_unnormalised_trees(corpus_stats, data_dir, corpus):
    raw = list(
        read_treebank(
            data_dir / corpus, CORPORA[corpus].format, options=NormalizeOptions(remove_empty=False)
        )
    )
    stats = treebank_stats(raw, CORPORA[corpus].scheme)
    assert stats["empty_elements"] == README_EMPTY_ELEMENTS[corpus]
    assert stats | {"empty_elements": 0} == corpus_stats(corpus)
