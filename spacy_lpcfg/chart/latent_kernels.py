"""Numba kernels: inside and outside for latent-state grammars over a pruned chart.

Numbers are signed reals with a scale: an item's vector is stored as a
mantissa vector whose largest |value| is in [0.5, 1) and an int64 exponent,
value = mantissa * 2**exponent (the Berkeley parser's ScalingTools, with
powers of two and per item rather than per cell). A zero vector has exponent
``EMPTY``. Spectral grammars have negative weights, so log space is not an
option.

The chart is a list of *items* (symbol, start, end), created cell by cell
(by width, then start) only when something derives them, so memory grows
with the items that exist, not with the mask. ``table[i, j, a]`` is the item
id of (a, i, j) or -1, and the items of a cell are contiguous.

The scaled arithmetic is ``chart.scaled``'s. Sums of many terms (a cell's item over
its rules, an item's outside over its parents) are kept unnormalised (``add_scaled``)
and normalised once: an inside when its cell is done, an outside before it is
pushed to the item's children (the outsides of words' items never are; only their
marginals read them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kernel_parts import lexical_first, parents_sorted, rule_splits, unary_walk
from .scaled import (
    EMPTY,
    FAST_MATH,
    HELPER,
    KERNEL,
    accumulate,
    add_scaled,
    grow,
    normalise,
    times_pow2,
)

NO_ITEM = -1


@njit(**KERNEL, fastmath=FAST_MATH)
def latent_inside(
    n, n_states, max_states,
    binary_rules, binary_offsets, binary_weights, binary_by_parent,
    sparse, sparse_offsets, sparse_parent_states, sparse_child_states,
    sparse_left_states, sparse_right_states, sparse_weights,
    unary_rules, unary_offsets, unary_weights, unary_by_parent, unary_parent_order,
    lex_positions, lex_tags, lex_offsets, lex_values,
    binary_parents, has_mask, mask, mask_words, columns, column_offsets, column_members,
):  # fmt: skip
    """Inside pass, the arguments packed by ``inputs`` (``latent_rule_args``,
    ``lexical_arrays``, ``mask_args``). A cell's parents of binary rules are read off the mask's non-zero
    words (``mask_words``: the mask as uint64, 8 columns a word; ``column_members``:
    the symbols with binary rules of each column, CSR ``column_offsets``), not tried
    one by one. Binary rules use the split-accumulation trick: per (cell, rule),
    sum the outer products inside_b ⊗ inside_c over split points (rescaled to a
    common exponent), then contract once with the (m_a, m_b, m_c) tensor: densely,
    or over its non-zero cells for the rules ``inputs.SparseBlocks`` marks sparse.
    A rule with fewer non-zero cells than half its m_b * m_c child pairs skips the
    outer products: each split adds its cells' products directly.
    ``binary_offsets``/``binary_weights`` need hold only the blocks of the other rules
    (``inputs.dense_blocks``).

    RETURNS (table int32 (n+1, n+1, S), cell_first int64 (n+1, n+1), cell_count int64
        (n+1, n+1), item_symbols int32[N], item_starts int32[N], item_ends int32[N],
        item_offsets int64[N], inside_exponents int64[N], inside_values float64[...],
        starts uint64 (n+1, S, W), ends uint64 (n+1, S, W)): bit k of starts[i, a]
        (word k // 64) says item (a, i, k) exists, of ends[j, a] that (a, k, j) does.
    """
    n_symbols = n_states.shape[0]
    table = np.full((n + 1, n + 1, n_symbols), NO_ITEM, np.int32)
    cell_first = np.zeros((n + 1, n + 1), np.int64)
    cell_count = np.zeros((n + 1, n + 1), np.int64)
    item_symbols = np.empty(256, np.int32)
    item_starts = np.empty(256, np.int32)
    item_ends = np.empty(256, np.int32)
    item_offsets = np.empty(256, np.int64)
    exponents = np.empty(256, np.int64)
    values = np.empty(256 * max_states)  # float64 written one way (chart.scaled)
    n_items = 0
    n_values = 0
    # Scratch for the cell being built; unary rules read and write it in place.
    cell_values = np.zeros((n_symbols, max_states))
    cell_exponents = np.full(n_symbols, EMPTY, np.int64)
    cell_live = np.zeros(n_symbols, np.bool_)
    touched = np.empty(n_symbols, np.int32)
    # Bit k of starts[i, a] (word k // 64): an item (a, i, k) exists; of ends[j, a]: an
    # item (a, k, j) exists. Cells are built by width, so when (i, j) is, those are the
    # narrower ones, and the AND of a left and a right child's words is the rule's
    # splits: one AND instead of a scan of every split, and only the splits where
    # both children exist.
    n_words = n // 64 + 1
    starts = np.zeros((n + 1, n_symbols, n_words), np.uint64)
    ends = np.zeros((n + 1, n_symbols, n_words), np.uint64)
    splits = np.empty(n + 1, np.int64)  # a rule's splits (rule_splits)
    outer = np.zeros(max_states * max_states)  # (m_b, m_c) flattened
    contracted = np.empty(max_states)
    parents = np.empty(n_symbols, np.int32)
    unary_steps = np.empty(unary_rules.shape[0], np.int64)
    everywhere = np.ones(n_symbols, np.bool_)  # no context row (kernel_parts.unary_walk)
    lex_first = lexical_first(lex_positions, n)
    # Constants passed to jitted helpers as typed values, not literals (chart.scaled).
    zero, empty = np.int64(0), np.int64(EMPTY)
    for width in range(1, n + 1):
        for i in range(n - width + 1):
            j = i + width
            n_touched = np.int64(0)  # not a literal 0 (chart.scaled)
            if width == 1:
                for lex in range(lex_first[i], lex_first[j]):
                    tag = lex_tags[lex]
                    if not has_mask or mask[i, j, columns[tag]]:
                        size = n_states[tag]
                        for h in range(size):
                            contracted[h] = lex_values[lex_offsets[lex] + h]
                        shift = normalise(contracted, size)
                        cell_exponents[tag] = accumulate(
                            cell_values[tag], zero, size, empty, contracted, shift
                        )
                        cell_live[tag] = True
                        touched[n_touched] = tag
                        n_touched += 1
            else:
                n_parents = parents_sorted(
                    i, j, binary_parents, has_mask, mask, mask_words, column_offsets,
                    column_members, parents,
                )  # fmt: skip
                for t in range(n_parents):
                    a = parents[t]
                    size_a = n_states[a]
                    for r in range(binary_by_parent[a], binary_by_parent[a + 1]):
                        b = binary_rules[r, 1]
                        c = binary_rules[r, 2]
                        n_splits = rule_splits(starts[i, b], ends[j, c], splits)
                        if n_splits == 0:
                            continue
                        top = EMPTY
                        for q in range(n_splits):
                            left = table[i, splits[q], b]
                            right = table[splits[q], j, c]
                            if exponents[left] != EMPTY and exponents[right] != EMPTY:
                                top = max(top, exponents[left] + exponents[right])
                        if not cell_live[a]:
                            cell_live[a] = True
                            touched[n_touched] = a
                            n_touched += 1
                        if top == EMPTY:
                            continue
                        size_b = n_states[b]
                        size_c = n_states[c]
                        first_cell = sparse_offsets[r]
                        last_cell = sparse_offsets[r + 1]
                        direct = sparse[r] and 2 * (last_cell - first_cell) < size_b * size_c
                        if direct:
                            for h1 in range(size_a):
                                contracted[h1] = 0.0
                        else:
                            outer[: size_b * size_c] = 0.0
                        for q in range(n_splits):
                            k = splits[q]
                            left = table[i, k, b]
                            right = table[k, j, c]
                            if exponents[left] == EMPTY or exponents[right] == EMPTY:
                                continue
                            factor = times_pow2(1.0, exponents[left] + exponents[right] - top)
                            if factor == 0.0:
                                continue
                            base_b = item_offsets[left]
                            base_c = item_offsets[right]
                            if direct:
                                for cell in range(first_cell, last_cell):
                                    contracted[sparse_parent_states[cell]] += (
                                        sparse_weights[cell]
                                        * factor
                                        * values[base_b + sparse_left_states[cell]]
                                        * values[base_c + sparse_right_states[cell]]
                                    )
                                continue
                            inside_c = values[base_c : base_c + size_c]
                            for h2 in range(size_b):
                                x = values[base_b + h2] * factor
                                row_bc = outer[h2 * size_c : (h2 + 1) * size_c]
                                for h3 in range(size_c):
                                    row_bc[h3] += x * inside_c[h3]
                        # Contract with the tensor: one dot product of length m_b * m_c per
                        # parent state, or one product per non-zero cell (done above when
                        # direct).
                        if direct:
                            pass
                        elif sparse[r]:
                            for h1 in range(size_a):
                                contracted[h1] = 0.0
                            for cell in range(first_cell, last_cell):
                                contracted[sparse_parent_states[cell]] += (
                                    sparse_weights[cell] * outer[sparse_child_states[cell]]
                                )
                        else:
                            base = binary_offsets[r]
                            size_bc = size_b * size_c
                            for h1 in range(size_a):
                                total = 0.0
                                row = base + h1 * size_bc
                                weights = binary_weights[row : row + size_bc]
                                for h23 in range(size_bc):
                                    total += weights[h23] * outer[h23]
                                contracted[h1] = total
                        if _any_nonzero(contracted, size_a):
                            cell_exponents[a] = add_scaled(
                                cell_values[a], zero, size_a, cell_exponents[a], contracted, top
                            )
            # Unary closure: parents in topological order, so chains are summed exactly.
            n_touched, n_steps = unary_walk(
                i, j, unary_rules, unary_by_parent, unary_parent_order, has_mask, mask,
                columns, everywhere, cell_live, touched, n_touched, unary_steps,
            )  # fmt: skip
            for step in range(n_steps):
                r = unary_steps[step]
                p = unary_rules[r, 0]
                c = unary_rules[r, 1]
                if cell_exponents[c] == EMPTY:
                    continue
                size_p = n_states[p]
                size_c = n_states[c]
                base = unary_offsets[r]
                for h1 in range(size_p):
                    total = 0.0
                    for h2 in range(size_c):
                        total += unary_weights[base + h1 * size_c + h2] * cell_values[c, h2]
                    contracted[h1] = total
                shift = normalise(contracted, size_p)
                if shift != EMPTY:
                    cell_exponents[p] = accumulate(
                        cell_values[p],
                        zero,
                        size_p,
                        cell_exponents[p],
                        contracted,
                        cell_exponents[c] + shift,
                    )
            # Commit the cell's items.
            cell_first[i, j] = n_items
            cell_count[i, j] = n_touched
            item_symbols = grow(item_symbols, n_items + n_touched)
            item_starts = grow(item_starts, n_items + n_touched)
            item_ends = grow(item_ends, n_items + n_touched)
            item_offsets = grow(item_offsets, n_items + n_touched)
            exponents = grow(exponents, n_items + n_touched)
            values = grow(values, n_values + n_touched * max_states)
            for t in range(n_touched):
                a = touched[t]
                size = n_states[a]
                table[i, j, a] = n_items
                starts[i, a, j // 64] |= np.uint64(1) << np.uint64(j % 64)
                ends[j, a, i // 64] |= np.uint64(1) << np.uint64(i % 64)
                item_symbols[n_items] = a
                item_starts[n_items] = i
                item_ends[n_items] = j
                item_offsets[n_items] = n_values
                exponents[n_items] = _renormalised(cell_values[a], zero, size, cell_exponents[a])
                for h in range(size):
                    values[n_values + h] = cell_values[a, h] if exponents[n_items] != EMPTY else 0.0
                n_items += 1
                n_values += size
                cell_live[a] = False
                cell_exponents[a] = EMPTY
    return (
        table,
        cell_first,
        cell_count,
        item_symbols[:n_items],
        item_starts[:n_items],
        item_ends[:n_items],
        item_offsets[:n_items],
        exponents[:n_items],
        values[:n_values],
        starts,
        ends,
    )


@njit(**KERNEL, fastmath=FAST_MATH)
def latent_outside(
    n, root, n_states, max_states,
    binary_rules, binary_offsets, binary_weights, binary_by_parent,
    sparse, sparse_offsets, sparse_parent_states, sparse_child_states,
    sparse_left_states, sparse_right_states, sparse_weights,
    unary_rules, unary_offsets, unary_weights, unary_by_parent, unary_parent_order,
    table, cell_first, cell_count, item_symbols, item_offsets, inside_exponents, inside_values,
    starts, ends, z_mantissa, z_exponent, with_rules,
):  # fmt: skip
    """Outside pass, pushing from each finished parent item to its children, with
    marginals and (if `with_rules`) anchored rule posteriors, all divided by Z.

    For a parent item and rule a -> b c it forms V[h2, h3] = sum_h1 out_a[h1] T[h1, h2, h3]
    once, then per split: out_b += V in_c, out_c += V^T in_b and the posterior
    (V in_c) . in_b, so each split costs O(m^2). The splits are the bits set in both
    the inside pass's ``starts[i, b]`` and ``ends[j, c]``.

    RETURNS (marginals float64[N], binary posteriors (rules int32, starts int32, splits
        int32, ends int32, scores float64, items int32 (K, 3): parent, left and right
        item), unary posteriors (rules int32, starts int32, ends int32, scores float64,
        items int32 (K, 2): parent and child item)).
    """
    n_items = item_symbols.shape[0]
    splits = np.empty(n + 1, np.int64)  # a rule's splits (rule_splits)
    out_values = np.zeros(inside_values.shape[0])
    out_exponents = np.full(n_items, EMPTY, np.int64)
    top_item = table[0, n, root]
    out_values[item_offsets[top_item]] = 1.0
    out_exponents[top_item] = 0
    projected = np.empty(max_states * max_states)
    most_cells = 0
    for r in range(sparse_offsets.shape[0] - 1):
        most_cells = max(most_cells, sparse_offsets[r + 1] - sparse_offsets[r])
    cell_values = np.empty(most_cells)  # out_a[h1] * T[h1, h2, h3] per non-zero cell
    left_vector = np.empty(max_states)
    right_vector = np.empty(max_states)
    capacity = 1024 if with_rules else 0
    b_rule = np.empty(capacity, np.int32)
    b_start = np.empty(capacity, np.int32)
    b_split = np.empty(capacity, np.int32)
    b_end = np.empty(capacity, np.int32)
    b_score = np.empty(capacity)
    b_items = np.empty(3 * capacity, np.int32)  # (parent, left, right) per posterior
    n_binary = np.int64(0)  # not a literal 0 (chart.scaled)
    u_rule = np.empty(capacity, np.int32)
    u_start = np.empty(capacity, np.int32)
    u_end = np.empty(capacity, np.int32)
    u_score = np.empty(capacity)
    u_items = np.empty(2 * capacity, np.int32)  # (parent, child)
    n_unary = np.int64(0)
    for width in range(n, 0, -1):
        for i in range(n - width + 1):
            j = i + width
            if with_rules:
                # Room for the cell's posteriors, reserved here: numba reference-counts
                # an array reassigned inside a loop on every iteration of that loop.
                most_unary = n_unary
                most_binary = n_binary
                for item in range(cell_first[i, j], cell_first[i, j] + cell_count[i, j]):
                    a = item_symbols[item]
                    most_unary += unary_by_parent[a + 1] - unary_by_parent[a]
                    most_binary += (binary_by_parent[a + 1] - binary_by_parent[a]) * (width - 1)
                u_rule = grow(u_rule, most_unary)
                u_start = grow(u_start, most_unary)
                u_end = grow(u_end, most_unary)
                u_score = grow(u_score, most_unary)
                u_items = grow(u_items, 2 * most_unary)
                b_rule = grow(b_rule, most_binary)
                b_start = grow(b_start, most_binary)
                b_split = grow(b_split, most_binary)
                b_end = grow(b_end, most_binary)
                b_score = grow(b_score, most_binary)
                b_items = grow(b_items, 3 * most_binary)
            # Unary closure, parents before children.
            for q in range(unary_parent_order.shape[0] - 1, -1, -1):
                p = unary_parent_order[q]
                parent = table[i, j, p]
                if parent < 0 or out_exponents[parent] == EMPTY:
                    continue
                size_p = n_states[p]
                base_p = item_offsets[parent]
                out_exponents[parent] = _renormalised(
                    out_values, base_p, size_p, out_exponents[parent]
                )
                if out_exponents[parent] == EMPTY:
                    continue
                for r in range(unary_by_parent[p], unary_by_parent[p + 1]):
                    c = unary_rules[r, 1]
                    child = table[i, j, c]
                    if child < 0:
                        continue
                    size_c = n_states[c]
                    base = unary_offsets[r]
                    for h2 in range(size_c):
                        total = 0.0
                        for h1 in range(size_p):
                            total += (
                                out_values[base_p + h1] * unary_weights[base + h1 * size_c + h2]
                            )
                        left_vector[h2] = total
                    shift = normalise(left_vector, size_c)
                    if shift == EMPTY:
                        continue
                    exponent = out_exponents[parent] + shift
                    if with_rules and inside_exponents[child] != EMPTY:
                        total = 0.0
                        for h2 in range(size_c):
                            total += left_vector[h2] * inside_values[item_offsets[child] + h2]
                        u_rule[n_unary] = r
                        u_start[n_unary] = i
                        u_end[n_unary] = j
                        u_items[2 * n_unary] = parent
                        u_items[2 * n_unary + 1] = child
                        u_score[n_unary] = times_pow2(
                            total / z_mantissa, exponent + inside_exponents[child] - z_exponent
                        )
                        n_unary += 1
                    out_exponents[child] = accumulate(
                        out_values,
                        item_offsets[child],
                        size_c,
                        out_exponents[child],
                        left_vector,
                        exponent,
                    )
            if width == 1:
                continue
            # Binary rules: push the (now final) outside of each item to its children.
            for parent in range(cell_first[i, j], cell_first[i, j] + cell_count[i, j]):
                if out_exponents[parent] == EMPTY:
                    continue
                a = item_symbols[parent]
                size_a = n_states[a]
                base_a = item_offsets[parent]
                out_exponents[parent] = _renormalised(
                    out_values, base_a, size_a, out_exponents[parent]
                )
                if out_exponents[parent] == EMPTY:
                    continue
                outside_a = out_values[base_a : base_a + size_a]
                for r in range(binary_by_parent[a], binary_by_parent[a + 1]):
                    b = binary_rules[r, 1]
                    c = binary_rules[r, 2]
                    n_splits = rule_splits(starts[i, b], ends[j, c], splits)
                    if n_splits == 0:
                        continue
                    size_b = n_states[b]
                    size_c = n_states[c]
                    base = binary_offsets[r]
                    first_cell = sparse_offsets[r]
                    n_cells = sparse_offsets[r + 1] - first_cell
                    direct = sparse[r] and 2 * n_cells < size_b * size_c
                    if direct:  # V stays as its non-zero cells
                        for cell in range(n_cells):
                            cell_values[cell] = (
                                outside_a[sparse_parent_states[first_cell + cell]]
                                * sparse_weights[first_cell + cell]
                            )
                        shift_v = normalise(cell_values, n_cells)
                    else:
                        for h23 in range(size_b * size_c):
                            projected[h23] = 0.0
                        if sparse[r]:
                            for cell in range(first_cell, first_cell + n_cells):
                                projected[sparse_child_states[cell]] += (
                                    outside_a[sparse_parent_states[cell]] * sparse_weights[cell]
                                )
                        else:
                            size_bc = size_b * size_c
                            for h1 in range(size_a):
                                x = out_values[base_a + h1]
                                row = base + h1 * size_bc
                                weights = binary_weights[row : row + size_bc]
                                for h23 in range(size_bc):
                                    projected[h23] += x * weights[h23]
                        shift_v = normalise(projected, size_b * size_c)
                    if shift_v == EMPTY:
                        continue
                    exponent_v = out_exponents[parent] + shift_v
                    # Per split: plain indices, not array views (numba reference-counts
                    # each view), and the children's outsides summed unnormalised
                    # (add_scaled; each is normalised once, when pushed down itself).
                    # With few states this bookkeeping was most of the pass.
                    for q in range(n_splits):
                        k = splits[q]
                        left = table[i, k, b]
                        right = table[k, j, c]
                        exponent_b = inside_exponents[left]
                        exponent_c = inside_exponents[right]
                        base_b = item_offsets[left]
                        base_c = item_offsets[right]
                        if exponent_c != EMPTY:
                            if direct:
                                for h2 in range(size_b):
                                    left_vector[h2] = 0.0
                                for cell in range(n_cells):
                                    left_vector[sparse_left_states[first_cell + cell]] += (
                                        cell_values[cell]
                                        * inside_values[
                                            base_c + sparse_right_states[first_cell + cell]
                                        ]
                                    )
                            else:
                                for h2 in range(size_b):
                                    row = h2 * size_c
                                    total = 0.0
                                    for h3 in range(size_c):
                                        total += projected[row + h3] * inside_values[base_c + h3]
                                    left_vector[h2] = total
                            if _any_nonzero(left_vector, size_b):
                                exponent = exponent_v + exponent_c
                                if with_rules and exponent_b != EMPTY:
                                    total = 0.0
                                    for h2 in range(size_b):
                                        total += left_vector[h2] * inside_values[base_b + h2]
                                    b_rule[n_binary] = r
                                    b_start[n_binary] = i
                                    b_split[n_binary] = k
                                    b_end[n_binary] = j
                                    b_items[3 * n_binary] = parent
                                    b_items[3 * n_binary + 1] = left
                                    b_items[3 * n_binary + 2] = right
                                    b_score[n_binary] = times_pow2(
                                        total / z_mantissa, exponent + exponent_b - z_exponent
                                    )
                                    n_binary += 1
                                out_exponents[left] = add_scaled(
                                    out_values,
                                    base_b,
                                    size_b,
                                    out_exponents[left],
                                    left_vector,
                                    exponent,
                                )
                        if exponent_b != EMPTY:
                            for h3 in range(size_c):
                                right_vector[h3] = 0.0
                            if direct:
                                for cell in range(n_cells):
                                    right_vector[sparse_right_states[first_cell + cell]] += (
                                        cell_values[cell]
                                        * inside_values[
                                            base_b + sparse_left_states[first_cell + cell]
                                        ]
                                    )
                            else:
                                for h2 in range(size_b):
                                    x = inside_values[base_b + h2]
                                    row = h2 * size_c
                                    for h3 in range(size_c):
                                        right_vector[h3] += x * projected[row + h3]
                            if _any_nonzero(right_vector, size_c):
                                out_exponents[right] = add_scaled(
                                    out_values,
                                    base_c,
                                    size_c,
                                    out_exponents[right],
                                    right_vector,
                                    exponent_v + exponent_b,
                                )
    marginals = np.zeros(n_items)
    for item in range(n_items):
        if out_exponents[item] == EMPTY or inside_exponents[item] == EMPTY:
            continue
        total = 0.0
        base = item_offsets[item]
        for h in range(n_states[item_symbols[item]]):
            total += out_values[base + h] * inside_values[base + h]
        marginals[item] = times_pow2(
            total / z_mantissa, out_exponents[item] + inside_exponents[item] - z_exponent
        )
    return (
        marginals,
        (
            b_rule[:n_binary],
            b_start[:n_binary],
            b_split[:n_binary],
            b_end[:n_binary],
            b_score[:n_binary],
            b_items[: 3 * n_binary].reshape((n_binary, 3)),
        ),
        (
            u_rule[:n_unary],
            u_start[:n_unary],
            u_end[:n_unary],
            u_score[:n_unary],
            u_items[: 2 * n_unary].reshape((n_unary, 2)),
        ),
    )


@njit(**HELPER, fastmath=FAST_MATH)
def _renormalised(values, start, size, exponent):
    """Normalise a vector summed with ``add_scaled`` (an item's inside when its cell is
    done, its outside before it is pushed down); RETURNS its exponent (EMPTY when it
    is zero: no terms, or signed terms that cancelled)."""
    if exponent == EMPTY:
        return EMPTY
    shift = normalise(values[start : start + size], size)
    return EMPTY if shift == EMPTY else exponent + shift


@njit(cache=True, nogil=True, inline="always")
def _any_nonzero(vector, size):
    """Whether vector[:size] has a non-zero entry: a zero term is neither added nor
    recorded as a posterior."""
    for h in range(size):  # noqa: SIM110 (numba compiles no generator for any())
        if vector[h] != 0.0:
            return True
    return False
