"""Scores of a parse (decode.scores, Parse.log_likelihood and span_posteriors) against
enumeration of every derivation of small random grammars, then on a PTB model."""

from __future__ import annotations

import functools
import math
from collections import Counter

import numpy as np
import pytest
from decode_oracle import CASES, case, enumerate_derivations, random_grammar, word_ids

from spacy_lpcfg.chart import inside_outside
from spacy_lpcfg.decode.parser import Parser
from spacy_lpcfg.decode.scores import (
    chart_posteriors_of,
    constituents,
    log_likelihood,
    relabelled,
)
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable
from spacy_lpcfg.grammar.model import combine_models
from spacy_lpcfg.grammar.symbols import PHRASAL
from spacy_lpcfg.trees.transforms import coarse_label
from spacy_lpcfg.trees.tree import Tree

# Phrasal symbols named as a transformed grammar names them: two annotated symbols
# that project to A, and a collapsed chain B over A.
NAMES = ("A^x", "A^y", "B::A")


def _named(grammar: LPCFG, *, stacking: bool) -> LPCFG:
    """The grammar with its phrasal symbols renamed NAMES; without ``stacking``, no
    unary rule between phrasal symbols (so a derivation has at most one natural item
    per span, as with collapsed unary chains)."""
    symbols = grammar.symbols
    phrasal = iter(NAMES)
    names = [
        next(phrasal) if kind == "phrasal" else name
        for name, kind in zip(symbols.names, symbols.kinds)
    ]
    renamed = SymbolTable(names, symbols.kinds)
    kinds = symbols.kind_codes
    unary = {
        tuple(rule): grammar.unary_block(r)
        for r, rule in enumerate(grammar.unary_rules.tolist())
        if stacking or not (kinds[rule[0]] == PHRASAL and kinds[rule[1]] == PHRASAL)
    }
    return LPCFG.from_rules(
        renamed,
        grammar.n_states,
        binary={
            tuple(rule): grammar.binary_block(r)
            for r, rule in enumerate(grammar.binary_rules.tolist())
        },
        unary=unary,
        lexical={
            (t, w): grammar.lexical_block(r)
            for r, (t, w) in enumerate(grammar.lexical_rules.tolist())
        },
        words=grammar.words,
    )


def _output_constituents(grammar: LPCFG, derivation) -> list[tuple[str, int, int]]:
    """A derivation's brackets as TransformPipeline.invert gives them, pre-order."""
    kinds = grammar.symbols.kind_codes
    found = []
    for a, i, j in derivation.items:
        if kinds[a] == PHRASAL:
            name = grammar.symbols.name(int(a)).partition("^")[0]
            found.extend((part, int(i), int(j)) for part in name.split("::"))
    return found


def _slots(spans) -> Counter:
    """(label, start, end, m) for every m-th copy of a bracket, as Counter keys."""
    counts: Counter = Counter()
    slots = []
    for span in spans:
        counts[span] += 1
        slots.append((*span, counts[span]))
    return Counter(slots)


@functools.cache
def _named_case(seed: int, n: int, max_states: int, *, stacking: bool = False):
    base = random_grammar(seed, n_phrasal=3, density=0.3 if n >= 4 else 0.5, signed=False,
                          max_states=max_states)  # fmt: skip
    grammar = _named(base, stacking=stacking)
    lexical = LexicalScores.from_word_ids(grammar, word_ids(grammar, n, seed))
    return grammar, lexical, enumerate_derivations(grammar, lexical)


def _sample(derivations, size: int = 40) -> list:
    """Some derivations to check (all of them when few), spread over the list."""
    if len(derivations) <= size:
        return list(derivations)
    return [derivations[i] for i in np.linspace(0, len(derivations) - 1, size).astype(int)]


# (a) the sentence log-likelihood ----------------------------------------------------


@pytest.mark.parametrize("max_states", [1, 3])
@pytest.mark.parametrize("seed,n", CASES)
def test_log_likelihood_is_the_log_of_the_sum_over_every_tree(seed, n, max_states):
    grammar, lexical, derivations = _named_case(seed, n, max_states, stacking=True)
    found = log_likelihood(inside_outside(grammar, lexical))
    if not derivations:
        assert found is None
        return
    assert math.isclose(found, math.log(sum(d.total[0] for d in derivations)), rel_tol=1e-9)


def test_log_likelihood_of_a_negative_total_is_none():
    """Signed (spectral) grammars: Z estimates P(words) and can be negative."""
    signs = set()
    for seed, n in CASES:
        grammar, lexical, derivations = case(seed, n, True)
        chart = inside_outside(grammar, lexical)
        if not derivations:
            continue
        z = sum(d.total[0] for d in derivations)
        signs.add(z > 0)
        found = log_likelihood(chart)
        assert found is None if z < 0 else math.isclose(found, math.log(z), rel_tol=1e-9)
    assert signs == {True, False}  # both cases were checked


# (b) constituent posteriors ------------------------------------------------------------


@pytest.mark.parametrize("max_states", [1, 3])
@pytest.mark.parametrize("seed,n", CASES)
def test_span_posteriors_are_the_enumerated_marginals(seed, n, max_states):
    """The posterior of every bracket of every tree, annotations summed and chains
    split, is the probability that the tree has (at least m copies of) it."""
    grammar, lexical, derivations = _named_case(seed, n, max_states)
    if not derivations:
        return
    chart = inside_outside(grammar, lexical)
    z = sum(d.total[0] for d in derivations)
    oracle: Counter = Counter()
    for derivation in derivations:
        for slot in _slots(_output_constituents(grammar, derivation)):
            oracle[slot] += derivation.total[0] / z
    checked = set()
    for derivation in _sample(derivations):
        spans = _output_constituents(grammar, derivation)
        found = chart_posteriors_of(grammar, chart, spans)
        seen: Counter = Counter()
        for span, value in zip(spans, found):
            seen[span] += 1
            assert math.isclose(value, oracle[(*span, seen[span])], abs_tol=1e-9), span
            checked.add(span[0])
    if n > 1:
        assert "A" in checked or "B" in checked


@pytest.mark.parametrize("seed,n", CASES)
def test_stacked_items_give_expected_counts(seed, n):
    """With unary rules between phrases, two items can project to one label over a
    span: the sum is then the expected number of such items (documented): of the
    items over the span whose own chain holds the label at least m times."""
    grammar, lexical, derivations = _named_case(seed, n, 1, stacking=True)
    if not derivations:
        return
    chart = inside_outside(grammar, lexical)
    z = sum(d.total[0] for d in derivations)
    kinds, names = grammar.symbols.kind_codes, grammar.symbols.names
    expected: Counter = Counter()
    for derivation in derivations:
        for a, i, j in derivation.items:
            if kinds[a] == PHRASAL:
                chain = names[a].partition("^")[0].split("::")
                for label, m in {(label, m) for label in chain for m in range(1, 3)}:
                    if chain.count(label) >= m:
                        expected[(label, i, j, m)] += derivation.total[0] / z
    for derivation in _sample(derivations):
        spans = _output_constituents(grammar, derivation)
        found = chart_posteriors_of(grammar, chart, spans)
        copies: Counter = Counter()
        for span, value in zip(spans, found):
            copies[span] += 1
            assert math.isclose(value, expected[(*span, copies[span])], abs_tol=1e-9)


def test_unknown_labels_get_zero_and_no_parse_gives_zeros():
    grammar, lexical, derivations = _named_case(0, 3, 1)
    chart = inside_outside(grammar, lexical)
    assert chart_posteriors_of(grammar, chart, [("Z", 0, 3), ("A", 0, 0)]).tolist() == [0.0, 0.0]
    assert chart_posteriors_of(grammar, chart, []).shape == (0,)


def test_relabelled_keeps_values_for_the_same_shape():
    tree = Tree.from_string("(TOP (S (NP (DT a)) (VP (VB b))))")
    labelled = Tree.from_string("(TOP (S (NP-SBJ (DT a)) (VP (VB b))))")
    scores = (("S", 0, 2, 1.0), ("NP", 0, 1, 0.5), ("VP", 1, 2, 0.25))
    assert relabelled(scores, labelled) == (
        ("S", 0, 2, 1.0),
        ("NP-SBJ", 0, 1, 0.5),
        ("VP", 1, 2, 0.25),
    )
    assert relabelled(scores, Tree.from_string("(TOP (S (DT a) (VB b)))")) is None
    assert relabelled(None, tree) is None


# The parser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_model(ptb_small):
    from spacy_lpcfg.estimators.mle import MLEEstimator

    return MLEEstimator().fit(ptb_small[0]).model_


@pytest.fixture(scope="module")
def sentences(ptb_small):
    return [tree.words() for tree in ptb_small[1][:10]]


def _check_scores(parse):
    assert parse.span_posteriors is not None
    assert [score[:3] for score in parse.span_posteriors] == constituents(parse.tree)
    values = np.array([score[3] for score in parse.span_posteriors])
    assert ((values > 0) & (values <= 1 + 1e-9)).all()


@pytest.mark.parametrize("decoder", ["max_rule", "variational", "mbr"])
def test_parser_scores_every_parse(small_model, sentences, decoder):
    parser = Parser(small_model, decoder=decoder)
    for words in sentences:
        parse = parser.parse(words)
        assert parse.fallback in (None, "lower_threshold", "no_pruning")  # from a chart
        assert isinstance(parse.score, float) and math.isfinite(parse.score)
        assert math.isfinite(parse.log_likelihood)
        _check_scores(parse)


def test_parser_log_likelihood_without_pruning_is_the_full_chart(small_model, sentences):
    """prune_threshold=0 keeps every item some derivation uses: log Z of the whole
    chart; pruning only removes derivations, so its total is lower."""
    exhaustive, pruned = Parser(small_model, prune_threshold=0.0), Parser(small_model)
    short = [words for words in sentences if len(words) <= 20][:3]
    assert short
    for words in short:
        lexical = small_model.lexical_scores(words, None, "auto")
        full = inside_outside(small_model.grammar, lexical).log_abs_z
        assert math.isclose(exhaustive.parse(words).log_likelihood, full, rel_tol=1e-9)
        assert pruned.parse(words).log_likelihood <= full + 1e-9


def test_viterbi_has_a_score_but_no_sums(small_model, sentences):
    viterbi, max_rule = Parser(small_model, decoder="viterbi"), Parser(small_model)
    for words in sentences[:4]:
        parse = viterbi.parse(words)
        assert parse.log_likelihood is None and parse.span_posteriors is None
        # the best tree's log probability is at most the log of the total
        assert parse.score <= max_rule.parse(words).log_likelihood + 1e-9


def test_fallbacks_have_no_scores(small_model, sentences):
    parse = Parser(small_model, max_length=2).parse(sentences[0])
    assert parse.fallback == "too_long"
    assert (parse.score, parse.log_likelihood, parse.span_posteriors) == (None, None, None)


def test_ensembles_give_mean_posteriors_and_no_likelihood(small_model, sentences):
    """Two copies of one grammar over the same items (ensemble_threshold=0): the
    members' mean is the grammar's own posteriors."""
    single = Parser(small_model, decoder="max_rule")
    ensemble = Parser(combine_models([small_model, small_model], "product"), ensemble_threshold=0)
    for words in sentences[:4]:
        alone, both = single.parse(words), ensemble.parse(words)
        assert both.tree == alone.tree and both.log_likelihood is None
        assert np.allclose(
            [s[3] for s in both.span_posteriors], [s[3] for s in alone.span_posteriors]
        )


def test_members_give_posteriors_by_category(small_model, sentences):
    """A model with members: the parts' mean category marginals. A bracket's category
    (function tags aside) is at least as likely as its full label in the model alone."""
    parser = Parser(small_model.with_members([small_model], "mbr"))
    single = Parser(small_model)

    def numbered(scores, category):
        copies: Counter = Counter()
        found = {}
        for label, start, end, value in scores:
            key = (category(label), start, end)
            copies[key] += 1
            found[(*key, copies[key])] = value
        return found

    compared = 0
    for words in sentences[:4]:
        parse = parser.parse(words)
        assert parse.log_likelihood is None
        _check_scores(parse)
        alone = numbered(single.parse(words).span_posteriors, lambda label: label)
        category = numbered(parse.span_posteriors, lambda label: coarse_label(label, "penn"))
        for key, value in category.items():
            if key in alone:
                assert value >= alone[key] - 1e-9
                compared += 1
    assert compared


def test_labelled_parses_carry_their_labels_and_the_grammars_posteriors(ptb_small, sentences):
    """A function labeller relabels the tree: span_posteriors take its labels (function
    tags included) and keep the posteriors of the brackets the grammar chose; k-best
    lists are labelled alike."""
    from spacy_lpcfg.estimators import MLEEstimator
    from spacy_lpcfg.estimators.function_labels import attach_function_labeller
    from spacy_lpcfg.trees.transforms import TransformSpec

    bare = MLEEstimator(transform=TransformSpec(keep_functions=False)).fit(ptb_small[0]).model_
    labelled = attach_function_labeller(bare, ptb_small[0])
    for decoder in ("max_rule", "viterbi"):
        plain, parser = Parser(bare, decoder=decoder), Parser(labelled, decoder=decoder)
        for words in sentences[:4]:
            parses = [parser.parse(words)]
            expected = [plain.parse(words)]
            if decoder == "viterbi":
                parses, expected = parser.kbest(words, k=3), plain.kbest(words, k=3)
            for parse, alone in zip(parses, expected):
                assert [s[:3] for s in parse.span_posteriors] == constituents(parse.tree)
                assert [s[3] for s in parse.span_posteriors] == [
                    s[3] for s in alone.span_posteriors
                ]
    found = Parser(labelled).parse(sentences[0]).span_posteriors
    assert any("-" in s[0] for s in found)  # function tags


def test_scores_can_be_left_out(small_model, sentences):
    on, off = Parser(small_model), Parser(small_model, scores=False)
    for words in sentences[:3]:
        with_scores, without = on.parse(words), off.parse(words)
        assert without.tree == with_scores.tree and without.score == with_scores.score
        assert without.log_likelihood is None and without.span_posteriors is None
    members = Parser(small_model.with_members([small_model], "mbr"), scores=False)
    assert members.parse(sentences[0]).span_posteriors is None
