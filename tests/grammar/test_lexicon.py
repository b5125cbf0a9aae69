"""Unknown-word signatures and the Lexicon: vocabulary, emissions, tags, serialisation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.grammar import LPCFG, SymbolTable
from spacy_lpcfg.grammar.lexicon import Lexicon
from spacy_lpcfg.grammar.signatures import (
    BerkeleySignatures,
    GenericSignatures,
    berkeley_signature,
    get_signatures,
    word_shape,
)
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformSpec

# (word, tag) sentences; hapaxes: cat/NN, sleeps/VBZ, a/DT, walked/VBD
SENTENCES = [
    [("the", "DT"), ("dog", "NN"), ("runs", "VBZ")],
    [("the", "DT"), ("cat", "NN"), ("runs", "VBZ")],
    [("the", "DT"), ("dog", "NN"), ("sleeps", "VBZ")],
    [("a", "DT"), ("dog", "NN"), ("walked", "VBD")],
]
HAND = dict(
    signature="berkeley", open_class_threshold=1, smooth_threshold=0, signature_smoothing=1.0
)


def fitted(**config) -> Lexicon:
    return Lexicon(**{**HAND, **config}).fit(SENTENCES)


def grammar_for(lexicon: Lexicon) -> LPCFG:
    """A grammar over the lexicon: TOP -> S, S -> each tag, and the lexicon's emissions."""
    tags = list(lexicon.tags)
    symbols = SymbolTable.from_kinds(phrasal=["S"], preterminal=tags)
    s = symbols.index("S")
    unary = np.array([[symbols.root, s]] + [[s, symbols.index(tag)] for tag in tags])
    return LPCFG(
        symbols,
        np.ones(len(symbols), dtype=np.int32),
        binary_rules=np.zeros((0, 3), dtype=np.int32),
        binary_offsets=np.zeros(1, dtype=np.int64),
        binary_weights=np.zeros(0),
        unary_rules=unary,
        unary_offsets=np.arange(len(unary) + 1),
        unary_weights=np.array([1.0] + [1.0 / len(tags)] * len(tags)),
        words=lexicon.entries,
        **lexicon.lexical_arrays(symbols),
    )


def emission(grammar: LPCFG, tag: str, entry: str) -> float:
    word = grammar.word_index[entry]
    tag_id = grammar.symbols.index(tag)
    for rule, (a, w) in enumerate(grammar.lexical_rules.tolist()):
        if (a, w) == (tag_id, word):
            return float(grammar.lexical_block(rule)[0])
    return 0.0


def scored(scores, position: int) -> dict[int, float]:
    """{preterminal id: score} at a position (one-state grammars)."""
    found = scores.positions == position
    return dict(zip(scores.tags[found].tolist(), scores.values[found].tolist()))


# Signatures -------------------------------------------------------------------


@pytest.mark.parametrize(
    "word,position,known,expected",
    [
        ("Running", 0, {"running"}, "UNK-INITC-KNOWNLC-ing"),
        ("Running", 0, set(), "UNK-INITC-ing"),
        ("Running", 3, set(), "UNK-CAPS-ing"),
        ("1990s", 2, set(), "UNK-LC-NUM-s"),
        ("anti-war", 2, set(), "UNK-LC-DASH"),
        ("x-rays", 2, set(), "UNK-LC-DASH-s"),
        ("quickly", 2, set(), "UNK-LC-ly"),
        ("USA", 2, set(), "UNK-CAPS"),
        ("USA", 0, set(), "UNK-CAPS"),  # more than one capital: not -INITC
        ("3M", 1, set(), "UNK-CAPS-NUM"),  # capitals after a non-letter
        ("1,000", 1, set(), "UNK-NUM"),
        ("%", 1, set(), "UNK"),
        ("glass", 1, set(), "UNK-LC"),  # -ss is not a plural
        ("walked", 1, set(), "UNK-LC-ed"),
        ("nation", 1, set(), "UNK-LC-ion"),
        ("faster", 1, set(), "UNK-LC-er"),
        ("biggest", 1, set(), "UNK-LC-est"),
        ("activity", 1, set(), "UNK-LC-ity"),
        ("happy", 1, set(), "UNK-LC-y"),
        ("national", 1, set(), "UNK-LC-al"),
        ("sing", 1, set(), "UNK-LC"),  # suffixes other than -s need 5 characters
        ("R2-D2ing", 1, set(), "UNK-CAPS-NUM-DASH"),
    ],
)
def test_signatures_berkeley_classes(word, position, known, expected):
    assert berkeley_signature(word, position, known.__contains__) == expected


def test_signatures_berkeley_chain_ends_with_unk():
    scheme = BerkeleySignatures()
    assert scheme.chain("quickly", 1, set().__contains__) == ("UNK-LC-ly", "UNK")
    assert scheme.chain("%", 1, set().__contains__) == ("UNK",)


@pytest.mark.parametrize(
    "word,position,expected",
    [
        ("Running", 0, ("UNK-INITC~ing", "UNK-INITC~ng", "UNK-INITC~g", "UNK-INITC", "UNK")),
        ("Running", 4, ("UNK-CAP~ing", "UNK-CAP~ng", "UNK-CAP~g", "UNK-CAP", "UNK")),
        ("1990s", 2, ("UNK-LC-NUM~90s", "UNK-LC-NUM~0s", "UNK-LC-NUM~s", "UNK-LC-NUM", "UNK")),
        (
            "anti-war",
            1,
            ("UNK-LC-DASH~war", "UNK-LC-DASH~ar", "UNK-LC-DASH~r", "UNK-LC-DASH", "UNK"),
        ),
        ("USA", 1, ("UNK-CAPS~sa", "UNK-CAPS~a", "UNK-CAPS", "UNK")),  # never the whole word
        ("--", 1, ("UNK-PUNCT", "UNK")),
        ("1,000", 1, ("UNK-NUM", "UNK")),
        ("漢字", 1, ("UNK-NOCASE~字", "UNK-NOCASE", "UNK")),
    ],
)
def test_signatures_generic_chain(word, position, expected):
    assert GenericSignatures(3).chain(word, position, set().__contains__) == expected


def test_signatures_generic_suffix_length():
    assert GenericSignatures(0).chain("quickly", 1, set().__contains__) == ("UNK-LC", "UNK")
    assert word_shape("quickly", 0) == "LC" and word_shape("Quickly", 0) == "INITC"


@pytest.mark.parametrize(
    "signature,language,expected",
    [("auto", "en", "berkeley"), ("auto", "is", "generic"), ("generic", "en", "generic"),
     ("berkeley", "pt", "berkeley")],
)  # fmt: skip
def test_signatures_choice(signature, language, expected):
    assert get_signatures(signature, language, 3).name == expected


def test_signatures_unknown_scheme():
    with pytest.raises(ValueError, match="E011"):
        get_signatures("stanford", "en", 3)


# Fitting --------------------------------------------------------------------------


def test_lexicon_vocabulary():
    lexicon = fitted()
    assert lexicon.known_words == {"the", "dog", "runs"}
    assert set(lexicon.classes) == {"UNK", "UNK-LC", "UNK-LC-s", "UNK-LC-ed"}
    assert lexicon.entries == ("dog", "runs", "the", "UNK", "UNK-LC", "UNK-LC-ed", "UNK-LC-s")


def test_lexicon_emissions_equal_hand_computation():
    # c(DT) = c(NN) = 4, c(VBZ) = 3, c(VBD) = 1; the rare tokens a/DT, cat/NN,
    # sleeps/VBZ, walked/VBD give P(x | U) = 1/4 for each tag.
    grammar = grammar_for(fitted())
    expected = {
        ("DT", "the"): 3 / 4, ("NN", "dog"): 3 / 4, ("VBZ", "runs"): 2 / 3,
        ("DT", "UNK"): 1 / 4, ("NN", "UNK"): 1 / 4, ("VBZ", "UNK"): 1 / 3, ("VBD", "UNK"): 1.0,
        # UNK-LC (a/DT, cat/NN): P(x | s) = (c(x, s) + P(x | U)) / (2 + 1), times c(s) / c(x)
        ("DT", "UNK-LC"): 1.25 / 3 * 2 / 4, ("VBZ", "UNK-LC"): 0.25 / 3 * 2 / 3,
        ("VBD", "UNK-LC"): 0.25 / 3 * 2 / 1,
        # UNK-LC-s (sleeps/VBZ): P(VBZ | s) = (1 + 1/4) / 2
        ("VBZ", "UNK-LC-s"): 0.625 / 3, ("NN", "UNK-LC-s"): 0.125 / 4,
        ("VBD", "UNK-LC-ed"): 0.625,
        ("NN", "the"): 0.0, ("VBD", "dog"): 0.0,
    }  # fmt: skip
    for (tag, entry), value in expected.items():
        assert emission(grammar, tag, entry) == pytest.approx(value), (tag, entry)


def test_lexicon_known_words_and_unk_sum_to_one():
    grammar = grammar_for(fitted())
    unk = grammar.word_index["UNK"]
    known = grammar.lexical_rules[:, 1] < 3
    part = known | (grammar.lexical_rules[:, 1] == unk)
    sums = np.bincount(
        grammar.lexical_rules[part, 0], grammar.lexical_weights[part], minlength=grammar.n_symbols
    )
    assert np.allclose(sums[grammar.symbols.ids("preterminal")], 1.0)


def test_lexicon_smooths_rare_known_words():
    # 'runs' (2 occurrences) mixes in P(x | U): it gets every open tag
    lexicon = fitted(smooth_threshold=2, word_smoothing=1.0)
    grammar = grammar_for(lexicon)
    # P(VBZ | runs) = (2 + 1/4) / 3, emission = P * c(runs) / c(VBZ)
    assert emission(grammar, "VBZ", "runs") == pytest.approx(2.25 / 3 * 2 / 3)
    assert emission(grammar, "NN", "runs") == pytest.approx(0.25 / 3 * 2 / 4)
    assert emission(grammar, "NN", "the") == 0.0  # 3 occurrences: not smoothed


def test_lexicon_closed_tags_emit_no_unknown_words():
    sentences = SENTENCES + [[("dog", "NN"), ("zebra", "NN")], [("ran", "VBD")] * 2]
    lexicon = Lexicon(signature="berkeley", open_class_threshold=2, smooth_threshold=0)
    grammar = grammar_for(lexicon.fit(sentences))
    assert emission(grammar, "NN", "UNK") > 0  # cat, zebra
    assert emission(grammar, "DT", "UNK") == 0.0  # only 'a'
    # a closed tag's rare tokens are left out, so its emissions still sum to one
    assert emission(grammar, "DT", "the") == pytest.approx(1.0)


def test_lexicon_latent_state_weights():
    weights = [
        [np.ones(1), np.array([1.0, 0.0]), np.ones(1)],
        [np.ones(1), np.array([0.0, 1.0]), np.ones(1)],
        [np.ones(1), np.array([0.5, 0.5]), np.ones(1)],
        [np.ones(1), np.array([1.0, 0.0]), np.ones(1)],
    ]
    lexicon = Lexicon(**HAND).fit(SENTENCES, state_weights=weights, n_states={"NN": 2})
    symbols = SymbolTable.from_kinds(preterminal=lexicon.tags)
    arrays = lexicon.lexical_arrays(symbols)
    nn, dog = symbols.index("NN"), lexicon.entries.index("dog")
    rule = arrays["lexical_rules"].tolist().index([nn, dog])
    block = arrays["lexical_weights"][
        arrays["lexical_offsets"][rule] : arrays["lexical_offsets"][rule + 1]
    ]
    # c(NN, h) = (2.5, 1.5); dog has (2.5, 0.5)
    assert block == pytest.approx([2.5 / 2.5, 0.5 / 1.5])


def test_lexicon_fit_counts_checks_weights():
    with pytest.raises(ValueError, match="E122"):
        Lexicon().fit_counts({("dog", "NN", False): [1.0, 2.0]})
    with pytest.raises(ValueError, match="E029"):
        Lexicon().fit_counts({})


@pytest.mark.parametrize(
    "name,value", [("rare_threshold", -1), ("word_smoothing", "a"), ("suffix_length", 1.5),
                   ("signature", "x"), ("smooth_threshold", True)],
)  # fmt: skip
def test_lexicon_checks_config(name, value):
    with pytest.raises(ValueError, match="E011"):
        Lexicon(**{name: value})


def test_lexicon_without_rare_words_backs_off_to_all_tags():
    lexicon = Lexicon(rare_threshold=0).fit(SENTENCES)
    assert set(lexicon.classes) == {"UNK"}
    grammar = grammar_for(lexicon)
    scores = lexicon.lexical_scores(grammar, ["zebra"])
    assert len(scores.tags) == 4


def test_lexicon_class_names_never_collide_with_words():
    sentences = [[("UNK", "NN"), ("UNK", "NN")], [("new", "JJ"), ("#", "SYM")]]
    lexicon = Lexicon(open_class_threshold=1).fit(sentences)
    assert "UNK" in lexicon.known_words and lexicon.classes["UNK"] == "<UNK>"
    grammar = grammar_for(lexicon)
    assert lexicon.entry("UNK", 1) == "UNK" and lexicon.entry("%", 1) == "<UNK>"
    assert len(lexicon.lexical_scores(grammar, ["UNK", "%"]).tags) >= 2


def test_lexicon_unfitted():
    with pytest.raises(ValueError, match="E121"):
        Lexicon().entry("dog", 0)


# Parse time ---------------------------------------------------------------------


def test_lexicon_entries_of_tokens():
    lexicon = fitted()
    assert lexicon.entry("dog", 3) == "dog"
    assert lexicon.entry("The", 0) == "the"  # sentence case
    assert lexicon.entry("The", 2) == "UNK"  # 'UNK-CAPS' was never seen
    assert lexicon.entry("jumped", 1) == "UNK-LC-ed"
    assert lexicon.entry("Jumped", 1) == "UNK"


def test_lexicon_scores_known_and_unknown_words():
    lexicon = fitted()
    grammar = grammar_for(lexicon)
    scores = lexicon.lexical_scores(grammar, ["The", "dog", "jumped", "%"])
    scores.check(grammar)
    ids = grammar.symbols.index
    assert scored(scores, 0) == {ids("DT"): pytest.approx(0.75)}
    assert set(scored(scores, 2)) == {ids(t) for t in ("DT", "NN", "VBD", "VBZ")}
    assert scored(scores, 2)[ids("VBD")] == pytest.approx(0.625)


def test_lexicon_use_tags():
    lexicon = fitted()
    grammar = grammar_for(lexicon)
    ids = grammar.symbols.index
    words = ["the", "dog", "jumped"]
    constrained = lexicon.lexical_scores(grammar, words, ["DT", "NN", "VBZ"])
    assert constrained.tags.tolist() == [ids("DT"), ids("NN"), ids("VBZ")]
    ignored = lexicon.lexical_scores(grammar, words, ["DT", "NN", "VBZ"], use_tags="ignore")
    assert len(ignored.tags) == 1 + 1 + 4
    partly = lexicon.lexical_scores(grammar, words, ["DT", None, ""], use_tags="constrain")
    assert len(partly.tags) == 1 + 1 + 4
    with pytest.raises(ValueError, match="E120"):
        lexicon.lexical_scores(grammar, words, use_tags="constrain")
    with pytest.raises(ValueError, match="E120"):
        lexicon.lexical_scores(grammar, words, ["DT"])
    with pytest.raises(ValueError, match="E120"):
        lexicon.lexical_scores(grammar, [])
    with pytest.raises(ValueError, match="E011"):
        lexicon.lexical_scores(grammar, words, use_tags="reweight")


def test_lexicon_unknown_tags_are_counted_and_ignored():
    lexicon = fitted()
    grammar = grammar_for(lexicon)
    scores = lexicon.lexical_scores(grammar, ["dog", "dog"], ["NNX", "NNX"])
    assert scores.tags.tolist() == [grammar.symbols.index("NN")] * 2
    assert lexicon.unknown_tags == {"NNX": 2}


def test_lexicon_known_word_with_a_new_tag():
    lexicon = fitted()
    grammar = grammar_for(lexicon)
    ids = grammar.symbols.index
    # 'the' was never NN: scored as an unknown word for NN (its class UNK-LC)
    scores = lexicon.lexical_scores(grammar, ["the"], ["NN"])
    assert scored(scores, 0) == {ids("NN"): pytest.approx(1.25 / 3 * 2 / 4)}
    # a closed tag without unknown words: the tag's smallest emission
    closed = Lexicon(signature="berkeley", open_class_threshold=2, smooth_threshold=0)
    closed.fit(SENTENCES + [[("dog", "NN"), ("zebra", "NN")]])
    grammar = grammar_for(closed)
    scores = closed.lexical_scores(grammar, ["dog"], ["DT"])
    assert scored(scores, 0) == {grammar.symbols.index("DT"): pytest.approx(1.0)}


def test_lexicon_tags_match_annotated_preterminals():
    trees = [
        Tree.from_string("(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs) (NP (NN food)))))"),
        Tree.from_string("(TOP (S (NP (DT a) (NN cat)) (VP (VBZ eats))))"),
    ]
    spec = TransformSpec(annotate_preterminals=True)
    model = MLEEstimator(transform=spec, open_class_threshold=1).fit(trees).model_
    names = model.grammar.symbols.names
    assert "NN^NP" in names
    scores = model.lexical_scores(["the", "food"], ["DT", "NN"])
    assert {names[t] for t in scores.tags[scores.positions == 1]} == {"NN^NP"}


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6),
    tag_choices=st.lists(st.sampled_from(["DT", "NN", "VBZ", "VBD", "XX", None]), min_size=6),
    use_tags=st.sampled_from(["auto", "constrain", "ignore"]),
)
def test_lexicon_every_token_gets_a_preterminal(words, tag_choices, use_tags):
    lexicon = Lexicon(signature="berkeley", open_class_threshold=2, smooth_threshold=0)
    lexicon.fit(SENTENCES + [[("dog", "NN"), ("zebra", "NN")]])
    grammar = grammar_for(lexicon)
    tags = tag_choices[: len(words)]
    scores = lexicon.lexical_scores(grammar, words, tags, use_tags=use_tags)
    scores.check(grammar)
    assert set(scores.positions.tolist()) == set(range(len(words)))
    assert (scores.values > 0).all()


# Serialisation ------------------------------------------------------------------------


def test_lexicon_dict_roundtrip():
    lexicon = fitted(signature="generic")
    data = json.loads(json.dumps(lexicon.to_dict()))
    restored = Lexicon.from_dict(data)
    assert restored.entries == lexicon.entries and restored.config == lexicon.config
    grammar = grammar_for(lexicon)
    words = ["The", "dog", "jumped", "Zebras"]
    for a, b in zip(
        vars(lexicon.lexical_scores(grammar, words)).values(),
        vars(restored.lexical_scores(grammar, words)).values(),
    ):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="E119"):
        restored.lexical_arrays(grammar.symbols)


@pytest.mark.parametrize(
    "change",
    [
        {"format": "other"},
        {"format_version": 99},
        {"known_words": "dog"},
        {"classes": {"UNK-LC": "UNK-LC"}},
        {"config": {"rare_threshold": 1, "colour": "red"}},
    ],
)
def test_lexicon_from_dict_rejects_bad_data(change):
    data = {**fitted().to_dict(), **change}
    with pytest.raises(ValueError, match="E122"):
        Lexicon.from_dict(data)


def test_lexicon_check_against_grammar():
    grammar = grammar_for(fitted())
    other = Lexicon(**HAND).fit(SENTENCES[:2])
    with pytest.raises(ValueError, match="E123"):
        other.check(grammar)
