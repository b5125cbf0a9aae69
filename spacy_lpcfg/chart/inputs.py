"""Checking and packing the arguments of the chart kernels."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.sparse_weights import SparseWeights

T = TypeVar("T")
_NO_MASK = np.ones((1, 1, 8), dtype=np.bool_)  # placeholder: kernels take an array either way


@dataclass(frozen=True)
class MergedMask:
    """Allowed chart items given over merged symbols, e.g. the items a coarser
    pruning level kept: item (a, i, j) is allowed when ``mask[i, j, columns[a]]``.
    Kernels read it as it is, without expanding it to the grammar's symbols.

    mask (np.ndarray): bool (n+1, n+1, K), K > every column (padding allowed).
    columns (np.ndarray): int32[S], the mask column of each grammar symbol.
    members (tuple[np.ndarray, np.ndarray] | None): ``column_members(columns, K)``
        when the caller has it already (a pruning cascade computes it once).
    """

    mask: np.ndarray
    columns: np.ndarray
    members: tuple[np.ndarray, np.ndarray] | None = None

    def dense(self) -> np.ndarray:
        """bool (n+1, n+1, S): the same mask over the grammar's symbols."""
        return self.mask[:, :, self.columns]


Mask = np.ndarray | MergedMask | None


def column_members(columns: np.ndarray, n_columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[K+1], members int32[S]): the symbols of column k are
    ``members[offsets[k]:offsets[k + 1]]``, increasing.

    RAISES ValueError: a column is not in [0, n_columns)."""
    if len(columns) and not 0 <= columns.min() <= columns.max() < n_columns:
        detail = f"columns must map the symbols to {n_columns} mask columns"
        raise ValueError(Errors.E201.format(detail=detail))
    members = np.argsort(columns, kind="stable").astype(np.int32)
    offsets = np.zeros(n_columns + 1, dtype=np.int64)
    np.cumsum(np.bincount(columns, minlength=n_columns), out=offsets[1:])
    return offsets, members


@dataclass(frozen=True)
class ChartIndex:
    """Structures of a grammar the chart kernels read, built once per grammar.

    binary_parents (np.ndarray): int32[k], the symbols that have binary rules, increasing.
    has_binary (np.ndarray): bool[S], the same as a mask.
    left_only (np.ndarray): bool[S], the symbols that are only ever the left child of
        a binary rule (never a right or unary child, nor the root): the intermediate
        symbols of a binarisation that puts them on the left and names their right
        sibling in their label.
    left_symbols (np.ndarray): int32[...], the same as a list, increasing.
    sibling_offsets, siblings (np.ndarray): int64[S+1], int32[...]: the right siblings of
        symbol a in its binary rules are ``siblings[sibling_offsets[a]:sibling_offsets[a+1]]``.
    group_offsets, group_lefts, group_rules (np.ndarray): int64[S+1], int32[G],
        int64[G+1]: the binary rules grouped by (parent, left child). The groups of
        parent a are ``group_offsets[a]:group_offsets[a+1]``; group g has left child
        ``group_lefts[g]`` and rules ``group_rules[g]:group_rules[g+1]`` (rows of
        binary_rules, which are sorted by parent, then children), so the one-state
        kernels skip the rules of a left child absent from the chart at once.
    """

    binary_parents: np.ndarray
    has_binary: np.ndarray
    left_only: np.ndarray
    left_symbols: np.ndarray
    sibling_offsets: np.ndarray
    siblings: np.ndarray
    group_offsets: np.ndarray
    group_lefts: np.ndarray
    group_rules: np.ndarray

    def context_args(self) -> tuple:
        """(left_symbols, sibling_offsets, siblings): what the one-state inside pass
        needs to tell whether an intermediate symbol can be in a parse."""
        return self.left_symbols, self.sibling_offsets, self.siblings


_CACHE: dict[tuple[int, str], tuple[weakref.ref, object]] = {}


def per_grammar(build: Callable[[LPCFG], T]) -> Callable[[LPCFG], T]:
    """Decorator: ``build(grammar)`` is computed once per grammar object and kept while
    the grammar lives (grammars are immutable; parsers call the kernels per sentence)."""

    @functools.wraps(build)
    def cached(grammar: LPCFG) -> T:
        key = (id(grammar), build.__qualname__)
        found = _CACHE.get(key)
        if found is not None and found[0]() is grammar:
            return cast(T, found[1])
        value = build(grammar)

        def forget(_: weakref.ref, key: tuple[int, str] = key) -> None:
            _CACHE.pop(key, None)

        _CACHE[key] = (weakref.ref(grammar, forget), value)
        return value

    return cached


@per_grammar
def chart_index(grammar: LPCFG) -> ChartIndex:
    """The grammar's ChartIndex."""
    n_symbols = grammar.n_symbols
    rules = grammar.binary_rules
    left_only = np.ones(n_symbols, dtype=bool)
    left_only[rules[:, 2]] = False
    left_only[grammar.unary_rules[:, 1]] = False
    left_only[grammar.root] = False
    pairs = np.unique(rules[:, 1:].astype(np.int64), axis=0)  # (left, right), sorted
    offsets = np.zeros(n_symbols + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=n_symbols), out=offsets[1:])
    has_binary = np.diff(grammar.binary_parent_offsets) > 0
    starts = np.ones(len(rules), dtype=bool)  # rule r starts a (parent, left) group
    starts[1:] = (rules[1:, :2] != rules[:-1, :2]).any(axis=1)
    group_rules = np.append(np.flatnonzero(starts), len(rules)).astype(np.int64)
    group_offsets = np.zeros(n_symbols + 1, dtype=np.int64)
    np.cumsum(np.bincount(rules[starts, 0], minlength=n_symbols), out=group_offsets[1:])
    return ChartIndex(
        binary_parents=np.flatnonzero(has_binary).astype(np.int32),
        has_binary=has_binary,
        left_only=left_only,
        left_symbols=np.flatnonzero(left_only).astype(np.int32),
        sibling_offsets=offsets,
        siblings=pairs[:, 1].astype(np.int32),
        group_offsets=group_offsets,
        group_lefts=rules[starts, 1].astype(np.int32),
        group_rules=group_rules,
    )


SPARSE_DENSITY = 0.25
"""A binary rule's (m_a, m_b, m_c) block with at most this fraction of non-zero cells is
contracted cell by cell (the latent kernels); denser blocks stay dense loops, which are
about three times cheaper per cell. Clustering grammars are ~2% non-zero, spectral
ones dense."""


@dataclass(frozen=True)
class SparseBlocks:
    """The non-zero cells of the sparse binary rule blocks, for the latent kernels.

    sparse (np.ndarray): bool[R2], the rules whose block is sparse (``SPARSE_DENSITY``).
    offsets (np.ndarray): int64[R2+1]; the cells of rule r are ``offsets[r]:offsets[r+1]``
        (none for dense rules).
    parent_states (np.ndarray): uint16[K], h1 of each cell (unsigned: the kernels index
        with them, and numba checks signed indices for wrap-around).
    child_states (np.ndarray): uint32[K], h2 * m_c + h3 of each cell.
    left_states, right_states (np.ndarray): uint16[K], h2 and h3 of each cell.
    weights (np.ndarray): float64[K].
    """

    sparse: np.ndarray
    offsets: np.ndarray
    parent_states: np.ndarray
    child_states: np.ndarray
    left_states: np.ndarray
    right_states: np.ndarray
    weights: np.ndarray

    def as_args(self) -> tuple:
        """The arrays in the order the latent kernels take them."""
        return (
            self.sparse,
            self.offsets,
            self.parent_states,
            self.child_states,
            self.left_states,
            self.right_states,
            self.weights,
        )


@per_grammar
def sparse_blocks(grammar: LPCFG) -> SparseBlocks:
    """The grammar's SparseBlocks."""
    rules, offsets = grammar.binary_rules, grammar.binary_offsets
    sizes = np.diff(offsets)
    nonzero, runs = _nonzero_cells(grammar)
    counts = np.diff(runs)
    sparse = (counts <= SPARSE_DENSITY * sizes) & (sizes > 1)
    kept = np.zeros(len(rules) + 1, dtype=np.int64)
    np.cumsum(np.where(sparse, counts, 0), out=kept[1:])
    keep = np.repeat(sparse, counts)
    rule_of = np.repeat(np.arange(len(rules)), kept[1:] - kept[:-1])
    local = nonzero.positions[keep] - offsets[rule_of]
    child_sizes = (grammar.n_states[rules[:, 1]] * grammar.n_states[rules[:, 2]]).astype(np.int64)
    block = child_sizes[rule_of]
    right_sizes = grammar.n_states[rules[rule_of, 2]].astype(np.int64)
    child = local % block
    return SparseBlocks(
        sparse=sparse,
        offsets=kept,
        parent_states=(local // block).astype(np.uint16),
        child_states=child.astype(np.uint32),
        left_states=(child // right_sizes).astype(np.uint16),
        right_states=(child % right_sizes).astype(np.uint16),
        weights=np.array(nonzero.values[keep], dtype=np.float64),
    )


@per_grammar
def dense_blocks(grammar: LPCFG) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[R2+1], weights float64) of the binary blocks that are not sparse
    (``sparse_blocks``): rule r's block is ``weights[offsets[r]:offsets[r+1]]`` as in
    ``grammar.binary_weights``, and empty for sparse rules. A grammar that keeps dense
    weights shares them; one that keeps them sparse gets only its dense blocks."""
    if grammar.binary_sparse is None:
        return grammar.binary_offsets, grammar.binary_weights
    offsets = grammar.binary_offsets
    dense = ~sparse_blocks(grammar).sparse
    sizes = np.where(dense, np.diff(offsets), 0)
    compact = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=compact[1:])
    nonzero, runs = _nonzero_cells(grammar)
    weights = np.zeros(compact[-1])
    # Rule by rule, each cell moved by its rule's shift: no temporary of the grammar's
    # size, whose fresh pages a parser's first sentence would wait for.
    for rule in np.flatnonzero(dense).tolist():
        cells = slice(runs[rule], runs[rule + 1])
        weights[nonzero.positions[cells] - (offsets[rule] - compact[rule])] = nonzero.values[cells]
    return compact, weights


@per_grammar
def one_state_rule_args(grammar: LPCFG) -> tuple:
    """The rules as the one-state kernels take them (inside and outside): one weight per
    rule, binary rules grouped by (parent, left child) (ChartIndex)."""
    index = chart_index(grammar)
    return (
        grammar.binary_rules,
        grammar.binary_weights,
        index.group_offsets,
        index.group_lefts,
        index.group_rules,
        *_unary_args(grammar, with_offsets=False),
    )


@per_grammar
def latent_rule_args(grammar: LPCFG) -> tuple:
    """The rules as the latent kernels take them (inside and outside): the dense
    blocks (``dense_blocks``), then the sparse ones (``SparseBlocks``)."""
    dense_offsets, dense_weights = dense_blocks(grammar)
    return (
        grammar.n_states,
        grammar.max_states,
        grammar.binary_rules,
        dense_offsets,
        dense_weights,
        grammar.binary_parent_offsets,
        *sparse_blocks(grammar).as_args(),
        *_unary_args(grammar, with_offsets=True),
    )


@per_grammar
def viterbi_rule_args(grammar: LPCFG) -> tuple:
    """The rules as the Viterbi kernel takes them: log weights."""
    return (
        grammar.n_states,
        grammar.max_states,
        grammar.binary_rules,
        grammar.binary_offsets,
        grammar.log_binary_weights,
        grammar.binary_parent_offsets,
        grammar.unary_rules,
        grammar.unary_offsets,
        grammar.log_unary_weights,
        grammar.unary_parent_offsets,
        grammar.unary_parent_order,
    )


def _unary_args(grammar: LPCFG, with_offsets: bool) -> tuple:
    """(unary_rules, [unary_offsets,] weights, rules by parent, parents in topological
    order): one weight per rule without the offsets (one-state grammars)."""
    offsets = (grammar.unary_offsets,) if with_offsets else ()
    return (
        grammar.unary_rules,
        *offsets,
        grammar.unary_weights,
        grammar.unary_parent_offsets,
        grammar.unary_parent_order,
    )


@per_grammar
def _nonzero_cells(grammar: LPCFG) -> tuple[SparseWeights, np.ndarray]:
    """The grammar's non-zero binary weights and where each rule's run of them starts
    (positions increase): rule r's are ``runs[r]:runs[r + 1]``."""
    nonzero = grammar.nonzero_binary_weights()
    return nonzero, np.searchsorted(nonzero.positions, grammar.binary_offsets)


def binary_parents(grammar: LPCFG) -> np.ndarray:
    """int32[k]: the symbols that have binary rules, increasing."""
    return chart_index(grammar).binary_parents


def binary_column_members(
    grammar: LPCFG, columns: np.ndarray, column_offsets: np.ndarray, column_members: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, members) of ``mask_arrays`` keeping only the symbols with binary rules:
    only they are parents of binary rules."""
    column_members = column_members[chart_index(grammar).has_binary[column_members]]
    offsets = np.zeros_like(column_offsets)
    np.cumsum(
        np.bincount(columns[column_members], minlength=len(column_offsets) - 1),
        out=offsets[1:],
    )
    return offsets, column_members


def lexical_arrays(grammar: LPCFG, lexical: LexicalScores) -> tuple:
    """(positions, tags, offsets, values) after checking them against the grammar."""
    lexical.check(grammar)
    return lexical.positions, lexical.tags, lexical.offsets, lexical.values


def mask_args(grammar: LPCFG, mask: Mask, n_words: int) -> tuple:
    """The mask as the inside kernels take it: (binary_parents, has_mask, mask,
    mask_words, columns, column_offsets, column_members) with ``mask_arrays``'
    arrays, ``mask_words`` the mask viewed as uint64 (8 columns a word), and the
    column members kept to the symbols with binary rules (``binary_column_members``):
    the parents of binary rules a cell tries."""
    has_mask, array, columns, offsets, members = mask_arrays(mask, n_words, grammar.n_symbols)
    offsets, members = binary_column_members(grammar, columns, offsets, members)
    return (
        binary_parents(grammar),
        has_mask,
        array,
        array.view(np.uint64),
        columns,
        offsets,
        members,
    )


def mask_arrays(mask: Mask, n_words: int, n_symbols: int) -> tuple:
    """(has_mask, mask bool (n+1, n+1, K'), columns int32[S], column_offsets int64[K+1],
    column_members int32[S]) for an optional pruning mask: item (a, i, j) (half-open
    span) may be used when ``mask[i, j, columns[a]]``; the symbols of column K are
    ``column_members[column_offsets[K]:column_offsets[K + 1]]``. The mask's K columns
    are padded with False to a multiple of 8 (K'), so that kernels can view it as
    uint64 words.

    mask (np.ndarray | MergedMask | None): a bool (n+1, n+1, S) array over the
        grammar's symbols, a MergedMask, or None for no pruning.
    """
    if mask is None:
        identity = np.arange(n_symbols, dtype=np.int32)
        return False, _NO_MASK, identity, np.arange(n_symbols + 1, dtype=np.int64), identity
    if isinstance(mask, MergedMask):
        array, columns = np.asarray(mask.mask), np.asarray(mask.columns, dtype=np.int32)
        n_columns = array.shape[-1] if array.ndim == 3 else 0
        if columns.shape != (n_symbols,):
            detail = f"columns must map {n_symbols} symbols to the mask's columns"
            raise ValueError(Errors.E201.format(detail=detail))
        members = mask.members
        if members is not None and len(members[0]) - 1 > n_columns:
            detail = f"the columns index has more than the mask's {n_columns} columns"
            raise ValueError(Errors.E201.format(detail=detail))
    else:
        array = np.asarray(mask)
        n_columns = n_symbols
        columns = np.arange(n_symbols, dtype=np.int32)
        members = None
    expected = (n_words + 1, n_words + 1, n_columns)
    if array.shape != expected or array.dtype != np.bool_:
        raise ValueError(
            Errors.E201.format(
                detail=f"got {array.dtype} array of shape {array.shape}, expected bool {expected}"
            )
        )
    offsets, member_ids = members or column_members(columns, n_columns)
    if n_columns % 8:
        padded = np.zeros(expected[:2] + (n_columns + 8 - n_columns % 8,), dtype=np.bool_)
        padded[:, :, :n_columns] = array
        array = padded
    return True, np.ascontiguousarray(array), columns, offsets, member_ids
