"""The Parser: pruning level names, per-level thresholds, fallbacks, one sentence at a
time on a small MLE model."""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg import defaults
from spacy_lpcfg.decode.charts import ensemble_charts
from spacy_lpcfg.decode.levels import level_label
from spacy_lpcfg.decode.parser import FALLBACKS, Parser
from spacy_lpcfg.trees.transforms import TransformSpec


@pytest.mark.parametrize(
    "label,options,expected",
    [
        ("@NP-SBJ^S|>NN", {}, "@NP|>"),
        ("@NP-SBJ^S|>NN", {"context": True}, "@NP|>NN"),
        ("@NP-SBJ^S|>NN", {"annotations": True, "context": True}, "@NP^S|>NN"),
        ("@S-TPC::VP^S|>PP-LOC", {"chains": "bottom"}, "@VP|>"),
        ("@S-TPC::VP^S|>PP-LOC", {"context": True}, "@S::VP|>PP"),
        ("S::VP^S", {"chains": "bottom", "annotations": True}, "VP^S"),
        ("NP-SBJ", {"context": True}, "NP"),
    ],
)
def test_level_label(label, options, expected):
    assert level_label(label, "penn", **options) == expected


@pytest.mark.parametrize(
    "label,preterminal,options,expected",
    [
        ("grup.nom.ms", False, {"phrases": "category"}, "grup"),
        ("@S.F.C::grup.nom|>sn", False, {"phrases": "category"}, "@S::grup|>"),
        ("@S.F.C|>sn.co", False, {"phrases": "category", "context": True}, "@S|>sn.co"),
        ("sn-SUJ", False, {"phrases": "category"}, "sn"),
        ("ncms000", True, {"tags": "category"}, "nc"),
        ("vmip3s0", True, {"tags": "category"}, "vm"),
        ("Fc", True, {"tags": "category"}, "Fc"),
        ("ncms000", True, {}, "ncms000"),
    ],
)
def test_level_label_cess_categories(label, preterminal, options, expected):
    assert level_label(label, "cess", preterminal=preterminal, **options) == expected


def test_level_label_rejects_unknown_options():
    with pytest.raises(ValueError, match="phrases"):
        level_label("NP", "penn", phrases="coarse")


def test_level_label_keeps_preterminals():
    assert level_label("NN^NP", "penn", preterminal=True, chains="bottom", context=True) == "NN"


@pytest.fixture(scope="module")
def small_model(ptb_small):
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return MLEEstimator().fit(ptb_small[0]).model_


def test_parser_parses_every_sentence(small_model, ptb_small):
    parser = Parser(small_model)
    for tree in ptb_small[1]:
        parse = parser.parse(tree.words())
        assert parse.tree.words() == tree.words()
        assert parse.fallback is None or parse.fallback in FALLBACKS
    assert sum(parser.fallbacks.values()) <= len(ptb_small[1])


def test_parser_thresholds_per_level(small_model, ptb_small):
    words = ptb_small[1][0].words()
    one = Parser(small_model, prune_threshold=1e-4).parse(words).tree
    assert Parser(small_model, prune_threshold=[1e-4, 1e-4]).parse(words).tree == one
    with pytest.raises(ValueError, match="E205"):
        Parser(small_model, prune_threshold=[1e-4, 1e-4, 1e-4])


def test_a_level_that_merges_nothing_is_skipped(ptb_small):
    # Without function tags or annotations, the second default level (X-bar with Markov
    # context) is the grammar itself: the cascade runs the dense pass, then the final
    # pass over its mask, exactly as with the first level alone.
    from spacy_lpcfg.decode.levels import DEFAULT_LEVELS
    from spacy_lpcfg.estimators.mle import MLEEstimator

    transform = TransformSpec(keep_functions=False, v_markov=1)
    model = MLEEstimator(transform=transform).fit(ptb_small[0]).model_
    parser = Parser(model, prune_threshold=[1e-4, 0.5])  # thresholds of both levels
    assert len(parser.cascade.levels) == 1 and parser.cascade.thresholds == (1e-4,)
    first_only = Parser(model, levels=DEFAULT_LEVELS[:1], prune_threshold=1e-4)
    for tree in ptb_small[1][:5]:
        assert parser.parse(tree.words()).tree == first_only.parse(tree.words()).tree


def test_parser_lowers_the_thresholds_before_giving_up(small_model, ptb_small):
    # Almost nothing survives a threshold of 0.9999: the parser lowers it and counts it.
    parser = Parser(small_model, prune_threshold=0.9999)
    parse = parser.parse(ptb_small[1][1].words())
    assert parse.fallback in ("lower_threshold", "no_pruning")
    assert parser.fallbacks[parse.fallback] == 1


def test_latent_parser_with_an_unused_state_parses_like_the_one_state_parser(
    small_model, ptb_small
):
    # Two states per symbol, the second never used: the same distribution, parsed by
    # the latent kernels over the mask of the grammar's one-state projection.
    from chart.brute_force import with_unused_state

    from spacy_lpcfg.grammar import ParsingModel

    latent = ParsingModel(
        with_unused_state(small_model.grammar), small_model.lexicon, small_model.transform
    )
    one_state = Parser(small_model, decoder="max_rule")
    two_states = Parser(latent, decoder="max_rule")
    assert not two_states.cascade.one_state
    for tree in ptb_small[1][:5]:
        words = tree.words()
        assert two_states.parse(words).tree == one_state.parse(words).tree


def test_merged_states_at_threshold_zero_lose_nothing_and_prune_by_default(small_model, ptb_small):
    # Six noisy states per symbol: the pass with them merged into four keeps, at
    # threshold 0, every item with a non-zero posterior, so the parses are those
    # without the pass; above 0 it prunes.
    from chart.brute_force import noisy_split

    from spacy_lpcfg.grammar import ParsingModel

    grammar = noisy_split(small_model.grammar, 6)
    latent = ParsingModel(
        grammar, small_model.lexicon, small_model.transform, estimator="split_merge"
    )
    # by default only for the estimators whose states are in split order
    unordered = ParsingModel(
        grammar, small_model.lexicon, small_model.transform, estimator="clustering"
    )
    assert not Parser(unordered).cascade.merges_states
    without = Parser(latent, decoder="max_rule", state_groups=0)
    lossless = Parser(latent, decoder="max_rule", state_threshold=0.0)
    assert lossless.cascade.merges_states and not without.cascade.merges_states
    for tree in ptb_small[1][:5]:
        words = tree.words()
        a, b = without.parse(words), lossless.parse(words)
        assert a.tree == b.tree
        assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-9)
    pruning = Parser(latent, decoder="max_rule", state_threshold=0.01)
    before = after = 0
    for tree in ptb_small[1][:5]:
        lexicals, coarse = pruning._lexicals(tree.words(), None, 0.0)
        base = pruning.cascade.prune(coarse).kept
        kept = pruning.cascade.prune(coarse, fine=lexicals[0]).kept
        assert kept[:-1] == base and 0 < kept[-1] <= base[-1]
        before, after = before + base[-1], after + kept[-1]
    assert after < before


def _ensemble_of_copies(model, n_members: int, estimator: str | None = None):
    """The model with n_members - 1 copies of its grammar as ensemble members."""
    from spacy_lpcfg.grammar.model import ParsingModel

    return ParsingModel(
        model.grammar,
        model.lexicon,
        model.transform,
        estimator=estimator or model.estimator,
        training={**model.training, "ensemble": list(range(n_members - 1))},
        extra_grammars=[model.grammar] * (n_members - 1),
    )


def test_parser_auto_decoder(small_model):
    from spacy_lpcfg.decode.parser import default_decoder

    assert Parser(small_model).decoder == default_decoder(small_model) == "max_rule"
    # latent states: mbr over collapsed unary chains (the default), else max_rule, whose
    # trees keep every label of a chain
    from dataclasses import replace

    from chart.brute_force import with_unused_state

    from spacy_lpcfg.grammar import ParsingModel

    latent = ParsingModel(
        with_unused_state(small_model.grammar), small_model.lexicon, small_model.transform
    )
    assert small_model.transform.collapse_unary and default_decoder(latent) == "mbr"
    chains = ParsingModel(
        latent.grammar, latent.lexicon, replace(latent.transform, collapse_unary=False)
    )
    assert default_decoder(chains) == "max_rule"
    assert default_decoder(_ensemble_of_copies(small_model, 1, "spectral")) == "mbr"
    assert default_decoder(_ensemble_of_copies(small_model, 2)) == "product_mbr"
    with pytest.raises(ValueError, match="decoder"):
        Parser(small_model, decoder="product_max")


@pytest.mark.parametrize(
    "ensemble_decoder,single_decoder", [("product", "max_rule"), ("product_mbr", "mbr")]
)
def test_parser_ensemble_of_copies_decodes_like_one_grammar(
    small_model, ptb_small, ensemble_decoder, single_decoder
):
    # K identical members: the product of their max-rule scores and the mean of their
    # marginals have the single grammar's optimum, through the same pruning.
    ensemble = Parser(_ensemble_of_copies(small_model, 3), decoder=ensemble_decoder)
    assert len(ensemble.grammars) == 3
    single = Parser(small_model, decoder=single_decoder)
    for tree in ptb_small[1][:8]:
        words = tree.words()
        assert ensemble.parse(words).tree == single.parse(words).tree


@pytest.mark.parametrize("threshold", [-0.1, 1.0, "1e-4"])
def test_parser_rejects_an_ensemble_threshold_outside_0_1(small_model, threshold):
    with pytest.raises(ValueError, match="ensemble_threshold"):
        Parser(small_model, ensemble_threshold=threshold)


def test_parser_ensemble_members_are_pruned_by_the_first(small_model, ptb_small, monkeypatch):
    # the wiring; ensemble_charts itself is checked against the oracle (test_ensemble_charts)
    import spacy_lpcfg.decode.grammar_parser as parser_module

    seen = []

    def recording(grammars, lexicals, mask, *, threshold, rule_posteriors):
        seen.append((len(grammars), threshold))
        return ensemble_charts(
            grammars, lexicals, mask, threshold=threshold, rule_posteriors=rule_posteriors
        )

    monkeypatch.setattr(parser_module, "ensemble_charts", recording)
    ensemble = _ensemble_of_copies(small_model, 3)
    words = ptb_small[1][0].words()
    for decoder in ("product", "product_mbr"):
        Parser(ensemble, decoder=decoder, ensemble_threshold=1e-3).parse(words)
        assert seen[-1] == (3, 1e-3)
    Parser(ensemble, decoder="product_mbr").parse(words)
    assert seen[-1] == (3, defaults.ENSEMBLE_PRUNE_THRESHOLD)


def test_parts_with_one_coarsest_level_share_its_pass(small_model, ptb_small):
    # a combination of grammars binarised alike, function tags kept and stripped: their
    # coarsest (X-bar) levels have the same symbols, in another order
    from spacy_lpcfg.estimators.mle import MLEEstimator
    from spacy_lpcfg.grammar.model import combine_models
    from spacy_lpcfg.trees.transforms import TransformSpec

    stripped = MLEEstimator(transform=TransformSpec(keep_functions=False, v_markov=1))
    combined = Parser(combine_models([small_model, stripped.fit(ptb_small[0]).model_]))
    kept, other = combined.parts
    first, second = (part.cascade.levels[0].grammar.symbols for part in combined.parts)
    assert set(first.names) == set(second.names) and first != second
    for tree in ptb_small[1][:5]:
        words = tree.words()
        shared = {}
        lexicals = [part._lexicals(words, None, 0.0)[1] for part in combined.parts]
        own = [part.cascade.first_pass(lexical) for part, lexical in zip(combined.parts, lexicals)]
        assert kept._first_pass(lexicals[0], shared) is not None and len(shared) == 1
        reused = other._first_pass(lexicals[1], shared)
        # the first part's posteriors, each column under the second part's symbol
        for a, name in enumerate(second.names):
            np.testing.assert_array_equal(
                reused.posteriors[:, :, a], own[0].posteriors[:, :, first.index(name)]
            )
        # the two coarsest grammars are projections of one treebank: nearly the same
        assert np.abs(reused.posteriors - own[1].posteriors).max() < 0.05
        assert combined.parse(words).tree.words() == words


def test_parser_keeps_a_clustering_grammar_sparse(ptb_small, tmp_path):
    """A clustering grammar's binary weights stay sparse through loading and parsing
    (the dense array is never built), and parse as the same grammar held dense does."""
    from spacy_lpcfg.estimators.clustering import ClusteringEstimator
    from spacy_lpcfg.grammar.model import ParsingModel

    ClusteringEstimator(n_states=4).fit(ptb_small[0][:150]).model_.to_disk(tmp_path / "model")
    model = ParsingModel.from_disk(tmp_path / "model")
    grammar = model.grammar
    assert grammar.binary_sparse is not None and grammar.max_states == 4
    sentences = [tree.words() for tree in ptb_small[1][:8]]
    parses = [parse.tree for parse in Parser(model).parse_all(sentences)]
    assert "binary_weights" not in vars(grammar)
    dense_model = ParsingModel.from_disk(tmp_path / "model")
    dense_model.grammar.__dict__["binary_weights"] = dense_model.grammar.binary_weights
    dense_model.grammar.binary_sparse = None  # as a grammar that keeps dense weights
    assert [parse.tree for parse in Parser(dense_model).parse_all(sentences)] == parses


def test_default_first_level_merges_cess_phrase_features(load_corpus):
    # CESS-ESP phrase labels carry dotted features (grup.nom.ms); the dense first pass
    # runs over their categories (grup), which leaves far fewer symbols to parse.
    from spacy_lpcfg.decode.levels import DEFAULT_LEVELS
    from spacy_lpcfg.estimators.mle import MLEEstimator

    trees = load_corpus("cess_esp", "train")[:300]
    transform = TransformSpec(v_markov=1, scheme="cess")
    model = MLEEstimator(transform=transform).fit(trees).model_
    first = Parser(model).cascade.levels[0].grammar.symbols
    names = [first.name(s) for s in range(len(first))]
    assert any(name.startswith("grup") for name in names)
    assert not any("grup." in name or "S.F" in name for name in names)
    features_kept = ({**DEFAULT_LEVELS[0], "phrases": "keep"}, *DEFAULT_LEVELS[1:])
    kept = Parser(model, levels=features_kept).cascade.levels[0].grammar
    assert len(first) < len(kept.symbols) / 2
    words = load_corpus("cess_esp", "dev")[0].words()
    assert Parser(model).parse(words).tree.words() == words
