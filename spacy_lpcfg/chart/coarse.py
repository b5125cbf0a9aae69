"""The dense coarse pass: inside-outside of a one-state grammar over every chart item.

This pass decides pruning, so it is written for speed. Charts are stored by
width, ``chart[width, symbol, start]``, and all the cells of one width are
computed together: for a rule and a split offset d, the left children
``chart[d, b, :]`` and the right children ``chart[width - d, c, d:]`` of every
cell are contiguous rows, so the innermost loop runs over cells and
vectorises (pytorch-struct's batching by width, without its strided copies).
Each cell has one scale exponent (powers of two) shared by its symbols;
values may be signed. A symbol whose row is all zero at a width (a
preterminal above width 1, say) is skipped per rule. Memory: about six dense
(n+1, n+1, S) float64 arrays (120 MB for n = 50, S = 1000); bound it with the
sentence length."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from .inputs import lexical_arrays

EMPTY = -(1 << 40)  # exponent of an all-zero cell
MIN_SHIFT = -1100
# Values below 2**FLUSH times their cell's largest are set to zero, and so are split
# points whose scale is below 2**FLUSH of the best one. Such items cannot matter for
# pruning, and products of them would be subnormal numbers, 100 times slower.
FLUSH = -300
_FAST = {"reassoc", "contract"}  # vectorised dot products; keeps inf/nan semantics


@dataclass(frozen=True)
class CoarsePosteriors:
    """The result of coarse_posteriors.

    posteriors (np.ndarray): float64 (n+1, n+1, S), posteriors[i, j, a] = mu(a, i, j)
        for the half-open span [i, j) (0 where j <= i); all zero when there is no parse.
    log_abs_z (float): log |Z|; -inf when there is no parse.
    z_sign (float): 1.0 or -1.0, and 0.0 when there is no parse.
    """

    posteriors: np.ndarray
    log_abs_z: float
    z_sign: float

    @property
    def has_parse(self) -> bool:
        return self.z_sign != 0.0


def coarse_posteriors(grammar: LPCFG, lexical: LexicalScores) -> CoarsePosteriors:
    """Anchored symbol posteriors of a one-state grammar, with no pruning.

    grammar (LPCFG): a grammar with n_states == 1 everywhere (grammar.project()).
    lexical (LexicalScores): one-state preterminal scores (LexicalScores.project()).
    RETURNS (CoarsePosteriors): dense posteriors the caller thresholds into a mask.
    """
    if grammar.max_states != 1:
        raise ValueError(Errors.E119)
    positions, tags, offsets, values = lexical_arrays(grammar, lexical)
    n = lexical.n_words
    # Inside reads the rules grouped by left child: consecutive rules reuse its row.
    order = grammar.binary_left_order
    inside, inside_exponents = _coarse_inside(
        n, grammar.n_symbols, grammar.binary_rules[order], grammar.binary_weights[order],
        grammar.unary_rules, grammar.unary_weights, grammar.unary_parent_offsets,
        grammar.unary_parent_order, positions, tags, values,
    )  # fmt: skip
    z_mantissa = inside[n, grammar.root, 0]
    z_exponent = inside_exponents[n, 0]
    shape = (n + 1, n + 1, grammar.n_symbols)
    if z_mantissa == 0.0:
        return CoarsePosteriors(np.zeros(shape), -math.inf, 0.0)
    posteriors = _coarse_outside(
        n, grammar.root, grammar.binary_rules, grammar.binary_weights,
        grammar.unary_rules, grammar.unary_weights, grammar.unary_parent_offsets,
        grammar.unary_parent_order, inside, inside_exponents, z_mantissa, z_exponent,
    )  # fmt: skip
    log_abs_z = math.log(abs(z_mantissa)) + float(z_exponent) * math.log(2.0)
    return CoarsePosteriors(posteriors, log_abs_z, math.copysign(1.0, z_mantissa))


@njit(cache=True, nogil=True)
def _times_pow2(value, exponent):
    return 0.0 if exponent < MIN_SHIFT else math.ldexp(value, min(exponent, 2000))


@njit(cache=True, nogil=True)
def _store_cells(accumulator, top, n_cells, width, chart, exponents, nonzero):
    """Normalise each cell x (max |value| in [0.5, 1)) of accumulator[:, :n_cells] and
    write it to chart[width, :, x] with exponent top[x] + shift."""
    n_symbols = accumulator.shape[0]
    for x in range(n_cells):
        largest = 0.0
        for a in range(n_symbols):
            largest = max(largest, abs(accumulator[a, x]))
        if largest == 0.0 or top[x] == EMPTY:
            exponents[width, x] = EMPTY
            continue
        shift = math.frexp(largest)[1]
        factor = math.ldexp(1.0, -shift)
        for a in range(n_symbols):
            value = accumulator[a, x] * factor
            if abs(value) < 2.0**FLUSH:
                value = 0.0
            chart[width, a, x] = value
            nonzero[width, a] = nonzero[width, a] or value != 0.0
        exponents[width, x] = top[x] + shift


@njit(cache=True, nogil=True)
def _align(exponents_1, exponents_2, n_offsets, n_cells, top, factors):
    """Per cell x: top[x] = max over offsets d of exponents_1[d, x] + exponents_2[d, x],
    factors[d, x] = 2**(that sum - top[x]) (0 for empty cells)."""
    for x in range(n_cells):
        top[x] = EMPTY
        for d in range(1, n_offsets):
            if exponents_1[d, x] != EMPTY and exponents_2[d, x] != EMPTY:
                top[x] = max(top[x], exponents_1[d, x] + exponents_2[d, x])
        for d in range(1, n_offsets):
            factors[d, x] = 0.0
            if top[x] != EMPTY and exponents_1[d, x] != EMPTY and exponents_2[d, x] != EMPTY:
                shift = exponents_1[d, x] + exponents_2[d, x] - top[x]
                factors[d, x] = 0.0 if shift < FLUSH else math.ldexp(1.0, shift)


@njit(cache=True, nogil=True)
def _unary_closure(accumulator, n_cells, unary_rules, unary_weights, unary_by_parent, order,
                   downward):  # fmt: skip
    """Inside (upward, children first) or outside (downward, parents first) unary sums."""
    for q in range(order.shape[0]):
        p = order[order.shape[0] - 1 - q] if downward else order[q]
        for r in range(unary_by_parent[p], unary_by_parent[p + 1]):
            c = unary_rules[r, 1]
            w = unary_weights[r]
            for x in range(n_cells):
                if downward:
                    accumulator[c, x] += w * accumulator[p, x]
                else:
                    accumulator[p, x] += w * accumulator[c, x]


@njit(cache=True, nogil=True)
def _scale_rows(source, first, n_offsets, n_cells, shift, factors, nonzero, scaled):
    """scaled[d, a, x] = source[first + d, a, x - shift * d] * factors[d, x] (0 where that
    cell does not exist); rows with nonzero[first + d, a] False are left alone."""
    for d in range(1, n_offsets):
        for a in range(source.shape[1]):
            if not nonzero[first + d, a]:
                continue
            for x in range(n_cells):
                y = x - shift * d
                scaled[d, a, x] = source[first + d, a, y] * factors[d, x] if y >= 0 else 0.0


@njit(cache=True, nogil=True, fastmath=_FAST)
def _inside_width(width, n_cells, rules, weights, chart, nonzero, scaled_left, accumulator):
    """accumulator[a, x] += w * sum_d scaled_left[d, b, x] * chart[width - d, c, x + d] for
    every rule a -> b c: all cells (x, x + width) at once. The loop over d is outermost
    so that the two chart planes it reads stay in cache while the rules go by."""
    for d in range(1, width):
        for r in range(rules.shape[0]):
            b = rules[r, 1]
            c = rules[r, 2]
            if not (nonzero[d, b] and nonzero[width - d, c]):
                continue
            w = weights[r]
            target = accumulator[rules[r, 0]]
            left = scaled_left[d, b]
            right = chart[width - d, c, d:]
            for x in range(n_cells):
                target[x] += w * left[x] * right[x]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _outside_side(width, n_cells, rules, weights, target_column, sibling_column,
                  outside_nonzero, inside, inside_nonzero, scaled_parents, sibling_start,
                  target_shift, accumulator):  # fmt: skip
    """One half of the outside sums of all cells (x, x + width), over parents of width
    width + d (one call per half: a single loop nest doing both runs 3 times slower).

    As a left child (target_column 1, sibling_column 2, sibling_start = width,
    target_shift 0): parent (x, x + width + d), sibling (x + width, x + width + d).
    As a right child (target_column 2, sibling_column 1, sibling_start = 0,
    target_shift 1): parent (x - d, x + width), sibling (x - d, x).
    The parents' outside rows come pre-scaled and aligned with x (scaled_parents).
    Targets whose inside row is all zero at this width (preterminals above width 1,
    say) are skipped: no derivation uses them, so their outside is never needed
    (with signed weights an inside row that cancels to exactly zero is treated alike).
    """
    for d in range(1, n_cells):
        for r in range(rules.shape[0]):
            a = rules[r, 0]
            if not outside_nonzero[width + d, a]:
                continue
            sibling = rules[r, sibling_column]
            target = rules[r, target_column]
            if not (inside_nonzero[d, sibling] and inside_nonzero[width, target]):
                continue
            w = weights[r]
            target_row = accumulator[target, target_shift * d :]
            parent_row = scaled_parents[d, a, target_shift * d :]
            sibling_row = inside[d, sibling, sibling_start:]
            for x in range(n_cells - d):
                target_row[x] += w * parent_row[x] * sibling_row[x]


@njit(cache=True, nogil=True)
def _coarse_inside(n, n_symbols, rules_by_left, weights_by_left, unary_rules, unary_weights,
                   unary_by_parent, unary_parent_order, lex_positions, lex_tags, lex_values):  # fmt: skip
    """RETURNS (chart float64 (n+1, S, n+1) [width, symbol, start], exponents int64 (n+1, n+1)
    [width, start])."""
    chart = np.zeros((n + 1, n_symbols, n + 1))
    exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    accumulator = np.zeros((n_symbols, n + 1))
    top = np.zeros(n + 1, np.int64)
    factors = np.zeros((n + 1, n + 1))
    # Split offset d of cell x pairs cells (d, x) and (width - d, x + d): exponents
    # shifted per d so that _align sees them side by side.
    shifted = np.full((n + 1, n + 1), EMPTY, np.int64)
    scaled_left = np.zeros((n + 1, n_symbols, n + 1))
    for width in range(1, n + 1):
        n_cells = n - width + 1
        accumulator[:, :] = 0.0
        if width == 1:
            for e in range(lex_positions.shape[0]):
                accumulator[lex_tags[e], lex_positions[e]] += lex_values[e]
            top[:] = 0
        else:
            for d in range(1, width):
                for x in range(n_cells):
                    shifted[d, x] = exponents[width - d, x + d]
            _align(exponents, shifted, width, n_cells, top, factors)
            _scale_rows(chart, 0, width, n_cells, 0, factors, nonzero, scaled_left)
            _inside_width(
                width,
                n_cells,
                rules_by_left,
                weights_by_left,
                chart,
                nonzero,
                scaled_left,
                accumulator,
            )
        _unary_closure(
            accumulator,
            n_cells,
            unary_rules,
            unary_weights,
            unary_by_parent,
            unary_parent_order,
            False,
        )
        _store_cells(accumulator, top, n_cells, width, chart, exponents, nonzero)
    return chart, exponents


@njit(cache=True, nogil=True)
def _coarse_outside(n, root, binary_rules, binary_weights, unary_rules, unary_weights,
                    unary_by_parent, unary_parent_order, inside, inside_exponents,
                    z_mantissa, z_exponent):  # fmt: skip
    """RETURNS posteriors float64 (n+1, n+1, S) [start, end, symbol]."""
    n_symbols = inside.shape[1]
    outside = np.zeros((n + 1, n_symbols, n + 1))
    exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    inside_nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    for width in range(1, n + 1):
        for a in range(n_symbols):
            for x in range(n - width + 1):
                inside_nonzero[width, a] = inside_nonzero[width, a] or inside[width, a, x] != 0.0
    outside_nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    from_left = np.zeros((n_symbols, n + 1))
    from_right = np.zeros((n_symbols, n + 1))
    top_left = np.zeros(n + 1, np.int64)
    top_right = np.zeros(n + 1, np.int64)
    top = np.zeros(n + 1, np.int64)
    left_factors = np.zeros((n + 1, n + 1))
    right_factors = np.zeros((n + 1, n + 1))
    parent_exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    sibling_exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    scaled_left = np.zeros((n + 1, n_symbols, n + 1))
    scaled_right = np.zeros((n + 1, n_symbols, n + 1))
    posteriors = np.zeros((n + 1, n + 1, n_symbols))
    for width in range(n, 0, -1):
        n_cells = n - width + 1
        from_left[:, :] = 0.0
        from_right[:, :] = 0.0
        if width == n:
            from_left[root, 0] = 1.0
            top[0] = 0
        else:
            # As a left child: parent (x, x + width + d), sibling (x + width, x + width + d).
            for d in range(1, n_cells):
                for x in range(n_cells):
                    valid = x + d < n_cells
                    parent_exponents[d, x] = exponents[width + d, x] if valid else EMPTY
                    sibling_exponents[d, x] = inside_exponents[d, x + width] if valid else EMPTY
            _align(parent_exponents, sibling_exponents, n_cells, n_cells, top_left, left_factors)
            # As a right child: parent (x - d, x + width), sibling (x - d, x).
            for d in range(1, n_cells):
                for x in range(n_cells):
                    valid = x >= d
                    parent_exponents[d, x] = exponents[width + d, x - d] if valid else EMPTY
                    sibling_exponents[d, x] = inside_exponents[d, x - d] if valid else EMPTY
            _align(parent_exponents, sibling_exponents, n_cells, n_cells, top_right, right_factors)
            _scale_rows(
                outside, width, n_cells, n_cells, 0, left_factors, outside_nonzero, scaled_left
            )
            _scale_rows(
                outside, width, n_cells, n_cells, 1, right_factors, outside_nonzero, scaled_right
            )
            _outside_side(
                width,
                n_cells,
                binary_rules,
                binary_weights,
                1,
                2,
                outside_nonzero,
                inside,
                inside_nonzero,
                scaled_left,
                width,
                0,
                from_left,
            )
            _outside_side(
                width,
                n_cells,
                binary_rules,
                binary_weights,
                2,
                1,
                outside_nonzero,
                inside,
                inside_nonzero,
                scaled_right,
                0,
                1,
                from_right,
            )
            # Bring both halves of each cell to one exponent.
            for x in range(n_cells):
                top[x] = max(top_left[x], top_right[x])
                if top[x] == EMPTY:
                    continue
                left = _times_pow2(1.0, top_left[x] - top[x]) if top_left[x] != EMPTY else 0.0
                right = _times_pow2(1.0, top_right[x] - top[x]) if top_right[x] != EMPTY else 0.0
                for a in range(n_symbols):
                    from_left[a, x] = from_left[a, x] * left + from_right[a, x] * right
        _unary_closure(
            from_left,
            n_cells,
            unary_rules,
            unary_weights,
            unary_by_parent,
            unary_parent_order,
            True,
        )
        _store_cells(from_left, top, n_cells, width, outside, exponents, outside_nonzero)
        for x in range(n_cells):
            if exponents[width, x] == EMPTY or inside_exponents[width, x] == EMPTY:
                continue
            scale = exponents[width, x] + inside_exponents[width, x] - z_exponent
            for a in range(n_symbols):
                value = outside[width, a, x] * inside[width, a, x]
                if value != 0.0:
                    posteriors[x, x + width, a] = _times_pow2(value / z_mantissa, scale)
    return posteriors
