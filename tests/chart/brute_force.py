"""Random small grammars and the brute-force oracle: every derivation of a sentence,
enumerated explicitly (all binary trees, all labellings, unary chains), with its
score summed and maximised over latent states."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable


def random_grammar(
    seed: int,
    *,
    n_phrasal: int = 2,
    n_intermediate: int = 1,
    n_preterminal: int = 2,
    max_states: int = 3,
    n_words: int = 3,
    density: float = 0.5,
    signed: bool = True,
) -> LPCFG:
    """A random grammar: binary, unary (a DAG) and lexical rules; signed or positive weights."""
    rng = np.random.default_rng(seed)
    symbols = SymbolTable.from_kinds(
        phrasal=[f"P{i}" for i in range(n_phrasal)],
        intermediate=[f"I{i}" for i in range(n_intermediate)],
        preterminal=[f"T{i}" for i in range(n_preterminal)],
    )
    n_symbols = len(symbols)
    n_states = rng.integers(1, max_states + 1, size=n_symbols)
    n_states[symbols.root] = 1
    parents = [a for a in range(n_symbols) if symbols.kind(a) != "preterminal"]
    children = [a for a in range(n_symbols) if symbols.kind(a) != "root"]
    preterminals = [a for a in range(n_symbols) if symbols.kind(a) == "preterminal"]

    def weights(*shape):
        if signed:
            return rng.normal(size=shape)
        return rng.uniform(0.05, 1.0, size=shape)

    def states(*ids):
        return tuple(int(n_states[a]) for a in ids)

    binary = {
        (a, b, c): weights(*states(a, b, c))
        for a in parents
        for b in children
        for c in children
        if rng.random() < density
    }
    # Unary rules only go from a higher id to a lower one (TOP is 0, so give it its own),
    # or from a non-preterminal to a preterminal: a DAG by construction.
    unary = {}
    for a in parents:
        for b in children:
            if a == symbols.root:
                if rng.random() < 0.6 or b == 1:
                    unary[(a, b)] = weights(*states(a, b))
            elif (b < a or b in preterminals) and rng.random() < density / 2:
                unary[(a, b)] = weights(*states(a, b))
    words = [f"w{i}" for i in range(n_words)]
    lexical = {}
    for w, word in enumerate(words):
        tags = [t for t in preterminals if rng.random() < 0.7] or [
            preterminals[w % len(preterminals)]
        ]
        for t in tags:
            lexical[(t, word)] = weights(int(n_states[t]))
    return LPCFG.from_rules(
        symbols, n_states, binary=binary, unary=unary, lexical=lexical, words=words
    )


@dataclass
class Derivation:
    total: np.ndarray  # float64[m_a]: score summed over latent states below the root state
    best: np.ndarray  # float64[m_a]: score maximised over latent states below
    items: list  # (symbol, start, end) in pre-order, preterminals included
    rules: list  # ("binary", rule, i, k, j) / ("unary", rule, i, j)


def enumerate_derivations(grammar: LPCFG, lexical: LexicalScores) -> list[Derivation]:
    """Every derivation of TOP over the sentence (explicit lists, exponential)."""
    n = lexical.n_words
    lex = defaultdict(list)
    for e, (position, tag) in enumerate(zip(lexical.positions, lexical.tags)):
        lex[(int(position), int(tag))].append(
            lexical.values[lexical.offsets[e] : lexical.offsets[e + 1]]
        )
    memo = {}

    def derive(a, i, j):
        if (a, i, j) in memo:
            return memo[(a, i, j)]
        found = []
        if j == i + 1:
            for vector in lex[(i, a)]:
                found.append(Derivation(vector.copy(), vector.copy(), [(a, i, j)], []))
        for r, (p, b, c) in enumerate(grammar.binary_rules):
            if p != a:
                continue
            block = grammar.binary_block(r)
            for k in range(i + 1, j):
                for left in derive(int(b), i, k):
                    for right in derive(int(c), k, j):
                        found.append(
                            Derivation(
                                np.einsum("xyz,y,z->x", block, left.total, right.total),
                                (block * left.best[None, :, None] * right.best[None, None, :]).max(
                                    axis=(1, 2)
                                ),
                                [(a, i, j)] + left.items + right.items,
                                [("binary", r, i, k, j)] + left.rules + right.rules,
                            )
                        )
        for r, (p, c) in enumerate(grammar.unary_rules):
            if p != a:
                continue
            block = grammar.unary_block(r)
            for child in derive(int(c), i, j):
                found.append(
                    Derivation(
                        block @ child.total,
                        (block * child.best[None, :]).max(axis=1),
                        [(a, i, j)] + child.items,
                        [("unary", r, i, j)] + child.rules,
                    )
                )
        memo[(a, i, j)] = found
        return found

    return derive(grammar.root, 0, n)


def oracle_posteriors(derivations: list[Derivation]):
    """(Z, item marginals dict, anchored rule posteriors dict) by summing over derivations."""
    z = sum(float(d.total[0]) for d in derivations)
    items = defaultdict(float)
    rules = defaultdict(float)
    for d in derivations:
        for item in d.items:
            items[item] += d.total[0] / z
        for rule in d.rules:
            rules[rule] += d.total[0] / z
    return z, dict(items), dict(rules)


def sentence(grammar: LPCFG, n: int, seed: int) -> LexicalScores:
    rng = np.random.default_rng(seed)
    return LexicalScores.from_word_ids(
        grammar, rng.integers(0, len(grammar.words), size=n).tolist()
    )


def chart_dicts(result) -> tuple[dict, dict]:
    """(item -> marginal, anchored rule -> posterior) of an inside_outside result, keyed
    as oracle_posteriors keys them."""
    items = {
        (int(a), int(i), int(j)): m
        for a, i, j, m in zip(
            result.item_symbols, result.item_starts, result.item_ends, result.marginals
        )
    }
    rules = {}
    b = result.binary
    for r, i, k, j, s in zip(b.rules, b.starts, b.splits, b.ends, b.scores):
        rules[("binary", int(r), int(i), int(k), int(j))] = s
    u = result.unary
    for r, i, j, s in zip(u.rules, u.starts, u.ends, u.scores):
        rules[("unary", int(r), int(i), int(j))] = s
    return items, rules


def assert_dicts_close(found: dict, expected: dict, atol: float = 1e-9) -> None:
    """Equal up to atol, a key missing on one side counting as 0."""
    for key in set(found) | set(expected):
        assert np.isclose(found.get(key, 0.0), expected.get(key, 0.0), atol=atol), key


def with_unused_state(grammar: LPCFG) -> LPCFG:
    """The grammar with a second, unused latent state per symbol (TOP keeps one): the
    same distribution, computed by the latent kernels."""
    states = np.where(np.arange(grammar.n_symbols) == grammar.root, 1, 2)

    def padded(symbols, weight):
        block = np.zeros(tuple(int(states[s]) for s in symbols))
        block[(0,) * len(symbols)] = weight
        return block

    return LPCFG.from_rules(
        grammar.symbols,
        states,
        binary={
            tuple(r): padded(r, w)
            for r, w in zip(grammar.binary_rules.tolist(), grammar.binary_weights)
        },
        unary={
            tuple(r): padded(r, w)
            for r, w in zip(grammar.unary_rules.tolist(), grammar.unary_weights)
        },
        lexical={
            (t, w): padded([t], v)
            for (t, w), v in zip(grammar.lexical_rules.tolist(), grammar.lexical_weights)
        },
        words=grammar.words,
    )


def with_unused_state_lexical(lexical: LexicalScores, latent: LPCFG) -> LexicalScores:
    """One-state lexical scores padded with a zero for the unused state."""
    sizes = latent.n_states[lexical.tags]
    values = np.zeros(int(sizes.sum()))
    values[np.concatenate([[0], np.cumsum(sizes)[:-1]])] = lexical.values
    return LexicalScores(
        lexical.n_words,
        lexical.positions,
        lexical.tags,
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        values,
    )


def noisy_split(grammar: LPCFG, m: int, seed: int = 0) -> LPCFG:
    """Every symbol but TOP split into m latent states whose weights are the original
    rule's shared out and scaled by a random factor in [0.8, 1]: a latent grammar of
    non-negative weights, all states used, as consistent as the original."""
    rng = np.random.default_rng(seed)
    states = np.where(np.arange(grammar.n_symbols) == grammar.root, 1, m)

    def block(value, symbols):
        shape = tuple(int(states[s]) for s in symbols)
        return value / np.prod(shape[1:], dtype=float) * rng.uniform(0.8, 1.0, size=shape)

    return LPCFG.from_rules(
        grammar.symbols,
        states,
        binary={
            tuple(r): block(w, r)
            for r, w in zip(grammar.binary_rules.tolist(), grammar.project().binary_weights)
        },
        unary={
            tuple(r): block(w, r)
            for r, w in zip(grammar.unary_rules.tolist(), grammar.project().unary_weights)
        },
        lexical={
            (t, w): block(v, [t])
            for (t, w), v in zip(grammar.lexical_rules.tolist(), grammar.project().lexical_weights)
        },
        words=grammar.words,
    )
