"""The dense coarse pass: inside-outside of a one-state grammar over every chart item.

This pass decides pruning, so it is written for speed. Charts are stored by
width, ``chart[width, symbol, start]``, and all the cells of one width are
computed together. For a width, the children of every (split, cell) pair are
first copied into symbol-major rows laid out as ``[symbol, split, cell]``
(left children already scaled to their cell's exponent), so that a rule
a -> b c is one flat, vectorised loop ``sums[a] += w * left[b] * right[c]``
over all its splits and cells at once; ``sums[a]`` is then added up over the
splits. Each symbol's row covers only the splits where it is non-zero, and a
rule loops over the intersection of its children's ranges. The outside pass
does the same with parents and siblings.

Most rules have a preterminal child, which has width 1: such a rule a -> t c
contributes at one split only, a short loop. The rules a -> t c of one pair
(a, c) are therefore merged per sentence into one row over word positions,
``psi[a, c][x] = sum_t w(a -> t c) * chart[1, t, x]`` (and alike for a -> b t),
so each pair costs one loop per width instead of one per rule.

Each cell has one scale exponent (powers of two) shared by its symbols; values
may be signed. Memory: about ten (n+1, n+1, S) float64 arrays (200 MB for
n = 50, S = 1000); bound it with the sentence length."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.symbols import PRETERMINAL
from .inputs import lexical_arrays, per_grammar
from .scaled import EMPTY, FAST_MATH, HELPER, KERNEL, times_pow2

# Values below 2**FLUSH times their cell's largest are set to zero, and so are split
# points whose scale is below 2**FLUSH of the best one. Such items cannot matter for
# pruning, and products of them would be subnormal numbers, 100 times slower.
FLUSH = -300


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


@dataclass(frozen=True)
class _RuleClasses:
    """A one-state grammar's binary rules split for the dense pass.

    plain_by_left, plain_by_parent (np.ndarray): int32 (R, 3) the rules with no or two
        preterminal children, sorted by left child (inside) and by parent (outside);
        plain_left_weights, plain_parent_weights (np.ndarray): float64[R], theirs.
    left_pairs (np.ndarray): int32 (P, 2), the (a, c) of the rules a -> t c with a
        preterminal t and c not one; pair p's rules are left_tags / left_weights
        [left_offsets[p]:left_offsets[p + 1]] (the t and the weights).
    right_pairs, right_offsets, right_tags, right_weights: alike for a -> b t, pairs (a, b).
    """

    plain_by_left: np.ndarray
    plain_left_weights: np.ndarray
    plain_by_parent: np.ndarray
    plain_parent_weights: np.ndarray
    left_pairs: np.ndarray
    left_offsets: np.ndarray
    left_tags: np.ndarray
    left_weights: np.ndarray
    right_pairs: np.ndarray
    right_offsets: np.ndarray
    right_tags: np.ndarray
    right_weights: np.ndarray


@per_grammar
def _rule_classes(grammar: LPCFG) -> _RuleClasses:
    rules, weights = grammar.binary_rules, grammar.binary_weights
    is_tag = grammar.symbols.kind_codes == PRETERMINAL
    left_tag, right_tag = is_tag[rules[:, 1]], is_tag[rules[:, 2]]
    plain = left_tag == right_tag

    def pairs(selected: np.ndarray, pair_columns: list[int], tag_column: int):
        chosen = rules[selected]
        order = np.lexsort([chosen[:, c] for c in reversed(pair_columns)])
        chosen, chosen_weights = chosen[order], weights[selected][order]
        keys, first = np.unique(chosen[:, pair_columns], axis=0, return_index=True)
        offsets = np.append(first, len(chosen)).astype(np.int64)
        return (
            keys.astype(np.int32).reshape(-1, 2),
            offsets,
            chosen[:, tag_column].astype(np.int32),
            chosen_weights,
        )

    by_left = np.flatnonzero(plain)[np.argsort(rules[plain, 1], kind="stable")]
    by_parent = np.flatnonzero(plain)
    return _RuleClasses(
        rules[by_left], weights[by_left], rules[by_parent], weights[by_parent],
        *pairs(left_tag & ~right_tag, [0, 2], 1),
        *pairs(right_tag & ~left_tag, [0, 1], 2),
    )  # fmt: skip


def coarse_posteriors(grammar: LPCFG, lexical: LexicalScores) -> CoarsePosteriors:
    """Anchored symbol posteriors of a one-state grammar, with no pruning.

    grammar (LPCFG): a grammar with n_states == 1 everywhere (grammar.project()).
    lexical (LexicalScores): one-state preterminal scores (LexicalScores.project()).
    RETURNS (CoarsePosteriors): dense posteriors the caller thresholds into a mask.
    """
    if grammar.max_states != 1:
        raise ValueError(Errors.E202)
    positions, tags, offsets, values = lexical_arrays(grammar, lexical)
    n = lexical.n_words
    rules = _rule_classes(grammar)
    pairs = (
        rules.left_pairs, rules.left_offsets, rules.left_tags, rules.left_weights,
        rules.right_pairs, rules.right_offsets, rules.right_tags, rules.right_weights,
    )  # fmt: skip
    unary = (
        grammar.unary_rules, grammar.unary_weights, grammar.unary_parent_offsets,
        grammar.unary_parent_order,
    )  # fmt: skip
    inside, inside_exponents = _coarse_inside(
        n, grammar.n_symbols, rules.plain_by_left, rules.plain_left_weights, *pairs, *unary,
        positions, tags, values,
    )  # fmt: skip
    z_mantissa = inside[n, grammar.root, 0]
    z_exponent = inside_exponents[n, 0]
    shape = (n + 1, n + 1, grammar.n_symbols)
    if z_mantissa == 0.0:
        return CoarsePosteriors(np.zeros(shape), -math.inf, 0.0)
    posteriors = _coarse_outside(
        n, grammar.root, rules.plain_by_parent, rules.plain_parent_weights, *pairs, *unary,
        inside, inside_exponents, z_mantissa, z_exponent,
    )  # fmt: skip
    log_abs_z = math.log(abs(z_mantissa)) + float(z_exponent) * math.log(2.0)
    return CoarsePosteriors(posteriors, log_abs_z, math.copysign(1.0, z_mantissa))


@njit(**HELPER)
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


@njit(**HELPER)
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


@njit(**HELPER)
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


@njit(**HELPER)
def _split_range(nonzero, width, first_width, n_splits, from_end, first, last, s):
    """first[s], last[s]: the smallest and largest split d in [1, n_splits] whose row
    nonzero[first_width + d, s] (or nonzero[width - d, s] when from_end) is set;
    first > last when there is none."""
    first[s] = n_splits + 1
    last[s] = 0
    for d in range(1, n_splits + 1):
        if nonzero[width - d, s] if from_end else nonzero[first_width + d, s]:
            if first[s] > n_splits:
                first[s] = d
            last[s] = d


@njit(cache=True, nogil=True, fastmath=FAST_MATH, inline="always")
def _add_products(target, weight, factor_1, factor_2):
    """target += weight * factor_1 * factor_2, elementwise. A function of its own
    over contiguous 1-d views, because that is the form numba vectorises."""
    for t in range(target.shape[0]):
        target[t] += weight * factor_1[t] * factor_2[t]


@njit(cache=True, nogil=True, fastmath=FAST_MATH, inline="always")
def _add_triple(target, factor_1, factor_2, factor_3):
    """target += factor_1 * factor_2 * factor_3, elementwise (as _add_products)."""
    for t in range(target.shape[0]):
        target[t] += factor_1[t] * factor_2[t] * factor_3[t]


@njit(cache=True, nogil=True, inline="always")
def _set_products(target, factor_1, factor_2):
    """target = factor_1 * factor_2, elementwise (contiguous views, as _add_products)."""
    for t in range(target.shape[0]):
        target[t] = factor_1[t] * factor_2[t]


@njit(cache=True, nogil=True, inline="always")
def _move_into(target, source):
    """target += source, then source = 0, elementwise (as _add_products)."""
    for t in range(target.shape[0]):
        target[t] += source[t]
        source[t] = 0.0


@njit(**HELPER)
def _merge_tags(pair_offsets, pair_tags, pair_weights, width_one, merged):
    """merged[p, x] = sum of w * width_one[t, x] over the (t, w) of pair p: the
    preterminal children of its rules, summed once per sentence."""
    for p in range(pair_offsets.shape[0] - 1):
        merged[p, :] = 0.0
        for r in range(pair_offsets[p], pair_offsets[p + 1]):
            w = pair_weights[r]
            row = width_one[pair_tags[r]]
            for x in range(merged.shape[1]):
                merged[p, x] += w * row[x]


@njit(cache=True, nogil=True, inline="always")
def _triangle(d, n_cells):
    """Where split d's row starts when split d' has n_cells - d' entries."""
    return (d - 1) * n_cells - (d - 1) * d // 2


@njit(**HELPER)
def _add_splits(sums, first, last, n_cells, accumulator, s):
    """accumulator[s, x] += sum over splits d of sums[s, (d - 1) * n_cells + x], for the
    splits first[s]..last[s] that were written; those entries are zeroed again."""
    if first[s] > last[s]:
        return
    target = accumulator[s, :n_cells]
    for d in range(first[s], last[s] + 1):
        base = (d - 1) * n_cells
        _move_into(target, sums[s, base : base + n_cells])
    first[s] = 1 << 30
    last[s] = 0


@njit(**KERNEL)
def _coarse_inside(n, n_symbols, rules_by_left, weights_by_left,
                   left_pairs, left_offsets, left_tags, left_weights,
                   right_pairs, right_offsets, right_tags, right_weights,
                   unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                   lex_positions, lex_tags, lex_values):  # fmt: skip
    """RETURNS (chart float64 (n+1, S, n+1) [width, symbol, start], exponents int64 (n+1, n+1)
    [width, start])."""
    zero = np.int64(0)  # not a literal: one _split_range for any first width (chart.scaled)
    chart = np.zeros((n + 1, n_symbols, n + 1))
    exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    accumulator = np.zeros((n_symbols, n + 1))
    top = np.zeros(n + 1, np.int64)
    factors = np.zeros((n + 1, n + 1))
    # Split offset d of cell x pairs cells (d, x) and (width - d, x + d): exponents
    # shifted per d so that _align sees them side by side.
    shifted = np.full((n + 1, n + 1), EMPTY, np.int64)
    size = n * n // 4 + n + 1  # >= (width - 1) * (n - width + 1)
    left = np.zeros((n_symbols, size))
    right = np.zeros((n_symbols, size))
    sums = np.zeros((n_symbols, size))
    first_left = np.empty(n_symbols, np.int64)
    last_left = np.empty(n_symbols, np.int64)
    first_right = np.empty(n_symbols, np.int64)
    last_right = np.empty(n_symbols, np.int64)
    first_sum = np.full(n_symbols, 1 << 30, np.int64)
    last_sum = np.zeros(n_symbols, np.int64)
    left_merged = np.zeros((left_pairs.shape[0], n + 1))
    right_merged = np.zeros((right_pairs.shape[0], n + 1))
    for width in range(1, n + 1):
        n_cells = n - width + 1
        accumulator[:, :n_cells] = 0.0
        if width == 1:
            for e in range(lex_positions.shape[0]):
                accumulator[lex_tags[e], lex_positions[e]] += lex_values[e]
            top[:] = 0
        else:
            n_splits = width - 1
            for d in range(1, width):
                for x in range(n_cells):
                    shifted[d, x] = exponents[width - d, x + d]
            _align(exponents, shifted, width, n_cells, top, factors)
            for s in range(n_symbols):
                _split_range(nonzero, width, zero, n_splits, False, first_left, last_left, s)
                for d in range(first_left[s], last_left[s] + 1):
                    base = (d - 1) * n_cells
                    _set_products(left[s, base : base + n_cells], chart[d, s, :n_cells],
                                  factors[d, :n_cells])  # fmt: skip
                _split_range(nonzero, width, zero, n_splits, True, first_right, last_right, s)
                for d in range(first_right[s], last_right[s] + 1):
                    base = (d - 1) * n_cells
                    target = right[s, base : base + n_cells]
                    source = chart[width - d, s, d : d + n_cells]
                    # A loop over 1-d views, not a slice copy: that would make numba
                    # compile its error message (chart.scaled); as fast.
                    for x in range(n_cells):
                        target[x] = source[x]
            for r in range(rules_by_left.shape[0]):
                b = rules_by_left[r, 1]
                c = rules_by_left[r, 2]
                first = max(first_left[b], first_right[c])
                last = min(last_left[b], last_right[c])
                if first > last:
                    continue
                a = rules_by_left[r, 0]
                start, stop = (first - 1) * n_cells, last * n_cells
                _add_products(sums[a, start:stop], weights_by_left[r],
                              left[b, start:stop], right[c, start:stop])  # fmt: skip
                first_sum[a] = min(first_sum[a], first)
                last_sum[a] = max(last_sum[a], last)
            # a -> t c at split 1, a -> b t at split width - 1, preterminals merged.
            for p in range(left_pairs.shape[0]):
                c = left_pairs[p, 1]
                if not nonzero[width - 1, c]:
                    continue
                a = left_pairs[p, 0]
                _add_triple(sums[a, :n_cells], left_merged[p, :n_cells], factors[1, :n_cells],
                            right[c, :n_cells])  # fmt: skip
                first_sum[a] = min(first_sum[a], 1)
                last_sum[a] = max(last_sum[a], 1)
            d = width - 1
            start, stop = (d - 1) * n_cells, d * n_cells
            for q in range(right_pairs.shape[0]):
                b = right_pairs[q, 1]
                if not nonzero[d, b]:
                    continue
                a = right_pairs[q, 0]
                _add_products(sums[a, start:stop], 1.0, left[b, start:stop],
                              right_merged[q, d : d + n_cells])  # fmt: skip
                first_sum[a] = min(first_sum[a], d)
                last_sum[a] = max(last_sum[a], d)
            for a in range(n_symbols):
                _add_splits(sums, first_sum, last_sum, n_cells, accumulator, a)
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
        if width == 1:
            _merge_tags(left_offsets, left_tags, left_weights, chart[1], left_merged)
            _merge_tags(right_offsets, right_tags, right_weights, chart[1], right_merged)
    return chart, exponents


@njit(**KERNEL)
def _coarse_outside(n, root, rules_by_parent, weights_by_parent,
                    left_pairs, left_offsets, left_tags, left_weights,
                    right_pairs, right_offsets, right_tags, right_weights,
                    unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                    inside, inside_exponents, z_mantissa, z_exponent):  # fmt: skip
    """RETURNS posteriors float64 (n+1, n+1, S) [start, end, symbol].

    The outside of cell x of a width sums, over splits d, two kinds of terms: as a
    left child, parent (x, x + width + d) and sibling (x + width, x + width + d),
    for x < n_cells - d; as a right child, parent (x - d, x + width) and sibling
    (x - d, x), for x >= d. Each kind is laid out [symbol, d, y] with the n_cells - d
    existing cells of split d (y = x, resp. x - d) and rows starting at
    ``_triangle(d, n_cells)``.
    Targets whose inside row is all zero at this width (preterminals above width 1,
    say) are skipped: no derivation uses them, so their outside is never needed
    (with signed weights an inside row that cancels to exactly zero is treated alike).
    """
    # Not literals (as in _coarse_inside): _tag_targets runs once per sentence, one
    # compiled version serves both sides.
    zero, no, yes = np.int64(0), np.bool_(False), np.bool_(True)
    n_symbols = inside.shape[1]
    outside = np.zeros((n + 1, n_symbols, n + 1))
    exponents = np.full((n + 1, n + 1), EMPTY, np.int64)
    inside_nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    for width in range(1, n + 1):
        for a in range(n_symbols):
            for x in range(n - width + 1):
                inside_nonzero[width, a] = inside_nonzero[width, a] or inside[width, a, x] != 0.0
    outside_nonzero = np.zeros((n + 1, n_symbols), np.bool_)
    accumulator = np.zeros((n_symbols, n + 1))
    top = np.zeros(n + 1, np.int64)
    left_factors = np.zeros((n + 1, n + 1))
    right_factors = np.zeros((n + 1, n + 1))
    size = n * (n + 1) // 2 + 1
    parents_left = np.zeros((n_symbols, size))
    parents_right = np.zeros((n_symbols, size))
    siblings_left = np.zeros((n_symbols, size))
    siblings_right = np.zeros((n_symbols, size))
    sums_left = np.zeros((n_symbols, size))
    sums_right = np.zeros((n_symbols, size))
    first_parent = np.empty(n_symbols, np.int64)
    last_parent = np.empty(n_symbols, np.int64)
    first_sibling = np.empty(n_symbols, np.int64)
    last_sibling = np.empty(n_symbols, np.int64)
    first_sum = np.full(n_symbols, 1 << 30, np.int64)
    last_sum = np.zeros(n_symbols, np.int64)
    left_merged = np.zeros((left_pairs.shape[0], n + 1))
    right_merged = np.zeros((right_pairs.shape[0], n + 1))
    _merge_tags(left_offsets, left_tags, left_weights, inside[1], left_merged)
    _merge_tags(right_offsets, right_tags, right_weights, inside[1], right_merged)
    merged_row = np.zeros(n + 1)
    posteriors = np.zeros((n + 1, n + 1, n_symbols))
    for width in range(n, 0, -1):
        n_cells = n - width + 1
        accumulator[:, :n_cells] = 0.0
        if width == n:
            accumulator[root, 0] = 1.0
            top[0] = 0
        else:
            n_splits = n - width
            # One exponent per cell for both kinds of terms.
            top[:n_cells] = EMPTY
            for d in range(1, n_splits + 1):
                for y in range(n_cells - d):
                    parent = exponents[width + d, y]
                    if parent == EMPTY:
                        continue
                    sibling = inside_exponents[d, y + width]
                    if sibling != EMPTY:
                        top[y] = max(top[y], parent + sibling)
                    sibling = inside_exponents[d, y]
                    if sibling != EMPTY:
                        top[y + d] = max(top[y + d], parent + sibling)
            for d in range(1, n_splits + 1):
                for y in range(n_cells - d):
                    left_factors[d, y] = 0.0
                    right_factors[d, y] = 0.0
                    parent = exponents[width + d, y]
                    if parent == EMPTY:
                        continue
                    sibling = inside_exponents[d, y + width]
                    if sibling != EMPTY:
                        shift = parent + sibling - top[y]
                        left_factors[d, y] = 0.0 if shift < FLUSH else math.ldexp(1.0, shift)
                    sibling = inside_exponents[d, y]
                    if sibling != EMPTY:
                        shift = parent + sibling - top[y + d]
                        right_factors[d, y] = 0.0 if shift < FLUSH else math.ldexp(1.0, shift)
            for s in range(n_symbols):
                _split_range(outside_nonzero, width, width, n_splits, False,
                             first_parent, last_parent, s)  # fmt: skip
                for d in range(first_parent[s], last_parent[s] + 1):
                    base, count = _triangle(d, n_cells), n_cells - d
                    parent = outside[width + d, s, :count]
                    _set_products(parents_left[s, base : base + count], parent,
                                  left_factors[d, :count])  # fmt: skip
                    _set_products(parents_right[s, base : base + count], parent,
                                  right_factors[d, :count])  # fmt: skip
                _split_range(inside_nonzero, width, zero, n_splits, False,
                             first_sibling, last_sibling, s)  # fmt: skip
                for d in range(first_sibling[s], last_sibling[s] + 1):
                    base, count = _triangle(d, n_cells), n_cells - d
                    # Loops over 1-d views, not slice copies (as in _coarse_inside).
                    target = siblings_left[s, base : base + count]
                    source = inside[d, s, width : width + count]
                    for y in range(count):
                        target[y] = source[y]
                    target = siblings_right[s, base : base + count]
                    source = inside[d, s, :count]
                    for y in range(count):
                        target[y] = source[y]
            for r in range(rules_by_parent.shape[0]):
                a = rules_by_parent[r, 0]
                if first_parent[a] > last_parent[a]:
                    continue
                b = rules_by_parent[r, 1]
                c = rules_by_parent[r, 2]
                w = weights_by_parent[r]
                # b as the left child, c its sibling.
                first = max(first_parent[a], first_sibling[c])
                last = min(last_parent[a], last_sibling[c])
                if first <= last and inside_nonzero[width, b]:
                    start, stop = _triangle(first, n_cells), _triangle(last + 1, n_cells)
                    _add_products(sums_left[b, start:stop], w,
                                  parents_left[a, start:stop], siblings_left[c, start:stop])  # fmt: skip
                    first_sum[b] = min(first_sum[b], first)
                    last_sum[b] = max(last_sum[b], last)
                # c as the right child, b its sibling.
                first = max(first_parent[a], first_sibling[b])
                last = min(last_parent[a], last_sibling[b])
                if first <= last and inside_nonzero[width, c]:
                    start, stop = _triangle(first, n_cells), _triangle(last + 1, n_cells)
                    _add_products(sums_right[c, start:stop], w,
                                  parents_right[a, start:stop], siblings_right[b, start:stop])  # fmt: skip
                    first_sum[c] = min(first_sum[c], first)
                    last_sum[c] = max(last_sum[c], last)
            # Rules with one preterminal child, pair by pair: the other child as the
            # target, at split 1 (its sibling has width 1), the preterminals merged ...
            stop = n_cells - 1
            for p in range(left_pairs.shape[0]):  # a -> t c, c the right child
                a, c = left_pairs[p, 0], left_pairs[p, 1]
                if first_parent[a] <= 1 <= last_parent[a] and inside_nonzero[width, c]:
                    _add_products(sums_right[c, :stop], 1.0, parents_right[a, :stop],
                                  left_merged[p, :stop])  # fmt: skip
                    first_sum[c] = min(first_sum[c], 1)
                    last_sum[c] = max(last_sum[c], 1)
            for q in range(right_pairs.shape[0]):  # a -> b t, b the left child
                a, b = right_pairs[q, 0], right_pairs[q, 1]
                if first_parent[a] <= 1 <= last_parent[a] and inside_nonzero[width, b]:
                    _add_products(sums_left[b, :stop], 1.0, parents_left[a, :stop],
                                  right_merged[q, width : width + stop])  # fmt: skip
                    first_sum[b] = min(first_sum[b], 1)
                    last_sum[b] = max(last_sum[b], 1)
            if width == 1:
                # ... and the preterminals as the targets (width 1 only).
                _tag_targets(left_pairs, left_offsets, left_tags, left_weights, no,
                             first_parent, last_parent, first_sibling, last_sibling,
                             parents_left, siblings_left, inside_nonzero, n_cells,
                             merged_row, accumulator)  # fmt: skip
                _tag_targets(right_pairs, right_offsets, right_tags, right_weights, yes,
                             first_parent, last_parent, first_sibling, last_sibling,
                             parents_right, siblings_right, inside_nonzero, n_cells,
                             merged_row, accumulator)  # fmt: skip
            for s in range(n_symbols):
                if first_sum[s] > last_sum[s]:
                    continue
                for d in range(first_sum[s], last_sum[s] + 1):
                    base, count = _triangle(d, n_cells), n_cells - d
                    _move_into(accumulator[s, :count], sums_left[s, base : base + count])
                    _move_into(accumulator[s, d : d + count], sums_right[s, base : base + count])
                first_sum[s] = 1 << 30
                last_sum[s] = 0
        _unary_closure(
            accumulator,
            n_cells,
            unary_rules,
            unary_weights,
            unary_by_parent,
            unary_parent_order,
            True,
        )
        _store_cells(accumulator, top, n_cells, width, outside, exponents, outside_nonzero)
        for x in range(n_cells):
            if exponents[width, x] == EMPTY or inside_exponents[width, x] == EMPTY:
                continue
            scale = exponents[width, x] + inside_exponents[width, x] - z_exponent
            for a in range(n_symbols):
                value = outside[width, a, x] * inside[width, a, x]
                if value != 0.0:
                    posteriors[x, x + width, a] = times_pow2(value / z_mantissa, scale)
    return posteriors


@njit(**HELPER)
def _tag_targets(pairs, pair_offsets, pair_tags, pair_weights, tag_on_right,
                 first_parent, last_parent, first_sibling, last_sibling, parents, siblings,
                 inside_nonzero, n_cells, merged, accumulator):  # fmt: skip
    """The outside of the preterminals (width 1) through the rules of each pair
    (a, sibling): the sum over splits of parents[a] * siblings[sibling], once per pair
    and laid out by target cell (x = y, or y + d when the preterminal is the right
    child), then w times that for each rule of the pair."""
    for p in range(pairs.shape[0]):
        a, sibling = pairs[p, 0], pairs[p, 1]
        first = max(first_parent[a], first_sibling[sibling])
        last = min(last_parent[a], last_sibling[sibling])
        if first > last:
            continue
        merged[:n_cells] = 0.0
        for d in range(first, last + 1):
            base = _triangle(d, n_cells)
            shift = d if tag_on_right else 0
            for y in range(n_cells - d):
                merged[y + shift] += parents[a, base + y] * siblings[sibling, base + y]
        for r in range(pair_offsets[p], pair_offsets[p + 1]):
            t = pair_tags[r]
            if inside_nonzero[1, t]:
                w = pair_weights[r]
                for x in range(n_cells):
                    accumulator[t, x] += w * merged[x]
