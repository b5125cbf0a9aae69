"""Word vectors learned from raw text: a one-step CCA of words against their neighbours.

Paper 002 represents each word by a vector (Brown-cluster bits, neural
embeddings or the OSCCA embeddings of Dhillon et al. 2012); docs/design/architecture.md, section 9
asks for embeddings learned from the training text when the pipeline has no
vectors. This is OSCCA with diagonal whitening: the word x context count
matrix (contexts: the word just before and just after, each as its own
feature, the rarer words pooled into one context per side) is scaled by
``1 / sqrt(count(word) * count(context))`` and its top left singular vectors,
normalised to unit length, are the word vectors. Words are lowercased.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.linalg import svds

BOUNDARY = "<s>"  # the context of the first and last words


def context_embeddings(
    sentences: Sequence[Sequence[str]],
    dim: int,
    *,
    n_contexts: int = 2000,
    random_state: int = 0,
) -> dict[str, np.ndarray]:
    """Unit-length word vectors from the words' left and right neighbours.

    sentences (Sequence[Sequence[str]]): tokenised sentences (punctuation removed).
    dim (int): the vector size.
    n_contexts (int): the most frequent words kept as distinct contexts per side.
    random_state (int): seeds the SVD's starting vector.
    RETURNS (dict[str, np.ndarray]): lowercased word -> vector of size ``dim``.
    """
    lowered = [[word.lower() for word in sentence] for sentence in sentences]
    counts = Counter(word for sentence in lowered for word in sentence)
    vocabulary = {word: index for index, word in enumerate(sorted(counts))}
    frequent = [word for word, _ in counts.most_common(n_contexts)]
    context_of = {word: index for index, word in enumerate([BOUNDARY, *frequent])}
    width = len(context_of) + 1  # the last column pools the rare words
    rows, cols = [], []
    for sentence in lowered:
        padded = [BOUNDARY, *sentence, BOUNDARY]
        for position, word in enumerate(sentence, start=1):
            row = vocabulary[word]
            left = context_of.get(padded[position - 1], width - 1)
            right = context_of.get(padded[position + 1], width - 1)
            rows += [row, row]
            cols += [left, width + right]
    matrix = coo_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(len(vocabulary), 2 * width)
    ).tocsr()
    matrix.sum_duplicates()
    row_sums = np.asarray(matrix.sum(axis=1)).ravel()
    col_sums = np.asarray(matrix.sum(axis=0)).ravel()
    scaled = matrix.multiply(1 / np.sqrt(row_sums)[:, None]).multiply(
        1 / np.sqrt(np.maximum(col_sums, 1))[None, :]
    )
    k = min(dim, min(scaled.shape) - 1)
    if k >= 1:
        start = np.random.default_rng(random_state).uniform(size=min(scaled.shape))
        left_vectors, _, _ = svds(scaled.tocsc(), k=k, v0=start)
    else:  # a vocabulary of one word (or none): the sparse solver needs more, dense does not
        k = min(dim, *scaled.shape)
        left_vectors = np.linalg.svd(scaled.toarray(), full_matrices=False)[0][:, :k]
    vectors = np.zeros((len(vocabulary), dim))
    vectors[:, :k] = left_vectors
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return {word: vectors[index] for word, index in vocabulary.items()}
