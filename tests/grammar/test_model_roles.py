"""A model's pruning grammar and ensemble: fields of ``ParsingModel``, stored in cfg.json
as indices of its extra grammars (``training["coarse_grammar"]``, ``["ensemble"]``), so
that directories written before the fields existed load unchanged."""

from __future__ import annotations

import json

import pytest

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.estimators import MLEEstimator
from spacy_lpcfg.grammar.model import COARSE_GRAMMAR, ENSEMBLE, ParsingModel, combine_models
from spacy_lpcfg.trees import Tree

TREEBANK = [
    "(TOP (S (NP (DT the) (NN dog)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (DT a) (JJ big) (NN dog)) (VP (VBD ran)) (. .)))",
]


@pytest.fixture(scope="module")
def model() -> ParsingModel:
    return MLEEstimator(open_class_threshold=1).fit(list(map(Tree.from_string, TREEBANK))).model_


def _with_roles(model: ParsingModel, **roles) -> ParsingModel:
    return ParsingModel(model.grammar, model.lexicon, model.transform, **roles)


def test_fields_are_stored_as_the_indices_older_models_have(model, tmp_path):
    grammar = model.grammar
    fields = _with_roles(model, coarse_grammar=grammar, ensemble=[grammar, grammar])
    indexed = _with_roles(  # as estimators and older model directories give them
        model,
        training={COARSE_GRAMMAR: 0, ENSEMBLE: [1, 2]},
        extra_grammars=[grammar] * 3,
    )
    assert fields == indexed  # the same files, byte for byte
    assert fields.training == {COARSE_GRAMMAR: 0, ENSEMBLE: [1, 2]}
    fields.to_disk(tmp_path / "m")
    cfg = json.loads((tmp_path / "m" / "cfg.json").read_text())
    assert cfg["training"] == {COARSE_GRAMMAR: 0, ENSEMBLE: [1, 2]}
    loaded = ParsingModel.from_disk(tmp_path / "m")
    assert loaded.coarse_grammar == grammar and loaded.ensemble == (grammar, grammar)
    assert loaded.coarse_grammar is loaded.extra_grammars[0]


def test_a_model_without_roles_has_none(model):
    assert model.coarse_grammar is None and model.ensemble == ()
    plain = _with_roles(model, extra_grammars=[model.grammar])  # an extra grammar, no role
    assert plain.coarse_grammar is None and plain.ensemble == ()


def test_fields_and_indices_together_are_refused(model):
    with pytest.raises(GrammarError, match="not both"):
        _with_roles(
            model,
            training={COARSE_GRAMMAR: 0},
            extra_grammars=[model.grammar],
            ensemble=[model.grammar],
        )


def test_an_ensemble_of_models_keeps_the_first_coarse_grammar(model):
    first = _with_roles(model, coarse_grammar=model.grammar)
    combined = combine_models([first, model], "product")
    assert combined.coarse_grammar is model.grammar and combined.ensemble == (model.grammar,)
    assert combined.training[ENSEMBLE] == [1] and combined.decoder == "product"
