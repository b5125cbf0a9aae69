"""Emission weights of a lexicon: counts per tag state and the Berkeley smoothing.

The formulas are in ``lexicon.py``'s docstring. Tag states are numbered
consecutively tag by tag (``TagStates``); the known words' counts arrive as a
dict, the signature classes' as dense rows over the states of the open tags
(``ClassCounts``), and the result is one weight block per (tag, entry) pair
(``EmissionTable``), turned into LPCFG lexical arrays for a symbol table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import Errors
from .signatures import UNKNOWN_CLASS
from .symbols import PRETERMINAL, SymbolTable

TokenKey = tuple[str, str, bool]  # (word, tag, first word of its sentence)


class TagStates:
    """The latent states of the lexicon's tags, numbered consecutively tag by tag."""

    def __init__(self, tags: list[str], n_states: Mapping[str, int]):
        self.tags = tags
        self.tag_ids = {tag: i for i, tag in enumerate(tags)}
        self.sizes = np.array([n_states.get(tag, 1) for tag in tags], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self.n_states = int(self.offsets[-1])
        self.tag_of_state = np.repeat(np.arange(len(tags)), self.sizes)

    def bounds(self, tag: int) -> tuple[int, int]:
        return int(self.offsets[tag]), int(self.offsets[tag + 1])

    def slice(self, tag: int) -> slice:
        return slice(*self.bounds(tag))

    def check(self, key: TokenKey, value: Any) -> np.ndarray:
        """The count of a token key as float64[n_states[tag]]; ValueError if malformed."""
        size = self.sizes[self.tag_ids[key[1]]]
        vector = np.asarray(value, dtype=np.float64).reshape(-1)
        if vector.shape != (size,) or not np.isfinite(vector).all() or vector.min() < 0:
            detail = f"{key} has weights {vector.tolist()}; tag {key[1]!r} has {size} states"
            raise ValueError(Errors.E122.format(detail=detail))
        return vector


class ClassCounts:
    """Counts of the signature classes over the open states (a dense row per class)."""

    def __init__(self, states: np.ndarray, state_offsets: np.ndarray):
        self.states = states  # int64[n_open]: the open states, increasing
        self.column = np.full(int(state_offsets[-1]), -1)
        self.column[states] = np.arange(len(states))
        self.state_offsets = state_offsets
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.parents: list[int] = []  # -1 for UNK
        self.rows: list[np.ndarray] = []
        self.total = 0.0

    @property
    def root(self) -> int:
        return self.index[UNKNOWN_CLASS]

    def _row(self, name: str, parent: int) -> int:
        row = self.index.get(name)
        if row is None:
            row = self.index[name] = len(self.names)
            self.names.append(name)
            self.parents.append(parent)
            self.rows.append(np.zeros(len(self.states)))
        return row

    def add(self, chain: tuple[str, ...], tag: int, vector: np.ndarray) -> None:
        columns = self.column[self.state_offsets[tag] : self.state_offsets[tag + 1]]
        parent = -1
        for name in reversed(chain):  # coarsest first, so parents get rows first
            parent = self._row(name, parent)
            self.rows[parent][columns] += vector
        self.total += float(vector.sum())

    def add_prior(self, distribution: np.ndarray) -> None:
        """UNK alone with the given distribution over all states and one token."""
        self.rows[self._row(UNKNOWN_CLASS, -1)] += distribution[self.states]
        self.total = 1.0

    @property
    def token_counts(self) -> np.ndarray:
        """float64[n_classes]: c(s)."""
        return np.array([row.sum() for row in self.rows])

    def distribution(self, row: int) -> np.ndarray:
        return self.rows[row] / self.rows[row].sum()

    def probabilities(self, smoothing: float) -> np.ndarray:
        """float64[n_classes, n_open]: P(x | s), each class smoothed towards its parent."""
        probabilities = np.zeros((len(self.names), len(self.states)))
        # parents have smaller row ids than their children (rows are created coarse first)
        for row, parent in enumerate(self.parents):
            counts = self.rows[row]
            if parent < 0:
                probabilities[row] = counts / counts.sum()
            else:
                probabilities[row] = (counts + smoothing * probabilities[parent]) / (
                    counts.sum() + smoothing
                )
        return probabilities


class EmissionTable:
    """Emission weights as blocks per (tag, entry) pair, in the lexicon's tag order."""

    def __init__(self, tags, pair_tags, pair_entries, offsets, weights):
        self.tags = tags  # tag names; pair_tags index them
        self.pair_tags = pair_tags
        self.pair_entries = pair_entries
        self.offsets = offsets
        self.weights = weights

    def lexical_arrays(self, symbols: SymbolTable) -> dict[str, np.ndarray]:
        """The blocks as LPCFG lexical arrays, sorted by (symbol id of the tag, entry)."""
        symbol_ids = np.array([symbols.index(tag) for tag in self.tags], dtype=np.int64)
        not_preterminal = [
            tag for tag, s in zip(self.tags, symbol_ids) if symbols.kind_codes[s] != PRETERMINAL
        ]
        if not_preterminal:
            detail = f"tags {not_preterminal[:5]} are not preterminals of the grammar"
            raise ValueError(Errors.E123.format(detail=detail))
        parents = symbol_ids[self.pair_tags]
        order = np.lexsort((self.pair_entries, parents))
        sizes = np.diff(self.offsets)[order]
        return {
            "lexical_rules": np.stack([parents[order], self.pair_entries[order]], axis=1).astype(
                np.int32
            ),
            "lexical_offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            "lexical_weights": gather_blocks(self.weights, self.offsets, order),
        }


def open_tags(
    states: TagStates,
    known_counts: Mapping[tuple[str, int], np.ndarray],
    rare: Sequence[tuple[str, int, bool, np.ndarray]],
    threshold: float,
) -> np.ndarray:
    """bool[n_tags]: the tags that emit unknown words.

    Those with at least `threshold` rare tokens, and those with rare tokens but
    no known ones (else they could emit nothing); if that leaves none, every
    tag with rare tokens.
    """
    rare_per_tag = np.zeros(len(states.tags))
    known_per_tag = np.zeros(len(states.tags))
    for _, tag, _, vector in rare:
        rare_per_tag[tag] += vector.sum()
    for (_, tag), vector in known_counts.items():
        known_per_tag[tag] += vector.sum()
    is_open = (rare_per_tag >= threshold) & (rare_per_tag > 0)
    is_open |= (rare_per_tag > 0) & (known_per_tag == 0)
    return is_open if is_open.any() else rare_per_tag > 0


def estimate_emissions(
    known_sorted: Sequence[str],
    known_counts: Mapping[tuple[str, int], np.ndarray],
    classes: ClassCounts,
    state_counts: np.ndarray,
    states: TagStates,
    *,
    smooth_threshold: float,
    word_smoothing: float,
    signature_smoothing: float,
) -> EmissionTable:
    """P(e | x) for the known words (entry ids in order) and then the classes (by name).

    known_sorted (Sequence[str]): the known words, in entry order.
    known_counts (Mapping): (known word, tag id) -> float64[m_tag] counts.
    classes (ClassCounts): the class counts of the rare tokens of open tags.
    state_counts (np.ndarray): float64[n_states], c(x) over the tokens described.
    states (TagStates): the tags' states.
    RETURNS (EmissionTable): one block per (tag, entry) pair with a non-zero
        weight, pairs sorted by tag and then entry.

    Built one tag at a time as a dense (entries x states) table: every smoothed
    word has a weight for every open state, and a list of cells over all tags
    would take several arrays of (smoothed words x open states) at once.
    """
    lam = word_smoothing
    n_known = len(known_sorted)
    entry_ids = {word: i for i, word in enumerate(known_sorted)}
    own: list[list[tuple[int, np.ndarray]]] = [[] for _ in states.tags]
    entry_parts, value_parts = [np.zeros(0, np.int64)], [np.zeros(0)]
    for (word, tag), vector in known_counts.items():
        own[tag].append((entry_ids[word], vector))
        entry_parts.append(np.full(len(vector), entry_ids[word]))
        value_parts.append(vector)
    # c(w); bincount of nothing gives int64
    entry_counts = np.bincount(
        np.concatenate(entry_parts), np.concatenate(value_parts), minlength=n_known
    ).astype(np.float64)
    del entry_parts, value_parts
    smoothed = np.flatnonzero(entry_counts <= smooth_threshold)
    denominators = entry_counts.copy()
    denominators[smoothed] += lam
    scaled_unknown = lam * classes.distribution(classes.root)  # lambda P(x | U), open states
    order = np.array(sorted(range(len(classes.names)), key=classes.names.__getitem__))
    class_entries = n_known + np.arange(len(order), dtype=np.int64)
    if len(order):  # c(s) P(x | s) over the open states, rows in entry order
        probabilities = classes.probabilities(signature_smoothing)
        class_rows = probabilities[order] * classes.token_counts[order, None]
        del probabilities

    pair_tags, pair_entries, blocks = [], [], []
    for tag in range(len(states.tags)):
        start, end = states.bounds(tag)
        counts = state_counts[start:end]
        columns = classes.column[start:end]  # an open tag has all its states open
        is_open = end > start and columns[0] >= 0
        own_entries = np.array([entry for entry, _ in own[tag]], dtype=np.int64)
        entries = np.union1d(own_entries, smoothed) if is_open else np.sort(own_entries)
        # P(x | w) c(w), then divided by c(x): the formulas' order of operations
        table = np.zeros((len(entries), end - start))
        if len(own_entries):
            rows = np.searchsorted(entries, own_entries)
            table[rows] = np.array([vector for _, vector in own[tag]]).reshape(len(rows), -1)
            table[rows] /= denominators[own_entries, None]
            table[rows] *= entry_counts[own_entries, None]
        table = _per_state(table, counts)
        if is_open and len(smoothed):
            smoothing = scaled_unknown[columns] / denominators[smoothed, None]
            smoothing *= entry_counts[smoothed, None]
            table[np.searchsorted(entries, smoothed)] += _per_state(smoothing, counts)
        if is_open and len(order):
            table = np.concatenate([table, _per_state(class_rows[:, columns], counts)])
            entries = np.concatenate([entries, class_entries])
        # pairs whose weights are all zero are no rules; a sum of magnitudes, not any():
        # a NaN weight (0/0 of an empty class) drops its pair, as it always has
        keep = np.flatnonzero(np.abs(table).sum(axis=1) > 0)
        pair_tags.append(np.full(len(keep), tag, dtype=np.int64))
        pair_entries.append(entries[keep])
        blocks.append(table[keep].ravel())
    tags = np.concatenate(pair_tags)
    return EmissionTable(
        states.tags,
        tags,
        np.concatenate(pair_entries),
        np.concatenate([[0], np.cumsum(states.sizes[tags])]).astype(np.int64),
        np.concatenate(blocks),
    )


def _per_state(table: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``table`` with each state's column divided by c(x), zero where c(x) is zero."""
    return np.divide(table, counts, out=np.zeros_like(table), where=counts > 0)


def block_positions(offsets: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """int64: the positions of the given blocks of a flat array, concatenated in order."""
    starts = offsets[blocks]
    sizes = offsets[blocks + 1] - starts
    return np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())


# Blocks per step of ``gather_blocks``: its positions are those of this many blocks,
# not of the whole array (icepahc's emissions: three int64 arrays of its ~30 million
# weights, 0.7 GB, the peak of building a split-merge model).
GATHER_STEP = 1 << 16


def gather_blocks(
    values: np.ndarray, offsets: np.ndarray, blocks: np.ndarray, step: int = GATHER_STEP
) -> np.ndarray:
    """``values[block_positions(offsets, blocks)]``, filled ``step`` blocks at a time."""
    starts = offsets[blocks]
    ends = np.cumsum(offsets[blocks + 1] - starts)
    out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=values.dtype)
    for first in range(0, len(blocks), step):
        part = blocks[first : first + step]
        begin = int(ends[first - 1]) if first else 0
        out[begin : int(ends[first + len(part) - 1])] = values[block_positions(offsets, part)]
    return out
