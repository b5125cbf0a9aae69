"""A small known L-PCFG to sample treebanks from (tests of the latent estimators).

S -> NP VP; NP -> DT NN | NN | NP PP; VP -> VB NP | VB | VP PP; PP -> IN NP,
with two latent states on every symbol but DT and IN. Attachment of PPs and
words shared by NN and VB make sentences ambiguous, and the states change
both the rule choices and the words, so inside and outside features can
recover them (the condition under which the spectral estimator is consistent).
"""

from __future__ import annotations

import numpy as np

from spacy_lpcfg.grammar import LPCFG, SymbolTable
from spacy_lpcfg.trees import Tree

STATES = {"S": 2, "NP": 2, "VP": 2, "PP": 2, "NN": 2, "VB": 2, "DT": 1, "IN": 1}
WORDS = {
    "DT": ["the", "a"],
    "IN": ["in", "with", "on"],
    "NN": ["dog", "cat", "idea", "park", "saw", "telescope"],
    "VB": ["saw", "ate", "liked", "park", "found"],
}
# phrase -> [(children, probability of the rule per parent state)]
RULES = {
    "S": [(("NP", "VP"), [1.0, 1.0])],
    "NP": [(("DT", "NN"), [0.6, 0.3]), (("NN",), [0.3, 0.4]), (("NP", "PP"), [0.1, 0.3])],
    "VP": [(("VB", "NP"), [0.6, 0.3]), (("VB",), [0.2, 0.3]), (("VP", "PP"), [0.2, 0.4])],
    "PP": [(("IN", "NP"), [1.0, 1.0])],
}


class SyntheticLPCFG:
    """The grammar: per rule and parent state, a distribution over the child states."""

    def __init__(self, seed: int = 0):
        rng = np.random.default_rng(seed)

        def peaked(rows: int, *shape: int) -> np.ndarray:  # far from uniform: states differ
            size = int(np.prod(shape))
            return rng.dirichlet(np.full(size, 0.5), size=rows).reshape(rows, *shape)

        self.root = np.array([0.6, 0.4])
        self.rules: dict[tuple[str, ...], np.ndarray] = {}
        for parent, options in RULES.items():
            for children, split in options:
                shape = [STATES[child] for child in children]
                block = peaked(STATES[parent], *shape)
                self.rules[(parent, *children)] = block * np.reshape(
                    split, (-1,) + (1,) * len(shape)
                )
        # every word keeps some mass, so that small samples see the whole vocabulary
        self.emissions = {
            tag: 0.8 * peaked(STATES[tag], len(words)) + 0.2 / len(words)
            for tag, words in WORDS.items()
        }

    def sample(self, n_trees: int, seed: int) -> list[Tree]:
        """Trees rooted at TOP, in treebank labels (binary already: no transform needed)."""
        rng = np.random.default_rng(seed)
        tables = self._sampling_tables()
        uniform = iter(rng.random(64 * n_trees + 64))  # plenty: a tree takes ~2 per node
        draw = lambda cumulative: int(np.searchsorted(cumulative, next(uniform)))  # noqa: E731
        trees = []
        for _ in range(n_trees):
            root = ("S", draw(np.cumsum(self.root)))
            trees.append(Tree("TOP", (self._expand(root, tables, draw),)))
        return trees

    def _sampling_tables(self) -> dict:
        """(symbol, state) -> (cumulative probabilities, outcomes): an outcome is a word,
        or the children with their states."""
        tables = {}
        for tag, words in WORDS.items():
            for state in range(STATES[tag]):
                tables[tag, state] = (np.cumsum(self.emissions[tag][state]), words)
        for parent in RULES:
            for state in range(STATES[parent]):
                outcomes, masses = [], []
                for rule, block in self.rules.items():
                    if rule[0] != parent:
                        continue
                    for index in np.ndindex(*block.shape[1:]):
                        outcomes.append(tuple(zip(rule[1:], index)))
                        masses.append(block[(state, *index)])
                tables[parent, state] = (np.cumsum(masses) / np.sum(masses), outcomes)
        return tables

    def _expand(self, node: tuple[str, int], tables: dict, draw) -> Tree:
        symbol, state = node
        cumulative, outcomes = tables[symbol, state]
        outcome = outcomes[min(draw(cumulative), len(outcomes) - 1)]
        if symbol in WORDS:
            return Tree.leaf(symbol, outcome)
        return Tree(symbol, tuple(self._expand(child, tables, draw) for child in outcome))

    def grammar(self, symbols: SymbolTable, words: tuple[str, ...]) -> LPCFG:
        """The true grammar over another grammar's symbols and vocabulary (extra words,
        such as unknown-word classes, get no rules)."""
        binary = {rule: block for rule, block in self.rules.items() if len(rule) == 3}
        unary = {rule: block for rule, block in self.rules.items() if len(rule) == 2}
        unary[("TOP", "S")] = self.root[None, :]
        lexical = {
            (tag, word): self.emissions[tag][:, i]
            for tag, tag_words in WORDS.items()
            for i, word in enumerate(tag_words)
        }
        return LPCFG.from_rules(
            symbols, STATES, binary=binary, unary=unary, lexical=lexical, words=words
        )
