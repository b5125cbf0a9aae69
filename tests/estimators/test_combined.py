"""CombinedEstimator: members fitted apart on their own transforms, then combined."""

from __future__ import annotations

import pytest

from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.estimators import CombinedEstimator, MLEEstimator
from spacy_lpcfg.estimators.combined import FOUR_SETTINGS
from spacy_lpcfg.trees.transforms import TransformSpec


@pytest.fixture(scope="module")
def trees(load_corpus):
    return load_corpus("ptb_sample", "train")[:300], load_corpus("ptb_sample", "dev")[:10]


def test_members_get_their_own_transforms_over_the_shared_one(trees):
    train, dev = trees
    shared = TransformSpec(scheme="penn", head_rules="collins", h_markov=2)
    estimator = CombinedEstimator(
        estimators=[MLEEstimator(), MLEEstimator()],
        member_transforms=FOUR_SETTINGS[1:3],
        transform=shared,
    ).fit(train)
    parts = estimator.model_.parts
    assert [part.transform.binarization for part in parts] == ["left", "right"]
    assert [part.transform.keep_functions for part in parts] == [True, False]
    assert all(part.transform.h_markov == 2 for part in parts)  # from the shared spec
    parser = Parser(estimator.model_)
    for tree in dev:
        assert parser.parse(tree.words()).tree.words() == tree.words()


@pytest.mark.parametrize(
    "params,message",
    [
        ({"estimators": [MLEEstimator()], "member_transforms": [{}]}, "at least two"),
        ({"estimators": [MLEEstimator()] * 2, "member_transforms": [{}]}, "one member"),
        (
            {"estimators": [MLEEstimator()] * 2, "member_transforms": [{}, {"scheme": "cess"}]},
            "scheme",
        ),
    ],
)
def test_bad_combinations_are_refused_before_fitting(params, message):
    with pytest.raises(ValueError, match=message):
        CombinedEstimator(**params).fit([])
