"""Accuracy floors on real data (ptb_sample; the figures are in BENCHMARKS.md).

Induced from the words and tags of all sentences (no trees), scored on the same
sentences of at most 10 (40) words, as in the field. Measured: spectral 59.8
(32.6), Klein & Manning's CCM 62.0 (36.2), CCM started from the spectral trees
62.9 (41.4), right-branching 55.0 (36.8), random 25.9, left-branching 13.4
micro F1.
"""

from __future__ import annotations

import pytest

from spacy_lpcfg.evaluation.unlabeled import is_punctuation_tag, unlabeled_scores
from spacy_lpcfg.unsupervised import CCM, LeftBranching, RightBranching, SpectralBracketer


@pytest.fixture(scope="module")
def ptb(load_corpus):
    trees = [t for split in ("train", "dev", "test") for t in load_corpus("ptb_sample", split)]
    short = [t for t in trees if sum(not is_punctuation_tag(x) for x in t.tags()) <= 10]
    return trees, short


def f1(model, sentences, max_length=10):
    return unlabeled_scores(sentences, model.predict(sentences), max_length=max_length).f1


def test_wsj10_style_floors(ptb):
    trees, short = ptb
    right = f1(RightBranching().fit([]), short)
    left = f1(LeftBranching().fit([]), short)
    spectral = f1(SpectralBracketer().fit(trees), short)
    ccm = f1(CCM(init="split_uniform", max_length=10).fit(short), short)
    seeded = f1(CCM(max_length=10).fit(trees), short)  # the spectral learner sees all
    assert right == pytest.approx(55.0, abs=0.1)
    assert left < 15.0
    assert spectral >= right + 4.0
    assert ccm >= right + 5.0
    assert seeded >= max(spectral, ccm) + 0.5


def test_spectral_seeded_ccm_beats_right_branching_on_long_sentences(ptb):
    trees, _ = ptb
    within = [t for t in trees if sum(not is_punctuation_tag(x) for x in t.tags()) <= 40]
    right = f1(RightBranching().fit([]), within, 40)
    seeded = f1(CCM(max_length=40).fit(trees), within, 40)
    assert right == pytest.approx(36.8, abs=0.1)
    assert seeded >= right + 3.0
