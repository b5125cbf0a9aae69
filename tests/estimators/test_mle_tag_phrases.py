"""Treebanks where one label is both a POS tag and a phrase label (issue 11, item 9).

Chinese treebanks have phrases such as ``(NN (NN x) (NN y))`` and a tag ``ADV``
beside a phrase ``ADV``. Every estimator must train on them at every transform
setting, parse, and give back trees in the treebank's labels, with the phrase
``X`` and the tag ``X`` each where they belong.
"""

from __future__ import annotations

import itertools

import pytest

from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.estimators import MLEEstimator, count_rules
from spacy_lpcfg.estimators.clustering import ClusteringEstimator
from spacy_lpcfg.estimators.mle import count_treebank
from spacy_lpcfg.estimators.spectral import SpectralEstimator
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.formats import read_treebank
from spacy_lpcfg.trees.normalize import strip_functions
from spacy_lpcfg.trees.transforms import (
    BINARIZATIONS,
    TransformPipeline,
    TransformSpec,
    transform_treebank,
)

# Phrases NN over tags NN (two and three of them, alone under NP or beside a tag
# NN), a phrase ADV over tags ADV, a phrase ADV-TMP (ADV once its function tag is
# stripped), and an ADV tag under IP.
TAG_PHRASE_TREEBANK = """\
(TOP (IP (NP-SBJ (NN (NN 经济) (NN 发展))) (VP (ADV 很) (VA 快)) (PU 。)))
(TOP (IP (NP-SBJ (NR 中国)) (VP (ADV (ADV 非常) (ADV 迅速)) (VV 发展)) (PU 。)))
(TOP (IP (NP-SBJ (NN 人口)) (VP (ADV-TMP (ADV 又) (ADV 再)) (VV 增长)
    (NP-OBJ (NN (NN 城市) (NN 人口) (NN 规模)))) (PU 。)))
(TOP (IP (ADV 其实) (NP-SBJ (PN 我们)) (VP (VV 喜欢) (NP-OBJ (NN 音乐)))))
(TOP (NP (NN (NN 上海) (NN 市场)) (NN 价格)))
"""
REPEATS = 6  # each tree is seen this often, so the grammars reparse them exactly
SETTINGS = list(itertools.product(BINARIZATIONS, (0, 1, None), (1, 2, 3), (True, False)))
ESTIMATORS = {
    "mle": lambda spec: MLEEstimator(transform=spec),
    "spectral": lambda spec: SpectralEstimator(transform=spec, n_states=2, min_count_per_state=1),
    "clustering": lambda spec: ClusteringEstimator(
        transform=spec, n_states=2, min_count_per_state=1
    ),
}


@pytest.fixture(scope="module")
def treebank(tmp_path_factory) -> list[Tree]:
    """The treebank read from a .mrg file, as a user's corpus would be."""
    path = tmp_path_factory.mktemp("tag_phrases") / "zh.mrg"
    path.write_text(TAG_PHRASE_TREEBANK, encoding="utf-8")
    trees = list(read_treebank(path))
    assert len(trees) == 5
    return trees


def phrase_and_tag_labels(tree: Tree) -> tuple[set[str], set[str]]:
    phrases = {node.label for node in tree.subtrees() if node.word is None}
    return phrases, set(tree.tags())


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("binarization, h_markov, v_markov, keep_functions", SETTINGS)
def test_tag_phrase_treebank_trains_and_reparses(
    treebank, estimator, binarization, h_markov, v_markov, keep_functions
):
    spec = TransformSpec(
        binarization=binarization,
        h_markov=h_markov,
        v_markov=v_markov,
        keep_functions=keep_functions,
    )
    model = ESTIMATORS[estimator](spec).fit(treebank * REPEATS).model_
    symbols = model.grammar.symbols
    preterminals = {symbols.name(i) for i in symbols.ids("preterminal")}
    assert {"NN", "ADV"} <= preterminals
    if v_markov == 1:  # the clashing phrases are marked; parent annotation keeps them apart
        assert model.transform.marked_phrases == ("ADV", "NN")  # ADV-TMP too when stripped
        assert {"NN^", "ADV^"} <= set(symbols.names)
    else:
        assert model.transform.marked_phrases == ()
    parser = Parser(model)
    for gold in treebank:
        expected = gold if keep_functions else strip_functions(gold, "penn")
        assert parser.parse(gold.words()).tree == expected
        assert parser.parse(gold.words(), gold.tags()).tree == expected
    # one parse has the phrase NN over the tags NN, another the phrase ADV over ADV tags
    phrases, tags = phrase_and_tag_labels(parser.parse(treebank[0].words()).tree)
    assert "NN" in phrases and "NN" in tags
    phrases, tags = phrase_and_tag_labels(parser.parse(treebank[1].words()).tree)
    assert "ADV" in phrases and "ADV" in tags


def test_tag_phrase_marks_depend_on_the_setting(treebank):
    """Only labels that really clash in the grammar's label space are marked."""

    def marked(**settings) -> tuple[str, ...]:
        spec = TransformSpec(**settings)
        return MLEEstimator(transform=spec).fit(treebank).model_.transform.marked_phrases

    assert marked(v_markov=1) == marked(v_markov=1, keep_functions=False) == ("ADV", "NN")
    assert marked(v_markov=2) == marked(v_markov=3) == ()
    # annotated tags clash with the phrases of the same category below the same parents
    assert marked(v_markov=2, annotate_preterminals=True) == ("ADV^VP", "NN^NP")
    assert marked(v_markov=3, annotate_preterminals=True) == ("ADV^VP^IP", "NN^NP^TOP")
    # without unary collapse the phrases NN below NP-SBJ and NP-OBJ clash as well
    both = {"annotate_preterminals": True, "collapse_unary": False}
    assert marked(v_markov=3, **both) == ("ADV^VP^IP", "NN^NP^IP", "NN^NP^TOP", "NN^NP^VP")


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("v_markov", [1, 2, 3])
@pytest.mark.parametrize("collapse_unary", [True, False])
def test_tag_phrase_treebank_with_annotated_tags(treebank, estimator, v_markov, collapse_unary):
    spec = TransformSpec(
        v_markov=v_markov, annotate_preterminals=True, collapse_unary=collapse_unary
    )
    model = ESTIMATORS[estimator](spec).fit(treebank * REPEATS).model_
    names = set(model.grammar.symbols.names)
    assert all(label + "^" in names and label in names for label in model.transform.marked_phrases)
    parser = Parser(model)
    for gold in treebank:
        for tags in (None, gold.tags()):
            parse = parser.parse(gold.words(), tags).tree
            if parser.decoder == "mbr" and not collapse_unary:
                # MBR puts one label on a span unless chains are collapsed (S::VP), so it
                # drops NP-SBJ over NN (the same with a phrase NX instead of NN): the
                # labels must still be the treebank's, phrase NN over tags NN included
                assert parse.tags() == gold.tags()
                assert phrase_and_tag_labels(parse)[0] <= phrase_and_tag_labels(gold)[0]
            else:
                assert parse == gold
    phrases, tags = phrase_and_tag_labels(parser.parse(treebank[0].words()).tree)
    assert "NN" in phrases and "NN" in tags


def test_tag_phrase_model_saves_and_loads(treebank, tmp_path):
    model = MLEEstimator(transform=TransformSpec(v_markov=1)).fit(treebank * REPEATS).model_
    model.to_disk(tmp_path / "model")
    loaded = ParsingModel.from_disk(tmp_path / "model")
    assert loaded.transform == model.transform
    assert loaded.transform.marked_phrases == ("ADV", "NN")
    assert Parser(loaded).parse(treebank[2].words()).tree == treebank[2]


def test_count_rules_still_rejects_unmarked_clashes(treebank):
    # the estimators mark clashing phrases; a caller counting unmarked trees is told how
    transformed = TransformPipeline(TransformSpec(v_markov=1)).apply_all(treebank)
    with pytest.raises(ValueError, match="E029.*both POS tags and phrases.*transform_treebank"):
        count_rules(transformed)


@pytest.mark.parametrize("v_markov", [1, 2])
def test_streamed_counts_equal_those_of_the_transformed_treebank(treebank, v_markov):
    # MLE counts in a stream (count_treebank), spectral and clustering count the
    # transformed trees they keep (transform_treebank): the same spec and counts
    spec = TransformSpec(v_markov=v_markov, annotate_preterminals=True)
    streamed_spec, streamed = count_treebank(iter(treebank), spec)
    kept_spec, transformed = transform_treebank(treebank, spec)
    kept = count_rules(transformed)
    assert streamed_spec == kept_spec and streamed_spec.marked_phrases
    assert streamed.symbols == kept.symbols and streamed.tokens == kept.tokens
    for name in ("binary_rules", "binary_counts", "unary_rules", "unary_counts"):
        assert (getattr(streamed, name) == getattr(kept, name)).all()
