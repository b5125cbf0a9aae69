"""MLEEstimator: relative frequencies, normalisation, re-parsing, real treebanks."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.chart import coarse_posteriors, viterbi
from spacy_lpcfg.estimators import MLEEstimator, count_rules
from spacy_lpcfg.grammar import LPCFG
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformPipeline, TransformSpec

HAND_TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs))))",
    "(TOP (S (NP (DT the) (NN cat)) (VP (VBZ sleeps) (NP (NN food)))))",
    "(TOP (S (NP (NN dogs)) (VP (VBZ eat) (NP (DT the) (NN food))) (. .)))",
]
FLAT = TransformSpec(v_markov=1)


def rule_weights(grammar: LPCFG) -> dict[tuple[str, ...], float]:
    name = grammar.symbols.name
    weights = {}
    for kind in ("binary", "unary"):
        rules = getattr(grammar, f"{kind}_rules")
        for rule, value in zip(rules.tolist(), getattr(grammar, f"{kind}_weights")):
            weights[tuple(name(s) for s in rule)] = float(value)
    return weights


def lexical_sums(grammar: LPCFG, entries=None) -> np.ndarray:
    """float64[n_symbols]: sum of each tag's emissions over the given entries (all if None)."""
    rules, weights = grammar.lexical_rules, grammar.lexical_weights
    keep = np.ones(len(rules), bool) if entries is None else np.isin(rules[:, 1], entries)
    return np.bincount(rules[keep, 0], weights[keep], minlength=grammar.n_symbols)


def test_mle_equals_hand_computed_relative_frequencies():
    trees = [Tree.from_string(text) for text in HAND_TREEBANK]
    grammar = MLEEstimator(transform=FLAT).fit(trees).grammar_
    assert rule_weights(grammar) == pytest.approx(
        {
            ("TOP", "S"): 1.0,
            ("S", "NP", "VP"): 2 / 3,
            ("S", "@S|>.", "."): 1 / 3,
            ("@S|>.", "NP", "VP"): 1.0,
            ("NP", "DT", "NN"): 3 / 5,
            ("NP", "NN"): 2 / 5,
            ("VP", "VBZ"): 1 / 3,
            ("VP", "VBZ", "NP"): 2 / 3,
        }
    )
    kinds = dict(zip(grammar.symbols.names, grammar.symbols.kinds))
    assert kinds == {
        "TOP": "root", "NP": "phrasal", "S": "phrasal", "VP": "phrasal",
        "@S|>.": "intermediate", ".": "preterminal", "DT": "preterminal",
        "NN": "preterminal", "VBZ": "preterminal",
    }  # fmt: skip


def test_mle_root_with_two_children():
    trees = [Tree.from_string("(TOP (S (VB Go)) (. !))"), Tree.from_string("(TOP (S (VB Stop)))")]
    grammar = MLEEstimator(transform=FLAT).fit(trees).grammar_
    assert rule_weights(grammar) == pytest.approx(
        {("TOP", "S", "."): 0.5, ("TOP", "S"): 0.5, ("S", "VB"): 1.0}
    )


def test_mle_rules_sum_to_one_per_parent(load_corpus):
    grammar = MLEEstimator().fit(load_corpus("ptb_sample", "train")).grammar_
    parents = np.concatenate([grammar.binary_rules[:, 0], grammar.unary_rules[:, 0]])
    weights = np.concatenate([grammar.binary_weights, grammar.unary_weights])
    totals = np.bincount(parents, weights, minlength=grammar.n_symbols)
    has_rules = np.bincount(parents, minlength=grammar.n_symbols) > 0
    assert np.allclose(totals[has_rules], 1.0)
    assert set(np.flatnonzero(has_rules)) == set(np.flatnonzero(grammar.symbols.kind_codes != 3))


def test_mle_emissions_sum_to_one_per_tag(load_corpus):
    # Known words and the class UNK of all rare tokens partition the training tokens:
    # without smoothing of rare known words each tag's emissions over them sum to one.
    # The smoothing moves word_smoothing / (c(w) + word_smoothing) of a rare known
    # word's mass to the open tags, so sums then stay near one (within 0.02 on the
    # PTB sample). Finer signature classes are parts of UNK, and all the back-off
    # levels together sum to more than P(UNK | t): they are alternatives.
    trees = load_corpus("ptb_sample", "train")
    exact = MLEEstimator(word_smoothing=0.0).fit(trees)
    tags = exact.grammar_.symbols.ids("preterminal")
    lexicon, grammar = exact.lexicon_, exact.grammar_
    known_and_unk = np.arange(len(lexicon.known_words) + 1)  # UNK sorts first among classes
    assert grammar.words[len(lexicon.known_words)] == "UNK"
    assert np.allclose(lexical_sums(grammar, known_and_unk)[tags], 1.0)
    smoothed = MLEEstimator().fit(trees).grammar_
    sums = lexical_sums(smoothed, known_and_unk)[tags]
    assert np.abs(sums - 1).max() < 0.05 and np.abs(sums - 1).mean() < 0.01


def test_mle_viterbi_reparses_a_frequent_sentence():
    frequent = Tree.from_string(
        "(TOP (S (NP-SBJ (DT The) (JJ old) (NN man)) (VP (VBD saw) (NP (DT the) (NNS boats))"
        " (PP (IN with) (NP (NN delight)))) (. .)))"
    )
    others = [
        "(TOP (S (NP-SBJ (PRP He)) (VP (VBD saw) (NP (NP (DT the) (NN man)) (PP (IN with)"
        " (NP (DT a) (NN telescope))))) (. .)))",
        "(TOP (S (NP-SBJ (DT The) (NNS boats)) (VP (VBD sailed)) (. .)))",
    ]
    trees = [frequent] * 20 + [Tree.from_string(text) for text in others]
    model = MLEEstimator().fit(trees).model_
    words, tags = frequent.words(), frequent.tags()
    derivation = viterbi(model.grammar, model.lexical_scores(words, tags, use_tags="constrain"))
    parse = model.pipeline.invert(derivation.to_tree(model.grammar.symbols, words))
    assert parse == frequent


def test_mle_viterbi_on_a_treebank_sentence(load_corpus):
    trees = load_corpus("ptb_sample", "train")
    model = MLEEstimator().fit(trees).model_
    gold = trees[1]
    words, tags = gold.words(), gold.tags()
    derivation = viterbi(model.grammar, model.lexical_scores(words, tags))
    parse = model.pipeline.invert(derivation.to_tree(model.grammar.symbols, words))
    assert parse.words() == words and parse.tags() == tags
    assert parse == gold


def test_mle_count_rules_errors():
    with pytest.raises(ValueError, match="E029.*rooted"):
        count_rules([Tree("S", (Tree.leaf("NN", "x"),))])
    with pytest.raises(ValueError, match="E029.*3 children"):
        count_rules([Tree.from_string("(TOP (S (A a) (B b) (C c)))")])
    with pytest.raises(ValueError, match="E029.*below the root"):
        count_rules([Tree.from_string("(TOP (S (TOP (A a))))")])
    with pytest.raises(ValueError, match="E029.*both POS tags and phrases"):
        count_rules([Tree.from_string("(TOP (X (X a)))")])
    with pytest.raises(ValueError, match="E029.*no training trees"):
        count_rules([])


def test_mle_transform_parameter():
    trees = [Tree.from_string(text) for text in HAND_TREEBANK]
    as_dict = MLEEstimator(transform=FLAT.to_dict()).fit(trees)
    assert as_dict.grammar_ == MLEEstimator(transform=FLAT).fit(trees).grammar_
    assert as_dict.model_.transform == FLAT
    assert MLEEstimator(transform=None).fit(trees).model_.transform == TransformSpec()
    with pytest.raises(ValueError, match="E011"):
        MLEEstimator(transform="right").fit(trees)
    with pytest.raises(ValueError, match="E011"):
        MLEEstimator(rare_threshold=-1).fit(trees)


def test_mle_ptb_sample_grammar(load_corpus):
    trees = load_corpus("ptb_sample", "train")
    estimator = MLEEstimator().fit(trees)
    grammar = estimator.grammar_
    # 3396 trees: 1895 symbols, 8796 binary, 361 unary, 70589 lexical rules (fit time: BENCHMARKS.md)
    assert 1000 < grammar.n_symbols < 3000 and 5000 < len(grammar.binary_rules) < 15000
    assert grammar.max_states == 1 and grammar.symbols.kind(0) == "root"
    assert estimator.model_.training == {"trees": 3396, "words": 81793}


def dev_sentences_parse(load_corpus, max_words: int | None) -> None:
    model = MLEEstimator().fit(load_corpus("ptb_sample", "train")).model_
    dev = load_corpus("ptb_sample", "dev")
    words = [tree.words() for tree in dev if max_words is None or tree.n_words <= max_words]
    assert len(words) > 100
    for sentence in words:
        assert coarse_posteriors(model.grammar, model.lexical_scores(sentence)).has_parse


def test_mle_short_dev_sentences_have_a_parse(load_corpus):
    dev_sentences_parse(load_corpus, 25)  # about 5 s


@pytest.mark.slow
def test_mle_all_dev_sentences_have_a_parse(load_corpus):
    dev_sentences_parse(load_corpus, None)  # about 25 s, sentences up to 58 words


@pytest.mark.slow
def test_mle_icepahc_grammar(data_dir):
    from spacy_lpcfg.corpora import load_split

    trees = load_split("icepahc", "train", data_dir=data_dir)
    estimator = MLEEstimator(language="is").fit(trees)
    assert estimator.lexicon_.signatures.name == "generic"
    assert len(estimator.grammar_.binary_rules) > 50000


def test_mle_transformed_trees_match_the_pipeline():
    trees = [Tree.from_string(text) for text in HAND_TREEBANK]
    counts = count_rules(TransformPipeline(FLAT).apply_all(trees))
    assert counts.n_trees == 3 and counts.n_words == 12
    assert counts.tokens["the", "DT", True] == 2 and counts.tokens["the", "DT", False] == 1
