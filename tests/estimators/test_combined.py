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


def test_members_keep_their_models_not_their_training_trees(trees, monkeypatch):
    import gc
    import weakref

    from spacy_lpcfg.estimators import ClusteringEstimator
    from spacy_lpcfg.estimators.combined import four_way_estimator

    train, dev = trees
    projections = []  # weak references to every member's projected treebank
    fit_projected = ClusteringEstimator.fit_projected

    def watched(self, projected, *args, **kwargs):
        projections.append(weakref.ref(projected))
        return fit_projected(self, projected, *args, **kwargs)

    monkeypatch.setattr(ClusteringEstimator, "fit_projected", watched)
    estimator = four_way_estimator(n_states=2).fit(train[:120])
    gc.collect()
    assert len(projections) == 4 and all(ref() is None for ref in projections)
    for member in estimator.estimators_:
        assert not hasattr(member, "projected_") and not hasattr(member, "states_")
        assert member.model_ is not None
    parser = Parser(estimator.model_)
    for tree in dev[:3]:
        assert parser.parse(tree.words()).tree.words() == tree.words()
