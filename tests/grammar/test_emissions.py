"""The emission table built tag by tag equals the formulas evaluated cell by cell.

``_cell_by_cell`` is the definition: one (entry, state, value) coordinate per
weight the formulas of ``lexicon.py`` give, duplicates summed, grouped into
(tag, entry) blocks. The package builds the same table one tag at a time
(``emissions.estimate_emissions``); the two must agree to the last bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from spacy_lpcfg.grammar import emissions, lexicon
from spacy_lpcfg.grammar.emissions import ClassCounts, EmissionTable, TagStates, block_positions
from spacy_lpcfg.grammar.lexicon import Lexicon


def _cell_by_cell(
    known_sorted, known_counts, classes, state_counts, states, *, smooth_threshold,
    word_smoothing, signature_smoothing,
):  # fmt: skip
    n_open = len(classes.states)
    p_unknown = classes.distribution(classes.root)
    entry_ids = {word: i for i, word in enumerate(known_sorted)}
    entry_parts, state_parts, value_parts = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], []
    for (word, tag), vector in known_counts.items():
        entry_parts.append(np.full(len(vector), entry_ids[word]))
        state_parts.append(np.arange(*states.bounds(tag)))
        value_parts.append(vector)
    own_entries, own_states = np.concatenate(entry_parts), np.concatenate(state_parts)
    own_values = np.concatenate(value_parts) if value_parts else np.zeros(0)
    entry_counts = np.bincount(own_entries, own_values, minlength=len(known_sorted))
    entry_counts = entry_counts.astype(np.float64)
    smoothed = np.flatnonzero(entry_counts <= smooth_threshold)
    lam = word_smoothing
    word_entries = np.concatenate([own_entries, np.repeat(smoothed, n_open)])
    word_states = np.concatenate([own_states, np.tile(classes.states, len(smoothed))])
    word_values = np.concatenate([own_values, np.tile(lam * p_unknown, len(smoothed))])
    denominators = entry_counts.copy()
    denominators[smoothed] += lam
    word_values = word_values / denominators[word_entries] * entry_counts[word_entries]
    order = np.array(sorted(range(len(classes.names)), key=classes.names.__getitem__))
    class_entries = len(known_sorted) + np.repeat(np.arange(len(order)), n_open)
    class_states = np.tile(classes.states, len(order))
    class_values = (
        classes.probabilities(signature_smoothing)[order] * classes.token_counts[order, None]
    ).ravel()
    entries = np.concatenate([word_entries, class_entries])
    all_states = np.concatenate([word_states, class_states])
    values = np.concatenate([word_values, class_values])
    denominator = state_counts[all_states]
    values = np.divide(values, denominator, out=np.zeros_like(values), where=denominator > 0)

    n_states = states.n_states
    keys, inverse = np.unique(entries * n_states + all_states, return_inverse=True)
    sums = np.bincount(inverse, values, minlength=len(keys))
    cell_entries, cell_states = np.divmod(keys, n_states)
    cell_tags = states.tag_of_state[cell_states]
    n_entries = int(cell_entries.max(initial=0)) + 1
    pair_keys, pair_of_cell = np.unique(cell_tags * n_entries + cell_entries, return_inverse=True)
    pairs = np.stack(np.divmod(pair_keys, n_entries), axis=1)
    pair_sizes = states.sizes[pairs[:, 0]]
    offsets = np.concatenate([[0], np.cumsum(pair_sizes)]).astype(np.int64)
    weights = np.zeros(int(offsets[-1]))
    weights[offsets[pair_of_cell] + cell_states - states.offsets[cell_tags]] = sums
    magnitude = np.bincount(pair_of_cell, np.abs(sums), minlength=len(pairs))
    keep = np.flatnonzero(magnitude > 0)
    return EmissionTable(
        states.tags,
        pairs[keep, 0],
        pairs[keep, 1],
        np.concatenate([[0], np.cumsum(pair_sizes[keep])]).astype(np.int64),
        weights[block_positions(offsets, keep)],
    )


def _assert_same(table: EmissionTable, expected: EmissionTable) -> None:
    assert list(table.tags) == list(expected.tags)
    for name in ("pair_tags", "pair_entries", "offsets", "weights"):
        got, want = getattr(table, name), getattr(expected, name)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    tags = [f"T{i}" for i in range(int(rng.integers(1, 6)))]
    states = TagStates(tags, {tag: int(rng.integers(1, 5)) for tag in tags})
    is_open = rng.random(len(tags)) < 0.6
    if not is_open.any():
        is_open[0] = True
    words = [f"w{i}" for i in range(int(rng.integers(1, 30)))]
    known_counts = {}
    for word in words:  # a known word was seen: its first tag's counts are positive
        chosen = rng.choice(len(tags), size=int(rng.integers(1, len(tags) + 1)), replace=False)
        for i, tag in enumerate(chosen):
            vector = rng.random(int(states.sizes[tag])) * rng.choice([0.0, 0.5, 3.0])
            vector[rng.random(len(vector)) < 0.3] = 0.0  # states a word never took
            if i == 0:
                vector[0] = 1.0 + rng.random()
            known_counts[(word, int(tag))] = vector
    state_counts = rng.random(states.n_states) * 5
    state_counts[rng.random(states.n_states) < 0.2] = 0.0  # c(x) zero: weight zero
    if rng.random() < 0.2:  # no rare tokens: UNK alone over every state (Lexicon.fit_counts)
        classes = ClassCounts(np.arange(states.n_states), states.offsets)
        classes.add_prior(state_counts / state_counts.sum())
    else:
        classes = ClassCounts(np.flatnonzero(is_open[states.tag_of_state]), states.offsets)
        for _ in range(int(rng.integers(1, 20))):
            tag = int(rng.choice(np.flatnonzero(is_open)))
            chain = (f"c{rng.integers(4)}-x{rng.integers(3)}", f"c{rng.integers(4)}", "UNK")
            vector = rng.random(states.sizes[tag])
            if rng.random() < 0.1:  # a rare token of no weight: with no smoothing, 0/0
                vector[:] = 0.0
            classes.add(chain[: int(rng.integers(1, 4))] + ("UNK",), tag, vector)
    settings = {
        "smooth_threshold": float(rng.choice([0.0, 1.0, 2.5, 100.0])),
        "word_smoothing": float(rng.choice([0.0, 0.1, 1.0])),
        "signature_smoothing": float(rng.choice([0.0, 0.5])),
    }
    return (sorted(words), known_counts, classes, state_counts, states), settings


@pytest.mark.parametrize("seed", range(120))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the 0/0 cases
def test_tag_by_tag_equals_the_formulas_cell_by_cell(seed):
    arguments, settings = _random_case(seed)
    expected = _cell_by_cell(*arguments, **settings)
    _assert_same(emissions.estimate_emissions(*arguments, **settings), expected)


def test_a_latent_lexicon_of_ptb_sample_is_the_same_to_the_bit(load_corpus, monkeypatch):
    trees = load_corpus("ptb_sample", "train")[:400]
    sentences = [list(zip(tree.words(), tree.tags(), strict=True)) for tree in trees]
    rng = np.random.default_rng(0)
    n_states = {
        tag: 1 + i % 6 for i, tag in enumerate(sorted({t for s in sentences for _, t in s}))
    }
    weights = [[rng.dirichlet(np.ones(n_states[tag])) for _, tag in s] for s in sentences]

    def fitted():
        return Lexicon(signature="berkeley").fit(
            sentences, state_weights=weights, n_states=n_states
        )

    table = fitted()._emissions
    monkeypatch.setattr(lexicon, "estimate_emissions", _cell_by_cell)
    expected = fitted()._emissions
    assert len(expected.weights) > 10_000  # smoothed words over many open states
    _assert_same(table, expected)


@pytest.mark.parametrize("step", [1, 3, 64, 10_000])
def test_gather_blocks_is_the_gather_of_block_positions(step):
    """The blocks gathered a few at a time are the one gather over all their positions."""
    from spacy_lpcfg.grammar.emissions import gather_blocks

    rng = np.random.default_rng(step)
    sizes = rng.integers(0, 6, 500)  # empty blocks too
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = rng.standard_normal(int(offsets[-1]))
    blocks = rng.permutation(500)[:300]
    expected = values[block_positions(offsets, blocks)]
    gathered = gather_blocks(values, offsets, blocks, step)
    assert gathered.dtype == expected.dtype and np.array_equal(gathered, expected)
    assert len(gather_blocks(values, offsets, blocks[:0], step)) == 0
