"""The spectral estimator of Cohen et al. (2012, 2013): tensor parameters from projections.

With ``y`` the inside and ``z`` the outside projection of a node (see
``projections``), ``count(a)`` the nodes of symbol ``a`` and ``n_trees`` the
trees (docs/design/architecture.md, 6.2):

* ``T[a -> b c] = (1 / count(a)) sum over nodes a -> b c of z ⊗ y_left ⊗ y_right``
  (shape (m_a, m_b, m_c)); unary rules ``a -> b`` likewise with ``z ⊗ y_b``;
* ``pi[a] = (1 / n_trees) sum over the roots labelled a of y`` (the rule TOP -> a,
  shape (1, m_a));
* ``Q[t -> e] = P(e | t) * zbar(t, e)`` for a preterminal ``t`` and a vocabulary
  entry ``e`` (a known word or an unknown-word class): ``P(e | t)`` is the
  smoothed emission of the one-state lexicon and ``zbar(t, e)`` the mean ``z`` of
  the training tokens of ``t`` that ``e`` stands for, shrunk towards the mean
  ``z`` of all tokens of ``t`` with ``lexical_smoothing`` pseudo-tokens. Without
  smoothing and unknown words this is Cohen et al.'s
  ``(1 / count(t)) sum over tokens t -> e of z``; the shrinkage gives rare
  entries (and the classes, whose tokens are rare words) a stable estimate.

The parameters are signed reals, so the grammar has no probabilistic
projection: the model carries the MLE grammar of the same transformed trees as
``extra_grammars[0]`` (``training["coarse_grammar"] = 0``), the coarse grammar
for pruning, and is decoded with ``mbr``, which uses the signed marginals
directly (``decode.mbr``: a span whose labels all have marginals <= the bracket
cost stays unlabelled, so negative marginals never create brackets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np

from ..defaults import LATENT, LEXICON, SPECTRAL
from ..grammar import LPCFG
from ..grammar.lexicon import Lexicon, LexiconSpec
from ..progress import progress
from ..trees.transforms import TransformSpec
from .base import Number
from .latent import LatentEstimator, ProjectedTreebank
from .mle import one_state_grammar
from .projections import Projections


class SpectralEstimator(LatentEstimator):
    """Spectral L-PCFG (Cohen et al. 2012, 2013): signed tensor parameters.

    lexical_smoothing (float): pseudo-tokens of the tag's mean z in each entry's mean z.
    random_state (int | np.random.Generator | None): seeds the randomized SVDs.
    The other parameters, and the fitted attributes, are LatentEstimator's; the
    coarse grammar is the MLE grammar of the same transformed trees.
    """

    name = "spectral"
    _parameter_constraints = {"lexical_smoothing": [Number("a number >= 0", low=0.0)]}

    lexical_smoothing: float

    def __init__(
        self,
        *,
        n_states: int | Mapping[str, int] = SPECTRAL.n_states,
        transform: TransformSpec | Mapping | None = TransformSpec(),
        kappa: float = LATENT.kappa,
        word_threshold: int = LATENT.word_threshold,
        min_count_per_state: float = LATENT.min_count_per_state,
        singular_value_threshold: float = LATENT.singular_value_threshold,
        lexical_smoothing: float = SPECTRAL.lexical_smoothing,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    def fit_projected(
        self, projected: ProjectedTreebank, *, random_state: np.random.Generator | None = None
    ) -> SpectralEstimator:
        """Estimate from an already projected treebank (its SVD rank bounds n_states).

        random_state (np.random.Generator | None): not used: given the projections,
            the estimate is deterministic.
        RETURNS (SpectralEstimator): self.
        """
        self._check_params()
        counts, symbols = projected.counts, projected.counts.symbols
        n_states = self._n_states(projected)
        projections = projected.projections.truncated(n_states)
        lexicon = self._make_lexicon().fit_counts(counts.tokens)
        coarse = one_state_grammar(counts, *counts.relative_frequencies(), lexicon)
        binary_offsets, binary_weights = _binary_weights(projected, projections, n_states)
        unary_offsets, unary_weights = _unary_weights(projected, projections, n_states)
        lexical = _lexical_weights(projected, projections, lexicon, coarse, self.lexical_smoothing)
        grammar = LPCFG(
            symbols,
            n_states,
            binary_rules=counts.binary_rules,
            binary_offsets=binary_offsets,
            binary_weights=binary_weights,
            unary_rules=counts.unary_rules,
            unary_offsets=unary_offsets,
            unary_weights=unary_weights,
            lexical_rules=coarse.lexical_rules,
            lexical_offsets=_offsets(lexical),
            lexical_weights=_concatenate(lexical),
            words=coarse.words,
        )
        self._set_fitted(projected, n_states, grammar, coarse, lexicon)
        return self


def _binary_weights(
    projected: ProjectedTreebank, projections: Projections, n_states: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, weights): per binary rule, (1 / count(a)) sum of z ⊗ y_left ⊗ y_right
    over its nodes."""
    nodes, rules = projected.nodes, projected.counts.binary_rules
    counts = projections.counts
    offsets, weights = _flat_blocks(rules, n_states)
    for rule, members in _nodes_by_rule(projected.binary_rule, len(rules), "binary rules"):
        a, b, c = rules[rule]
        z = _outside(projections, a, members)
        y_left = _inside(projections, b, nodes.left[members])
        y_right = _inside(projections, c, nodes.right[members])
        block = _sum_outer(z, y_left, y_right) / counts[a]
        weights[offsets[rule] : offsets[rule + 1]] = block.ravel()
    return offsets, weights


def _unary_weights(
    projected: ProjectedTreebank, projections: Projections, n_states: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, weights): per unary rule, (1 / count(a)) sum of z ⊗ y_child; for
    TOP -> X the sum of the roots' y over the number of trees."""
    nodes, rules = projected.nodes, projected.counts.unary_rules
    root = projected.counts.symbols.root
    counts = projections.counts
    offsets, weights = _flat_blocks(rules, n_states)
    for rule, members in _nodes_by_rule(projected.unary_rule, len(rules), "unary rules"):
        a, b = rules[rule]
        y_child = _inside(projections, b, nodes.left[members])
        if a == root:
            block = y_child.sum(axis=0) / projected.counts.n_trees
        else:
            block = _outside(projections, a, members).T @ y_child / counts[a]
        weights[offsets[rule] : offsets[rule + 1]] = block.ravel()
    return offsets, weights


def _lexical_weights(
    projected: ProjectedTreebank,
    projections: Projections,
    lexicon: Lexicon,
    coarse: LPCFG,
    smoothing: float,
) -> list[np.ndarray]:
    """Per lexical rule of the coarse grammar (tag t, entry e): P(e | t) * zbar(t, e)."""
    from scipy import sparse

    nodes = projected.nodes
    token_entries, token_ids = _token_entries(nodes, lexicon, coarse.word_index)
    tags = nodes.token_tag
    tokens_by_tag = np.argsort(tags, kind="stable")
    token_bounds = np.searchsorted(tags[tokens_by_tag], np.arange(coarse.n_symbols + 1))
    pairs_by_tag = np.argsort(tags[token_ids], kind="stable")
    pair_bounds = np.searchsorted(tags[token_ids][pairs_by_tag], np.arange(coarse.n_symbols + 1))
    rank_in_tag = np.empty(len(tags), dtype=np.int64)
    rank_in_tag[tokens_by_tag] = np.arange(len(tags)) - token_bounds[tags[tokens_by_tag]]
    rules = coarse.lexical_rules
    starts = np.searchsorted(rules[:, 0], np.arange(coarse.n_symbols + 1))
    blocks = []
    for tag in progress(np.flatnonzero(np.diff(starts)), desc="lexical rules", unit="tag"):
        tokens = tokens_by_tag[token_bounds[tag] : token_bounds[tag + 1]]
        z = _outside(projections, tag, nodes.token_node[tokens])
        # which entries each token of the tag stands for (a rare word: all its classes)
        pairs = pairs_by_tag[pair_bounds[tag] : pair_bounds[tag + 1]]
        incidence = sparse.csr_matrix(
            (np.ones(len(pairs)), (token_entries[pairs], rank_in_tag[token_ids[pairs]])),
            shape=(len(coarse.words), len(tokens)),
        )
        sums = incidence @ z  # (n_entries, m)
        sizes = np.asarray(incidence.sum(axis=1)).ravel()
        mean = z.mean(axis=0)
        tag_rules = np.arange(starts[tag], starts[tag + 1])
        entries = rules[tag_rules, 1]
        weight = sizes[entries] + smoothing
        shrunk = (sums[entries] + smoothing * mean) / np.where(weight > 0, weight, 1.0)[:, None]
        shrunk[weight == 0] = mean  # no tokens and no smoothing: the tag's mean
        emissions = coarse.lexical_weights[tag_rules]  # one state: one weight per rule
        blocks.extend(emissions[:, None] * shrunk)
    return blocks


def _token_entries(
    nodes, lexicon: Lexicon, entry_ids: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(entry ids, token ids): the vocabulary entries each training token counts for.

    A known word (or the lowercase form of a capitalised first word) counts for
    itself; a rare word for every class of its signature chain the lexicon kept.
    """
    initial = np.zeros(len(nodes.token_word), dtype=bool)
    lengths = np.diff(nodes.token_offsets)
    initial[nodes.token_offsets[:-1][lengths > 0]] = True
    keys = nodes.token_word.astype(np.int64) * 2 + initial
    unique, inverse = np.unique(keys, return_inverse=True)
    known_words = cast("frozenset[str]", lexicon.known_words)  # a fitted lexicon
    classes = cast("dict[str, str]", lexicon.classes)
    known = known_words.__contains__
    type_entries: list[list[int]] = []
    for key in unique.tolist():
        word, position = nodes.words[key // 2], 0 if key % 2 else 1
        entry = lexicon.entry(word, position)
        if entry in known_words:
            type_entries.append([entry_ids[entry]])
        else:
            chain = lexicon.signatures.chain(word, position, known)
            type_entries.append([entry_ids[classes[c]] for c in chain if c in classes])
    sizes = np.array([len(entries) for entries in type_entries], dtype=np.int64)
    flat = np.array([e for entries in type_entries for e in entries], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    per_token = sizes[inverse]
    tokens = np.repeat(np.arange(len(inverse)), per_token)
    within = np.arange(len(tokens)) - np.repeat(np.cumsum(per_token) - per_token, per_token)
    return flat[starts[inverse][tokens] + within], tokens


def _nodes_by_rule(rule_of_node: np.ndarray, n_rules: int, desc: str):
    """Yield (rule id, int64 node ids) for every rule, with a progress bar."""
    nodes = np.flatnonzero(rule_of_node >= 0)
    nodes = nodes[np.argsort(rule_of_node[nodes], kind="stable")]
    bounds = np.searchsorted(rule_of_node[nodes], np.arange(n_rules + 1))
    for rule in progress(range(n_rules), desc=desc, unit="rule"):
        yield rule, nodes[bounds[rule] : bounds[rule + 1]]


def _inside(projections: Projections, symbol: int, nodes: np.ndarray) -> np.ndarray:
    return projections.inside[symbol][projections.row[nodes]]


def _outside(projections: Projections, symbol: int, nodes: np.ndarray) -> np.ndarray:
    return projections.outside[symbol][projections.row[nodes]]


def _sum_outer(z: np.ndarray, y_left: np.ndarray, y_right: np.ndarray) -> np.ndarray:
    """sum_n z[n] ⊗ y_left[n] ⊗ y_right[n], shape (m_a, m_b, m_c), in chunks of nodes
    (one matrix product per chunk, so memory stays at chunk * m_a * m_b)."""
    m_a, m_b, m_c = z.shape[1], y_left.shape[1], y_right.shape[1]
    total = np.zeros((m_a * m_b, m_c))
    chunk = max(1, (1 << 22) // max(m_a * m_b, 1))
    for start in range(0, len(z), chunk):
        stop = start + chunk
        pairs = (z[start:stop, :, None] * y_left[start:stop, None, :]).reshape(-1, m_a * m_b)
        total += pairs.T @ y_right[start:stop]
    return total.reshape(m_a, m_b, m_c)


def _flat_blocks(rules: np.ndarray, n_states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[R + 1], zeros float64) for C-order blocks of the rules' states."""
    sizes = np.prod(n_states[rules], axis=1)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return offsets, np.zeros(int(offsets[-1]))


def _offsets(blocks: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([block.size for block in blocks])]).astype(np.int64)


def _concatenate(blocks: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([block.ravel() for block in blocks]) if blocks else np.zeros(0)
