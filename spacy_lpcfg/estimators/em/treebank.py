"""The training trees of EM laid out as one run of nodes (``EMTreebank``).

Every tree is transformed and flattened into ``trees.nodes.TreebankNodes``; each
node knows its rule (binary, unary or lexical, by its number of children), and
the lexical rules emit *training entries*: a token is its word (or lowercase
form) when the one-state lexicon knows it, else its unknown-word class
(``Lexicon.entry``), so rare words train the classes that unknown words use at
parse time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ...grammar.lexicon import Lexicon
from ...trees.nodes import TreebankNodes, flatten, node_rules
from ...trees.transforms import TransformSpec, transform_treebank
from ...trees.tree import Tree
from ..base import as_transform_spec
from ..mle import RuleCounts, count_rules

# The kinds of rules, each with its own weight blocks (and its own arrays in the
# shards and checkpoints).
KINDS = ("binary", "unary", "lexical")


@dataclass(frozen=True)
class EMTreebank:
    """A transformed treebank laid out for EM.

    spec (TransformSpec): the transforms applied.
    counts (RuleCounts): rule and token counts, and the symbol table.
    nodes (TreebankNodes): every node, tree by tree in pre-order.
    node_rule (np.ndarray): int64[N], each node's row in the binary, unary (TOP
        included) or lexical rules, by its number of children.
    entries (tuple[str, ...]): the training entries the lexical rules emit.
    lexical_rules (np.ndarray): int32[RL, 2] (tag, entry), sorted.
    """

    spec: TransformSpec
    counts: RuleCounts
    nodes: TreebankNodes
    node_rule: np.ndarray
    entries: tuple[str, ...]
    lexical_rules: np.ndarray

    def state_symbols(self, kind: str) -> np.ndarray:
        """int32[R, k]: the symbols of a kind's rules that have latent states
        (parent and children; only the tag of a lexical rule)."""
        if kind == "binary":
            return self.counts.binary_rules
        if kind == "unary":
            return self.counts.unary_rules
        return self.lexical_rules[:, :1]


def em_treebank(
    spec: TransformSpec, counts: RuleCounts, nodes: TreebankNodes, lexicon: Lexicon
) -> EMTreebank:
    """Lay out a flattened treebank for EM.

    lexicon (Lexicon): fitted on ``counts.tokens``; it maps each token to its entry.
    """
    binary_rule, unary_rule = node_rules(nodes, counts.binary_rules, counts.unary_rules)
    # tokens in node order (pre-order visits words left to right); the kernels rely on it
    token_tree = nodes.tree[nodes.token_node]
    initial = np.arange(len(nodes.token_word)) == nodes.token_offsets[token_tree]
    pairs, inverse = np.unique(nodes.token_word.astype(np.int64) * 2 + initial, return_inverse=True)
    entry_names = [lexicon.entry(nodes.words[p // 2], 0 if p % 2 else 1) for p in pairs.tolist()]
    entries, entry_of_pair = np.unique(entry_names, return_inverse=True)
    tags = nodes.token_tag.astype(np.int64)
    keys = tags * len(entries) + entry_of_pair[inverse.reshape(-1)]
    rule_keys, token_rule = np.unique(keys, return_inverse=True)
    lexical_rules = np.stack(np.divmod(rule_keys, len(entries)), axis=1).astype(np.int32)
    node_rule = np.where(binary_rule >= 0, binary_rule, unary_rule)
    node_rule[nodes.token_node] = token_rule.reshape(-1)
    return EMTreebank(spec, counts, nodes, node_rule, tuple(entries.tolist()), lexical_rules)


def read_em_treebank(
    trees: Iterable[Tree], transform: TransformSpec | Mapping | None, lexicon: Lexicon
) -> EMTreebank:
    """Training trees transformed, counted and laid out for EM (``em_treebank``).

    transform (TransformSpec | Mapping | None): an estimator's ``transform`` parameter.
    lexicon (Lexicon): unfitted; it is fitted on the trees' tokens.
    """
    spec, transformed = transform_treebank(trees, as_transform_spec(transform))
    counts = count_rules(transformed, total=len(transformed))
    nodes = flatten(transformed, counts.symbols, total=len(transformed))
    del transformed
    return em_treebank(spec, counts, nodes, lexicon.fit_counts(counts.tokens))


def count_distributions(treebank: EMTreebank, n_states: np.ndarray) -> int:
    """The distributions of a latent grammar: rules per phrasal parent state (binary and
    unary together) and emissions per tag state, one sum-to-one constraint each."""
    counts = treebank.counts
    phrasal = np.unique(np.concatenate([counts.binary_rules[:, 0], counts.unary_rules[:, 0]]))
    tags = np.unique(treebank.lexical_rules[:, 0])
    return int(n_states[phrasal].sum() + n_states[tags].sum())


def symbol_states(treebank: EMTreebank, n_states: np.ndarray) -> dict[str, int]:
    """Symbol name -> latent states, for the symbols with more than one."""
    symbols = treebank.counts.symbols
    return {symbols.name(a): int(m) for a, m in enumerate(n_states) if m > 1}
