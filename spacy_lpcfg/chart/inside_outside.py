"""Inside-outside over a (pruned) chart for latent-state grammars: Z, marginals and
anchored rule posteriors, the inputs of every sum-based decoder. One-state grammars
(MLE grammars, pruning levels) run on their own kernels (one_state_kernels)."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from ..grammar import LPCFG, LexicalScores
from .inputs import (
    Mask,
    chart_index,
    latent_rule_args,
    lexical_arrays,
    mask_args,
    one_state_rule_args,
)
from .latent_kernels import latent_inside, latent_outside
from .one_state_kernels import one_state_inside, one_state_outside
from .scaled import EMPTY


@dataclass(frozen=True)
class AnchoredRules:
    """Posteriors of anchored rules, summed over latent states and divided by Z.

    rules (np.ndarray): int32[K], rule ids (rows of grammar.binary_rules or unary_rules).
    starts, ends (np.ndarray): int32[K], the parent's half-open span.
    scores (np.ndarray): float64[K]; negative values are possible with signed grammars.
    splits (np.ndarray | None): int32[K], the split point k (left child [start, k),
        right child [k, end)); None for unary rules.
    items (np.ndarray | None): int32 (K, 3) (parent, left, right) or (K, 2) (parent,
        child): the chart items of each rule, as indices of ChartPosteriors.item_*.
    """

    rules: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    scores: np.ndarray
    splits: np.ndarray | None = None
    items: np.ndarray | None = None


@dataclass(frozen=True)
class ChartPosteriors:
    """The result of inside_outside for one sentence.

    n_words (int): sentence length.
    log_abs_z (float): log |Z|; -inf when there is no parse.
    z_sign (float): sign of Z: 1.0 or -1.0, and 0.0 when there is no parse.
    item_symbols, item_starts, item_ends (np.ndarray): int32[N], the chart items
        (symbol, half-open span) that some derivation of their span reaches (the
        one-state kernels leave out intermediate items with no right sibling, which
        no parse can use).
    marginals (np.ndarray): float64[N], mu(a, i, j) = sum_h outside * inside / Z per item.
    binary (AnchoredRules): posteriors of (a -> b c, i, k, j), with splits.
    unary (AnchoredRules): posteriors of (a -> b, i, j), root rules TOP -> X included.
    """

    n_words: int
    log_abs_z: float
    z_sign: float
    item_symbols: np.ndarray
    item_starts: np.ndarray
    item_ends: np.ndarray
    marginals: np.ndarray
    binary: AnchoredRules
    unary: AnchoredRules

    @property
    def has_parse(self) -> bool:
        """False when no derivation survives (Z = 0): the caller should fall back."""
        return self.z_sign != 0.0

    def dense_marginals(self, n_symbols: int) -> np.ndarray:
        """float64 (n+1, n+1, n_symbols): the marginals scattered into a dense array."""
        dense = np.zeros((self.n_words + 1, self.n_words + 1, n_symbols))
        dense[self.item_starts, self.item_ends, self.item_symbols] = self.marginals
        return dense


def inside_outside(
    grammar: LPCFG,
    lexical: LexicalScores,
    mask: Mask = None,
    *,
    rule_posteriors: bool = True,
) -> ChartPosteriors:
    """Run inside and outside for one sentence over the items the mask allows.

    grammar (LPCFG): any latent grammar; weights may be negative. One-state
        grammars run on specialised kernels (one_state_kernels), the same chart.
    lexical (LexicalScores): the preterminal scores of the sentence.
    mask (np.ndarray | MergedMask | None): bool (n+1, n+1, n_symbols), mask[i, j, a]
        allows item (a, i, j); or a MergedMask over merged symbols. None allows
        every item.
    rule_posteriors (bool): also compute anchored rule posteriors. Defaults to True.
    RETURNS (ChartPosteriors): Z, item marginals and anchored rule posteriors.
    """
    n = lexical.n_words
    lex = lexical_arrays(grammar, lexical)
    masks = mask_args(grammar, mask, n)
    if grammar.max_states == 1:
        return _one_state_chart(grammar, n, lex, masks, rule_posteriors)
    rules = latent_rule_args(grammar)
    (table, cell_first, cell_count, symbols, starts, ends, offsets, exponents,
     values, start_bits, end_bits) = latent_inside(n, *rules, *lex, *masks)  # fmt: skip
    top = table[0, n, grammar.root]
    z_mantissa = values[offsets[top]] if top >= 0 else 0.0
    if top < 0 or exponents[top] == EMPTY or z_mantissa == 0.0:
        return _no_parse(n)
    outside = latent_outside(
        n, grammar.root, *rules, table, cell_first, cell_count, symbols, offsets, exponents,
        values, start_bits, end_bits, z_mantissa, exponents[top], rule_posteriors,
    )  # fmt: skip
    return _posteriors(n, z_mantissa, exponents[top], symbols, starts, ends, outside)


def _one_state_chart(grammar, n, lex, masks, rule_posteriors) -> ChartPosteriors:
    rules = one_state_rule_args(grammar)
    table_buffer, bit_buffer, edge_buffer = _take_scratch(
        np.uint16 if grammar.n_symbols < 65535 else np.int32
    )
    (table, cell_first, cell_count, symbols, starts, ends, exponents, values, bits,
     table_buffer, bit_buffer, cell_edges, n_edges) = one_state_inside(
        n, grammar.n_symbols, *rules, *chart_index(grammar).context_args(), *lex, *masks,
        table_buffer, bit_buffer, edge_buffer,
    )  # fmt: skip
    try:
        if table[0, n, grammar.root] == 0:
            return _no_parse(n)
        top = cell_first[0, n] + table[0, n, grammar.root] - 1
        if values[top] == 0.0:
            return _no_parse(n)
        outside = one_state_outside(
            n, grammar.root, *rules, table, cell_first, cell_count, symbols, starts, ends,
            exponents, values, bits, edge_buffer[:n_edges], cell_edges, values[top],
            exponents[top], rule_posteriors,
        )  # fmt: skip
    finally:
        _return_scratch(table_buffer, bit_buffer, edge_buffer)
    return _posteriors(n, values[top], exponents[top], symbols, starts, ends, outside)


# The item table, bitsets and hyperedge buffer of the one-state kernels, reused by
# the next sentence of the same thread: fresh memory costs a page fault per 4 KiB, a
# large part of a sparse pass. Tables and bitsets above _KEEP_BYTES (a long sentence
# on a large grammar) are not kept. The hyperedge buffer has a fixed capacity
# (_EDGE_CAPACITY, 16 bytes each); its pages are only touched as far as a sentence
# fills it, and the outside pass searches again the hyperedges that did not fit.
_SCRATCH = threading.local()
_KEEP_BYTES = 64 << 20
_EDGE_CAPACITY = 1 << 22


def _take_scratch(table_type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(table buffer of table_type, uint64 bitset buffer, int32 (C, 4) hyperedge
    buffer), taken out of the thread's scratch while in use."""
    if not hasattr(_SCRATCH, "tables"):
        _SCRATCH.tables, _SCRATCH.bits, _SCRATCH.edges = {}, None, None
    table = _SCRATCH.tables.pop(np.dtype(table_type), None)
    bits, _SCRATCH.bits = _SCRATCH.bits, None
    edges, _SCRATCH.edges = _SCRATCH.edges, None
    return (
        np.empty(0, table_type) if table is None else table,
        np.empty(0, np.uint64) if bits is None else bits,
        np.empty((_EDGE_CAPACITY, 4), np.int32) if edges is None else edges,
    )


def _return_scratch(table: np.ndarray, bits: np.ndarray, edges: np.ndarray) -> None:
    if table.nbytes <= _KEEP_BYTES:
        _SCRATCH.tables[table.dtype] = table
    if bits.nbytes <= _KEEP_BYTES:
        _SCRATCH.bits = bits
    _SCRATCH.edges = edges


def _posteriors(n, z_mantissa, z_exponent, symbols, starts, ends, outside) -> ChartPosteriors:
    marginals, binary, unary = outside
    rules, b_starts, splits, b_ends, scores, b_items = binary
    u_rules, u_starts, u_ends, u_scores, u_items = unary
    return ChartPosteriors(
        n_words=n,
        log_abs_z=math.log(abs(z_mantissa)) + float(z_exponent) * math.log(2.0),
        z_sign=math.copysign(1.0, z_mantissa),
        item_symbols=symbols,
        item_starts=starts,
        item_ends=ends,
        marginals=marginals,
        binary=AnchoredRules(rules, b_starts, b_ends, scores, splits, b_items),
        unary=AnchoredRules(u_rules, u_starts, u_ends, u_scores, None, u_items),
    )


def _no_parse(n_words: int) -> ChartPosteriors:
    ints = np.zeros(0, dtype=np.int32)
    floats = np.zeros(0)
    return ChartPosteriors(
        n_words=n_words,
        log_abs_z=-math.inf,
        z_sign=0.0,
        item_symbols=ints,
        item_starts=ints,
        item_ends=ints,
        marginals=floats,
        binary=AnchoredRules(ints, ints, ints, floats, ints, np.zeros((0, 3), dtype=np.int32)),
        unary=AnchoredRules(ints, ints, ints, floats, None, np.zeros((0, 2), dtype=np.int32)),
    )
