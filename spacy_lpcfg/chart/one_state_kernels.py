"""Numba kernels: inside and outside of a one-state grammar over a pruned chart.

The chart of ``latent_kernels`` (items created cell by cell when something
derives them, a mantissa and an int64 exponent per item), specialised to one
latent state, which the pruning levels and MLE grammars have. What makes it
several times faster than the latent kernels with m = 1:

* sums are kept as (mantissa, exponent) pairs with the exponent of their
  largest term so far (``_add``), and an item is normalised once, when it is
  complete, not after every rule: no frexp in the inner loops;
* the split points of a rule a -> b c over (i, j) are bounded by the extents
  of b and c (the Berkeley parser's narrow/wide bounds): the ends of the b
  items starting at i and the starts of the c items ending at j, so rules
  whose children do not meet are skipped in O(1);
* cells are visited by decreasing start, so all the cells starting at j are
  complete when one ending at j is built: an intermediate symbol whose right
  sibling (named in its label) does not start there cannot be in a parse,
  and is not built. With Markov context that is most of them;
* the inside pass records the binary hyperedges it used (rule, parent, left
  and right item), and the outside pass walks them backwards instead of
  searching the rules and splits again;
* the item table holds numbers within the cell (uint16), to keep it small;
* arrays grow only between cells, in the outer loops: numba reference-counts
  an array variable reassigned inside a loop on every iteration, which made
  the inner loops ten times slower; and data-dependent branches are avoided
  where a short loop can run to its end.

The mask is given over merged symbols: item (a, i, j) is allowed when
``mask[i, j, columns[a]]`` (``inputs.MergedMask``), so a pruning level's kept
items are used without expanding them to the grammar's symbols.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

EMPTY = -(1 << 40)  # exponent of a zero value (as in latent_kernels)


# _POW2[k + 1075] = 2.0**k for k in [-1074, 0], and 0 below: a table lookup is cheaper
# than ldexp in the inner loops.
_POW2 = np.array([0.0] + [2.0**k for k in range(-1074, 1)])


@njit(cache=True, nogil=True, inline="always")
def _pow2(shift):
    """2.0**shift for shift <= 0 (0 below the float64 range)."""
    return _POW2[max(shift, -1075) + 1075]


@njit(cache=True, nogil=True, inline="always")
def _add(total, exponent, value, value_exponent):
    """(total * 2**exponent + value * 2**value_exponent) as (mantissa, exponent),
    keeping the larger exponent; a zero value changes nothing."""
    if value == 0.0:
        return total, exponent
    if exponent == EMPTY:
        return value, value_exponent
    if value_exponent > exponent:
        return total * _pow2(exponent - value_exponent) + value, value_exponent
    return total + value * _pow2(value_exponent - exponent), exponent


@njit(cache=True, nogil=True, inline="always")
def _normalised(value, exponent):
    """(mantissa with |m| in [0.5, 1), exponent), or (0.0, EMPTY) for zero."""
    if value == 0.0 or exponent == EMPTY:
        return 0.0, EMPTY
    mantissa, shift = math.frexp(value)
    return mantissa, exponent + shift


@njit(cache=True, nogil=True, inline="always")
def _times_pow2(value, exponent):
    """value * 2**exponent (posteriors: the exponent is rarely positive)."""
    if exponent <= 0:
        return value * _pow2(exponent)
    return math.ldexp(value, min(exponent, 2000))


@njit(cache=True, nogil=True)
def _reserve(array, needed):
    """array, or a copy with room for at least `needed` rows."""
    if needed <= array.shape[0]:
        return array
    shape = (max(needed, 2 * array.shape[0]),) + array.shape[1:]
    bigger = np.empty(shape, array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


@njit(cache=True, nogil=True)
def one_state_inside(
    n, n_symbols,
    binary_rules, binary_weights, binary_by_parent, binary_parents,
    unary_rules, unary_weights, unary_by_parent, unary_parent_order,
    lex_positions, lex_tags, lex_offsets, lex_values,
    has_mask, mask, mask_words, columns, column_offsets, column_members,
    left_only, sibling_offsets, siblings, table_type,
):  # fmt: skip
    """Inside pass, cells by decreasing start, then increasing end. Rules are one
    weight each (``binary_weights[r]``); column_members lists the symbols with binary
    rules of each mask column (CSR column_offsets); mask_words is the mask viewed as
    uint64 (its last axis padded to a multiple of 8), to skip 8 columns at a time;
    left_only and the right siblings (CSR sibling_offsets) come from
    inputs.chart_index; table_type (an empty array) gives the table's dtype, uint16
    unless a cell can hold 65535 items or more.

    RETURNS (table (n+1, n+1, S), cell_first int64 (n+1, n+1), cell_count int64
        (n+1, n+1), item_symbols int32[N], item_starts int32[N], item_ends int32[N],
        inside_exponents int64[N], inside_values float64[N], edges int32 (E, 4)):
        item (a, i, j) is cell_first[i, j] + table[i, j, a] - 1 (table 0: no item);
        edges[e] = (rule, parent item, left item, right item), cell by cell in the
        order of the items' cells.
    """
    # Item numbers within their cell keep the table small (uint16): zeroing it is a
    # large part of a sparse pass.
    table = np.zeros((n + 1, n + 1, n_symbols), table_type.dtype)
    cell_first = np.zeros((n + 1, n + 1), np.int64)
    cell_count = np.zeros((n + 1, n + 1), np.int64)
    # extents[0, i, a] / [1, i, a]: the smallest / largest end of an item of a starting
    # at i; extents[2, j, a] / [3, j, a]: the smallest / largest start of one ending at j.
    extents = np.empty((4, n + 1, n_symbols), np.int32)
    extents[0] = n + 1
    extents[1] = -1
    extents[2] = n + 1
    extents[3] = -1
    item_symbols = np.empty(n_symbols, np.int32)
    item_starts = np.empty(n_symbols, np.int32)
    item_ends = np.empty(n_symbols, np.int32)
    exponents = np.empty(n_symbols, np.int64)
    values = np.empty(n_symbols, np.float64)
    edges = np.empty((1024, 4), np.int32)
    n_items = 0
    n_edges = 0
    cell_values = np.zeros(n_symbols)
    cell_exponents = np.full(n_symbols, EMPTY, np.int64)
    cell_live = np.zeros(n_symbols, np.bool_)
    touched = np.empty(n_symbols, np.int32)
    parents = np.empty(n_symbols, np.int32)
    lex_first = np.searchsorted(lex_positions, np.arange(n + 1))
    # By decreasing start: every cell starting at j is complete when a cell ending at
    # j is built, so a left-only symbol with no right sibling there is skipped.
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n + 1):
            width = j - i
            n_parents = 0
            if width > 1:
                n_parents = _allowed_parents(
                    i, j, n, binary_parents, has_mask, mask, mask_words, column_offsets,
                    column_members, left_only, sibling_offsets, siblings, extents, parents,
                )  # fmt: skip
            most_edges = 0
            for p in range(n_parents):
                most_edges += binary_by_parent[parents[p] + 1] - binary_by_parent[parents[p]]
            edges = _reserve(edges, n_edges + most_edges * (width - 1))
            needed = n_items + n_symbols  # a cell has at most one item per symbol
            item_symbols = _reserve(item_symbols, needed)
            item_starts = _reserve(item_starts, needed)
            item_ends = _reserve(item_ends, needed)
            exponents = _reserve(exponents, needed)
            values = _reserve(values, needed)
            n_touched = 0
            if width == 1:
                for lex in range(lex_first[i], lex_first[i + 1]):
                    tag = lex_tags[lex]
                    if (not has_mask or mask[i, j, columns[tag]]) and _has_context(
                        tag, j, n, left_only, sibling_offsets, siblings, extents
                    ):
                        cell_values[tag] = lex_values[lex_offsets[lex]]
                        cell_exponents[tag] = 0
                        cell_live[tag] = True
                        touched[n_touched] = tag
                        n_touched += 1
            else:
                n_touched, n_edges = _binary_cell(
                    i, j, parents, n_parents, binary_rules, binary_weights, binary_by_parent,
                    table, cell_first, extents, values, exponents, edges, n_edges, n_items,
                    cell_values, cell_exponents, cell_live, touched,
                )  # fmt: skip
            if n_touched:
                n_touched = _unary_cell(
                    i, j, n, unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                    has_mask, mask, columns, left_only, sibling_offsets, siblings, extents,
                    cell_values, cell_exponents, cell_live, touched, n_touched,
                )  # fmt: skip
            cell_first[i, j] = n_items
            cell_count[i, j] = n_touched
            _commit_cell(
                i, j, n_touched, n_items, table, extents, item_symbols, item_starts,
                item_ends, exponents, values, cell_values, cell_exponents, cell_live, touched,
            )  # fmt: skip
            n_items += n_touched
    return (
        table,
        cell_first,
        cell_count,
        item_symbols[:n_items],
        item_starts[:n_items],
        item_ends[:n_items],
        exponents[:n_items],
        values[:n_items],
        edges[:n_edges],
    )


@njit(cache=True, nogil=True, inline="always")
def _has_context(a, j, n, left_only, sibling_offsets, siblings, extents):
    """Whether an item of a ending at j can be in a parse. A left-only symbol (only
    ever the left child of a binary rule: intermediate symbols, whose name holds their
    right sibling) needs an item of one of its right siblings starting at j."""
    if not left_only[a]:
        return True
    found = False
    if j < n:
        # No early exit: the loop is short, and a data-dependent branch mispredicts.
        for s in range(sibling_offsets[a], sibling_offsets[a + 1]):
            found = found or extents[1, j, siblings[s]] >= 0
    return found


@njit(cache=True, nogil=True)
def _allowed_parents(i, j, n, binary_parents, has_mask, mask, mask_words, column_offsets,
                     column_members, left_only, sibling_offsets, siblings, extents,
                     parents):  # fmt: skip
    """Fill parents with the symbols that have binary rules (column_members lists only
    those), are allowed over (i, j) (read off the mask's columns) and have their
    context; RETURNS how many."""
    n_parents = 0
    if not has_mask:
        for a in binary_parents:
            if _has_context(a, j, n, left_only, sibling_offsets, siblings, extents):
                parents[n_parents] = a
                n_parents += 1
        return n_parents
    n_columns = column_offsets.shape[0] - 1
    for word in range(mask_words.shape[2]):
        if mask_words[i, j, word] == 0:
            continue
        for column in range(8 * word, min(8 * word + 8, n_columns)):
            if mask[i, j, column]:
                for m in range(column_offsets[column], column_offsets[column + 1]):
                    a = column_members[m]
                    if _has_context(a, j, n, left_only, sibling_offsets, siblings, extents):
                        parents[n_parents] = a
                        n_parents += 1
    return n_parents


@njit(cache=True, nogil=True)
def _binary_cell(i, j, parents, n_parents, binary_rules, binary_weights, binary_by_parent,
                 table, cell_first, extents, values, exponents, edges, n_edges, n_items,
                 cell_values, cell_exponents, cell_live, touched):  # fmt: skip
    """The binary rules of cell (i, j): sums into cell_values, hyperedges into edges
    (room reserved by the caller). RETURNS (items touched, edges used)."""
    n_touched = 0
    for p in range(n_parents):
        a = parents[p]
        total = 0.0
        exponent = EMPTY
        first_edge = n_edges
        for r in range(binary_by_parent[a], binary_by_parent[a + 1]):
            b = binary_rules[r, 1]
            c = binary_rules[r, 2]
            first = max(extents[0, i, b], extents[2, j, c])
            last = min(extents[1, i, b], extents[3, j, c])
            if first > last:
                continue
            w = binary_weights[r]
            for k in range(first, last + 1):
                if table[i, k, b] == 0 or table[k, j, c] == 0:
                    continue
                left = cell_first[i, k] + table[i, k, b] - 1
                right = cell_first[k, j] + table[k, j, c] - 1
                # Items are numbered in touch order, so a's id is known already.
                edges[n_edges, 0] = r
                edges[n_edges, 1] = n_items + n_touched
                edges[n_edges, 2] = left
                edges[n_edges, 3] = right
                n_edges += 1
                total, exponent = _add(
                    total,
                    exponent,
                    w * values[left] * values[right],
                    exponents[left] + exponents[right],
                )
        if n_edges > first_edge:
            cell_live[a] = True
            touched[n_touched] = a
            n_touched += 1
            cell_values[a] = total
            cell_exponents[a] = exponent
    return n_touched, n_edges


@njit(cache=True, nogil=True)
def _unary_cell(i, j, n, unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                has_mask, mask, columns, left_only, sibling_offsets, siblings, extents,
                cell_values, cell_exponents, cell_live, touched, n_touched):  # fmt: skip
    """Unary closure of cell (i, j): parents in topological order, so chains are summed
    exactly. RETURNS the number of items touched."""
    for p in unary_parent_order:
        if has_mask and not mask[i, j, columns[p]]:
            continue
        if not _has_context(p, j, n, left_only, sibling_offsets, siblings, extents):
            continue
        for r in range(unary_by_parent[p], unary_by_parent[p + 1]):
            c = unary_rules[r, 1]
            if not cell_live[c]:
                continue
            if not cell_live[p]:
                cell_live[p] = True
                touched[n_touched] = p
                n_touched += 1
            cell_values[p], cell_exponents[p] = _add(
                cell_values[p], cell_exponents[p], unary_weights[r] * cell_values[c],
                cell_exponents[c],
            )  # fmt: skip
    return n_touched


@njit(cache=True, nogil=True)
def _commit_cell(i, j, n_touched, n_items, table, extents, item_symbols, item_starts,
                 item_ends, exponents, values, cell_values, cell_exponents, cell_live,
                 touched):  # fmt: skip
    """Write the touched symbols of cell (i, j) as items n_items, n_items + 1, ...
    (normalised) and reset the cell's scratch arrays."""
    for t in range(n_touched):
        a = touched[t]
        item = n_items + t
        table[i, j, a] = t + 1
        item_symbols[item] = a
        item_starts[item] = i
        item_ends[item] = j
        values[item], exponents[item] = _normalised(cell_values[a], cell_exponents[a])
        cell_live[a] = False
        cell_values[a] = 0.0
        cell_exponents[a] = EMPTY
        # Ends from i are seen in increasing order, starts from j in decreasing order.
        if extents[0, i, a] > j:
            extents[0, i, a] = j
        extents[1, i, a] = j
        if extents[3, j, a] < 0:
            extents[3, j, a] = i
        extents[2, j, a] = i


@njit(cache=True, nogil=True)
def one_state_outside(
    n, root, binary_rules, binary_weights,
    unary_rules, unary_weights, unary_by_parent, unary_parent_order,
    table, cell_first, cell_count, item_symbols, item_starts, item_ends, inside_exponents,
    inside_values, edges, z_mantissa, z_exponent, with_rules,
):  # fmt: skip
    """Outside pass over the inside pass's hyperedges, walked backwards (widest cells
    first), with marginals and (if `with_rules`) anchored rule posteriors, all divided
    by Z. The unary closure of each cell runs before its binary hyperedges, parents
    before children.

    RETURNS (marginals float64[N], binary posteriors (rules int32, starts int32, splits
        int32, ends int32, scores float64, items int32 (K, 3)), unary posteriors (rules
        int32, starts int32, ends int32, scores float64, items int32 (K, 2))), as
        latent_kernels.latent_outside.
    """
    n_items = item_symbols.shape[0]
    out_values = np.zeros(n_items)
    out_exponents = np.full(n_items, EMPTY, np.int64)
    top_item = cell_first[0, n] + table[0, n, root] - 1
    out_values[top_item] = 1.0
    out_exponents[top_item] = 0
    # At most one posterior per hyperedge, and per item one per unary rule of its symbol.
    n_unary_rules = 0
    if with_rules:
        for item in range(n_items):
            a = item_symbols[item]
            n_unary_rules += unary_by_parent[a + 1] - unary_by_parent[a]
    binary_posteriors = np.empty(edges.shape[0] if with_rules else 0)
    binary_kept = np.zeros(edges.shape[0] if with_rules else 0, np.bool_)
    unary_posteriors = np.empty(n_unary_rules)
    unary_keys = np.empty((n_unary_rules, 5), np.int32)  # (rule, start, end, parent, child)
    n_unary = 0
    e = edges.shape[0] - 1
    for i in range(n):  # the inside pass's cell order, backwards
        for j in range(n, i, -1):
            first_item = cell_first[i, j]
            # Every parent of this cell's items is complete: normalise their outsides.
            for item in range(first_item, first_item + cell_count[i, j]):
                out_values[item], out_exponents[item] = _normalised(
                    out_values[item], out_exponents[item]
                )
            n_unary = _unary_outside(
                i, j, unary_rules, unary_weights, unary_by_parent, unary_parent_order, table,
                first_item, inside_exponents, inside_values, out_values, out_exponents, z_mantissa,
                z_exponent, with_rules, unary_posteriors, unary_keys, n_unary,
            )  # fmt: skip
            e = _binary_outside(
                first_item, e, binary_weights, edges, inside_exponents, inside_values,
                out_values, out_exponents, z_mantissa, z_exponent, with_rules,
                binary_posteriors, binary_kept,
            )  # fmt: skip
    marginals = np.zeros(n_items)
    for item in range(n_items):
        value = out_values[item] * inside_values[item]
        if value != 0.0:
            marginals[item] = _times_pow2(
                value / z_mantissa, out_exponents[item] + inside_exponents[item] - z_exponent
            )
    kept = np.flatnonzero(binary_kept)
    parents = edges[kept, 1]
    return (
        marginals,
        (
            edges[kept, 0],
            item_starts[parents],
            item_ends[edges[kept, 2]],
            item_ends[parents],
            binary_posteriors[kept],
            edges[kept, 1:],
        ),
        # Reversed: cell by cell, each cell's unary parents children first, the order
        # decode.rule_cky needs (the binary posteriors are in cell order already).
        (
            unary_keys[:n_unary, 0][::-1].copy(),
            unary_keys[:n_unary, 1][::-1].copy(),
            unary_keys[:n_unary, 2][::-1].copy(),
            unary_posteriors[:n_unary][::-1].copy(),
            unary_keys[:n_unary, 3:][::-1].copy(),
        ),
    )


@njit(cache=True, nogil=True)
def _unary_outside(i, j, unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                   table, first_item, inside_exponents, inside_values, out_values, out_exponents,
                   z_mantissa, z_exponent, with_rules, posteriors, keys, n_unary):  # fmt: skip
    """Unary closure of cell (i, j), parents before children, with the posteriors of
    the unary rules (room reserved by the caller). RETURNS the posteriors written."""
    for q in range(unary_parent_order.shape[0] - 1, -1, -1):
        p = unary_parent_order[q]
        if table[i, j, p] == 0:
            continue
        parent = first_item + table[i, j, p] - 1
        if out_values[parent] == 0.0:
            continue
        for r in range(unary_by_parent[p], unary_by_parent[p + 1]):
            if table[i, j, unary_rules[r, 1]] == 0:
                continue
            child = first_item + table[i, j, unary_rules[r, 1]] - 1
            value = unary_weights[r] * out_values[parent]
            exponent = out_exponents[parent]
            if with_rules and inside_values[child] != 0.0 and value != 0.0:
                keys[n_unary, 0] = r
                keys[n_unary, 1] = i
                keys[n_unary, 2] = j
                keys[n_unary, 3] = parent
                keys[n_unary, 4] = child
                posteriors[n_unary] = _times_pow2(
                    value * inside_values[child] / z_mantissa,
                    exponent + inside_exponents[child] - z_exponent,
                )
                n_unary += 1
            out_values[child], out_exponents[child] = _add(
                out_values[child], out_exponents[child], value, exponent
            )
    return n_unary


@njit(cache=True, nogil=True)
def _binary_outside(first_item, e, binary_weights, edges, inside_exponents, inside_values,
                    out_values, out_exponents, z_mantissa, z_exponent, with_rules,
                    posteriors, kept):  # fmt: skip
    """Push the outside of one cell's items (ids from first_item on) through their
    hyperedges, which end the unprocessed part edges[:e + 1]; posteriors[e] of the
    hyperedges with non-zero children. RETURNS the last hyperedge left."""
    while e >= 0 and edges[e, 1] >= first_item:
        parent = edges[e, 1]
        outside = out_values[parent]
        if outside != 0.0:
            left = edges[e, 2]
            right = edges[e, 3]
            exponent = out_exponents[parent]
            x = binary_weights[edges[e, 0]] * outside
            value_b = inside_values[left]
            value_c = inside_values[right]
            out_values[left], out_exponents[left] = _add(
                out_values[left], out_exponents[left], x * value_c,
                exponent + inside_exponents[right],
            )  # fmt: skip
            out_values[right], out_exponents[right] = _add(
                out_values[right], out_exponents[right], x * value_b,
                exponent + inside_exponents[left],
            )  # fmt: skip
            if with_rules and value_b != 0.0 and value_c != 0.0:
                kept[e] = True
                posteriors[e] = _times_pow2(
                    x * value_b * value_c / z_mantissa,
                    exponent + inside_exponents[left] + inside_exponents[right] - z_exponent,
                )
        e -= 1
    return e
