"""Numba kernels: inside and outside of a one-state grammar over a pruned chart.

The chart of ``latent_kernels`` (items created cell by cell when something
derives them, a mantissa and an int64 exponent per item), specialised to one
latent state, which the pruning levels and MLE grammars have. What makes it
several times faster than the latent kernels with m = 1:

* sums are kept as (mantissa, exponent) pairs with the exponent of their
  largest term so far (``add``), and an item is normalised once, when it is
  complete, not after every rule: no frexp in the inner loops;
* the split points of a rule a -> b c over (i, j) are the bits set in both
  the bitset of the ends of the b items starting at i and that of the starts
  of the c items ending at j: one AND per rule, then only the splits where
  both children exist (a loose mask allows thousands of rules per cell whose
  children are mostly absent). Rules are grouped by (parent, left child), so
  a left child with no item starting at i skips all its rules at once;
* cells are visited by decreasing start, so all the cells starting at j are
  complete when one ending at j is built: an intermediate symbol whose right
  sibling (named in its label) does not start there cannot be in a parse,
  and is not built. With Markov context that is most of them;
* the outside pass searches the rules again from the items present, not from
  the symbols the mask allows, and only from items with a non-zero outside
  score: after a loose coarse mask a cell holds a few percent of the allowed
  items. Recording the inside pass's hyperedges instead (16 bytes each, tens
  of millions for a long sentence) cost more in memory traffic than this;
* the item table holds numbers within the cell (uint16), to keep it small,
  and it and the bitsets are scratch arrays the caller reuses across sentences;
* arrays grow only between cells, in the outer loops: numba reference-counts
  an array variable reassigned inside a loop on every iteration, which made
  the inner loops ten times slower; and data-dependent branches are avoided
  where a short loop can run to its end.

The mask is given over merged symbols: item (a, i, j) is allowed when
``mask[i, j, columns[a]]`` (``inputs.MergedMask``), so a pruning level's kept
items are used without expanding them to the grammar's symbols.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kernel_parts import lexical_first, parents_in_context, pop_split, unary_walk
from .scaled import EMPTY, HELPER, KERNEL, add, grow, normalised, times_pow2


@njit(**KERNEL)
def one_state_inside(
    n, n_symbols,
    binary_rules, binary_weights, group_offsets, group_lefts, group_rules,
    unary_rules, unary_weights, unary_by_parent, unary_parent_order,
    left_symbols, sibling_offsets, siblings,
    lex_positions, lex_tags, lex_offsets, lex_values,
    binary_parents, has_mask, mask, mask_words, columns, column_offsets, column_members,
    table_buffer, bit_buffer, edges,
):  # fmt: skip
    """Inside pass, cells by decreasing start, then increasing end. The arguments come
    packed (``inputs``): the rules (``one_state_rule_args``: one weight each,
    ``binary_weights[r]``, grouped by (parent, left child)), the left-only symbols and
    their right siblings (``ChartIndex.context_args``), the lexical entries
    (``lexical_arrays``) and the mask (``mask_args``: column_members lists the symbols
    with binary rules of each mask column, CSR column_offsets; mask_words is the mask
    viewed as uint64, to skip 8 columns at a time).
    table_buffer (uint16 unless a cell can hold 65535 items or more) and bit_buffer
    (uint64) are scratch, used if large enough and returned for the next sentence.
    edges (int32 (C, 4)) receives the hyperedges of the cells built first, as long as
    they fit.

    RETURNS (table (n+1, n+1, S), cell_first int64 (n+1, n+1), cell_count int64
        (n+1, n+1), item_symbols int32[N], item_starts int32[N], item_ends int32[N],
        inside_exponents int64[N], inside_values float64[N], bits uint64
        (2, n+1, S, W), table_buffer, bit_buffer, cell_edges int64 (n+1, n+1),
        n_edges): item (a, i, j) is cell_first[i, j] + table[i, j, a] - 1 (table 0:
        no item); bits as below; the hyperedges (rule, parent item, left item, right
        item) of cell (i, j) start at edges[cell_edges[i, j]] and end where the next
        recorded cell's start (n_edges for the last), or cell_edges[i, j] is -1 when
        they were not recorded.
    """
    # Only cells i < j are read, and each cell's row is zeroed when it is built: no
    # pass over the whole table (half of it unused), cheaper on a sparse chart.
    size = (n + 1) * (n + 1) * n_symbols
    if table_buffer.shape[0] < size:
        table_buffer = np.empty(size, table_buffer.dtype)
    table = table_buffer[:size].reshape((n + 1, n + 1, n_symbols))
    # Bit k of bits[0, i, a] (word k // 64): an item (a, i, k) exists; of bits[1, j, a]:
    # an item (a, k, j) exists. When cell (i, j) is built, those starting at i all end
    # before j and those ending at j start after i, so the AND of a left and a right
    # child's bitsets is the rule's splits.
    n_words = n // 64 + 1
    size = 2 * (n + 1) * n_symbols * n_words
    if bit_buffer.shape[0] < size:
        bit_buffer = np.empty(size, np.uint64)
    bits = bit_buffer[:size].reshape((2, n + 1, n_symbols, n_words))
    bits[:] = 0
    cell_first = np.zeros((n + 1, n + 1), np.int64)
    cell_count = np.zeros((n + 1, n + 1), np.int64)
    # Recording the hyperedges saves the outside pass searching them again (half its
    # time), but on a loose mask a long sentence has tens of millions: past the
    # buffer's capacity, the remaining cells are not recorded.
    cell_edges = np.full((n + 1, n + 1), -1, np.int64)
    # Typed values, not literals, for the jitted helpers they are passed to: a literal
    # makes numba compile those once more (chart.scaled).
    n_edges = np.int64(0)
    recording = np.bool_(True)
    # context[j, a]: whether an item of a ending at j can be in a parse (always, unless
    # a is left-only: _context_row).
    context = np.ones((n + 1, n_symbols), np.bool_)
    item_symbols = np.empty(n_symbols, np.int32)
    item_starts = np.empty(n_symbols, np.int32)
    item_ends = np.empty(n_symbols, np.int32)
    exponents = np.empty(n_symbols, np.int64)
    values = np.empty(n_symbols)  # float64 written one way (chart.scaled)
    n_items = np.int64(0)
    cell_values = np.zeros(n_symbols)
    cell_exponents = np.full(n_symbols, EMPTY, np.int64)
    cell_live = np.zeros(n_symbols, np.bool_)
    touched = np.empty(n_symbols, np.int32)
    parents = np.empty(n_symbols, np.int32)
    unary_steps = np.empty(unary_rules.shape[0], np.int64)
    lex_first = lexical_first(lex_positions, n)
    # By decreasing start: every cell starting at j is complete when a cell ending at
    # j is built, so a left-only symbol with no right sibling there is skipped.
    for i in range(n - 1, -1, -1):
        _context_row(i + 1, n, left_symbols, sibling_offsets, siblings, bits, context)
        for j in range(i + 1, n + 1):
            table[i, j] = 0
            needed = n_items + n_symbols  # a cell has at most one item per symbol
            item_symbols = grow(item_symbols, needed)
            item_starts = grow(item_starts, needed)
            item_ends = grow(item_ends, needed)
            exponents = grow(exponents, needed)
            values = grow(values, needed)
            n_touched = 0
            if j == i + 1:
                for lex in range(lex_first[i], lex_first[i + 1]):
                    tag = lex_tags[lex]
                    if has_mask and not mask[i, j, columns[tag]]:
                        continue
                    if context[j, tag]:
                        cell_values[tag] = lex_values[lex_offsets[lex]]
                        cell_exponents[tag] = 0
                        cell_live[tag] = True
                        touched[n_touched] = tag
                        n_touched += 1
            else:
                n_parents = parents_in_context(
                    i, j, binary_parents, has_mask, mask, mask_words, column_offsets,
                    column_members, context, parents,
                )  # fmt: skip
                first_edge = n_edges
                n_touched, n_edges = _binary_cell(
                    i, j, parents, n_parents, binary_rules, binary_weights, group_offsets,
                    group_lefts, group_rules, table, cell_first, bits, values, exponents,
                    cell_values, cell_exponents, cell_live, touched, recording, edges,
                    n_edges, n_items,
                )  # fmt: skip
                if recording and n_edges > edges.shape[0]:
                    recording = False
                    n_edges = first_edge
                if recording:
                    cell_edges[i, j] = first_edge
            if n_touched:
                n_touched = _unary_cell(
                    i, j, unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                    has_mask, mask, columns, context, cell_values, cell_exponents, cell_live,
                    touched, n_touched, unary_steps,
                )  # fmt: skip
            cell_first[i, j] = n_items
            cell_count[i, j] = n_touched
            _commit_cell(
                i, j, n_touched, n_items, table, bits, item_symbols, item_starts,
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
        bits,
        table_buffer,
        bit_buffer,
        cell_edges,
        n_edges,
    )


@njit(**HELPER)
def _context_row(j, n, left_symbols, sibling_offsets, siblings, bits, context):
    """context[j] for the left-only symbols (only ever the left child of a binary rule:
    intermediate symbols, whose name holds their right sibling): an item of one ending
    at j can be in a parse only if one of its right siblings has an item starting at
    j. Final once every cell starting at j is built.

    Computed for the whole row at once, not looked up as needed: a helper taking
    arrays called in a hot loop, even inlined or rarely, makes numba count references
    there (the sparse pass ran half as fast again)."""
    for a in left_symbols:
        found = False
        if j < n:
            # No early exit: the loop is short, and a data-dependent branch mispredicts.
            for s in range(sibling_offsets[a], sibling_offsets[a + 1]):
                for w in range(bits.shape[3]):
                    found = found or bits[0, j, siblings[s], w] != 0
        context[j, a] = found


@njit(**HELPER)
def _binary_cell(i, j, parents, n_parents, binary_rules, binary_weights, group_offsets,
                 group_lefts, group_rules, table, cell_first, bits, values, exponents,
                 cell_values, cell_exponents, cell_live, touched, recording, edges, n_edges,
                 n_items):  # fmt: skip
    """The binary rules of cell (i, j): sums into cell_values and, if recording,
    hyperedges into edges while they fit (n_edges counts them all). RETURNS (items
    touched, n_edges)."""
    n_words = bits.shape[3]
    n_touched = 0
    for p in range(n_parents):
        a = parents[p]
        total = 0.0
        exponent = EMPTY
        found = False
        for g in range(group_offsets[a], group_offsets[a + 1]):
            b = group_lefts[g]
            any_b = np.uint64(0)
            for w in range(n_words):
                any_b |= bits[0, i, b, w]
            if any_b == 0:
                continue
            for r in range(group_rules[g], group_rules[g + 1]):
                c = binary_rules[r, 2]
                w_r = binary_weights[r]
                for w in range(n_words):
                    splits = bits[0, i, b, w] & bits[1, j, c, w]
                    while splits:
                        k, splits = pop_split(splits, w)
                        left = cell_first[i, k] + table[i, k, b] - 1
                        right = cell_first[k, j] + table[k, j, c] - 1
                        found = True
                        if recording:
                            if n_edges < edges.shape[0]:
                                # Items are numbered in touch order: a's id is known.
                                edges[n_edges, 0] = r
                                edges[n_edges, 1] = n_items + n_touched
                                edges[n_edges, 2] = left
                                edges[n_edges, 3] = right
                            n_edges += 1
                        total, exponent = add(
                            total,
                            exponent,
                            w_r * values[left] * values[right],
                            exponents[left] + exponents[right],
                        )
        # An item is created when a derivation reaches it, even with a zero sum
        # (signed grammars), as in the latent kernels.
        if found:
            cell_live[a] = True
            touched[n_touched] = a
            n_touched += 1
            cell_values[a] = total
            cell_exponents[a] = exponent
    return n_touched, n_edges


@njit(**HELPER)
def _unary_cell(i, j, unary_rules, unary_weights, unary_by_parent, unary_parent_order,
                has_mask, mask, columns, context, cell_values, cell_exponents, cell_live,
                touched, n_touched, steps):  # fmt: skip
    """Unary closure of cell (i, j) (``kernel_parts.unary_walk``), with the parents
    out of context left out. RETURNS the number of items touched."""
    n_touched, n_steps = unary_walk(
        i, j, unary_rules, unary_by_parent, unary_parent_order, has_mask, mask, columns,
        context[j], cell_live, touched, n_touched, steps,
    )  # fmt: skip
    for s in range(n_steps):
        r = steps[s]
        p = unary_rules[r, 0]
        c = unary_rules[r, 1]
        cell_values[p], cell_exponents[p] = add(
            cell_values[p], cell_exponents[p], unary_weights[r] * cell_values[c],
            cell_exponents[c],
        )  # fmt: skip
    return n_touched


@njit(**HELPER)
def _commit_cell(i, j, n_touched, n_items, table, bits, item_symbols, item_starts,
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
        values[item], exponents[item] = normalised(cell_values[a], cell_exponents[a])
        cell_live[a] = False
        cell_values[a] = 0.0
        cell_exponents[a] = EMPTY
        bits[0, i, a, j // 64] |= np.uint64(1) << np.uint64(j % 64)
        bits[1, j, a, i // 64] |= np.uint64(1) << np.uint64(i % 64)


@njit(**KERNEL)
def one_state_outside(
    n, root, binary_rules, binary_weights, group_offsets, group_lefts, group_rules,
    unary_rules, unary_weights, unary_by_parent, unary_parent_order,
    table, cell_first, cell_count, item_symbols, item_starts, item_ends, inside_exponents,
    inside_values, bits, edges, cell_edges, z_mantissa, z_exponent, with_rules,
):  # fmt: skip
    """Outside pass, cells in the inside pass's order backwards (widest first), with
    marginals and (if `with_rules`) anchored rule posteriors, all divided by Z. The
    unary closure of each cell runs before its binary hyperedges, parents before
    children. The hyperedges are those the inside pass recorded (edges, cell_edges),
    or for the cells it could not, searched again from the cell's items with a
    non-zero outside score (table, bits: the inside pass's); edges holds the
    recorded ones only.

    RETURNS (marginals float64[N], binary posteriors (rules int32, starts int32, splits
        int32, ends int32, scores float64, items int32 (K, 3)), unary posteriors (rules
        int32, starts int32, ends int32, scores float64, items int32 (K, 2))), as
        latent_kernels.latent_outside, cell by cell in the inside pass's order.
    """
    n_items = item_symbols.shape[0]
    out_values = np.zeros(n_items)
    out_exponents = np.full(n_items, EMPTY, np.int64)
    top_item = cell_first[0, n] + table[0, n, root] - 1
    out_values[top_item] = 1.0
    out_exponents[top_item] = 0
    # At most one posterior per item and unary rule of its symbol.
    n_unary_rules = 0
    if with_rules:
        for item in range(n_items):
            a = item_symbols[item]
            n_unary_rules += unary_by_parent[a + 1] - unary_by_parent[a]
    unary_posteriors = np.empty(n_unary_rules)
    unary_keys = np.empty((n_unary_rules, 5), np.int32)  # (rule, start, end, parent, child)
    n_unary = np.int64(0)  # not a literal 0 (chart.scaled)
    binary_posteriors = np.empty(1024 if with_rules else 0)
    binary_keys = np.empty((1024 if with_rules else 0, 4), np.int32)  # as edges
    n_binary = np.int64(0)
    searched = np.empty((1024, 4), np.int32)  # the hyperedges of an unrecorded cell
    end_edge = edges.shape[0]  # the recorded hyperedges of the cell after this one
    for i in range(n):  # the inside pass's cell order, backwards
        for j in range(n, i, -1):
            first_item = cell_first[i, j]
            last_item = first_item + cell_count[i, j]
            # Every parent of this cell's items is complete: normalise their outsides.
            for item in range(first_item, last_item):
                out_values[item], out_exponents[item] = normalised(
                    out_values[item], out_exponents[item]
                )
            n_unary = _unary_outside(
                i, j, unary_rules, unary_weights, unary_by_parent, unary_parent_order, table,
                first_item, inside_exponents, inside_values, out_values, out_exponents, z_mantissa,
                z_exponent, with_rules, unary_posteriors, unary_keys, n_unary,
            )  # fmt: skip
            if j - i == 1:
                continue
            if cell_edges[i, j] >= 0:
                cell = edges
                first_edge = cell_edges[i, j]
                last_edge = end_edge
                end_edge = first_edge
            else:
                # At most one hyperedge per rule and split of each item.
                most = 0
                for item in range(first_item, last_item):
                    a = item_symbols[item]
                    most += group_rules[group_offsets[a + 1]] - group_rules[group_offsets[a]]
                searched = grow(searched, most * (j - i - 1))
                cell = searched
                first_edge = 0
                last_edge = _search_edges(
                    i, j, first_item, last_item, binary_rules, group_offsets, group_lefts,
                    group_rules, table, cell_first, bits, item_symbols, out_values, searched,
                )  # fmt: skip
            if with_rules:
                binary_posteriors = grow(binary_posteriors, n_binary + last_edge - first_edge)
                binary_keys = grow(binary_keys, n_binary + last_edge - first_edge)
            n_binary = _binary_outside(
                first_edge, last_edge, cell, binary_weights, inside_exponents, inside_values,
                out_values, out_exponents, z_mantissa, z_exponent, with_rules,
                binary_posteriors, binary_keys, n_binary,
            )  # fmt: skip
    marginals = np.zeros(n_items)
    for item in range(n_items):
        value = out_values[item] * inside_values[item]
        if value != 0.0:
            marginals[item] = times_pow2(
                value / z_mantissa, out_exponents[item] + inside_exponents[item] - z_exponent
            )
    # Reversed: cell by cell in the inside pass's order, each cell's unary parents
    # children first, the order decode.rule_cky needs.
    binary_keys = binary_keys[:n_binary][::-1].copy()
    return (
        marginals,
        (
            binary_keys[:, 0].copy(),
            item_starts[binary_keys[:, 1]],
            item_ends[binary_keys[:, 2]],
            item_ends[binary_keys[:, 1]],
            binary_posteriors[:n_binary][::-1].copy(),
            binary_keys[:, 1:].copy(),
        ),
        (
            unary_keys[:n_unary, 0][::-1].copy(),
            unary_keys[:n_unary, 1][::-1].copy(),
            unary_keys[:n_unary, 2][::-1].copy(),
            unary_posteriors[:n_unary][::-1].copy(),
            unary_keys[:n_unary, 3:][::-1].copy(),
        ),
    )


@njit(**HELPER)
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
                posteriors[n_unary] = times_pow2(
                    value * inside_values[child] / z_mantissa,
                    exponent + inside_exponents[child] - z_exponent,
                )
                n_unary += 1
            out_values[child], out_exponents[child] = add(
                out_values[child], out_exponents[child], value, exponent
            )
    return n_unary


@njit(**HELPER)
def _search_edges(i, j, first_item, last_item, binary_rules, group_offsets, group_lefts,
                  group_rules, table, cell_first, bits, item_symbols, out_values,
                  edges):  # fmt: skip
    """The hyperedges of the items of cell (i, j) (ids first_item to last_item) with a
    non-zero outside score, into edges (room reserved by the caller), searched as the
    inside pass did. RETURNS how many.

    The bitsets are complete now: bits[0, i, b] also has ends from j on, which the
    group test masks, but the AND with bits[1, j, c] (starts before j) needs no mask,
    nor does bits[1, j, c] (starts up to i) in the AND with bits[0, i, b] (ends after
    i)."""
    n_words = bits.shape[3]
    n_edges = 0
    for parent in range(first_item, last_item):
        if out_values[parent] == 0.0:
            continue
        a = item_symbols[parent]
        for g in range(group_offsets[a], group_offsets[a + 1]):
            b = group_lefts[g]
            any_b = np.uint64(0)
            for w in range(n_words):
                any_b |= bits[0, i, b, w] & _below(j, w)
            if any_b == 0:
                continue
            for r in range(group_rules[g], group_rules[g + 1]):
                c = binary_rules[r, 2]
                for w in range(n_words):
                    splits = bits[0, i, b, w] & bits[1, j, c, w]
                    while splits:
                        k, splits = pop_split(splits, w)
                        edges[n_edges, 0] = r
                        edges[n_edges, 1] = parent
                        edges[n_edges, 2] = cell_first[i, k] + table[i, k, b] - 1
                        edges[n_edges, 3] = cell_first[k, j] + table[k, j, c] - 1
                        n_edges += 1
    return n_edges


@njit(**HELPER)
def _binary_outside(first_edge, last_edge, edges, binary_weights, inside_exponents,
                    inside_values, out_values, out_exponents, z_mantissa, z_exponent,
                    with_rules, posteriors, keys, n_binary):  # fmt: skip
    """Push the outside of one cell's items through their hyperedges
    edges[first_edge:last_edge], with the posteriors of those whose children are
    non-zero (room reserved by the caller). RETURNS the posteriors written."""
    for e in range(last_edge - 1, first_edge - 1, -1):
        parent = edges[e, 1]
        outside = out_values[parent]
        if outside == 0.0:
            continue
        left = edges[e, 2]
        right = edges[e, 3]
        exponent = out_exponents[parent]
        x = binary_weights[edges[e, 0]] * outside
        value_b = inside_values[left]
        value_c = inside_values[right]
        out_values[left], out_exponents[left] = add(
            out_values[left], out_exponents[left], x * value_c,
            exponent + inside_exponents[right],
        )  # fmt: skip
        out_values[right], out_exponents[right] = add(
            out_values[right], out_exponents[right], x * value_b,
            exponent + inside_exponents[left],
        )  # fmt: skip
        if with_rules and value_b != 0.0 and value_c != 0.0:
            for k in range(4):  # not a slice copy (chart.scaled)
                keys[n_binary, k] = edges[e, k]
            posteriors[n_binary] = times_pow2(
                x * value_b * value_c / z_mantissa,
                exponent + inside_exponents[left] + inside_exponents[right] - z_exponent,
            )
            n_binary += 1
    return n_binary


@njit(cache=True, nogil=True, inline="always")
def _below(j, w):
    """The bits of word w for the numbers below j."""
    if j >= 64 * (w + 1):
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    if j <= 64 * w:
        return np.uint64(0)
    return (np.uint64(1) << np.uint64(j - 64 * w)) - np.uint64(1)
