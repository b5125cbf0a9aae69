"""Brute-force oracles for the decoders, on top of the chart oracle's enumeration of
every derivation (tests/chart/brute_force.py): each objective scored on every
coarse tree, and expected labelled recall maximised over every bracketing."""

from __future__ import annotations

import functools
import math

import numpy as np
from chart.brute_force import enumerate_derivations, oracle_posteriors, random_grammar

from spacy_lpcfg.grammar import LPCFG, LexicalScores
from spacy_lpcfg.grammar.symbols import PHRASAL, PRETERMINAL

__all__ = ["enumerate_derivations", "random_grammar"]  # re-exported for the tests

CASES = [(seed, n) for seed in range(6) for n in (1, 2, 3, 4, 5)]


@functools.cache
def case(seed: int, n: int, signed: bool):
    """(grammar, lexical scores, derivations) of a small random grammar and sentence."""
    grammar = random_grammar(seed, density=0.3 if n == 5 else 0.5, signed=signed)
    lexical = LexicalScores.from_word_ids(grammar, word_ids(grammar, n, seed))
    return grammar, lexical, enumerate_derivations(grammar, lexical)


def reweighted(grammar: LPCFG, seed: int, low: float = 0.2, high: float = 2.0) -> LPCFG:
    """The same rules with every weight multiplied by a random factor in [low, high):
    another member over the same skeleton."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for kind in ("binary", "unary", "lexical"):
        weights = getattr(grammar, f"{kind}_weights")
        arrays[f"{kind}_rules"] = getattr(grammar, f"{kind}_rules")
        arrays[f"{kind}_offsets"] = getattr(grammar, f"{kind}_offsets")
        arrays[f"{kind}_weights"] = weights * rng.uniform(low, high, size=weights.shape)
    return LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)


def word_ids(grammar: LPCFG, n: int, seed: int) -> list[int]:
    """A random sentence of n words of the grammar's vocabulary."""
    return np.random.default_rng(seed).integers(0, len(grammar.words), size=n).tolist()


def allowed(derivations, mask: np.ndarray | None):
    """The derivations whose items the mask allows (all of them without a mask)."""
    if mask is None:
        return derivations
    return [d for d in derivations if all(mask[i, j, a] for a, i, j in d.items)]


def preorder(grammar: LPCFG, derivation) -> list[tuple[str, int, int]]:
    """The derivation's nodes (preterminals included) as (name, start, end), pre-order:
    comparable with ``tree.spans(include_preterminals=True)``."""
    return [(grammar.symbols.name(int(a)), int(i), int(j)) for a, i, j in derivation.items]


def rule_objective(grammar: LPCFG, derivations, objective: str):
    """A function derivation -> its max-rule-product or variational log score, from
    posteriors summed over `derivations`; -inf when a factor is <= 0."""
    _, items, rules = oracle_posteriors(derivations)
    kinds = grammar.symbols.kind_codes

    def parent(rule) -> tuple[int, int, int]:
        if rule[0] == "binary":
            return int(grammar.binary_rules[rule[1], 0]), rule[2], rule[4]
        return int(grammar.unary_rules[rule[1], 0]), rule[2], rule[3]

    def score(derivation) -> float:
        factors = [rules[rule] for rule in derivation.rules]
        if objective == "variational":
            factors = [
                rules[rule] / items[parent(rule)] if items[parent(rule)] != 0 else 0.0
                for rule in derivation.rules
            ]
        else:
            factors += [items[item] for item in derivation.items if kinds[item[0]] == PRETERMINAL]
        if min(factors) <= 0:
            return -math.inf
        return float(sum(math.log(f) for f in factors))

    return score


def best_rule_trees(grammar: LPCFG, derivations, score) -> tuple[float, list]:
    """(best score, the pre-orders of the trees reaching it)."""
    scores = [score(d) for d in derivations]
    best = max(scores)
    ties = [preorder(grammar, d) for d, s in zip(derivations, scores) if np.isclose(s, best)]
    return best, ties


def expected_counts(grammar: LPCFG, derivations) -> dict[tuple[str, int, int], float]:
    """Expected count of each natural bracket (label, start, end), signed weights allowed."""
    _, items, _ = oracle_posteriors(derivations)
    kinds = grammar.symbols.kind_codes
    return {
        (grammar.symbols.name(a), i, j): value
        for (a, i, j), value in items.items()
        if kinds[a] == PHRASAL
    }


def tag_marginals(grammar: LPCFG, derivations) -> dict[tuple[str, int], float]:
    _, items, _ = oracle_posteriors(derivations)
    kinds = grammar.symbols.kind_codes
    return {
        (grammar.symbols.name(a), i): v for (a, i, _), v in items.items() if kinds[a] == PRETERMINAL
    }


def bracketings(i: int, j: int) -> list[list[tuple[int, int]]]:
    """Every binary bracketing of [i, j) as its spans (words included)."""
    if j - i == 1:
        return [[(i, j)]]
    return [
        [(i, j)] + left + right
        for k in range(i + 1, j)
        for left in bracketings(i, k)
        for right in bracketings(k, j)
    ]


def best_span_objective(n: int, span_score) -> float:
    """max over bracketings of the sum over spans of max(0, best label score)."""
    return max(sum(max(0.0, span_score(i, j)) for i, j in spans) for spans in bracketings(0, n))


def no_parse_lexical(grammar: LPCFG, n: int) -> LexicalScores:
    """A sentence whose last word is unknown: no preterminal, no parse."""
    return LexicalScores.from_word_ids(grammar, [0] * (n - 1) + [-1])
