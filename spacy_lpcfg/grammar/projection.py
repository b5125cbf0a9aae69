"""Merging symbols of a one-state grammar: the coarser levels of coarse-to-fine pruning.

A coarse symbol ``A`` stands for the fine symbols mapped to it. Its rules are
the fine rules averaged over those symbols with their expected counts ``c``
(Petrov & Klein 2007's projection, applied to symbols instead of latent
states): ``P(A -> B C) = sum_{a in A} c(a) sum_{b in B, c in C} P(a -> b c) / sum_{a in A} c(a)``.
For a treebank MLE grammar ``c`` are (close to) the treebank's node counts, so
the result is the MLE grammar of the coarsely labelled treebank (``chart.state_merge``
does the same for latent states).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import Errors, GrammarError
from .lexical_scores import LexicalScores
from .lpcfg import DENSE_SOLVE_SIZE, LPCFG
from .symbols import SymbolTable


def expected_symbol_counts(grammar: LPCFG) -> np.ndarray:
    """Expected number of nodes of each symbol in a tree of a one-state grammar.

    Solves ``(I - M) c = e_TOP``, where ``M[b, a]`` is the expected number of
    ``b`` children of an ``a`` node. Needs the non-negative weights of a
    consistent grammar (rule probabilities per parent summing to at most one).
    RETURNS (np.ndarray): float64[S], 1.0 for TOP.
    """
    _check_one_state(grammar)
    if min(grammar.binary_weights.min(initial=0), grammar.unary_weights.min(initial=0)) < 0:
        raise GrammarError(Errors.E112.format(detail="the grammar has negative weights"))
    s = grammar.n_symbols
    binary, unary = grammar.binary_rules, grammar.unary_rules
    rows = np.concatenate([binary[:, 1], binary[:, 2], unary[:, 1]])
    cols = np.concatenate([binary[:, 0], binary[:, 0], unary[:, 0]])
    values = np.concatenate([grammar.binary_weights, grammar.binary_weights, grammar.unary_weights])
    start = np.zeros(s)
    start[grammar.root] = 1.0
    if s <= DENSE_SOLVE_SIZE:
        # Every parser builds this: a dense solve spares it importing scipy (0.6 s).
        system = np.eye(s)
        np.subtract.at(system, (rows, cols), values)
        counts = np.linalg.solve(system, start)
    else:
        from scipy import sparse
        from scipy.sparse.linalg import spsolve

        children = sparse.csr_matrix((values, (rows, cols)), shape=(s, s))
        counts = spsolve((sparse.identity(s, format="csr") - children).tocsc(), start)
    if not np.isfinite(counts).all() or counts.min() < -1e-9:
        raise GrammarError(Errors.E112.format(detail="the expected counts diverge"))
    return np.maximum(counts, 0.0)


@dataclass(frozen=True)
class SymbolMerge:
    """A coarse grammar and how the fine symbols map onto it.

    grammar (LPCFG): the coarse one-state grammar.
    coarse_of (np.ndarray): int32[S_fine], the coarse id of each fine symbol.
    share (np.ndarray): float64[S_fine], c(a) / sum of c over a's coarse symbol:
        the weight of a fine preterminal's score in its coarse preterminal's.
    """

    grammar: LPCFG
    coarse_of: np.ndarray
    share: np.ndarray

    def lexical(self, fine: LexicalScores) -> LexicalScores:
        """Coarse preterminal scores: the share-weighted sums of the fine ones.

        fine (LexicalScores): one-state scores for the fine grammar.
        """
        if len(fine.values) != len(fine.tags):
            raise ValueError(Errors.E133.format(detail="one-state lexical scores"))
        n_coarse = self.grammar.n_symbols
        keys = fine.positions.astype(np.int64) * n_coarse + self.coarse_of[fine.tags]
        # Counting over (position, coarse tag) cells: sorted keys without a sort.
        size = fine.n_words * n_coarse
        present = np.flatnonzero(np.bincount(keys, minlength=size))
        values = np.bincount(keys, fine.values * self.share[fine.tags], minlength=size)
        return LexicalScores(
            n_words=fine.n_words,
            positions=(present // n_coarse).astype(np.int32),
            tags=(present % n_coarse).astype(np.int32),
            offsets=np.arange(len(present) + 1, dtype=np.int64),
            values=values[present],
        )


def merge_symbols(
    grammar: LPCFG, coarse_names: Sequence[str], counts: np.ndarray | None = None
) -> SymbolMerge:
    """Merge the symbols of a one-state grammar by name.

    grammar (LPCFG): a grammar with one state per symbol.
    coarse_names (Sequence[str]): the coarse name of each fine symbol. Symbols of
        different kinds never merge (a clash of names gets the kind appended).
    counts (np.ndarray | None): float64[S] expected symbol counts; defaults to
        expected_symbol_counts(grammar).
    RETURNS (SymbolMerge): the coarse grammar and the symbol map.
    """
    _check_one_state(grammar)
    if len(coarse_names) != grammar.n_symbols:
        raise ValueError(
            Errors.E133.format(detail=f"one coarse name per symbol ({grammar.n_symbols})")
        )
    counts = expected_symbol_counts(grammar) if counts is None else np.asarray(counts, float)
    names, kinds, coarse_of = _coarse_symbols(grammar.symbols, coarse_names)
    n_coarse = len(names)
    totals = np.bincount(coarse_of, weights=counts, minlength=n_coarse)
    # Symbols no tree reaches weigh uniformly within their coarse symbol.
    sizes = np.bincount(coarse_of, minlength=n_coarse)
    unreached = totals[coarse_of] <= 0
    counts = np.where(unreached, 1.0, counts)
    totals = np.where(totals > 0, totals, sizes)
    share = counts / totals[coarse_of]

    def merge(rules: np.ndarray, weights: np.ndarray, mapped: list[np.ndarray]):
        columns = np.stack(mapped, axis=1).astype(np.int32)
        if len(columns) == 0:
            return columns, np.zeros(0)
        # The distinct rows in lexicographic order, as np.unique(axis=0) gives them, by
        # a lexsort: several times cheaper, and every parser builds this.
        order = np.lexsort(columns.T[::-1])
        ordered = columns[order]
        starts = np.ones(len(ordered), dtype=bool)
        starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
        inverse = np.empty(len(ordered), dtype=np.int64)
        inverse[order] = np.cumsum(starts) - 1
        unique = ordered[starts]
        # Sums in row order, as np.add.at would: the same weights to the last bit.
        merged = np.bincount(inverse, weights * share[rules[:, 0]], minlength=len(unique))
        return unique, merged

    b = grammar.binary_rules
    binary, binary_w = merge(b, grammar.binary_weights, [coarse_of[b[:, i]] for i in range(3)])
    u = grammar.unary_rules
    unary, unary_w = merge(u, grammar.unary_weights, [coarse_of[u[:, 0]], coarse_of[u[:, 1]]])
    lex = grammar.lexical_rules
    lexical, lexical_w = merge(lex, grammar.lexical_weights, [coarse_of[lex[:, 0]], lex[:, 1]])
    # Merging can turn a unary chain a -> b into a loop A -> A; drop such rules
    # (they only rescale A's inside score by a constant the pruning ignores).
    keep = unary[:, 0] != unary[:, 1]
    unary, unary_w = unary[keep], unary_w[keep]
    coarse = LPCFG(
        SymbolTable(names, kinds),
        np.ones(n_coarse, dtype=np.int32),
        binary_rules=binary,
        binary_offsets=np.arange(len(binary) + 1, dtype=np.int64),
        binary_weights=binary_w,
        unary_rules=unary,
        unary_offsets=np.arange(len(unary) + 1, dtype=np.int64),
        unary_weights=unary_w,
        lexical_rules=lexical,
        lexical_offsets=np.arange(len(lexical) + 1, dtype=np.int64),
        lexical_weights=lexical_w,
        words=grammar.words,
    )
    return SymbolMerge(coarse, coarse_of.astype(np.int32), share)


def _coarse_symbols(symbols: SymbolTable, coarse_names: Sequence[str]):
    index: dict[tuple[str, str], int] = {}
    names: list[str] = []
    kinds: list[str] = []
    coarse_of = np.zeros(len(symbols), dtype=np.int64)
    taken: dict[str, str] = {}
    for fine in range(len(symbols)):
        kind = symbols.kind(fine)
        name = str(coarse_names[fine])
        key = (name, kind)
        if key not in index:
            if taken.setdefault(name, kind) != kind:
                name = f"{name}#{kind}"
            index[key] = len(names)
            names.append(name)
            kinds.append(kind)
        coarse_of[fine] = index[key]
    return names, kinds, coarse_of


def _check_one_state(grammar: LPCFG) -> None:
    if (grammar.n_states != 1).any():
        raise GrammarError(Errors.E133.format(detail="a one-state grammar (project() it first)"))
