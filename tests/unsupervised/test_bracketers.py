"""The bracketer contract: inputs, output trees with punctuation, baselines, top bracket."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from spacy_lpcfg.evaluation.unlabeled import content_brackets
from spacy_lpcfg.trees.tree import Tree
from spacy_lpcfg.unsupervised import (
    BRACKETERS,
    LeftBranching,
    RandomBranching,
    RightBranching,
    SpectralBracketer,
    load_bracketer,
    save_bracketer,
)
from spacy_lpcfg.unsupervised.params import NotFittedError
from spacy_lpcfg.unsupervised.sentences import as_sentence, bracketed_tree
from spacy_lpcfg.unsupervised.top_bracket import top_split

SENTENCE = [("``", "``"), ("He", "PRP"), ("said", "VBD"), (",", ","), ("the", "DT"),
            ("dog", "NN"), ("barked", "VBD"), (".", ".")]  # fmt: skip


def all_bracketings(i, j):
    if j - i == 1:
        yield set()
        return
    for k in range(i + 1, j):
        for left, right in itertools.product(all_bracketings(i, k), all_bracketings(k, j)):
            yield left | right | {(i, j)}


@pytest.mark.parametrize("brackets", list(all_bracketings(0, 5)))
def test_output_tree_keeps_every_token_and_the_brackets(brackets):
    sentence = as_sentence(SENTENCE)
    tree = bracketed_tree(sentence, brackets)
    assert tree.tagged_words() == [(w, t) for w, t in SENTENCE]
    keep = [i in sentence.content for i in range(len(SENTENCE))]
    n, found = content_brackets(tree, keep)
    assert n == 5
    assert found == {span for span in brackets if span != (0, 5)}


def test_baselines():
    words = [w for w, _ in SENTENCE]
    right = RightBranching().fit([]).brackets(words)
    assert right == [(0, 5), (1, 5), (2, 5), (3, 5)]
    assert LeftBranching().fit([]).brackets(words) == [(0, 2), (0, 3), (0, 4), (0, 5)]
    random = RandomBranching(random_state=3).fit([])
    first = random.predict([words] * 20)
    assert first == random.predict([words] * 20)  # seeded per call
    assert len({t.pformat() for t in first}) > 1
    for tree in first:
        assert len(RightBranching().fit([]).brackets(tree)) == 4  # binary: n - 1 brackets


def test_estimator_contract():
    for cls in BRACKETERS.values():
        model = cls()
        copy = cls(**model.get_params())
        assert repr(copy) == repr(model) == f"{cls.__name__}()"
        if "random_state" in model.get_params():
            assert repr(model.set_params(random_state=5)) == f"{cls.__name__}(random_state=5)"
        with pytest.raises(ValueError, match="E402"):
            model.set_params(no_such_parameter=1)
        if cls.uses_tags:
            with pytest.raises(NotFittedError):
                model.predict([["a", "b", "c"]])
            with pytest.raises(ValueError, match="E504"):
                cls().fit([["no", "tags", "here"]])


@pytest.mark.parametrize(
    "tags, split",
    [
        (["PRP", "VBD", ",", "DT", "NN", "VBD"], 2),  # rule 1: the comma
        (["DT", "NN", "VBD", "DT", "NN"], 2),  # rule 2: the first verb
        (["DT", "VBN", "NN", "VBZ", "JJ"], 3),  # participles skipped
        (["DT", "JJ", "NN", "IN", "NN"], 4),  # rule 3: before the last word
        (["VBZ", "DT", "NN"], 1),  # a verb first: split kept inside the sentence
        (["N-N", "VBPI", ",", "N-N", "VBDI"], 2),  # IcePaHC tags
        (["da0ms0", "ncms000", "vmis3s0", "rg"], 2),  # AnCora tags
    ],
)
def test_top_bracket_heuristic(tags, split):
    assert (
        top_split(as_sentence([(f"w{i}" if t != "," else ",", t) for i, t in enumerate(tags)]))
        == split
    )


def test_spectral_parses_plain_words_with_its_tagger():
    corpus = [
        [("the", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN")],
        [("a", "DT"), ("cat", "NN"), ("saw", "VBD"), ("the", "DT"), ("dogs", "NNS")],
        [("the", "DT"), ("dogs", "NNS"), ("ran", "VBD"), ("home", "NN")],
    ] * 10
    model = SpectralBracketer(embedding_dim=4, rank=2).fit(corpus)
    tree = model.predict([["the", "dog", "saw", "the", "cat", "."]])[0]
    assert tree.tags() == ["DT", "NN", "VBD", "DT", "NN", "."]
    brackets = model.brackets(tree)
    assert (0, 5) in brackets and (2, 5) in brackets  # the heuristic: split before the verb
    assert len(brackets) == 4


def test_distances_are_symmetric_with_zero_diagonal():
    corpus = [[("the", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN")]] * 4
    model = SpectralBracketer(embedding_dim=3, rank=2).fit(corpus)
    d = model.distances(as_sentence(corpus[0] + [("zzz", "UNSEEN")]))
    assert np.allclose(d, d.T) and np.all(np.diag(d) == 0) and np.all(np.isfinite(d))


def latent_tree_corpus(n_sentences, seed=0):
    """Sentences "D N V D N" from a latent tree: each NP's number picks its D and N; V is free."""
    rng = np.random.default_rng(seed)
    determiners = {0: ["a", "this"], 1: ["these", "many"]}
    nouns = {0: ["dog", "cat"], 1: ["dogs", "cats"]}
    corpus = []
    for _ in range(n_sentences):
        sentence = []
        for position in range(2):
            number = int(rng.integers(2))
            sentence += [(str(rng.choice(determiners[number])), "D"),
                         (str(rng.choice(nouns[number])), "N")]  # fmt: skip
            if position == 0:
                sentence.append((str(rng.choice(["saw", "liked"])), "VBD"))
        corpus.append(sentence)
    return corpus


def test_spectral_recovers_the_latent_tree_from_given_vectors():
    corpus = latent_tree_corpus(400)
    vocabulary = sorted({word for sentence in corpus for word, _ in sentence})
    one_hot = {word: np.eye(len(vocabulary))[i] for i, word in enumerate(vocabulary)}
    model = SpectralBracketer(vectors=one_hot, rank=2).fit(corpus)
    d = model.distances(as_sentence(corpus[0]))
    assert d[3, 4] < d[2, 3] and d[3, 4] < d[2, 4]  # D-N of one NP closer than V to either
    assert model.brackets(corpus[0]) == [(0, 2), (0, 5), (2, 5), (3, 5)]
    # with learned vectors too
    assert SpectralBracketer(rank=2, embedding_dim=6).fit(corpus).brackets(corpus[1]) == [
        (0, 2), (0, 5), (2, 5), (3, 5)
    ]  # fmt: skip


def test_centred_covariances_ignore_a_shift_of_each_tags_vectors():
    corpus = latent_tree_corpus(300)
    tag_of = {word: tag for sentence in corpus for word, tag in sentence}
    vocabulary = sorted(tag_of)
    one_hot = {word: np.eye(len(vocabulary))[i] for i, word in enumerate(vocabulary)}
    offsets = {tag: np.random.default_rng(len(tag)).normal(size=len(vocabulary)) * 3
               for tag in set(tag_of.values())}  # fmt: skip
    shifted = {word: vector + offsets[tag_of[word]] for word, vector in one_hot.items()}
    sentence = as_sentence(corpus[0])

    def distances(vectors, center):
        return (
            SpectralBracketer(vectors=vectors, rank=1, center=center)
            .fit(corpus)
            .distances(sentence)
        )

    assert np.allclose(distances(one_hot, True), distances(shifted, True))
    assert not np.allclose(distances(one_hot, False), distances(shifted, False))


def test_invalid_parameters_are_named():
    with pytest.raises(ValueError, match="top_bracket"):
        SpectralBracketer(top_bracket="gold").fit(latent_tree_corpus(2))
    with pytest.raises(ValueError, match="rank"):
        SpectralBracketer(rank=0).fit(latent_tree_corpus(2))


@pytest.mark.parametrize("name", sorted(BRACKETERS))
def test_saved_bracketers_parse_the_same(name, tmp_path):
    corpus = latent_tree_corpus(50, seed=1)
    model = BRACKETERS[name]().fit(corpus)
    save_bracketer(model, tmp_path / "model")
    loaded = load_bracketer(tmp_path / "model")
    assert type(loaded) is type(model) and repr(loaded) == repr(model)
    plain = [[word for word, _ in sentence] for sentence in corpus[:10]]  # tagged by the tagger
    assert loaded.predict(corpus[:10] + plain) == model.predict(corpus[:10] + plain)


@pytest.mark.parametrize(
    "text, split",
    [
        ("(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))"
         " (. .)))", 2),
        ("(TOP (S (`` ``) (S (NP (PRP He)) (VP (VBD left))) (, ,) (NP (PRP she))"
         " (VP (VBD said)) (. .)))", 2),
        ("(TOP (S (VP (VB Go) (ADVP (RB home) (RB now)))))", 1),
        ("(TOP (S (NP (NNP Yes)) (. .)))", None),
    ],
)  # fmt: skip
def test_gold_top_split(text, split):
    assert as_sentence(Tree.from_string(text)).gold_split == split


def test_oracle_top_bracket_is_the_gold_one():
    corpus = latent_tree_corpus(100)
    tree = Tree.from_string(
        "(TOP (S (NP (D a) (N dog) (VBD saw)) (NP (D the) (N cats))))"
    )  # a gold top bracket the heuristic would not choose
    model = SpectralBracketer(rank=2, embedding_dim=6).fit(corpus)
    assert (2, 5) in model.brackets(tree)
    assert (0, 3) in model.set_params(top_bracket="oracle").brackets(tree)


def test_a_saved_bracketer_with_an_unknown_parameter_is_refused_by_name(tmp_path):
    model = BRACKETERS["right"]().fit([])
    save_bracketer(model, tmp_path / "model")
    meta = json.loads((tmp_path / "model" / "bracketer.json").read_text())
    meta["params"]["from_the_future"] = 1
    (tmp_path / "model" / "bracketer.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="from_the_future"):
        load_bracketer(tmp_path / "model")
