"""The treebank PCFG: relative frequencies of the rules of the transformed trees.

``count_rules`` is the first step of every estimator: one pass over the
transformed trees counting binary and unary rules and the preterminal tokens
(for the lexicon), with the symbol table they imply; ``count_treebank``
transforms and counts training trees in a stream, marking phrase labels that
are also POS tags (``trees.transforms.transform_treebank``). ``MLEEstimator`` turns
the counts into a one-state grammar, ``P(a -> b c) = c(a -> b c) / c(a)``
where ``c(a)`` counts the binary and unary rules of ``a`` (so they sum to one
per parent), and the lexicon gives the emissions ``P(w | t)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..defaults import LEXICON
from ..errors import Errors
from ..grammar import LPCFG, SymbolTable
from ..grammar.lexicon import Lexicon, LexiconSpec, TokenKey
from ..progress import progress
from ..trees.transforms import BIN_MARK, TransformPipeline, TransformSpec
from ..trees.tree import ROOT_LABEL, Tree
from .base import TreebankEstimator, as_transform_spec


@dataclass(frozen=True)
class RuleCounts:
    """Rule and token counts of a transformed treebank.

    symbols (SymbolTable): TOP, then phrasal, intermediate (``@...``) and
        preterminal labels, each kind sorted by name.
    binary_rules (np.ndarray): int32[R2, 3] (parent, left, right), sorted.
    binary_counts (np.ndarray): float64[R2].
    unary_rules (np.ndarray): int32[R1, 2] (parent, child), sorted; TOP -> X included.
    unary_counts (np.ndarray): float64[R1].
    tokens (Counter): (word, tag, is the first word of its sentence) -> count.
    n_trees (int): trees counted.
    """

    symbols: SymbolTable
    binary_rules: np.ndarray
    binary_counts: np.ndarray
    unary_rules: np.ndarray
    unary_counts: np.ndarray
    tokens: Counter
    n_trees: int

    @property
    def n_words(self) -> int:
        return sum(self.tokens.values())

    def relative_frequencies(self) -> tuple[np.ndarray, np.ndarray]:
        """(binary, unary) float64 weights: each rule's count over its parent's total."""
        parents = np.concatenate([self.binary_rules[:, 0], self.unary_rules[:, 0]])
        counts = np.concatenate([self.binary_counts, self.unary_counts])
        totals = np.bincount(parents, counts, minlength=len(self.symbols))
        weights = counts / totals[parents]
        return weights[: len(self.binary_rules)], weights[len(self.binary_rules) :]


def count_rules(
    trees: Iterable[Tree], *, total: int | None = None, desc: str = "counting rules"
) -> RuleCounts:
    """Count the rules and tokens of transformed (binarised) trees rooted at TOP.

    trees (Iterable[Tree]): trees in the grammar's label space (TransformPipeline.apply).
    total (int | None): the number of trees, for the progress bar (shown on a terminal).
    desc (str): label of the progress bar.
    RETURNS (RuleCounts): the counts and the symbol table.
    RAISES ValueError: a tree not rooted at TOP, TOP below the root, a node with
        more than two children, or a label used both as a POS tag and a phrase.
    """
    return _Tally(trees, total=total, desc=desc).counts()


def count_treebank(
    trees: Iterable[Tree], spec: TransformSpec, *, desc: str = "counting rules"
) -> tuple[TransformSpec, RuleCounts]:
    """Transform and count training trees, streaming (``transforms.transform_treebank``
    without keeping the transformed trees): phrase labels that clash with tags are
    found in a first pass, and the trees counted again with them marked.

    trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
    spec (TransformSpec): the transforms.
    RETURNS (tuple[TransformSpec, RuleCounts]): the spec to store with the grammar
        (``spec`` itself when nothing clashes) and the counts.
    """
    trees = trees if isinstance(trees, (list, tuple)) else list(trees)  # for a second pass
    pipeline = TransformPipeline(spec)
    tally = _Tally((pipeline.apply(tree) for tree in trees), total=len(trees), desc=desc)
    clashes = tally.tag_phrase_labels()
    if clashes:
        spec = replace(spec, marked_phrases=tuple(clashes | set(spec.marked_phrases)))
        pipeline = TransformPipeline(spec)
        tally = _Tally((pipeline.apply(tree) for tree in trees), total=len(trees), desc=desc)
    return spec, tally.counts()


class _Tally:
    """Rule and token counters of transformed trees (one pass over them)."""

    def __init__(self, trees: Iterable[Tree], *, total: int | None, desc: str):
        binary: Counter[tuple[str, str, str]] = Counter()
        unary: Counter[tuple[str, str]] = Counter()
        tokens: Counter[TokenKey] = Counter()
        n_trees = 0
        for tree in progress(trees, desc=desc, total=total, unit="tree"):
            if tree.label != ROOT_LABEL:
                detail = f"a tree is rooted at '{tree.label}', not '{ROOT_LABEL}'"
                raise ValueError(_fit_error(detail))
            n_trees += 1
            first = True
            stack = [tree]
            while stack:
                node = stack.pop()
                children = node.children
                if node.word is not None:
                    tokens[node.word, node.label, first] += 1
                    first = False
                elif len(children) == 2:
                    left, right = children
                    binary[node.label, left.label, right.label] += 1
                    stack.append(right)
                    stack.append(left)
                elif len(children) == 1:
                    unary[node.label, children[0].label] += 1
                    stack.append(children[0])
                else:
                    detail = f"node '{node.label}' has {len(children)} children (binarise first)"
                    raise ValueError(_fit_error(detail))
        if not n_trees:
            raise ValueError(_fit_error("no training trees"))
        self.binary, self.unary, self.tokens, self.n_trees = binary, unary, tokens, n_trees

    def tag_phrase_labels(self) -> set[str]:
        """The labels of both POS tags and phrases (``transforms.tag_phrase_labels``)."""
        tags = {tag for _, tag, _ in self.tokens}
        parents = {rule[0] for rule in self.binary} | {rule[0] for rule in self.unary}
        return (tags & parents) - {ROOT_LABEL}

    def counts(self) -> RuleCounts:
        symbols = _symbol_table(self.binary, self.unary, self.tokens)
        binary_rules, binary_counts = _rule_arrays(self.binary, symbols, 3)
        unary_rules, unary_counts = _rule_arrays(self.unary, symbols, 2)
        return RuleCounts(
            symbols,
            binary_rules,
            binary_counts,
            unary_rules,
            unary_counts,
            self.tokens,
            self.n_trees,
        )


class MLEEstimator(TreebankEstimator):
    """Treebank PCFG by relative frequencies: one state per symbol.

    The baseline, and the coarse grammar for pruning.

    transform (TransformSpec | dict | None): tree transforms. Defaults to TransformSpec().
    lexicon (LexiconSpec | dict | None): the Lexicon's settings (rare_threshold,
        signature, suffix_length, open_class_threshold, smooth_threshold,
        word_smoothing, signature_smoothing; see ``grammar.lexicon.Lexicon``), also
        taken by their own names (``TreebankEstimator``). Defaults to LexiconSpec().
    language (str): the training data's language (unknown-word signatures).

    Fitted attributes: ``grammar_`` (LPCFG), ``lexicon_`` (Lexicon),
    ``model_`` (ParsingModel).
    """

    name = "mle"

    transform: TransformSpec | Mapping | None

    def __init__(
        self,
        *,
        transform: TransformSpec | Mapping | None = TransformSpec(),
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    def fit(self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None) -> MLEEstimator:
        """Fit the grammar and lexicon.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): not used (the estimator interface has it).
        RETURNS (MLEEstimator): self.
        """
        spec = as_transform_spec(self.transform)
        lexicon = self._make_lexicon()  # checks the lexicon parameters before the long part
        # the spec gains the phrase labels that are also tags (count_treebank)
        spec, counts = count_treebank(trees, spec)
        lexicon.fit_counts(counts.tokens)
        binary_weights, unary_weights = counts.relative_frequencies()
        self.grammar_ = one_state_grammar(counts, binary_weights, unary_weights, lexicon)
        self.lexicon_ = lexicon
        self.model_ = self._make_model(self.grammar_, lexicon, spec, counts)
        return self


def one_state_grammar(
    counts: RuleCounts, binary_weights: np.ndarray, unary_weights: np.ndarray, lexicon: Lexicon
) -> LPCFG:
    """The one-state LPCFG with the counted rules, the given weights and the lexicon's
    emissions (the lexicon fitted on ``counts.tokens``)."""
    n_binary, n_unary = len(counts.binary_rules), len(counts.unary_rules)
    return LPCFG(
        counts.symbols,
        np.ones(len(counts.symbols), dtype=np.int32),
        binary_rules=counts.binary_rules,
        binary_offsets=np.arange(n_binary + 1, dtype=np.int64),
        binary_weights=binary_weights,
        unary_rules=counts.unary_rules,
        unary_offsets=np.arange(n_unary + 1, dtype=np.int64),
        unary_weights=unary_weights,
        words=lexicon.entries,
        **lexicon.lexical_arrays(counts.symbols),
    )


def _symbol_table(
    binary: Mapping[tuple[str, str, str], int],
    unary: Mapping[tuple[str, str], int],
    tokens: Mapping[TokenKey, int],
) -> SymbolTable:
    tags = {tag for _, tag, _ in tokens}
    parents = {rule[0] for rule in binary} | {rule[0] for rule in unary}
    both = sorted(tags & parents)
    if both:  # count_treebank and transforms.transform_treebank mark such phrases
        detail = (
            f"'{both[0]}' labels both POS tags and phrases (count_treebank and "
            "trees.transforms.transform_treebank mark such phrases)"
        )
        raise ValueError(_fit_error(detail))
    children = {label for rule in binary for label in rule[1:]} | {rule[1] for rule in unary}
    if ROOT_LABEL in children:
        raise ValueError(_fit_error(f"'{ROOT_LABEL}' occurs below the root of a tree"))
    phrases = parents - {ROOT_LABEL}
    return SymbolTable.from_kinds(
        phrasal=sorted(label for label in phrases if not label.startswith(BIN_MARK)),
        intermediate=sorted(label for label in phrases if label.startswith(BIN_MARK)),
        preterminal=sorted(tags),
    )


def _rule_arrays(
    rules: Mapping[Any, int], symbols: SymbolTable, arity: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rules as sorted int32[R, arity] symbol ids, with their float64[R] counts."""
    index = {name: i for i, name in enumerate(symbols.names)}
    ids = np.array([[index[label] for label in rule] for rule in rules], dtype=np.int32)
    ids = ids.reshape(len(rules), arity)
    counts = np.fromiter(rules.values(), dtype=np.float64, count=len(rules))
    order = np.lexsort(ids.T[::-1])
    return ids[order], counts[order]


def _fit_error(detail: str) -> str:
    return Errors.E029.format(what="grammar", detail=detail)
