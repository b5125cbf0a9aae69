"""LPCFG: construction, validation, index structures, projection and serialisation."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable
from spacy_lpcfg.grammar.serialization import FORMAT_VERSION, pack_zip, unpack_zip


def toy_pcfg() -> LPCFG:
    """A consistent one-state PCFG (every parent's rules sum to one)."""
    symbols = SymbolTable.from_kinds(phrasal=["S", "NP", "VP"], preterminal=["D", "N", "V"])
    return LPCFG.from_rules(
        symbols,
        [1] * len(symbols),
        binary={("S", "NP", "VP"): 0.9, ("NP", "D", "N"): 0.6, ("VP", "V", "NP"): 0.5},
        unary={("TOP", "S"): 1.0, ("S", "VP"): 0.1, ("NP", "N"): 0.4, ("VP", "V"): 0.5},
        lexical={("D", "the"): 1.0, ("N", "dog"): 0.5, ("N", "cat"): 0.5, ("V", "saw"): 1.0},
    )


def split(grammar: LPCFG, m: int) -> LPCFG:
    """Every symbol but TOP split into m identical sub-states (an equivalent grammar)."""
    states = np.where(np.arange(grammar.n_symbols) == grammar.root, 1, m)

    def block(value, *symbols):
        shape = tuple(int(states[s]) for s in symbols)
        children = int(np.prod(shape[1:]))
        return np.full(shape, float(value) / children)

    return LPCFG.from_rules(
        grammar.symbols,
        states,
        binary={
            tuple(r): block(grammar.binary_block(i).item(), *r)
            for i, r in enumerate(grammar.binary_rules.tolist())
        },
        unary={
            tuple(r): block(grammar.unary_block(i).item(), *r)
            for i, r in enumerate(grammar.unary_rules.tolist())
        },
        lexical={
            (t, w): np.full(int(states[t]), grammar.lexical_block(i).item())
            for i, (t, w) in enumerate(grammar.lexical_rules.tolist())
        },
        words=grammar.words,
    )


def test_lpcfg_from_rules_layout():
    grammar = split(toy_pcfg(), 2)
    assert grammar.words == ("cat", "dog", "saw", "the")
    rules = grammar.binary_rules.tolist()
    assert rules == sorted(rules)
    assert np.diff(grammar.binary_offsets).tolist() == [8, 8, 8]
    assert grammar.binary_block(0).shape == (2, 2, 2)
    assert grammar.unary_block(0).shape == (1, 2)  # root weights TOP -> S
    assert grammar.lexical_block(0).shape == (2,)
    assert not grammar.binary_weights.flags.writeable
    s = grammar.symbols.index
    offsets = grammar.binary_parent_offsets  # rules S -> NP VP, NP -> D N, VP -> V NP
    assert offsets[s("S")] == 0 and offsets[s("NP")] == 1 and offsets[s("VP") + 1] == 3
    order = grammar.binary_left_order
    assert grammar.binary_rules[order, 1].tolist() == sorted(grammar.binary_rules[:, 1].tolist())
    assert "3 binary" in repr(grammar)


def test_lpcfg_unary_parent_order_is_topological():
    grammar = toy_pcfg()
    rank = {int(a): k for k, a in enumerate(grammar.unary_parent_order)}
    for parent, child in grammar.unary_rules.tolist():
        assert rank.get(child, -1) < rank[parent]
    assert set(rank) == set(grammar.unary_rules[:, 0].tolist())


def test_lpcfg_unary_cycle_is_named():
    symbols = SymbolTable.from_kinds(phrasal=["A", "B", "C"])
    with pytest.raises(
        GrammarError, match=r"E109.*(A -> B -> C -> A|B -> C -> A -> B|C -> A -> B -> C)"
    ):
        LPCFG.from_rules(symbols, [1] * 4, unary={("A", "B"): 1, ("B", "C"): 1, ("C", "A"): 1})
    with pytest.raises(GrammarError, match="E109.*A -> A"):
        LPCFG.from_rules(symbols, [1] * 4, unary={("A", "A"): 1})


@pytest.mark.parametrize(
    "rules,code",
    [
        ({"binary": {("D", "N", "N"): 1.0}}, "E106"),  # preterminal parent
        ({"binary": {("S", "TOP", "N"): 1.0}}, "E106"),  # root child
        ({"unary": {("S", "TOP"): 1.0}}, "E106"),
        ({"lexical": {("S", "dog"): 1.0}}, "E106"),  # lexical parent not a preterminal
        ({"binary": {("S", "N", 99): 1.0}}, "E106"),
        ({"binary": {("S", "N", "N"): np.ones(3)}}, "E111"),
        ({"binary": {("S", "N", "N"): np.inf}}, "E110"),
        ({"lexical": {("N", "cow"): 1.0}, "words": ["dog"]}, "E118"),
        ({"words": ["dog", "dog"]}, "E118"),
    ],
)
def test_lpcfg_invalid_rules(rules, code):
    symbols = SymbolTable.from_kinds(phrasal=["S"], preterminal=["D", "N"])
    with pytest.raises(GrammarError, match=code):
        LPCFG.from_rules(symbols, [1] * len(symbols), **rules)


def _arrays(grammar: LPCFG) -> dict:
    names = (
        "binary_rules",
        "binary_offsets",
        "binary_weights",
        "unary_rules",
        "unary_offsets",
        "unary_weights",
        "lexical_rules",
        "lexical_offsets",
        "lexical_weights",
    )
    return {name: np.array(getattr(grammar, name)) for name in names}


def test_lpcfg_constructor_checks_order_offsets_and_states():
    grammar = toy_pcfg()
    arrays = _arrays(grammar)
    arrays["binary_rules"] = arrays["binary_rules"][::-1].copy()
    with pytest.raises(GrammarError, match="E107"):
        LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)
    arrays = _arrays(grammar)
    arrays["binary_offsets"][1] += 1
    with pytest.raises(GrammarError, match="E108"):
        LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)
    states = grammar.n_states.copy()
    states[grammar.root] = 2
    with pytest.raises(GrammarError, match="E105"):
        LPCFG(grammar.symbols, states, words=grammar.words, **_arrays(grammar))
    with pytest.raises(GrammarError, match="E105"):
        LPCFG(
            grammar.symbols, grammar.n_states.astype(float), words=grammar.words, **_arrays(grammar)
        )


def test_lpcfg_expected_state_weights():
    symbols = SymbolTable.from_kinds(phrasal=["X"], preterminal=["T"])
    grammar = LPCFG.from_rules(
        symbols,
        {"X": 2, "T": 3},
        # X -> X T with probability 0.4 from state 0, 0.2 from state 1; else X -> T.
        binary={("X", "X", "T"): np.array([[[0.4, 0, 0], [0, 0, 0]], [[0, 0, 0], [0.2, 0, 0]]])},
        unary={("TOP", "X"): [[0.3, 0.7]], ("X", "T"): [[0.6, 0, 0], [0, 0.8, 0]]},
        lexical={("T", "a"): [1.0, 1.0, 1.0]},
    )
    weights = grammar.expected_state_weights()
    # Expected counts: c_X = pi + c_X * diag(0.4, 0.2) -> c_X = (0.3 / 0.6, 0.7 / 0.8).
    count_x = np.array([0.5, 0.875])
    assert np.allclose(weights[symbols.index("X")], count_x / count_x.sum())
    # T state 0 as the right child of X -> X T (both X states) and below X_0 -> T_0.
    count_t = np.array([count_x @ [0.4, 0.2] + count_x[0] * 0.6, count_x[1] * 0.8, 0.0])
    assert np.allclose(weights[symbols.index("T")], count_t / count_t.sum())
    assert np.allclose(weights[symbols.root], [1.0])


def test_lpcfg_project_undoes_a_split():
    grammar = toy_pcfg()
    fine = split(grammar, 2)
    assert fine.project() == grammar
    rng = np.random.default_rng(0)
    arbitrary = [rng.uniform(0.1, 1, size=m) for m in fine.n_states]
    projected = fine.project(arbitrary)
    for name in ("binary_weights", "unary_weights", "lexical_weights"):
        assert np.allclose(getattr(projected, name), getattr(grammar, name))


def test_lpcfg_project_weights_states():
    symbols = SymbolTable.from_kinds(phrasal=["X"], preterminal=["T"])
    grammar = LPCFG.from_rules(
        symbols,
        {"X": 2},
        unary={("TOP", "X"): [[0.3, 0.7]], ("X", "T"): [[1.0], [1.0]]},
        lexical={("T", "a"): 1.0},
    )
    coarse = grammar.project([[1.0], [1.0, 3.0], [1.0]])
    assert coarse.max_states == 1
    assert np.allclose(coarse.unary_weights, [1.0, 1.0])
    with pytest.raises(GrammarError, match="E113"):
        grammar.project([[1.0], [1.0, -1.0], [1.0]])
    with pytest.raises(GrammarError, match="E105"):
        grammar.project([[1.0]])


def test_lpcfg_expected_weights_refuse_signed_or_divergent_grammars():
    symbols = SymbolTable.from_kinds(phrasal=["X"], preterminal=["T"])
    signed = LPCFG.from_rules(symbols, [1, 1, 1], unary={("TOP", "X"): -1.0, ("X", "T"): 1.0})
    with pytest.raises(GrammarError, match="E112.*negative"):
        signed.project()
    divergent = LPCFG.from_rules(
        symbols, [1, 1, 1], binary={("X", "X", "X"): 0.9}, unary={("TOP", "X"): 1.0}
    )
    with pytest.raises(GrammarError, match="E112"):
        divergent.project()


def test_lexical_scores_from_word_ids_and_project():
    fine = split(toy_pcfg(), 2)
    ids = [fine.word_index[w] for w in ("the", "dog", "saw", "the", "cat")] + [-1]
    lexical = LexicalScores.from_word_ids(fine, ids)
    lexical.check(fine)
    assert lexical.positions.tolist() == [0, 1, 2, 3, 4]
    assert [fine.symbols.name(t) for t in lexical.tags] == ["D", "N", "V", "D", "N"]
    assert lexical.values.tolist() == [1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5]
    weights = fine.expected_state_weights()
    coarse = fine.project(weights)
    expected = LexicalScores.from_word_ids(coarse, ids)
    assert np.allclose(lexical.project(fine, weights).values, expected.values)


@pytest.mark.parametrize(
    "change",
    [
        {"n_words": 0},
        {"positions": np.array([0, 7], dtype=np.int32)},
        {"tags": np.array([1, 1], dtype=np.int32)},  # not preterminals
        {"positions": np.array([1, 0], dtype=np.int32)},  # unsorted
        {"offsets": np.array([0, 1, 2], dtype=np.int64)},  # wrong sizes
        {"values": np.array([1.0, np.nan, 1.0, 1.0])},
        {"values": np.array([1, 1, 1, 1])},  # dtype
    ],
)
def test_lexical_scores_check(change):
    grammar = split(toy_pcfg(), 2)
    lexical = LexicalScores.from_word_ids(
        grammar, [grammar.word_index["the"], grammar.word_index["dog"]]
    )
    fields = {**lexical.__dict__, **change}
    with pytest.raises(ValueError, match="E117"):
        LexicalScores(**fields).check(grammar)


def test_lexical_scores_from_entries():
    grammar = split(toy_pcfg(), 2)
    n_tag = grammar.symbols.index("N")
    lexical = LexicalScores.from_entries(2, [(1, n_tag, [0.1, 0.2]), (0, n_tag, [0.3, 0.4])])
    lexical.check(grammar)
    assert lexical.positions.tolist() == [0, 1] and lexical.values.tolist() == [0.3, 0.4, 0.1, 0.2]


# Serialisation ---------------------------------------------------------------


@pytest.fixture
def grammar() -> LPCFG:
    return split(toy_pcfg(), 3)


def test_lpcfg_bytes_roundtrip_is_identical(grammar):
    data = grammar.to_bytes()
    again = LPCFG.from_bytes(data)
    assert again == grammar and again.to_bytes() == data
    assert again.unary_parent_order.tolist() == grammar.unary_parent_order.tolist()


def test_lpcfg_members_are_the_archived_files(grammar, tmp_path):
    """``to_members`` (what a model directory's files take) is the archive ``to_bytes``
    unpacked, in its order, and the files ``to_disk`` writes."""
    from spacy_lpcfg.grammar.serialization import unpack_zip

    members = grammar.to_members()
    unpacked = unpack_zip(grammar.to_bytes(), "bytes")
    assert list(members.items()) == list(unpacked.items())
    grammar.to_disk(tmp_path / "model")
    assert {name: (tmp_path / "model" / name).read_bytes() for name in members} == members


def test_lpcfg_disk_roundtrip_is_identical(grammar, tmp_path):
    grammar.to_disk(tmp_path / "model")
    names = sorted(p.name for p in (tmp_path / "model").iterdir())
    assert names == ["grammar.json", "grammar.npz", "symbols.json", "words.json"]
    again = LPCFG.from_disk(tmp_path / "model")
    assert again == grammar and again.to_bytes() == grammar.to_bytes()
    with np.load(tmp_path / "model" / "grammar.npz", allow_pickle=False) as npz:
        assert np.array_equal(npz["binary_weights"], grammar.binary_weights)
    header = json.loads((tmp_path / "model" / "grammar.json").read_text())
    # dense weights: format version 1, readable by releases before sparse storage
    assert header["format_version"] == 1 and header["counts"]["binary_rules"] == 3


def _mostly_zero(grammar: LPCFG, seed: int = 0) -> LPCFG:
    """The grammar with 90% of its binary and unary weights zero."""
    rng = np.random.default_rng(seed)
    arrays = {
        name: getattr(grammar, name)
        for kind in ("binary", "unary", "lexical")
        for name in (f"{kind}_rules", f"{kind}_offsets", f"{kind}_weights")
    }
    for name in ("binary_weights", "unary_weights"):
        weights = arrays[name].copy()
        weights[rng.random(len(weights)) < 0.9] = 0.0
        weights[0] = 1.0
        arrays[name] = weights
    return LPCFG(grammar.symbols, grammar.n_states, words=grammar.words, **arrays)


def test_lpcfg_mostly_zero_weights_are_stored_sparse(tmp_path):
    from chart.brute_force import random_grammar

    grammar = _mostly_zero(random_grammar(3, max_states=6, density=0.8))
    dense_bytes = len(random_grammar(3, max_states=6, density=0.8).to_bytes())
    data = grammar.to_bytes()
    assert LPCFG.from_bytes(data) == grammar
    assert len(data) < dense_bytes
    grammar.to_disk(tmp_path / "model")
    header = json.loads((tmp_path / "model" / "grammar.json").read_text())
    assert header["format_version"] == FORMAT_VERSION == 2
    entry = header["arrays"]["binary_weights"]
    assert entry["length"] == len(grammar.binary_weights) > entry["shape"][0]
    assert LPCFG.from_disk(tmp_path / "model") == grammar


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda header, arrays: header["arrays"]["binary_weights"].update(length=-1), "length"),
        (
            lambda header, arrays: header["arrays"]["binary_weights"].update(length=1 << 40),
            "length",
        ),
        (
            lambda header, arrays: header["arrays"]["binary_weights"].update(
                length=header["arrays"]["binary_weights"]["length"] + 1
            ),
            "offsets end",
        ),
        (
            lambda header, arrays: arrays["binary_weights_positions"].__setitem__(0, 10**9),
            "increase",
        ),
        (lambda header, arrays: arrays["binary_weights_positions"].__setitem__(1, 0), "increase"),
    ],
)
def test_lpcfg_bad_sparse_weights_are_refused(change, message):
    from chart.brute_force import random_grammar

    grammar = _mostly_zero(random_grammar(3, max_states=6, density=0.8))
    members = unpack_zip(grammar.to_bytes(), "test")
    header = json.loads(members["grammar.json"])
    arrays = {}
    with np.load(io.BytesIO(members["grammar.npz"]), allow_pickle=False) as npz:
        arrays = {name: npz[name].copy() for name in npz.files}
    change(header, arrays)
    members["grammar.json"] = json.dumps(header).encode()
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    members["grammar.npz"] = buffer.getvalue()
    with pytest.raises(GrammarError, match=message):
        LPCFG.from_bytes(pack_zip(members))


def _with_member(data: bytes, name: str, content: bytes | None) -> bytes:
    members = unpack_zip(data, "test")
    if content is None:
        del members[name]
    else:
        members[name] = content
    return pack_zip(members)


def _header(data: bytes) -> dict:
    return json.loads(unpack_zip(data, "test")["grammar.json"])


def _with_array(data: bytes, name: str, value: np.ndarray) -> bytes:
    import io

    members = unpack_zip(data, "test")
    arrays = unpack_zip(members["grammar.npz"], "test")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, value)
    arrays[f"{name}.npy"] = buffer.getvalue()
    members["grammar.npz"] = pack_zip(arrays)
    return pack_zip(members)


def test_lpcfg_from_bytes_rejects_corrupt_input(grammar):
    data = grammar.to_bytes()
    newer = {**_header(data), "format_version": FORMAT_VERSION + 1}
    bad_counts = _header(data)
    bad_counts["counts"]["symbols"] += 1
    cases = {
        "E114": [
            data[: len(data) // 2],  # truncated
            b"not a grammar at all",
            _with_member(data, "symbols.json", None),
            _with_member(data, "symbols.json", b"{broken"),
            _with_member(data, "grammar.npz", unpack_zip(data, "t")["grammar.npz"][:100]),
            _with_member(data, "grammar.json", json.dumps(bad_counts).encode()),
            _with_array(data, "binary_weights", grammar.binary_weights.astype(np.float32)),
            _with_array(data, "binary_offsets", grammar.binary_offsets[::-1].copy()),
            _with_array(data, "binary_weights", np.full_like(grammar.binary_weights, np.nan)),
        ],
        "E115": [
            pack_zip({"model.bin": b"\x00" * 10}),
            _with_member(data, "grammar.json", json.dumps({"name": "x"}).encode()),
        ],
        "E116": [_with_member(data, "grammar.json", json.dumps(newer).encode())],
    }
    for code, inputs in cases.items():
        for corrupt in inputs:
            with pytest.raises(GrammarError, match=code):
                LPCFG.from_bytes(corrupt)


def test_lpcfg_from_disk_rejects_missing_and_foreign(grammar, tmp_path):
    with pytest.raises(GrammarError, match="E115"):
        LPCFG.from_disk(tmp_path / "nothing")
    grammar.to_disk(tmp_path / "model")
    (tmp_path / "model" / "words.json").unlink()
    with pytest.raises(GrammarError, match="E114.*words.json"):
        LPCFG.from_disk(tmp_path / "model")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "grammar.json").write_text('{"format": "something else"}')
    with pytest.raises(GrammarError, match="E115"):
        LPCFG.from_disk(tmp_path / "other")


def test_lpcfg_bytes_contain_no_pickle(grammar):
    with zipfile.ZipFile(__import__("io").BytesIO(grammar.to_bytes())) as archive:
        assert sorted(archive.namelist()) == [
            "grammar.json",
            "grammar.npz",
            "symbols.json",
            "words.json",
        ]


# Binary weights kept sparse in memory ------------------------------------------


def _dense_arrays(grammar: LPCFG) -> dict:
    arrays = _arrays(grammar)
    arrays["binary_weights"] = np.array(grammar.binary_weights)
    return arrays


def test_lpcfg_keeps_mostly_zero_binary_weights_sparse():
    from chart.brute_force import random_grammar

    dense_grammar = random_grammar(3, max_states=6, density=0.8)
    assert dense_grammar.binary_sparse is None  # 80% non-zero: kept dense
    grammar = _mostly_zero(dense_grammar)
    dense = _dense_arrays(grammar)["binary_weights"]  # builds the dense array: a fresh copy
    grammar = _mostly_zero(dense_grammar)
    sparse = grammar.binary_sparse
    assert sparse is not None and sparse.nbytes < dense.nbytes / 2
    assert sparse.positions.tolist() == np.flatnonzero(dense).tolist()
    for rule in range(len(grammar.binary_rules)):
        start, end = grammar.binary_offsets[rule], grammar.binary_offsets[rule + 1]
        block = grammar.binary_block(rule)
        assert np.array_equal(block.ravel(), dense[start:end]) and not block.flags.writeable
    weights = [np.random.default_rng(a).random(m) + 0.1 for a, m in enumerate(grammar.n_states)]
    coarse = grammar.project(weights)
    normalised = [w / w.sum() for w in weights]
    for rule, (a, _, _) in enumerate(grammar.binary_rules):
        expected = normalised[a] @ grammar.binary_block(rule).sum(axis=(1, 2))
        assert np.isclose(coarse.binary_weights[rule], expected, rtol=1e-12)
    others = (grammar.unary_weights, grammar.lexical_weights)
    assert grammar.signed == bool((dense < 0).any() or any((w < 0).any() for w in others))
    assert "binary_weights" not in vars(grammar)  # nothing above needed the dense array
    assert (
        np.array_equal(grammar.binary_weights, dense) and not grammar.binary_weights.flags.writeable
    )


def test_lpcfg_from_sparse_weights_equals_from_dense():
    from chart.brute_force import random_grammar

    from spacy_lpcfg.grammar.sparse_weights import SparseWeights

    grammar = _mostly_zero(random_grammar(4, max_states=5, density=0.8), seed=3)
    arrays = _dense_arrays(grammar)
    dense = arrays.pop("binary_weights")
    given = SparseWeights.from_dense(dense)
    rebuilt = LPCFG(
        grammar.symbols, grammar.n_states, words=grammar.words, binary_weights=given, **arrays
    )
    assert rebuilt == grammar and rebuilt.binary_sparse == given
    changed = dense.copy()
    changed[given.positions[-1]] *= 2
    other = LPCFG(
        grammar.symbols, grammar.n_states, words=grammar.words, binary_weights=changed, **arrays
    )
    assert other != grammar


@pytest.mark.parametrize(
    "positions,values,length,message",
    [
        ([3, 1], [1.0, 2.0], None, "increase"),
        ([0, 10**9], [1.0, 2.0], None, "lie in"),
        ([-1, 1], [1.0, 2.0], None, "lie in"),
        ([0, 1], [1.0], None, "positions for"),
        ([0, 1], [1.0, np.inf], None, "non-finite"),
        ([0, 1], [1.0, 2.0], 7, "offsets"),
        ([0.5, 1.0], [1.0, 2.0], None, "int positions"),
    ],
)
def test_lpcfg_refuses_bad_sparse_weights(positions, values, length, message):
    from chart.brute_force import random_grammar

    from spacy_lpcfg.grammar.sparse_weights import SparseWeights

    grammar = _mostly_zero(random_grammar(3, max_states=4, density=0.8))
    arrays = _arrays(grammar)
    del arrays["binary_weights"]
    length = int(grammar.binary_offsets[-1]) if length is None else length
    weights = SparseWeights(np.array(positions), np.array(values), length)
    with pytest.raises(GrammarError, match=message):
        LPCFG(
            grammar.symbols, grammar.n_states, words=grammar.words, binary_weights=weights, **arrays
        )


def test_lpcfg_loads_sparse_binary_weights_without_the_dense_array(tmp_path):
    from chart.brute_force import random_grammar

    grammar = _mostly_zero(random_grammar(3, max_states=6, density=0.8))
    grammar.to_disk(tmp_path / "model")
    loaded = LPCFG.from_disk(tmp_path / "model")
    assert loaded.binary_sparse == grammar.binary_sparse
    assert loaded == grammar and LPCFG.from_bytes(loaded.to_bytes()) == grammar
    assert "binary_weights" not in vars(loaded)


def test_lpcfg_sparse_weights_zeros_and_malformed_dense():
    from chart.brute_force import random_grammar

    from spacy_lpcfg.grammar.sparse_weights import SparseWeights

    grammar = _mostly_zero(random_grammar(3, max_states=4, density=0.8))
    arrays = _arrays(grammar)
    dense = arrays.pop("binary_weights")
    given = SparseWeights.from_dense(dense)
    free = int(np.flatnonzero(dense == 0)[0])  # an explicit zero at a free position
    order = np.argsort(np.append(given.positions, free))
    positions = np.append(given.positions, free)[order]
    values = np.append(given.values, 0.0)[order]
    kwargs = {"words": grammar.words, **arrays}
    with_zero = LPCFG(
        grammar.symbols,
        grammar.n_states,
        binary_weights=SparseWeights(positions, values, len(dense)),
        **kwargs,
    )
    assert with_zero == grammar and with_zero.binary_sparse == grammar.binary_sparse
    for bad in (
        np.float64(1.0),
        np.zeros((len(dense) // 2, 2)),
    ):  # not flat: E108, not numpy errors
        with pytest.raises(GrammarError, match="E108"):
            LPCFG(grammar.symbols, grammar.n_states, binary_weights=bad, **kwargs)


def test_lpcfg_log_weights_of_a_sparse_grammar_leave_it_sparse():
    from chart.brute_force import random_grammar

    grammar = _mostly_zero(random_grammar(3, max_states=4, density=0.8))
    assert grammar.binary_sparse is not None
    logs = grammar.log_binary_weights
    assert "binary_weights" not in vars(grammar)
    dense = grammar.binary_weights
    positive = dense > 0
    assert np.array_equal(logs[positive], np.log(dense[positive]))
    assert np.all(logs[~positive] == -np.inf)


def _file_bytes(array: np.ndarray) -> object:
    """The object at the end of an array's base chain (a file's bytes for a view)."""
    current = array
    while isinstance(current, np.ndarray):
        current = current.base
    return current.obj if isinstance(current, memoryview) else current


def test_a_loaded_sparse_grammar_uses_the_file_bytes_it_keeps(tmp_path):
    import json

    from chart.brute_force import random_grammar

    dense = random_grammar(3, max_states=6, density=0.8)
    arrays = {
        name: getattr(dense, name)
        for kind in ("binary", "unary", "lexical")
        for name in (f"{kind}_rules", f"{kind}_offsets", f"{kind}_weights")
    }
    arrays["binary_weights"] = _mostly_zero(dense).binary_weights  # only these sparse
    grammar = LPCFG(dense.symbols, dense.n_states, words=dense.words, **arrays)
    grammar.to_disk(tmp_path / "model")
    header = json.loads((tmp_path / "model" / "grammar.json").read_text())
    assert header["arrays"]["binary_weights_positions"]["dtype"] == "int32"  # as kept
    loaded = LPCFG.from_disk(tmp_path / "model")
    sparse = loaded.binary_sparse
    # views of the file's bytes, none copied: every stored array is kept as stored
    held = {id(_file_bytes(a)) for a in (sparse.positions, sparse.values, loaded.lexical_weights)}
    assert len(held) == 1 and type(_file_bytes(sparse.values)) is bytes
    assert loaded == grammar
    # unary weights stored sparse are made dense on reading: then nothing is a view
    _mostly_zero(dense).to_disk(tmp_path / "unary")
    loaded = LPCFG.from_disk(tmp_path / "unary")
    assert _file_bytes(loaded.binary_sparse.values) is None and loaded == _mostly_zero(dense)


def test_a_grammar_file_with_int64_positions_is_read_and_copied(tmp_path):
    import io
    import json
    import zipfile

    from chart.brute_force import random_grammar

    grammar = _mostly_zero(random_grammar(3, max_states=6, density=0.8))
    grammar.to_disk(tmp_path / "model")
    folder = tmp_path / "model"
    # as files were written before positions were stored at their own width
    with zipfile.ZipFile(folder / "grammar.npz") as archive:
        arrays = {i.filename[:-4]: np.load(io.BytesIO(archive.read(i))) for i in archive.infolist()}
    arrays["binary_weights_positions"] = arrays["binary_weights_positions"].astype(np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    (folder / "grammar.npz").write_bytes(buffer.getvalue())
    header = json.loads((folder / "grammar.json").read_text())
    header["arrays"]["binary_weights_positions"]["dtype"] = "int64"
    (folder / "grammar.json").write_text(json.dumps(header))
    loaded = LPCFG.from_disk(folder)
    assert loaded == grammar and loaded.binary_sparse.positions.dtype == np.int32
    # the grammar keeps none of the file: its int64 positions would be dead weight
    assert _file_bytes(loaded.binary_sparse.values) is None
    header["arrays"]["binary_weights_positions"]["dtype"] = "int16"
    (folder / "grammar.json").write_text(json.dumps(header))
    with pytest.raises(GrammarError, match="must be int32 or int64"):
        LPCFG.from_disk(folder)


def test_arrays_over_buffers_that_can_change_are_copied():
    from spacy_lpcfg.grammar.lpcfg import _frozen

    buffer = bytearray(np.arange(4.0).tobytes())
    over_bytearray = np.frombuffer(buffer, dtype=np.float64)
    over_bytearray.flags.writeable = False  # read-only here, yet its buffer can change
    assert not _frozen(over_bytearray)
    assert not _frozen(np.frombuffer(memoryview(buffer), dtype=np.float64))
    data = bytes(buffer)
    assert _frozen(np.frombuffer(data, dtype=np.float64))
    assert _frozen(np.frombuffer(memoryview(data)[8:], dtype=np.float64))

    class Bytes(bytes):
        pass

    assert not _frozen(np.frombuffer(Bytes(data), dtype=np.float64))
    owned = np.arange(3.0)
    owned.flags.writeable = False
    assert _frozen(owned) and not _frozen(np.arange(3.0))
