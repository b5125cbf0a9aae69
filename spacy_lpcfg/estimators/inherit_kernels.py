"""Numba kernels of INHERIT EM: the folded inside-outside over the nodes of gold trees.

Dreyer & Eisner (2006, Table 2) fold the INHERIT model's inside pass: a child's
feature is either its parent's (passed) or drawn from ``P_ann(. | child)``,
which depends on the child's symbol alone, so the drawn case needs one number
per node, ``fresh[i] = sum_b P_ann(b | X_i) inside[i, b]``, not a sum over the
child's feature inside the loop over the parent's. A binary node of rule
``r = X -> Y Z`` with children ``a``, ``b`` then costs O(L):

    inside[i, h] = P_r(h) (neither_r fresh[a] fresh[b] + left_r inside[a, h] fresh[b]
                           + right_r fresh[a] inside[b, h] + both_r inside[a, h] inside[b, h])

(PCFG-LA's is O(L^3)). A unary node passes (``pass_r``) or draws (``draw_r``);
the patterns a rule cannot take (``inherit.passable``: TOP's rules only draw)
have probability 0. The outside pass mirrors it: what a
parent sends to a child through the drawn terms is one number ``g``, spread
over the child's features by ``P_ann``, and ``g P_ann(b) inside[a, b]`` over the
child's posterior mass is the expected count of drawing ``b`` there.

Scaling and posteriors as in ``em.kernels``: inside and outside vectors divided
by their largest entry, posteriors normalised at each node (every node of a gold
tree is in it, so a node's posteriors sum to one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..chart.scaled import FAST_MATH, divide_by_largest
from .em.kernels import node_blocks, node_mass, scale_inside, seed_leaf, start_root

NEITHER, LEFT, RIGHT, BOTH = 0, 1, 2, 3  # columns of the binary pass patterns
DRAW, PASS = 0, 1  # columns of the unary ones


@njit(cache=True, nogil=True)
def _draw(outside, inside, start, size, annotation, ann_start, g, annotation_counts):
    """Add the drawn share ``g P_ann(.)`` to a child's (complete but unscaled) outside
    vector and its expected draws to ``annotation_counts``."""
    for h in range(size):
        outside[start + h] += g * annotation[ann_start + h]
    z = 0.0
    for h in range(size):
        z += outside[start + h] * inside[start + h]
    if z > 0.0 and g > 0.0:
        for h in range(size):
            annotation_counts[ann_start + h] += (
                g * annotation[ann_start + h] * inside[start + h] / z
            )


@njit(cache=True, nogil=True, fastmath=FAST_MATH)
def inherit_inside_outside(
    symbol,
    left,
    right,
    is_root,
    node_rule,
    n_states,
    state_start,
    binary_offsets,
    binary_weights,
    binary_patterns,
    unary_offsets,
    unary_weights,
    unary_patterns,
    lexical_offsets,
    lexical_weights,
    annotation,
):
    """Folded, scaled inside-outside over gold trees and the INHERIT expected counts.

    symbol, left, right, is_root, node_rule, n_states, state_start: as in
        ``em.kernels.inside_outside_nodes``.
    *_offsets, *_weights: ``P_r(h)``, a block of the parent's states per rule.
    binary_patterns (np.ndarray): float64[R2, 4], neither / left / right / both.
    unary_patterns (np.ndarray): float64[R1, 2], draw / pass.
    lexical_*: a block of the tag's states per (tag, entry) rule.
    annotation (np.ndarray): float64[sum(n_states)], ``P_ann(h | X)`` at X's states.
    RETURNS: log_likelihood (float), the expected counts of the binary, unary and
        lexical weights (like the weights), of the binary and unary patterns (like
        them), of the draws (like ``annotation``), state_counts (float64[sum(n_states)],
        expected nodes per state) and the posteriors of every node's states (float64,
        the nodes' blocks one after the other).
    """
    n = len(symbol)
    node_states, node_start, total = node_blocks(symbol, n_states)
    inside = np.zeros(total)
    outside = np.zeros(total)
    fresh = np.zeros(n)
    log_inside = np.zeros(n)
    local_scale = np.ones(n)
    binary_counts = np.zeros(len(binary_weights))
    unary_counts = np.zeros(len(unary_weights))
    lexical_counts = np.zeros(len(lexical_weights))
    binary_pattern_counts = np.zeros(binary_patterns.shape)
    unary_pattern_counts = np.zeros(unary_patterns.shape)
    annotation_counts = np.zeros(len(annotation))
    state_counts = np.zeros(len(annotation))
    posteriors = np.zeros(total)

    for i in range(n - 1, -1, -1):  # children first
        s, m, rule = node_start[i], node_states[i], node_rule[i]
        a, b = left[i], right[i]
        if b >= 0:
            sa, sb = node_start[a], node_start[b]
            pass_a, pass_b = node_states[a] == m, node_states[b] == m
            fa, fb = fresh[a], fresh[b]
            p = binary_patterns[rule]
            base = binary_offsets[rule]
            for h in range(m):
                ia = inside[sa + h] if pass_a else 0.0
                ib = inside[sb + h] if pass_b else 0.0
                value = p[NEITHER] * fa * fb + p[LEFT] * ia * fb
                value += p[RIGHT] * fa * ib + p[BOTH] * ia * ib
                inside[s + h] = binary_weights[base + h] * value
            log_inside[i] = log_inside[a] + log_inside[b]
        elif a >= 0:
            sa = node_start[a]
            pass_a = node_states[a] == m
            fa = fresh[a]
            q = unary_patterns[rule]
            base = unary_offsets[rule]
            for h in range(m):
                ia = inside[sa + h] if pass_a else 0.0
                inside[s + h] = unary_weights[base + h] * (q[DRAW] * fa + q[PASS] * ia)
            log_inside[i] = log_inside[a]
        else:
            seed_leaf(inside, s, m, lexical_weights, lexical_offsets[rule])
        scale_inside(inside, s, m, i, log_inside, local_scale)
        g = state_start[symbol[i]]
        f = 0.0
        for h in range(m):
            f += annotation[g + h] * inside[s + h]
        fresh[i] = f

    log_likelihood = 0.0
    for i in range(n):  # parents first: a node's outside is complete when it is reached
        s, m, rule = node_start[i], node_states[i], node_rule[i]
        if is_root[i]:
            log_likelihood += start_root(outside, inside, s, m, log_inside[i])
        z = node_mass(outside, inside, s, m)
        if z > 0.0:
            g = state_start[symbol[i]]
            for h in range(m):
                posterior = outside[s + h] * inside[s + h] / z
                posteriors[s + h] = posterior
                state_counts[g + h] += posterior
        # the posterior of a term of the node's inside sum is its share of the node's mass
        inverse_z = 1.0 / (z * local_scale[i]) if z > 0.0 else 0.0
        a, b = left[i], right[i]
        if b >= 0:
            sa, ma, sb, mb = node_start[a], node_states[a], node_start[b], node_states[b]
            pass_a, pass_b = ma == m, mb == m
            fa, fb = fresh[a], fresh[b]
            p = binary_patterns[rule]
            counts = binary_pattern_counts[rule]
            base = binary_offsets[rule]
            ga, gb = 0.0, 0.0
            for h in range(m):
                ow = outside[s + h] * binary_weights[base + h]
                if ow == 0.0:
                    continue
                ia = inside[sa + h] if pass_a else 0.0
                ib = inside[sb + h] if pass_b else 0.0
                t_neither, t_left = p[NEITHER] * fa * fb, p[LEFT] * ia * fb
                t_right, t_both = p[RIGHT] * fa * ib, p[BOTH] * ia * ib
                c = ow * inverse_z
                binary_counts[base + h] += c * (t_neither + t_left + t_right + t_both)
                counts[NEITHER] += c * t_neither
                counts[LEFT] += c * t_left
                counts[RIGHT] += c * t_right
                counts[BOTH] += c * t_both
                if pass_a:
                    outside[sa + h] += ow * (p[LEFT] * fb + p[BOTH] * ib)
                if pass_b:
                    outside[sb + h] += ow * (p[RIGHT] * fa + p[BOTH] * ia)
                ga += ow * (p[NEITHER] * fb + p[RIGHT] * ib)
                gb += ow * (p[NEITHER] * fa + p[LEFT] * ia)
            ann_a, ann_b = state_start[symbol[a]], state_start[symbol[b]]
            _draw(outside, inside, sa, ma, annotation, ann_a, ga, annotation_counts)
            _draw(outside, inside, sb, mb, annotation, ann_b, gb, annotation_counts)
            divide_by_largest(outside, sa, ma)
            divide_by_largest(outside, sb, mb)
        elif a >= 0:
            sa, ma = node_start[a], node_states[a]
            pass_a = ma == m
            fa = fresh[a]
            q = unary_patterns[rule]
            counts = unary_pattern_counts[rule]
            base = unary_offsets[rule]
            ga = 0.0
            for h in range(m):
                ow = outside[s + h] * unary_weights[base + h]
                if ow == 0.0:
                    continue
                ia = inside[sa + h] if pass_a else 0.0
                t_draw, t_pass = q[DRAW] * fa, q[PASS] * ia
                c = ow * inverse_z
                unary_counts[base + h] += c * (t_draw + t_pass)
                counts[DRAW] += c * t_draw
                counts[PASS] += c * t_pass
                if pass_a:
                    outside[sa + h] += ow * q[PASS]
                ga += ow * q[DRAW]
            ann_a = state_start[symbol[a]]
            _draw(outside, inside, sa, ma, annotation, ann_a, ga, annotation_counts)
            divide_by_largest(outside, sa, ma)
        elif z > 0.0:
            base = lexical_offsets[rule]
            for h in range(m):
                lexical_counts[base + h] += posteriors[s + h]
    return (
        log_likelihood,
        binary_counts,
        unary_counts,
        lexical_counts,
        binary_pattern_counts,
        unary_pattern_counts,
        annotation_counts,
        state_counts,
        posteriors,
    )


@njit(cache=True, nogil=True)
def expand_binary(
    rules, n_states, offsets, weights, patterns, annotation, state_start, out_offsets
):
    """The PCFG-LA blocks of INHERIT binary rules: cell (h, j, k) of ``X -> Y Z`` is
    ``P_r(h) (neither P_ann(j|Y) P_ann(k|Z) + left [j=h] P_ann(k|Z) + right P_ann(j|Y)
    [k=h] + both [j=h][k=h])``. RETURNS float64[out_offsets[-1]] (``em.kernels``
    layout)."""
    result = np.zeros(out_offsets[-1])
    for r in range(len(rules)):
        m, mb, mc = n_states[rules[r, 0]], n_states[rules[r, 1]], n_states[rules[r, 2]]
        gb, gc = state_start[rules[r, 1]], state_start[rules[r, 2]]
        p = patterns[r]
        for h in range(m):
            w = weights[offsets[r] + h]
            for j in range(mb):
                for k in range(mc):
                    value = p[NEITHER] * annotation[gb + j] * annotation[gc + k]
                    if j == h and mb == m:
                        value += p[LEFT] * annotation[gc + k]
                    if k == h and mc == m:
                        value += p[RIGHT] * annotation[gb + j]
                    if j == h and k == h and mb == m and mc == m:
                        value += p[BOTH]
                    result[out_offsets[r] + (h * mb + j) * mc + k] = w * value
    return result


@njit(cache=True, nogil=True)
def expand_unary(rules, n_states, offsets, weights, patterns, annotation, state_start, out_offsets):
    """The PCFG-LA blocks of INHERIT unary rules: ``P_r(h) (draw P_ann(j|Y) + pass
    [j=h])``. RETURNS float64[out_offsets[-1]]."""
    result = np.zeros(out_offsets[-1])
    for r in range(len(rules)):
        m, mb = n_states[rules[r, 0]], n_states[rules[r, 1]]
        gb = state_start[rules[r, 1]]
        q = patterns[r]
        for h in range(m):
            w = weights[offsets[r] + h]
            for j in range(mb):
                value = q[DRAW] * annotation[gb + j]
                if j == h and mb == m:
                    value += q[PASS]
                result[out_offsets[r] + h * mb + j] = w * value
    return result
