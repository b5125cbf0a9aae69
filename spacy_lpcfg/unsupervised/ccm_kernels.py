"""Numba kernels of the CCM: span keys, inside-outside over bracketings, Viterbi.

Spans of a sentence of ``n`` words are stored in triangular order: the span
``[i, j)`` (``0 <= i < j <= n``) at ``j * (j - 1) // 2 + i``, so a sentence has
``n (n + 1) / 2`` of them, starting at ``span_offsets[s]`` in the flat arrays.
A bracketing's score is the sum, over its constituents (every word and the
whole sentence included), of the span's log ratio ``phi`` (see ``ccm``).
"""

from __future__ import annotations

import numba
import numpy as np

from .. import kernel_cache

kernel_cache.install()  # numba caches the kernels by their place in the package

_MULTIPLIER = np.int64(0x9E3779B97F4A7C15 - 2**64)  # odd 64-bit constant, wraps


@numba.njit(cache=True, inline="always")
def span_index(i, j):
    return j * (j - 1) // 2 + i


@numba.njit(cache=True)
def span_keys(tags, offsets, n_tags):
    """Per span: a 64-bit hash of its tag sequence (yield) and its context id.

    The context is (tag before, tag after), the sentence boundary being tag n_tags.
    RETURNS: (hashes, contexts, span_offsets).
    """
    n_sentences = offsets.shape[0] - 1
    span_offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    for s in range(n_sentences):
        n = offsets[s + 1] - offsets[s]
        span_offsets[s + 1] = span_offsets[s] + n * (n + 1) // 2
    hashes = np.empty(span_offsets[-1], dtype=np.int64)
    contexts = np.empty(span_offsets[-1], dtype=np.int64)
    for s in range(n_sentences):
        start, n = offsets[s], offsets[s + 1] - offsets[s]
        for i in range(n):
            h = np.int64(1469598103934665603)
            left = tags[start + i - 1] if i > 0 else n_tags
            for j in range(i + 1, n + 1):
                h = (h ^ np.int64(tags[start + j - 1] + 1)) * _MULTIPLIER
                right = tags[start + j] if j < n else n_tags
                slot = span_offsets[s] + span_index(i, j)
                hashes[slot] = h
                contexts[slot] = left * (n_tags + 1) + right
    return hashes, contexts, span_offsets


@numba.njit(cache=True)
def inside_outside(phi, n):
    """Span posteriors of one sentence under the uniform-tree x phi model.

    phi (np.ndarray): the sentence's log span ratios, triangular order.
    RETURNS: (posteriors in triangular order, log partition function).

    Every binary tree over n words has 2n - 1 constituents, so subtracting a
    constant from all of phi leaves the posteriors unchanged: the pass runs in
    plain reals on the centred phi (an order of magnitude faster than log
    space), and falls back to log space when that under- or overflows.
    """
    shift = phi.mean()
    posteriors, log_z = _inside_outside_reals(np.exp(phi - shift), n)
    if np.isfinite(log_z) and np.all(np.isfinite(posteriors)):
        return posteriors, log_z + (2 * n - 1) * shift
    return _inside_outside_logs(phi, n)


@numba.njit(cache=True)
def _inside_outside_reals(factor, n):
    size = n * (n + 1) // 2
    inside = np.zeros(size)
    outside = np.zeros(size)
    for i in range(n):
        inside[span_index(i, i + 1)] = factor[span_index(i, i + 1)]
    for length in range(2, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            total = 0.0
            for k in range(i + 1, j):
                total += inside[span_index(i, k)] * inside[span_index(k, j)]
            inside[span_index(i, j)] = total * factor[span_index(i, j)]
    z = inside[span_index(0, n)]
    if not (1e-280 < z < 1e280):
        return inside, -np.inf
    outside[span_index(0, n)] = 1.0
    for length in range(n, 1, -1):
        for i in range(0, n - length + 1):
            j = i + length
            above = outside[span_index(i, j)] * factor[span_index(i, j)]
            for k in range(i + 1, j):
                left, right = span_index(i, k), span_index(k, j)
                outside[left] += above * inside[right]
                outside[right] += above * inside[left]
    return inside * outside / z, np.log(z)


@numba.njit(cache=True)
def _inside_outside_logs(phi, n):
    size = n * (n + 1) // 2
    inside = np.full(size, -np.inf)
    outside = np.full(size, -np.inf)
    for i in range(n):
        inside[span_index(i, i + 1)] = phi[span_index(i, i + 1)]
    for length in range(2, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            total = -np.inf
            for k in range(i + 1, j):
                total = np.logaddexp(total, inside[span_index(i, k)] + inside[span_index(k, j)])
            inside[span_index(i, j)] = total + phi[span_index(i, j)]
    outside[span_index(0, n)] = 0.0
    for length in range(n, 1, -1):
        for i in range(0, n - length + 1):
            j = i + length
            above = outside[span_index(i, j)] + phi[span_index(i, j)]
            for k in range(i + 1, j):
                left, right = span_index(i, k), span_index(k, j)
                outside[left] = np.logaddexp(outside[left], above + inside[right])
                outside[right] = np.logaddexp(outside[right], above + inside[left])
    log_z = inside[span_index(0, n)]
    return np.exp(inside + outside - log_z), log_z


@numba.njit(cache=True)
def expected_counts(phi_yield, phi_context, yields, contexts, span_offsets, n_yields, n_contexts):
    """The E step over a corpus: expected constituent counts per yield and context.

    phi_yield / phi_context: log P(.|c) - log P(.|d) per id.
    RETURNS: (constituent counts of yields, of contexts, sum of log partition functions);
        distituent counts are the span counts minus these.
    """
    yield_counts = np.zeros(n_yields)
    context_counts = np.zeros(n_contexts)
    total_log_z = 0.0
    for s in range(span_offsets.shape[0] - 1):
        start, stop = span_offsets[s], span_offsets[s + 1]
        size = stop - start
        n = int((np.sqrt(8 * size + 1) - 1) // 2)
        phi = np.empty(size)
        for t in range(size):
            phi[t] = phi_yield[yields[start + t]] + phi_context[contexts[start + t]]
        posteriors, log_z = inside_outside(phi, n)
        total_log_z += log_z
        for t in range(size):
            yield_counts[yields[start + t]] += posteriors[t]
            context_counts[contexts[start + t]] += posteriors[t]
    return yield_counts, context_counts, total_log_z


@numba.njit(cache=True)
def split_uniform_posteriors(n):
    """P(span is a constituent) when trees are grown by uniform random splits (K&M's initialiser)."""
    size = n * (n + 1) // 2
    posteriors = np.zeros(size)
    posteriors[span_index(0, n)] = 1.0
    for length in range(n, 1, -1):
        for i in range(0, n - length + 1):
            j = i + length
            share = posteriors[span_index(i, j)] / (length - 1)
            for k in range(i + 1, j):
                posteriors[span_index(i, k)] += share
                posteriors[span_index(k, j)] += share
    return posteriors


@numba.njit(cache=True)
def viterbi_brackets(phi, n):
    """The bracketing of highest total phi: its spans of >= 2 words, as an (m, 2) array."""
    size = n * (n + 1) // 2
    best = np.full(size, -np.inf)
    split = np.full(size, -1, dtype=np.int64)
    for i in range(n):
        best[span_index(i, i + 1)] = phi[span_index(i, i + 1)]
    for length in range(2, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            for k in range(i + 1, j):
                score = best[span_index(i, k)] + best[span_index(k, j)]
                if score > best[span_index(i, j)]:
                    best[span_index(i, j)] = score
                    split[span_index(i, j)] = k
            best[span_index(i, j)] += phi[span_index(i, j)]
    out = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    count = 0
    stack = [(0, n)]
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue
        out[count, 0], out[count, 1] = i, j
        count += 1
        k = split[span_index(i, j)]
        stack.append((i, k))
        stack.append((k, j))
    return out[:count]
