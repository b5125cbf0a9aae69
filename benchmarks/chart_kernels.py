"""Speed of the chart kernels on synthetic grammars (no treebank needed).

Coarse pass: a one-state grammar with ~1000 symbols and ~10k binary rules over a
25-word sentence, every item. Latent pass: 500 symbols, 5k binary rules, m = 8
and 16 latent states, over the items a coarse pass keeps (~3% of all items),
inside + outside + marginals + anchored rule posteriors.

    python benchmarks/chart_kernels.py [--no-write]
"""

from __future__ import annotations

import sys

import numpy as np
from common import timed_median, write_section

from spacy_lpcfg.chart import coarse_posteriors, inside_outside, viterbi
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable

N_WORDS = 25
N_PRETERMINALS = 50
N_VOCABULARY = 2000


def synthetic_grammar(n_symbols: int, n_binary: int, n_states: int, seed: int = 0) -> LPCFG:
    """A random PCFG-LA shaped like a binarised treebank grammar: 50 preterminals,
    a fifth of the rest phrasal and the others intermediate; 30% of rule children
    are preterminals; every parent state's rules sum to one."""
    rng = np.random.default_rng(seed)
    n_phrasal = (n_symbols - 1 - N_PRETERMINALS) // 5
    n_intermediate = n_symbols - 1 - N_PRETERMINALS - n_phrasal
    symbols = SymbolTable.from_kinds(
        phrasal=[f"P{i}" for i in range(n_phrasal)],
        intermediate=[f"I{i}" for i in range(n_intermediate)],
        preterminal=[f"T{i}" for i in range(N_PRETERMINALS)],
    )
    preterminals = symbols.ids("preterminal")
    nonterminals = np.concatenate([symbols.ids("phrasal"), symbols.ids("intermediate")])
    states = np.full(len(symbols), n_states, dtype=np.int32)
    states[symbols.root] = 1

    def child():
        return int(rng.choice(preterminals) if rng.random() < 0.3 else rng.choice(nonterminals))

    keys = {(int(rng.choice(nonterminals)), child(), child()) for _ in range(n_binary)}
    phrasal = symbols.ids("phrasal")
    unary_keys = {(symbols.root, int(p)) for p in phrasal}
    unary_keys |= {(int(p), int(rng.choice(preterminals))) for p in phrasal}
    unary_keys |= {(int(p), int(q)) for p, q in zip(phrasal[1:], phrasal[:-1])}
    rules = sorted(keys) + sorted(unary_keys)
    raw = {key: rng.gamma(1.0, size=tuple(int(states[s]) for s in key)) for key in rules}
    totals = np.zeros((len(symbols), n_states))
    for key, block in raw.items():
        totals[key[0], : block.shape[0]] += block.reshape(block.shape[0], -1).sum(axis=1)
    # Parents give 70% of their mass to rules, the rest is left (an unfinished grammar).
    scaled = {
        key: 0.7 * block / totals[key[0], : block.shape[0]].reshape((-1,) + (1,) * (block.ndim - 1))
        for key, block in raw.items()
    }
    binary = {key: value for key, value in scaled.items() if len(key) == 3}
    unary = {key: value for key, value in scaled.items() if len(key) == 2}
    words = [f"w{i}" for i in range(N_VOCABULARY)]
    lexical = {}
    for word in words:
        for tag in rng.choice(preterminals, size=rng.integers(1, 4), replace=False):
            lexical[(int(tag), word)] = rng.uniform(0.001, 0.01, size=n_states)
    return LPCFG.from_rules(
        symbols, states, binary=binary, unary=unary, lexical=lexical, words=words
    )


def realistic_mask(coarse: LPCFG, lexical: LexicalScores, keep: float) -> np.ndarray:
    """Keep the `keep` fraction of items (i < j) with the highest coarse posteriors."""
    posteriors = coarse_posteriors(coarse, lexical).posteriors
    n = lexical.n_words
    upper = np.triu(np.ones((n + 1, n + 1), dtype=bool), 1)
    values = posteriors[upper]
    threshold = np.quantile(values, 1 - keep)
    mask = (posteriors >= max(threshold, 1e-300)) & upper[:, :, None]
    return mask


def main(write: bool) -> None:
    rng = np.random.default_rng(1)
    word_ids = rng.integers(0, N_VOCABULARY, size=N_WORDS).tolist()
    lines = []

    coarse = synthetic_grammar(1000, 10_000, 1)
    lexical = LexicalScores.from_word_ids(coarse, word_ids)
    coarse_posteriors(coarse, lexical)  # compile / load the cache
    seconds, _, result = timed_median(lambda: coarse_posteriors(coarse, lexical), 10)
    lines.append(
        f"| coarse pass (dense inside-outside, all items) | {coarse.n_symbols} symbols, "
        f"{len(coarse.binary_rules)} binary rules, m=1 | {seconds * 1e3:.1f} ms |"
    )
    assert result.has_parse

    for n_states in (8, 16):
        grammar = synthetic_grammar(500, 5000, n_states)
        lexical = LexicalScores.from_word_ids(grammar, word_ids)
        weights = grammar.expected_state_weights()
        projected = grammar.project(weights)
        mask = realistic_mask(projected, lexical.project(grammar, weights), keep=0.03)

        def run_inside_outside(grammar=grammar, lexical=lexical, mask=mask):
            return inside_outside(grammar, lexical, mask)

        def run_viterbi(grammar=grammar, lexical=lexical, mask=mask):
            return viterbi(grammar, lexical, mask)

        run_inside_outside()
        seconds, _, result = timed_median(run_inside_outside, 7)
        kept = mask.sum() / (N_WORDS * (N_WORDS + 1) / 2 * grammar.n_symbols)
        lines.append(
            f"| latent inside-outside + marginals + rule posteriors | {grammar.n_symbols} "
            f"symbols, {len(grammar.binary_rules)} binary rules, m={n_states}, "
            f"{kept:.1%} of items kept | {seconds * 1e3:.1f} ms |"
        )
        assert result.has_parse
        run_viterbi()
        seconds, _, _ = timed_median(run_viterbi, 7)
        lines.append(f"| latent Viterbi, same mask | m={n_states} | {seconds * 1e3:.1f} ms |")

    body = (
        f"Chart kernels on synthetic grammars, one {N_WORDS}-word sentence, single thread "
        "(median of repeated runs, numba cache warm).\n\n"
        "| pass | grammar | time per sentence |\n| --- | --- | --- |\n" + "\n".join(lines)
    )
    print(body)
    if write:
        write_section("chart_kernels", body)


if __name__ == "__main__":
    main(write="--no-write" not in sys.argv)
