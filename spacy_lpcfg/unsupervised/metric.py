"""The spectral additive tree metric of Parikh, Cohen & Xing (2014), with kernel-smoothed covariances.

For a tag sequence ``x`` and word positions ``j < k`` (Parikh, Cohen & Xing
2014, Eq. 5 and Figure 3.3):

    d(j, k) = -log Λ_m(Σ_x(j, k)) + ½ log Λ_m(Σ_x(j, j)) + ½ log Λ_m(Σ_x(k, k))

with ``Λ_m`` the product of the top ``m`` singular values and ``Σ_x(j, k)`` the
uncentred cross-covariance of the word vectors at ``j`` and ``k`` (the
bracketer centres the vectors per tag first: ``SpectralBracketer.center``),
smoothed over all training pairs ``(j', k')`` of all sentences ``x'`` by the kernel

    K = max(0, 1 - |δ - δ'| / (γ (δ + δ')))     δ = k - j,  δ' = k' - j'

when the tags at ``j, k`` equal those at ``j', k'`` and the direction is the same
(else 0). The extract of the paper lost the kernel's formula; this form (a
relative length difference against the bandwidth ``γ``) is our reading of
section 4.1, and it satisfies docs/design/architecture.md, section 9 (non-zero only for the same
tags and direction, decreasing in the length difference).

Since the kernel depends on ``(x_j, x_k, δ)`` only, so does ``Σ_x(j, k)``: the
learner computes ``log Λ_m`` once per (left tag, right tag, distance) key from
the summed outer products of the training pairs with that key, and a sentence's
distance matrix is a table lookup. Pairs further apart than ``max_distance``
are not collected (distances beyond it are read at ``max_distance``).
"""

from __future__ import annotations

import numba
import numpy as np

from .. import kernel_cache

kernel_cache.install()  # numba caches the kernels by their place in the package


@numba.njit(cache=True)
def _pairs_by_key(tags, offsets, n_tags, max_distance):
    """Token pairs (left, right) grouped by key (left tag, right tag, distance)."""
    width = max_distance + 1
    counts = np.zeros(n_tags * n_tags * width + 1, dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        for j in range(offsets[s], offsets[s + 1]):
            for k in range(j + 1, min(offsets[s + 1], j + width)):
                counts[(tags[j] * n_tags + tags[k]) * width + (k - j) + 1] += 1
    starts = np.cumsum(counts)
    fill = starts[:-1].copy()
    left = np.empty(starts[-1], dtype=np.int64)
    right = np.empty(starts[-1], dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        for j in range(offsets[s], offsets[s + 1]):
            for k in range(j + 1, min(offsets[s + 1], j + width)):
                key = (tags[j] * n_tags + tags[k]) * width + (k - j)
                left[fill[key]] = j
                right[fill[key]] = k
                fill[key] += 1
    return starts, left, right


@numba.njit(cache=True)
def _log_top_singular(matrix, rank):
    """log of the product of the top ``rank`` singular values (floored at 1e-12)."""
    values = np.linalg.eigvalsh(matrix.T @ matrix)  # ascending: squared singular values
    total = 0.0
    for i in range(min(rank, values.shape[0])):
        total += 0.5 * np.log(max(values[values.shape[0] - 1 - i], 1e-24))
    return total


@numba.njit(cache=True)
def _kernel(delta, source, bandwidth):
    return max(0.0, 1.0 - abs(delta - source) / (bandwidth * (delta + source)))


@numba.njit(cache=True)
def _log_spectra(vectors, tags, offsets, n_tags, max_distance, bandwidth, rank):
    width = max_distance + 1
    dim = vectors.shape[1]
    starts, left, right = _pairs_by_key(tags, offsets, n_tags, max_distance)
    log_cross = np.full((n_tags, n_tags, width), np.nan)
    sums = np.zeros((width, dim, dim))
    counts = np.zeros(width)
    for group in range(n_tags * n_tags):
        base = group * width
        if starts[base + width] == starts[base]:
            continue
        for source in range(1, width):
            sums[source] = 0.0
            counts[source] = starts[base + source + 1] - starts[base + source]
            for p in range(starts[base + source], starts[base + source + 1]):
                sums[source] += np.outer(vectors[left[p]], vectors[right[p]])
        for delta in range(1, width):
            total = np.zeros((dim, dim))
            weight = 0.0
            for source in range(1, width):
                if counts[source] == 0:
                    continue
                w = _kernel(delta, source, bandwidth)
                if w > 0.0:
                    total += w * sums[source]
                    weight += w * counts[source]
            if weight > 0.0:
                log_cross[group // n_tags, group % n_tags, delta] = _log_top_singular(
                    total / weight, rank
                )
    log_self = np.full(n_tags, np.nan)
    for tag in range(n_tags):
        total = np.zeros((dim, dim))
        count = 0
        for t in range(tags.shape[0]):
            if tags[t] == tag:
                total += np.outer(vectors[t], vectors[t])
                count += 1
        if count:
            log_self[tag] = _log_top_singular(total / count, rank)
    return log_cross, log_self


def log_spectra(
    vectors: np.ndarray,
    tags: np.ndarray,
    offsets: np.ndarray,
    n_tags: int,
    *,
    max_distance: int,
    bandwidth: float,
    rank: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``log Λ_m`` of the kernel-smoothed covariances of every key.

    vectors (np.ndarray): (n_tokens, dim) word vectors of all training tokens.
    tags (np.ndarray): (n_tokens,) their tag ids.
    offsets (np.ndarray): (n_sentences + 1,) sentence boundaries in the token arrays.
    n_tags (int): the number of tag ids.
    max_distance (int): the longest pair distance collected.
    bandwidth (float): the kernel's γ.
    rank (int): m, the number of singular values.
    RETURNS (tuple[np.ndarray, np.ndarray]): ``log_cross[a, b, δ]`` for a left
        tag ``a``, a right tag ``b`` at distance ``δ`` (NaN without data), and
        ``log_self[a]`` for ``Σ(j, j)`` of a word of tag ``a``.
    """
    return _log_spectra(
        np.ascontiguousarray(vectors, dtype=np.float64),
        np.asarray(tags, dtype=np.int64),
        np.asarray(offsets, dtype=np.int64),
        n_tags,
        max_distance,
        float(bandwidth),
        rank,
    )


def sentence_distances(
    tag_ids: np.ndarray, log_cross: np.ndarray, log_self: np.ndarray
) -> np.ndarray:
    """The (n, n) distance matrix of one sentence from the fitted spectra.

    tag_ids (np.ndarray): the sentence's tag ids, -1 for a tag unseen in training.
    RETURNS (np.ndarray): symmetric distances with a zero diagonal. A pair with no
        training data (unseen tags, or no pair of those tags near that distance)
        gets the largest known distance of the sentence: no evidence of
        dependence is read as independence, which the metric puts far apart.
    """
    n = len(tag_ids)
    max_distance = log_cross.shape[2] - 1
    tags = np.asarray(tag_ids)
    known = tags >= 0
    self_terms = np.where(known, log_self[np.where(known, tags, 0)], np.nan)
    j, k = np.triu_indices(n, 1)
    delta = np.minimum(k - j, max_distance)
    cross = np.where(
        known[j] & known[k],
        log_cross[np.where(known, tags, 0)[j], np.where(known, tags, 0)[k], delta],
        np.nan,
    )
    values = -cross + 0.5 * self_terms[j] + 0.5 * self_terms[k]
    finite = np.isfinite(values)
    fallback = values[finite].max() if finite.any() else 1.0
    values = np.where(finite, values, fallback)
    distances = np.zeros((n, n))
    distances[j, k] = values
    distances[k, j] = values
    return distances
