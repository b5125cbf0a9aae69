"""Numba kernels of EM: inside-outside over the nodes of gold trees, and the weight blocks.

The trees of a treebank are one run of nodes (``trees.nodes.TreebankNodes``),
each tree in pre-order, so children come after their parent: a backward pass
over all nodes computes inside vectors and a forward pass outside vectors,
with no loop over trees. The structure is given, so a node's inside vector
only ranges over its symbol's latent states: O(m^3) per binary node.

Scaling: every node's inside (outside) vector is divided by its largest entry
and the logarithm of the factors along the way is kept per node, so the true
value is ``inside[i] * exp(log_inside[i])``. The vectors stay in [0, 1] with a
one, however long the sentence. Expected counts need no exponentials: the
posteriors of the rule at a node sum to one over its state cells, so they are
normalised at the node.

Inner loops read rule rows and state vectors through slices (``w = weights[row:row
+ m]``, then ``w[k]``), not ``weights[row + k]``: numba wraps negative indices, and
for a sum of signed offsets LLVM cannot rule that out, so it emitted gathers and
scatters instead of contiguous vector loads; slices halve the E-step's time.

Numba's on-disk cache (``cache=True``) keeps the compiled kernels between runs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...chart.scaled import FAST_MATH, divide_by_largest


@njit(cache=True, nogil=True, inline="always")
def seed_leaf(inside, s, m, lexical_weights, base):
    """A leaf's inside vector: its lexical rule's block."""
    for h in range(m):
        inside[s + h] = lexical_weights[base + h]


@njit(cache=True, nogil=True, inline="always")
def scale_inside(inside, s, m, i, log_inside, local_scale):
    """Divide node i's inside vector by its largest entry: its log joins log_inside[i]
    and the factor itself, local_scale[i] (0 for a zero vector)."""
    scale = divide_by_largest(inside, s, m)
    log_inside[i] += scale
    local_scale[i] = math.exp(scale) if scale > -np.inf else 0.0


@njit(cache=True, nogil=True, inline="always")
def start_root(outside, inside, s, m, log_inside_root):
    """Set a root's outside vector to ones; RETURNS its tree's log-likelihood."""
    for h in range(m):
        outside[s + h] = 1.0
    return log_inside_root + math.log(inside[s]) if inside[s] > 0 else -np.inf


@njit(cache=True, nogil=True, inline="always")
def node_mass(outside, inside, s, m):
    """sum_h outside * inside at a node: its tree's probability over the scale
    factors along the way."""
    z = 0.0
    for h in range(m):
        z += outside[s + h] * inside[s + h]
    return z


@njit(cache=True, nogil=True)
def node_blocks(symbol, n_states):
    """Each node's states and where its block starts in the flat per-node vectors;
    RETURNS (node_states int64[N], node_start int64[N], total int)."""
    n = len(symbol)
    node_states = np.empty(n, dtype=np.int64)
    node_start = np.empty(n, dtype=np.int64)
    total = 0
    for i in range(n):
        node_states[i] = n_states[symbol[i]]
        node_start[i] = total
        total += node_states[i]
    return node_states, node_start, total


@njit(cache=True, nogil=True, fastmath=FAST_MATH)
def inside_outside_nodes(
    symbol,
    left,
    right,
    is_root,
    node_rule,
    n_states,
    state_start,
    binary_offsets,
    binary_weights,
    unary_offsets,
    unary_weights,
    lexical_offsets,
    lexical_weights,
    with_counts=True,
):
    """Scaled inside-outside over gold trees and the expected counts of their rules.

    symbol (np.ndarray): int32[N], each node's symbol; nodes tree by tree, in pre-order.
    left, right (np.ndarray): int64[N], children (-1 for none; a unary child is left).
    is_root (np.ndarray): bool[N], the TOP nodes.
    node_rule (np.ndarray): int64[N], the node's binary, unary or (leaf) lexical rule.
    n_states (np.ndarray): int64[n_symbols], latent states per symbol.
    state_start (np.ndarray): int64[n_symbols], each symbol's first global state id.
    *_offsets, *_weights: rule blocks as in ``grammar.lpcfg`` (lexical blocks (m_tag,)).
    with_counts (bool): False: the passes only (merge losses, token posteriors): the
        rule counts come back empty, not as arrays the size of the weights.
    RETURNS: inside, outside (float64[sum of the nodes' states], scaled), log_inside,
        log_outside (float64[N]), log_likelihood (float, over the roots), the expected
        binary, unary and lexical counts (shaped like the weights) and state_counts
        (float64[sum(n_states)], expected nodes per symbol state).
    """
    n = len(symbol)
    node_states, node_start, total = node_blocks(symbol, n_states)
    inside = np.zeros(total)
    outside = np.zeros(total)
    log_inside = np.zeros(n)
    log_outside = np.zeros(n)
    # the factor taken out of a node's inside vector alone (not its children's)
    local_scale = np.ones(n)
    binary_counts = np.zeros(len(binary_weights) if with_counts else 0)
    unary_counts = np.zeros(len(unary_weights) if with_counts else 0)
    lexical_counts = np.zeros(len(lexical_weights) if with_counts else 0)
    state_counts = np.zeros(int(n_states.sum()))

    for i in range(n - 1, -1, -1):  # children first
        s, m, rule = node_start[i], node_states[i], node_rule[i]
        a, b = left[i], right[i]
        if b >= 0:
            sa, ma, sb, mb = node_start[a], node_states[a], node_start[b], node_states[b]
            base = binary_offsets[rule]
            y = inside[sb : sb + mb]
            for h in range(m):
                value = 0.0
                for j in range(ma):
                    x = inside[sa + j]
                    if x == 0.0:
                        continue
                    row = base + (h * ma + j) * mb
                    w = binary_weights[row : row + mb]
                    t = 0.0
                    for k in range(mb):
                        t += w[k] * y[k]
                    value += x * t
                inside[s + h] = value
            log_inside[i] = log_inside[a] + log_inside[b]
        elif a >= 0:
            sa, ma = node_start[a], node_states[a]
            base = unary_offsets[rule]
            y = inside[sa : sa + ma]
            for h in range(m):
                w = unary_weights[base + h * ma : base + (h + 1) * ma]
                value = 0.0
                for j in range(ma):
                    value += w[j] * y[j]
                inside[s + h] = value
            log_inside[i] = log_inside[a]
        else:
            seed_leaf(inside, s, m, lexical_weights, lexical_offsets[rule])
        scale_inside(inside, s, m, i, log_inside, local_scale)

    pushed_right = np.zeros(max(int(n_states.max()), 1))  # the right child's outside, summed
    log_likelihood = 0.0
    for i in range(n):  # parents first: push outside vectors down to the children
        s, m, rule = node_start[i], node_states[i], node_rule[i]
        if is_root[i]:
            log_likelihood += start_root(outside, inside, s, m, log_inside[i])
        # Z: the tree's probability over the scale factors at this node; the posterior
        # of a state cell of the node's rule is its product of scores over Z
        z = node_mass(outside, inside, s, m) * local_scale[i]
        inverse_z = 1.0 / z if z > 0.0 else 0.0  # an impossible tree adds no counts
        if z > 0.0:
            g = state_start[symbol[i]]
            for h in range(m):
                state_counts[g + h] += outside[s + h] * inside[s + h] * local_scale[i] / z
        a, b = left[i], right[i]
        if b >= 0:
            sa, ma, sb, mb = node_start[a], node_states[a], node_start[b], node_states[b]
            base = binary_offsets[rule]
            y = inside[sb : sb + mb]
            right_outside = pushed_right[:mb]
            right_outside[:] = 0.0
            for h in range(m):
                o = outside[s + h]
                if o == 0.0:
                    continue
                for j in range(ma):
                    row = base + (h * ma + j) * mb
                    w = binary_weights[row : row + mb]
                    ox = o * inside[sa + j]
                    pushed = 0.0
                    if with_counts:
                        counts = binary_counts[row : row + mb]
                        posterior = ox * inverse_z
                        for k in range(mb):
                            pushed += w[k] * y[k]
                            right_outside[k] += ox * w[k]
                            counts[k] += posterior * w[k] * y[k]
                    else:
                        for k in range(mb):
                            pushed += w[k] * y[k]
                            right_outside[k] += ox * w[k]
                    outside[sa + j] += o * pushed
            for k in range(mb):
                outside[sb + k] += right_outside[k]
            log_outside[a] = log_outside[i] + log_inside[b] + divide_by_largest(outside, sa, ma)
            log_outside[b] = log_outside[i] + log_inside[a] + divide_by_largest(outside, sb, mb)
        elif a >= 0:
            sa, ma = node_start[a], node_states[a]
            base = unary_offsets[rule]
            for h in range(m):
                o = outside[s + h]
                if o == 0.0:
                    continue
                for j in range(ma):
                    w = o * unary_weights[base + h * ma + j]
                    outside[sa + j] += w
                    if with_counts:
                        unary_counts[base + h * ma + j] += w * inside[sa + j] * inverse_z
            log_outside[a] = log_outside[i] + divide_by_largest(outside, sa, ma)
        elif z > 0.0 and with_counts:
            base = lexical_offsets[rule]
            for h in range(m):
                lexical_counts[base + h] += outside[s + h] * inside[s + h] * local_scale[i] / z
    return (
        inside,
        outside,
        log_inside,
        log_outside,
        log_likelihood,
        binary_counts,
        unary_counts,
        lexical_counts,
        state_counts,
    )


@njit(cache=True, nogil=True, error_model="numpy")
def leaf_posteriors(symbol, left, right, n_states, inside, outside):
    """The posterior over the states of each leaf (``inside * outside`` normalised at
    the node), leaves in node order, flat: without temporaries the size of ``inside``.

    inside, outside (np.ndarray): an ``inside_outside_nodes`` result.
    RETURNS (np.ndarray): float64[sum of the leaves' states].
    """
    size = 0
    for i in range(len(symbol)):
        if left[i] < 0 and right[i] < 0:
            size += n_states[symbol[i]]
    result = np.empty(size)
    s = 0
    out = 0
    for i in range(len(symbol)):
        m = n_states[symbol[i]]
        if left[i] < 0 and right[i] < 0:
            total = 0.0
            for h in range(m):
                total += inside[s + h] * outside[s + h]
            for h in range(m):
                result[out + h] = inside[s + h] * outside[s + h] / total
            out += m
        s += m
    return result


@njit(cache=True, nogil=True)
def merge_losses(symbol, n_states, state_start, is_split, inside, outside, pair_share):
    """Petrov et al. (2006)'s approximate log-likelihood change of merging each split.

    At every node of a split symbol, the pair of sub-states (2k, 2k + 1) is merged
    there alone: the inside score of the merged state is ``p1 I1 + p2 I2`` (p the
    sub-states' shares of the pair's expected count) and its outside score
    ``O1 + O2``, the other states unchanged; the changes in log-likelihood are
    summed over the nodes. Scaling cancels in the ratio at each node.

    is_split (np.ndarray): bool[n_symbols], the symbols whose states come in pairs.
    inside, outside (np.ndarray): an ``inside_outside_nodes`` result.
    pair_share (np.ndarray): float64[sum(n_states)], each state's share of its pair.
    RETURNS (np.ndarray): float64[sum(n_states)], the change at the pair's first
        state (2k), 0 elsewhere.
    """
    losses = np.zeros(int(n_states.sum()))
    s = 0
    for i in range(len(symbol)):
        a = symbol[i]
        m = n_states[a]
        if is_split[a]:
            total = 0.0
            for h in range(m):
                total += inside[s + h] * outside[s + h]
            if total > 0.0:
                g = state_start[a]
                for k in range(m // 2):
                    i1, i2 = inside[s + 2 * k], inside[s + 2 * k + 1]
                    o1, o2 = outside[s + 2 * k], outside[s + 2 * k + 1]
                    merged = (pair_share[g + 2 * k] * i1 + pair_share[g + 2 * k + 1] * i2) * (
                        o1 + o2
                    )
                    changed = total - i1 * o1 - i2 * o2 + merged
                    losses[g + 2 * k] += math.log(max(changed, 1e-300) / total)
        s += m
    return losses


# Rule blocks: the M-step, splitting and merging ------------------------------------------
#
# A kind's rules are given by ``shape`` int64[R, 3], the states of the symbols of each
# rule's block (parent first; 1 for the columns a kind does not have), and ``offsets``
# int64[R + 1]; ``start`` int64[R, 3] is the first global state id of each column's
# symbol (of the parent for the M-step). Loops over blocks need no per-cell index arrays,
# which would take several times the memory of the weights.


@njit(cache=True, nogil=True)
def add_parent_totals(shape, offsets, start, counts, totals):
    """totals[g] += the counts of the rules of global parent state g."""
    for r in range(len(offsets) - 1):
        m = shape[r, 0]
        rest = shape[r, 1] * shape[r, 2]
        for h in range(m):
            total = 0.0
            base = offsets[r] + h * rest
            for x in range(rest):
                total += counts[base + x]
            totals[start[r, 0] + h] += total


@njit(cache=True, nogil=True)
def normalise_blocks(shape, offsets, start, counts, totals, alpha):
    """Counts over their parent state's total, then each cell mixed with its mean over
    the parent's states: ``(1 - alpha) w[h, x] + alpha mean_h' w[h', x]``. A state
    without counts gets zero weights. RETURNS float64 like counts."""
    weights = np.zeros(len(counts))
    for r in range(len(offsets) - 1):
        m = shape[r, 0]
        rest = shape[r, 1] * shape[r, 2]
        for h in range(m):
            total = totals[start[r, 0] + h]
            if total > 0.0:
                base = offsets[r] + h * rest
                for x in range(rest):
                    weights[base + x] = counts[base + x] / total
    smooth_blocks(shape, offsets, weights, alpha)
    return weights


@njit(cache=True, nogil=True)
def normalise_blocks_in_place(shape, offsets, start, counts, totals, alpha):
    """``normalise_blocks`` written over ``counts`` (the same weights, no new array)."""
    for r in range(len(offsets) - 1):
        m = shape[r, 0]
        rest = shape[r, 1] * shape[r, 2]
        for h in range(m):
            total = totals[start[r, 0] + h]
            base = offsets[r] + h * rest
            if total > 0.0:
                for x in range(rest):
                    counts[base + x] = counts[base + x] / total
            else:
                for x in range(rest):
                    counts[base + x] = 0.0
    smooth_blocks(shape, offsets, counts, alpha)


@njit(cache=True, nogil=True)
def smooth_blocks(shape, offsets, weights, alpha):
    """In place: ``w[h, x] = (1 - alpha) w[h, x] + alpha mean_h' w[h', x]`` per block."""
    if alpha == 0.0:
        return
    for r in range(len(offsets) - 1):
        m = shape[r, 0]
        if m < 2:
            continue
        rest = shape[r, 1] * shape[r, 2]
        for x in range(rest):
            mean = 0.0
            for h in range(m):
                mean += weights[offsets[r] + h * rest + x]
            mean /= m
            for h in range(m):
                cell = offsets[r] + h * rest + x
                weights[cell] = (1.0 - alpha) * weights[cell] + alpha * mean


@njit(cache=True, nogil=True)
def split_blocks(old_shape, old_offsets, new_shape, new_offsets, weights):
    """Blocks over split states: new cell (h, j, k) copies old cell (h // 2, j // 2,
    k // 2) (no halving on a column whose states did not double), divided by the
    number of new child cells per old one. RETURNS float64[new_offsets[-1]]."""
    result = np.empty(new_offsets[-1])
    for r in range(len(old_offsets) - 1):
        split = np.empty(3, dtype=np.int64)
        for c in range(3):
            split[c] = 2 if new_shape[r, c] == 2 * old_shape[r, c] else 1
        share = 1.0 / (split[1] * split[2])
        mb, mc = new_shape[r, 1], new_shape[r, 2]
        ob, oc = old_shape[r, 1], old_shape[r, 2]
        for h in range(new_shape[r, 0]):
            for j in range(mb):
                for k in range(mc):
                    old = old_offsets[r] + ((h // split[0]) * ob + j // split[1]) * oc
                    result[new_offsets[r] + (h * mb + j) * mc + k] = (
                        weights[old + k // split[2]] * share
                    )
    return result


@njit(cache=True, nogil=True)
def merge_blocks(old_shape, old_offsets, new_shape, new_offsets, start, new_state, counts):
    """Counts summed over merged states: old cell (h, j, k) adds to new cell
    (new_state[start[r, 0] + h], ...). RETURNS float64[new_offsets[-1]]."""
    result = np.zeros(new_offsets[-1])
    for r in range(len(old_offsets) - 1):
        mb, mc = new_shape[r, 1], new_shape[r, 2]
        for h in range(old_shape[r, 0]):
            nh = new_state[start[r, 0] + h]
            for j in range(old_shape[r, 1]):
                nj = new_state[start[r, 1] + j]
                base = old_offsets[r] + (h * old_shape[r, 1] + j) * old_shape[r, 2]
                for k in range(old_shape[r, 2]):
                    nk = new_state[start[r, 2] + k]
                    result[new_offsets[r] + (nh * mb + nj) * mc + nk] += counts[base + k]
    return result
