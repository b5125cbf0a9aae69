"""Unknown-word signatures for scripts written without spaces or case (issue 11, item 10).

The CJK classes (character type, length, first and last character), the
automatic choice of a scheme from the training words, its serialisation, and
a synthetic Chinese-like treebank on which the CJK classes tag unknown words
better than the alphabetic ones.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.grammar.lexicon import Lexicon
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.grammar.signatures import (
    CJKSignatures,
    choose_scheme,
    get_signatures,
    word_type,
)
from spacy_lpcfg.trees import Tree

# The chains --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word, expected",
    [
        ("经济", "HAN"), ("1998年", "HAN+DIGIT"), ("１９９８年", "HAN+DIGIT"),
        ("食べる", "HAN+HIRA"), ("コーヒー", "KATA"), ("ｺｰﾋｰ", "KATA"), ("。", "PUNCT"),
        ("「", "PUNCT"), ("ＧＤＰ", "LATIN"), ("iPhone", "LATIN"), ("3.5", "DIGIT+PUNCT"),
        ("한국", "HANGUL"), ("αβ", "OTHER"), ("々", "HAN"), ("卡拉OK", "HAN+LATIN"),
    ],
)  # fmt: skip
def test_cjk_word_types(word, expected):
    assert word_type(word) == expected


@pytest.mark.parametrize(
    "word, expected",
    [
        ("经济", ("UNK-HAN-2~经…济", "UNK-HAN-2~…济", "UNK-HAN~…济", "UNK-HAN", "UNK")),
        ("者", ("UNK-HAN-1~…者", "UNK-HAN~…者", "UNK-HAN", "UNK")),
        ("中华人民共和国",
         ("UNK-HAN-4+~中…国", "UNK-HAN-4+~…国", "UNK-HAN~…国", "UNK-HAN", "UNK")),
        # digits are "#", Latin letters lowercase (full-width ones too)
        ("１９９８年",
         ("UNK-HAN+DIGIT-4+~#…年", "UNK-HAN+DIGIT-4+~…年", "UNK-HAN+DIGIT~…年",
          "UNK-HAN+DIGIT", "UNK")),
        ("ＧＤＰ", ("UNK-LATIN-3~g…p", "UNK-LATIN-3~…p", "UNK-LATIN~…p", "UNK-LATIN", "UNK")),
        ("食べる",
         ("UNK-HAN+HIRA-3~食…る", "UNK-HAN+HIRA-3~…る", "UNK-HAN+HIRA~…る", "UNK-HAN+HIRA",
          "UNK")),
        ("", ("UNK",)),
    ],
)  # fmt: skip
def test_cjk_chain(word, expected):
    # no case: the position and the known words do not matter
    assert CJKSignatures().chain(word, 0, lambda w: True) == expected
    assert CJKSignatures().chain(word, 5, lambda w: False) == expected


def test_cjk_chains_form_a_tree():
    # the lexicon smooths each class towards the next one in its chain, fixed when
    # the class is first seen: every class must have the same parent in every chain
    words = ["经济", "发展", "经济学", "中华人民共和国", "1998年", "食べる", "コーヒー", "者"]
    words += ["ＧＤＰ", "卡拉OK", "。", "十一月", "不断", "不"]
    parents = {}
    for word in words:
        chain = CJKSignatures().chain(word, 0, lambda w: False)
        for child, parent in zip(chain, chain[1:]):
            assert parents.setdefault(child, parent) == parent


def test_cjk_scheme_by_name():
    assert get_signatures("cjk", "en", 3).name == "cjk"
    lexicon = Lexicon(signature="cjk").fit(LATIN_SENTENCES)
    assert lexicon.signatures.name == "cjk"
    data = lexicon.to_dict()  # version 1 readers do not know "cjk"
    assert data["format_version"] == 2 and data["signatures"] == "cjk"
    assert Lexicon.from_dict(data).signatures.name == "cjk"


# The automatic choice ------------------------------------------------------------------

LATIN_SENTENCES = [
    [("The", "DT"), ("dog", "NN"), ("runs", "VBZ"), ("fast", "RB"), (".", ".")],
    [("A", "DT"), ("cat", "NN"), ("in", "IN"), ("Beijing", "NNP"), ("sleeps", "VBZ")],
    [("The", "DT"), ("word", "NN"), ("经济", "FW"), ("means", "VBZ"), ("economy", "NN")],
]
HAN_SENTENCES = [
    [("经济", "NN"), ("发展", "VV"), ("很", "AD"), ("快", "VA"), ("。", "PU")],
    [("中国", "NR"), ("在", "P"), ("1998年", "NT"), ("发展", "VV"), ("GDP", "NN")],
    [("他", "PN"), ("喜欢", "VV"), ("iPhone", "NN"), ("，", "PU"), ("2", "CD")],
]
KANA_SENTENCES = [
    [("私", "PRON"), ("は", "ADP"), ("コーヒー", "NOUN"), ("を", "ADP"), ("飲む", "VERB")],
    [("ケーキ", "NOUN"), ("を", "ADP"), ("たべる", "VERB"), ("。", "PUNCT")],
]


@pytest.mark.parametrize(
    "sentences, language, expected",
    [
        (LATIN_SENTENCES, "en", "berkeley"),  # one Chinese word among English ones
        (LATIN_SENTENCES, "is", "generic"),
        (HAN_SENTENCES, "zh", "cjk"),  # Latin words and digits among Chinese ones
        (HAN_SENTENCES, "en", "cjk"),  # whatever the language says
        (KANA_SENTENCES, "ja", "cjk"),
        ([[("1", "CD"), ("。", "PU")]], "zh", "generic"),  # no letters: the language decides
    ],
)
def test_auto_signatures_follow_the_script(sentences, language, expected):
    lexicon = Lexicon(language=language).fit(sentences)
    assert lexicon.signatures.name == expected
    assert repr(lexicon).startswith(f"Lexicon({expected},")
    assert Lexicon(language=language, signature="generic").fit(sentences).signatures.name == (
        "generic"
    )  # a scheme asked for by name is kept


def test_auto_choice_is_by_token_share():
    assert choose_scheme({"经济": 6, "the": 4}, "en") == "cjk"
    assert choose_scheme({"经济": 4, "the": 6}, "en") == "berkeley"
    assert choose_scheme({"経済": 1, "ケーキ": 1, "the": 2, "3": 100, ".": 100}, "de") == "cjk"


# Serialisation -------------------------------------------------------------------------


def test_cjk_choice_is_saved_and_restored():
    sentences = HAN_SENTENCES * 2 + [[("实验", "NN")]]  # a rare word: classes of 实验
    lexicon = Lexicon(language="zh", open_class_threshold=1).fit(sentences)
    data = json.loads(json.dumps(lexicon.to_dict()))
    assert data["format_version"] == 2 and data["signatures"] == "cjk"
    restored = Lexicon.from_dict(data)
    assert restored.signatures.name == "cjk" and restored.config == lexicon.config
    assert restored.unknown_entry("经验", 0) == lexicon.unknown_entry("经验", 0) == "UNK-HAN-2~…验"
    assert restored.unknown_entry("检验过", 3) == "UNK-HAN"
    for bad in ("auto", "stanford", 3):
        with pytest.raises(ValueError, match="E122"):
            Lexicon.from_dict({**data, "signatures": bad})
    with pytest.raises(ValueError, match="E122"):  # a scheme the configuration excludes
        Lexicon.from_dict({**data, "config": {**data["config"], "signature": "generic"}})


def test_alphabetic_lexicon_files_are_unchanged():
    # what the lexicon wrote before the CJK classes: version 1, no "signatures"
    for language in ("en", "is"):
        data = Lexicon(language=language).fit(LATIN_SENTENCES).to_dict()
        assert data["format_version"] == 1
        assert set(data) == {"format", "format_version", "config", "tags", "known_words", "classes"}


def test_lexicon_written_before_cjk_loads_unchanged():
    # a lexicon.json of a Chinese model written before this change: "auto" was
    # "generic" for language "zh", and still is for that model
    old = {
        "format": "spacy-lpcfg lexicon",
        "format_version": 1,
        "config": {
            "signature": "auto", "language": "zh", "suffix_length": 3, "rare_threshold": 1,
            "open_class_threshold": 5, "smooth_threshold": 10, "word_smoothing": 0.1,
            "signature_smoothing": 1.0,
        },
        "tags": ["NN", "VV"],
        "known_words": ["发展", "经济"],
        "classes": {"UNK": "UNK", "UNK-NOCASE": "UNK-NOCASE", "UNK-NOCASE~验": "UNK-NOCASE~验"},
    }  # fmt: skip
    lexicon = Lexicon.from_dict(old)
    assert lexicon.signatures.name == "generic"
    assert lexicon.unknown_entry("经验", 0) == "UNK-NOCASE~验"
    assert lexicon.to_dict() == old


# A synthetic Chinese-like treebank ------------------------------------------------------
#
# Words are built as in Chinese: nouns and verbs are a modifier character plus a head
# character (the last one, which decides the category), person names (NR) a surname
# plus two given-name characters, adverbs a prefix plus a verb head, and loanwords are
# katakana nouns. Some head characters serve two categories (as 化 in 文化/NN and
# 美化/VV) and given-name characters also end nouns, so that the last character alone
# is ambiguous: the length (names have three characters), the first character and the
# script help. Words are drawn from a long-tailed distribution, so that the test
# sentences have unknown words sharing first and last characters with known words of
# the same tag.


def _chars(start: int, n: int, base: int = 0x4E00) -> str:
    return "".join(chr(base + start + i) for i in range(n))


SURNAMES = _chars(0, 12)
GIVEN = _chars(100, 24)
NOUN_HEADS = _chars(300, 10) + GIVEN[:6]
NOUN_MODIFIERS = _chars(200, 30)
VERB_HEADS = _chars(500, 10) + NOUN_HEADS[:3]
VERB_MODIFIERS = _chars(400, 30)
ADVERB_PREFIXES = _chars(600, 4)
KATAKANA = _chars(0, 80, base=0x30A2)[::2]


def _vocabulary(rng: random.Random) -> dict[str, list[str]]:
    loanwords = {
        "".join(rng.sample(KATAKANA, rng.choice((3, 4, 5)))) + "ー" * rng.randint(0, 1)
        for _ in range(300)
    }
    words = {
        "NR": sorted({s + "".join(rng.sample(GIVEN, 2)) for s in SURNAMES for _ in range(25)}),
        "NN": sorted(m + h for m in NOUN_MODIFIERS for h in NOUN_HEADS) + sorted(loanwords),
        "VV": sorted(m + h for m in VERB_MODIFIERS for h in VERB_HEADS),
        "AD": sorted(p + h for p in ADVERB_PREFIXES for h in VERB_HEADS),
    }
    for pool in words.values():
        rng.shuffle(pool)
    return words


def _draw(rng: random.Random, words: dict[str, list[str]], tag: str) -> str:
    pool = words[tag]
    if rng.random() < 0.5:  # a few frequent words, and a long tail
        return pool[min(int(rng.paretovariate(1.0)) - 1, len(pool) - 1)]
    return rng.choice(pool)


def _noun_phrase(rng: random.Random, words: dict[str, list[str]], function: str) -> str:
    tags = [rng.choice(("NN", "NR", "NN")) for _ in range(rng.choice((1, 1, 2)))]
    return f"(NP{function} " + " ".join(f"({t} {_draw(rng, words, t)})" for t in tags) + ")"


def _verb_phrase(rng: random.Random, words: dict[str, list[str]]) -> str:
    vp = f"(VP (VV {_draw(rng, words, 'VV')}) {_noun_phrase(rng, words, '-OBJ')})"
    roll = rng.random()
    if roll < 0.3:
        return f"(VP (ADVP (AD {_draw(rng, words, 'AD')})) {vp})"
    if roll < 0.5:  # serial verbs: VV VV NP, beside AD VV NP
        return f"(VP (VV {_draw(rng, words, 'VV')}) {vp})"
    return vp


def synthetic_cjk_treebank(n: int, seed: int = 0) -> list[Tree]:
    rng = random.Random(seed)
    words = _vocabulary(rng)
    return [
        Tree.from_string(
            f"(TOP (IP {_noun_phrase(rng, words, '-SBJ')} {_verb_phrase(rng, words)} (PU 。)))"
        )
        for _ in range(n)
    ]


def unknown_word_tagging(model: ParsingModel, test: list[Tree]) -> tuple[int, float]:
    """(unknown tokens, % of them tagged right) when parsing the test words alone."""
    parser = Parser(model)
    outcomes = [
        predicted == gold_tag
        for gold in test
        for word, gold_tag, predicted in zip(
            gold.words(), gold.tags(), parser.parse(gold.words()).tree.tags()
        )
        if word not in model.lexicon.known_words
    ]
    return len(outcomes), 100 * float(np.mean(outcomes))


def test_cjk_signatures_tag_unknown_words_better():
    trees = synthetic_cjk_treebank(700)
    train, test = trees[:400], trees[400:]
    accuracy = {}
    for signature in ("berkeley", "generic", "cjk", "auto"):
        model = MLEEstimator(signature=signature, language="zh").fit(train).model_
        n_unknown, accuracy[signature] = unknown_word_tagging(model, test)
        assert n_unknown > 400  # about 8% of the test tokens
    # measured: berkeley 67.5, generic 91.2, cjk 97.0 (seeds 1 and 2: +2.9 and +5.9
    # points over generic)
    assert accuracy["cjk"] >= accuracy["generic"] + 2.0
    assert accuracy["cjk"] >= accuracy["berkeley"] + 20.0
    assert accuracy["auto"] == accuracy["cjk"]


def test_cjk_model_saves_and_loads(tmp_path):
    trees = synthetic_cjk_treebank(260)
    model = MLEEstimator(language="en").fit(trees[:200]).model_  # "auto" picks cjk
    assert model.lexicon.signatures.name == "cjk"
    model.to_disk(tmp_path / "model")
    loaded = ParsingModel.from_disk(tmp_path / "model")
    assert loaded.lexicon.signatures.name == "cjk"
    parser, reloaded = Parser(model), Parser(loaded)
    for gold in trees[200:]:
        assert reloaded.parse(gold.words()).tree == parser.parse(gold.words()).tree
