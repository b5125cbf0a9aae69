"""The latent-variable PCFG container.

Parameters live in a few flat arrays plus offset tables, so that the chart
kernels and serialisation read them without per-rule Python objects:

* binary rules ``binary_rules`` int32[R2, 3] (parent, left, right), sorted and
  unique; rule r's tensor ``T[a -> b c]`` of shape (m_a, m_b, m_c) is
  ``binary_weights[binary_offsets[r]:binary_offsets[r + 1]]`` in C order;
* unary rules ``unary_rules`` int32[R1, 2] (parent, child), blocks (m_a, m_b);
  the root weights pi are the unary rules TOP -> X with blocks (1, m_X);
* lexical rules ``lexical_rules`` int32[RL, 2] (preterminal, word id), blocks
  (m_tag,), with the vocabulary ``words``.

Binary weights with few non-zero values (clustering grammars: ~2%) are kept as
those values and their positions (``binary_sparse``, a ``SparseWeights``); the
dense ``binary_weights`` is then built only when something asks for it, which
the parser does not (the chart kernels read ``chart.inputs`` block tables; the
Viterbi decoder builds a dense array of log weights).

Weights are signed reals (spectral estimates can be negative). The chart
semantics are those of docs/design/architecture.md, section 4: the score of a derivation is the
contraction of its rule tensors along the tree, and ``Z`` is the root's
inside value, TOP having one latent state.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import Errors, GrammarError
from .serialization import (
    ARRAY_SPECS,
    MAX_ARRAY_BYTES,
    FileData,
    decode_members,
    encode_members,
    excerpt,
    pack_zip,
    read_directory,
    shorten,
    unpack_zip,
    write_directory,
)
from .sparse_weights import SparseWeights, position_dtype
from .symbols import PRETERMINAL, ROOT, SymbolTable

RuleKey = tuple  # tuple of symbol names / ids (and a word for lexical rules)
# Latent states of one symbol. Estimators use tens; the cap keeps a binary block
# (at most MAX_STATES**3 = 2**36 weights) and its offsets far from int64 overflow.
MAX_STATES = 4096
MAX_WEIGHTS = MAX_ARRAY_BYTES // 8
# Rows (rule, parent state) projected at a time (``_project_weights``).
PROJECT_ROWS = 1 << 20
# expected_state_weights solves its system densely up to this many states in all (a
# matrix of 32 MB solved in a fraction of a second), else iterates over a sparse one.
DENSE_SOLVE_SIZE = 2000


class LPCFG:
    """A latent-variable PCFG over a symbol table. Immutable: arrays are read-only.
    Arrays given read-only (views of read-only arrays only) are kept as they are, not
    copied, so an estimator hands over its weights without a second copy; writable
    ones are copied.

    symbols (SymbolTable): the grammar's symbols.
    n_states (np.ndarray): int32[n_symbols], latent states per symbol; TOP has 1.
    binary_rules, binary_offsets (np.ndarray): int32[R2, 3], int64[R2 + 1].
    binary_weights (np.ndarray | SparseWeights): float64[binary_offsets[-1]] (see the
        module docstring), or its values and their positions (kept so; zeros among
        them dropped). A dense array is kept sparse when at most ``SPARSE_FRACTION``
        of its weights are non-zero.
    unary_rules, unary_offsets, unary_weights (np.ndarray): int32[R1, 2],
        int64[R1 + 1], float64[unary_offsets[-1]].
    lexical_rules, lexical_offsets, lexical_weights (np.ndarray): int32[RL, 2],
        int64[RL + 1], float64[lexical_offsets[-1]].
    words (Sequence[str]): the vocabulary that lexical rules index.

    Rules must be sorted by (parent, children) without duplicates, and the
    unary rules must form a DAG; the constructor validates everything.
    """

    def __init__(
        self,
        symbols: SymbolTable,
        n_states: np.ndarray,
        *,
        binary_rules: np.ndarray,
        binary_offsets: np.ndarray,
        binary_weights: np.ndarray | SparseWeights,
        unary_rules: np.ndarray,
        unary_offsets: np.ndarray,
        unary_weights: np.ndarray,
        lexical_rules: np.ndarray,
        lexical_offsets: np.ndarray,
        lexical_weights: np.ndarray,
        words: Sequence[str],
    ):
        given = {
            "n_states": n_states,
            "binary_rules": binary_rules,
            "binary_offsets": binary_offsets,
            "unary_rules": unary_rules,
            "unary_offsets": unary_offsets,
            "unary_weights": unary_weights,
            "lexical_rules": lexical_rules,
            "lexical_offsets": lexical_offsets,
            "lexical_weights": lexical_weights,
        }
        arrays = {name: _frozen_array(name, value) for name, value in given.items()}
        self.symbols = symbols
        self.n_states = arrays["n_states"]
        self.binary_rules = arrays["binary_rules"]
        self.binary_offsets = arrays["binary_offsets"]
        self.binary_sparse: SparseWeights | None = None
        if isinstance(binary_weights, SparseWeights):
            self.binary_sparse = _frozen_sparse(binary_weights)
        else:
            dense = _frozen_array("binary_weights", binary_weights)
            if dense.ndim == 1 and SparseWeights.worth_it(dense):  # else validate() says
                self.binary_sparse = SparseWeights.from_dense(dense)
            else:  # the cached_property's value
                self.__dict__["binary_weights"] = dense
        self.unary_rules = arrays["unary_rules"]
        self.unary_offsets = arrays["unary_offsets"]
        self.unary_weights = arrays["unary_weights"]
        self.lexical_rules = arrays["lexical_rules"]
        self.lexical_offsets = arrays["lexical_offsets"]
        self.lexical_weights = arrays["lexical_weights"]
        self.words = tuple(words)
        self.validate()

    # Construction -----------------------------------------------------------

    @classmethod
    def from_rules(
        cls,
        symbols: SymbolTable,
        n_states: Sequence[int] | Mapping[str, int],
        *,
        binary: Mapping[RuleKey, np.ndarray] | None = None,
        unary: Mapping[RuleKey, np.ndarray] | None = None,
        lexical: Mapping[RuleKey, np.ndarray] | None = None,
        words: Sequence[str] | None = None,
    ) -> LPCFG:
        """Build a grammar from dicts of rules to weight arrays (any order).

        symbols (SymbolTable): the symbols.
        n_states (Sequence[int] | Mapping[str, int]): states per symbol id, or
            per symbol name with 1 for the symbols not listed.
        binary (Mapping): (parent, left, right) -> array (m_a, m_b, m_c).
        unary (Mapping): (parent, child) -> array (m_a, m_b); TOP -> X are the
            root weights, shape (1, m_X).
        lexical (Mapping): (preterminal, word) -> array (m_tag,).
        words (Sequence[str] | None): the vocabulary. Defaults to the sorted
            words of the lexical rules. Symbols may be given as names or ids,
            words as strings or ids.
        RETURNS (LPCFG): the grammar.
        """
        if isinstance(n_states, Mapping):
            states = np.ones(len(symbols), dtype=np.int32)
            for name, count in n_states.items():
                states[symbols.index(name)] = count
        else:
            states = np.asarray(n_states, dtype=np.int32)
        lexical = dict(lexical or {})
        if words is None:
            words = sorted({word for _, word in lexical if isinstance(word, str)})
        word_ids = {word: i for i, word in enumerate(words)}

        def symbol_id(key):
            return symbols.index(key) if isinstance(key, str) else int(key)

        def word_id(word):
            if not isinstance(word, str):
                return int(word)
            if word not in word_ids:
                raise GrammarError(Errors.E118.format(detail=f"'{word}' is not in words"))
            return word_ids[word]

        parts = {}
        for kind, rules, arity in (("binary", binary, 3), ("unary", unary, 2)):
            ids = {tuple(symbol_id(s) for s in key): value for key, value in (rules or {}).items()}
            parts[kind] = _pack_rules(kind, ids, states, arity)
        ids = {(symbol_id(tag), word_id(word)): value for (tag, word), value in lexical.items()}
        parts["lexical"] = _pack_rules("lexical", ids, states, 2)
        return cls(
            symbols,
            states,
            words=words,
            **{
                f"{kind}_{field}": array
                for kind, fields in parts.items()
                for field, array in zip(("rules", "offsets", "weights"), fields)
            },
        )

    # Sizes and blocks -----------------------------------------------------

    @property
    def n_symbols(self) -> int:
        return len(self.symbols)

    @property
    def root(self) -> int:
        return self.symbols.root

    @property
    def max_states(self) -> int:
        return int(self.n_states.max())

    @functools.cached_property
    def binary_weights(self) -> np.ndarray:
        """float64[binary_offsets[-1]], read-only. Built on first use when the grammar
        keeps its binary weights sparse (``binary_sparse``), and kept from then on."""
        assert self.binary_sparse is not None  # a dense grammar sets this in __init__
        return _read_only(self.binary_sparse.to_dense())

    def nonzero_binary_weights(self) -> SparseWeights:
        """The non-zero binary weights and their positions in ``binary_weights``."""
        if self.binary_sparse is not None:
            return self.binary_sparse
        return SparseWeights.from_dense(self.binary_weights)

    def _binary_values(self) -> np.ndarray:
        """The binary weights as stored: every weight except zeros left out."""
        sparse = self.binary_sparse
        return self.binary_weights if sparse is None else sparse.values

    def binary_block(self, rule: int) -> np.ndarray:
        """The read-only tensor T of binary rule `rule`, shape (m_a, m_b, m_c)."""
        a, b, c = self.binary_rules[rule]
        start, end = int(self.binary_offsets[rule]), int(self.binary_offsets[rule + 1])
        if self.binary_sparse is None or "binary_weights" in self.__dict__:
            block = self.binary_weights[start:end]
        else:
            block = _read_only(self.binary_sparse.dense_range(start, end))
        return block.reshape(self.n_states[a], self.n_states[b], self.n_states[c])

    def unary_block(self, rule: int) -> np.ndarray:
        """The read-only matrix U of unary rule `rule`, shape (m_a, m_b)."""
        a, b = self.unary_rules[rule]
        start, end = self.unary_offsets[rule], self.unary_offsets[rule + 1]
        return self.unary_weights[start:end].reshape(self.n_states[a], self.n_states[b])

    def lexical_block(self, rule: int) -> np.ndarray:
        """The read-only vector Q of lexical rule `rule`, shape (m_tag,)."""
        start, end = self.lexical_offsets[rule], self.lexical_offsets[rule + 1]
        return self.lexical_weights[start:end]

    @functools.cached_property
    def word_index(self) -> dict[str, int]:
        return {word: i for i, word in enumerate(self.words)}

    # Index structures for the kernels (built once) ------------------------

    @functools.cached_property
    def binary_parent_offsets(self) -> np.ndarray:
        """int64[n_symbols + 1]: binary rules of parent a are rows offsets[a]:offsets[a + 1]."""
        return _csr_offsets(self.binary_rules[:, 0], self.n_symbols)

    @functools.cached_property
    def binary_left_order(self) -> np.ndarray:
        """int32[R2]: the binary rule ids sorted by (left child, right child, parent)."""
        rules = self.binary_rules
        return _read_only(np.lexsort((rules[:, 0], rules[:, 2], rules[:, 1])).astype(np.int32))

    @functools.cached_property
    def unary_parent_offsets(self) -> np.ndarray:
        """int64[n_symbols + 1]: unary rules of parent a are rows offsets[a]:offsets[a + 1]."""
        return _csr_offsets(self.unary_rules[:, 0], self.n_symbols)

    @functools.cached_property
    def unary_parent_order(self) -> np.ndarray:
        """int32[k]: the parents of unary rules, every child before its parents.

        Summing each parent's unary rules in this order computes the unary
        closure of a chart cell exactly, whatever the length of the chains.
        """
        has_unary = np.zeros(self.n_symbols, dtype=bool)
        has_unary[self.unary_rules[:, 0]] = True
        order = self._unary_topological_order
        return _read_only(order[has_unary[order]].astype(np.int32))

    @functools.cached_property
    def lexical_word_index(self) -> tuple[np.ndarray, np.ndarray]:
        """(order int32[RL], offsets int64[n_words + 1]): the lexical rules of word w
        are ``order[offsets[w]:offsets[w + 1]]``, by increasing preterminal id."""
        order = np.argsort(self.lexical_rules[:, 1], kind="stable").astype(np.int32)
        offsets = _csr_offsets(self.lexical_rules[order, 1], len(self.words))
        return _read_only(order), offsets

    @functools.cached_property
    def signed(self) -> bool:
        """Whether some weight is negative (spectral grammars): no probabilities then."""
        weights = (self._binary_values(), self.unary_weights, self.lexical_weights)
        return any(bool((w < 0).any()) for w in weights)

    @functools.cached_property
    def log_binary_weights(self) -> np.ndarray:
        """float64 like binary_weights: log of the positive weights, -inf elsewhere (Viterbi).
        Built from the non-zero weights: a sparse grammar keeps no dense binary_weights."""
        nonzero = self.nonzero_binary_weights()
        out = np.full(int(self.binary_offsets[-1]), -np.inf)
        out[nonzero.positions] = _log_positive(nonzero.values)
        return _read_only(out)

    @functools.cached_property
    def log_unary_weights(self) -> np.ndarray:
        """float64 like unary_weights: log of the positive weights, -inf elsewhere (Viterbi)."""
        return _log_positive(self.unary_weights)

    # Validation --------------------------------------------------------------

    def validate(self) -> None:
        """Check shapes, symbol kinds, rule order, offsets, weights and that the unary
        rules form a DAG (whose topological order it records). Raises GrammarError."""
        n_symbols = len(self.symbols)
        kinds = self.symbols.kind_codes
        if self.n_states.shape != (n_symbols,):
            raise GrammarError(
                Errors.E105.format(
                    name="n_states",
                    found=f"shape {self.n_states.shape}",
                    expected=f"({n_symbols},)",
                )
            )
        bad = np.flatnonzero((self.n_states < 1) | (self.n_states > MAX_STATES))
        if len(bad) or self.n_states[self.root] != 1:
            symbol = int(bad[0]) if len(bad) else self.root
            raise GrammarError(
                Errors.E105.format(
                    name="n_states",
                    found=f"{self.n_states[symbol]} for symbol {excerpt(self.symbols.name(symbol))}",
                    expected=f"1 to {MAX_STATES} states per symbol, and 1 for the root",
                )
            )
        if len(set(self.words)) != len(self.words) or not all(
            isinstance(w, str) for w in self.words
        ):
            raise GrammarError(Errors.E118.format(detail="words must be unique strings"))
        self._check_rules("binary", self.binary_rules, n_symbols, kinds)
        self._check_rules("unary", self.unary_rules, n_symbols, kinds)
        self._check_rules("lexical", self.lexical_rules, n_symbols, kinds)
        for kind in ("binary", "unary", "lexical"):
            self._check_weights(kind)
        self._unary_topological_order = _topological_order(self.unary_rules, self.symbols)

    def _check_rules(self, kind: str, rules: np.ndarray, n_symbols: int, kinds: np.ndarray) -> None:
        arity = 3 if kind == "binary" else 2
        if rules.ndim != 2 or rules.shape[1] != arity:
            raise GrammarError(
                Errors.E105.format(
                    name=f"{kind}_rules", found=f"shape {rules.shape}", expected=f"(n, {arity})"
                )
            )
        if len(rules) == 0:
            return
        n_columns = 1 if kind == "lexical" else arity
        limits = [n_symbols] * n_columns + ([len(self.words)] if kind == "lexical" else [])
        for column, limit in enumerate(limits):
            bad = np.flatnonzero((rules[:, column] < 0) | (rules[:, column] >= limit))
            if len(bad):
                raise GrammarError(
                    Errors.E106.format(
                        kind=kind,
                        rule=rules[bad[0]].tolist(),
                        detail=f"id out of range [0, {limit})",
                    )
                )
        parents = kinds[rules[:, 0]]
        if kind == "lexical":
            bad = np.flatnonzero(parents != PRETERMINAL)
            detail = "the parent of a lexical rule must be a preterminal"
        else:
            children = kinds[rules[:, 1:]]
            bad = np.flatnonzero((parents == PRETERMINAL) | (children == ROOT).any(axis=1))
            detail = "preterminals cannot be parents and the root cannot be a child"
        if len(bad):
            raise GrammarError(
                Errors.E106.format(
                    kind=kind, rule=self._rule_name(kind, rules[bad[0]]), detail=detail
                )
            )
        # Sorted and unique: each row's first column that differs from the row before
        # must be larger (no combined key, which could overflow for huge tables).
        steps = np.diff(rules[:, : len(limits)].astype(np.int64), axis=0)
        first = np.argmax(steps != 0, axis=1)
        bad = np.flatnonzero(steps[np.arange(len(steps)), first] <= 0)
        if len(bad):
            raise GrammarError(
                Errors.E107.format(kind=kind, rule=self._rule_name(kind, rules[bad[0] + 1]))
            )

    def _check_weights(self, kind: str) -> None:
        rules = getattr(self, f"{kind}_rules")
        offsets = getattr(self, f"{kind}_offsets")
        sparse = self.binary_sparse if kind == "binary" else None
        if sparse is None:
            weights = getattr(self, f"{kind}_weights")
            length, positions = (len(weights) if weights.ndim == 1 else 0), None
        else:  # its positions were checked when the grammar took them (_frozen_sparse)
            weights, length, positions = sparse.values, sparse.length, sparse.positions
        if offsets.shape != (len(rules) + 1,) or weights.ndim != 1:
            raise GrammarError(
                Errors.E108.format(
                    kind=kind, detail=f"offsets shape {offsets.shape} for {len(rules)} rules"
                )
            )
        columns = 1 if kind == "lexical" else rules.shape[1]
        # Exact in int64: n_states <= MAX_STATES bounds each block, the total is checked
        # (in floats, which cannot overflow) before the cumulative sum.
        sizes = np.prod(self.n_states[rules[:, :columns]], axis=1, dtype=np.int64)
        if sizes.sum(dtype=np.float64) > MAX_WEIGHTS:
            detail = f"n_states give {sizes.sum(dtype=np.float64):.3g} weights, over {MAX_WEIGHTS}"
            raise GrammarError(Errors.E108.format(kind=kind, detail=detail))
        expected = np.concatenate([[0], np.cumsum(sizes)])
        if not np.array_equal(offsets, expected) or offsets[-1] != length:
            bad = np.flatnonzero(offsets != expected)
            bad = bad[bad > 0] - 1
            where = (
                f"rule {self._rule_name(kind, rules[bad[0]])} has "
                f"{int(offsets[bad[0] + 1]) - int(offsets[bad[0]])} weights, "
                f"expected {sizes[bad[0]]}"
                if offsets[0] == 0 and len(bad)
                else f"offsets run from {offsets[0]} to {offsets[-1]} over {length} weights"
            )
            raise GrammarError(Errors.E108.format(kind=kind, detail=where))
        if not np.isfinite(weights).all():
            position = int(np.flatnonzero(~np.isfinite(weights))[0])
            if positions is not None:
                position = int(positions[position])
            rule = int(np.searchsorted(offsets, position, side="right") - 1)
            raise GrammarError(
                Errors.E110.format(kind=kind, rule=self._rule_name(kind, rules[rule]))
            )

    def _rule_name(self, kind: str, rule: np.ndarray) -> str:
        names = [self.symbols.name(int(rule[0]))]
        if kind == "lexical":
            names.append(repr(self.words[int(rule[1])]))
        else:
            names.extend(self.symbols.name(int(s)) for s in rule[1:])
        return f"{names[0]} -> {' '.join(names[1:])}"

    # Projection --------------------------------------------------------------

    def expected_state_weights(
        self, *, tol: float = 1e-10, max_iter: int = 100_000
    ) -> list[np.ndarray]:
        """Expected sub-state counts per symbol, normalised to sum to one.

        The counts c solve ``c = e_TOP + M c``, where M maps a parent state's
        expected count to its children's (Petrov & Klein 2007); they are solved for
        directly (``DENSE_SOLVE_SIZE`` states in all at most), else found by
        fixed-point iteration from the root, which converges when the weights are
        the probabilities of a consistent grammar. Symbols never reached get
        uniform weights.

        tol (float): iteration: stop when the largest change is below tol times the
            largest count.
        max_iter (int): iteration: raise GrammarError if not converged after this many
            iterations.
        RETURNS (list[np.ndarray]): per symbol a, float64[m_a] summing to one.
        """
        if min(self._binary_values().min(initial=0), self.unary_weights.min(initial=0)) < 0:
            raise GrammarError(Errors.E112.format(detail="the grammar has negative weights"))
        state_offsets = np.concatenate([[0], np.cumsum(self.n_states, dtype=np.int64)])
        size = int(state_offsets[-1])
        start = np.zeros(size)
        start[state_offsets[self.root]] = 1.0
        if size <= DENSE_SOLVE_SIZE:
            # Exact, and spares the parser that builds this scipy's import.
            flat = np.zeros(size * size)
            for rows, cols, values in self._state_links(state_offsets):
                flat += np.bincount(rows * size + cols, values, minlength=size * size)
            counts = np.linalg.solve(np.eye(size) - flat.reshape(size, size), start)
            if not np.isfinite(counts).all() or counts.min() < -1e-9:
                raise GrammarError(Errors.E112.format(detail="the expected counts diverge"))
            counts = np.maximum(counts, 0.0)
        else:
            counts = self._iterated_counts(state_offsets, start, tol, max_iter)
        weights = []
        for a in range(self.n_symbols):
            block = counts[state_offsets[a] : state_offsets[a + 1]]
            total = block.sum()
            weights.append(block / total if total > 0 else np.full(len(block), 1.0 / len(block)))
        return weights

    def _iterated_counts(
        self, state_offsets: np.ndarray, start: np.ndarray, tol: float, max_iter: int
    ) -> np.ndarray:
        """expected_state_weights' counts by fixed-point iteration over a sparse matrix."""
        from scipy import sparse

        size = len(start)
        matrix = sparse.csr_matrix((size, size))
        for rows, cols, values in self._state_links(state_offsets):  # duplicates summed
            matrix = matrix + sparse.csr_matrix((values, (rows, cols)), shape=(size, size))
        counts = start
        for _ in range(max_iter):
            updated = start + matrix @ counts
            if not np.isfinite(updated).all() or updated.max() > 1e100:
                raise GrammarError(Errors.E112.format(detail="the expected counts diverge"))
            change = np.abs(updated - counts).max()
            counts = updated
            if change <= tol * counts.max():
                return counts
        raise GrammarError(Errors.E112.format(detail=f"no convergence in {max_iter} iterations"))

    def _state_links(self, state_offsets: np.ndarray):
        """Yield (child state, parent state, weight) arrays of the binary, then the unary
        rules (``grammar.state_links``): a parent state's expected number of children
        in each child state is the sum of its links to it."""
        from .state_links import state_links

        stored = self.binary_sparse
        yield state_links(
            self.binary_rules,
            self.binary_offsets,
            None if stored is None else stored.positions,
            self._binary_values(),
            self.n_states,
            state_offsets,
        )
        yield state_links(
            self.unary_rules, self.unary_offsets, None, self.unary_weights, self.n_states,
            state_offsets,
        )  # fmt: skip

    def project(self, state_weights: Sequence[np.ndarray] | None = None) -> LPCFG:
        """The one-state grammar over the same symbols, rules and words.

        Each rule's weight is its tensor summed over the children's states and
        averaged over the parent's states with `state_weights` (Petrov & Klein
        2007): ``T'(a -> b c) = sum_h1 w_a[h1] sum_{h2,h3} T[h1, h2, h3]``.

        state_weights (Sequence[np.ndarray] | None): per symbol a, non-negative
            float64[m_a] (normalised here). Defaults to expected_state_weights(),
            which needs probabilities; give weights explicitly for other grammars
            (spectral ones, for instance).
        RETURNS (LPCFG): the coarse grammar.
        """
        weights = (
            self.expected_state_weights()
            if state_weights is None
            else self.check_state_weights(state_weights)
        )
        flat_weights = np.concatenate(weights)
        coarse = {}
        for kind in ("binary", "unary", "lexical"):
            rules = getattr(self, f"{kind}_rules")
            coarse[f"{kind}_rules"] = rules
            coarse[f"{kind}_offsets"] = np.arange(len(rules) + 1, dtype=np.int64)
            sparse_weights = self.binary_sparse if kind == "binary" else None
            coarse[f"{kind}_weights"] = _project_weights(
                rules[:, 0],
                getattr(self, f"{kind}_offsets"),
                getattr(self, f"{kind}_weights") if sparse_weights is None else sparse_weights,
                self.n_states,
                flat_weights,
            )
        ones = np.ones(self.n_symbols, dtype=np.int32)
        return LPCFG(self.symbols, ones, words=self.words, **coarse)

    def check_state_weights(self, state_weights: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Validate per-symbol state weights; RETURNS them normalised to sum to one."""
        if len(state_weights) != self.n_symbols:
            raise GrammarError(
                Errors.E105.format(
                    name="state_weights",
                    found=f"{len(state_weights)} entries",
                    expected=f"{self.n_symbols} (one per symbol)",
                )
            )
        normalised = []
        for a, values in enumerate(state_weights):
            values = np.asarray(values, dtype=np.float64)
            m = int(self.n_states[a])
            if values.shape != (m,) or (values < 0).any() or not values.sum() > 0:
                raise GrammarError(
                    Errors.E113.format(name=self.symbols.name(a), expected=m, found=values.tolist())
                )
            normalised.append(values / values.sum())
        return normalised

    # Serialisation -----------------------------------------------------------

    def _arrays(self) -> dict[str, np.ndarray | SparseWeights]:
        arrays: dict[str, np.ndarray | SparseWeights] = {
            name: getattr(self, name) for name in ARRAY_SPECS if name != "binary_weights"
        }
        arrays["binary_weights"] = self.binary_sparse or self.binary_weights
        return arrays

    def to_bytes(self) -> bytes:
        """The grammar as one zip archive of the to_disk files (no pickle)."""
        return pack_zip(self.to_members())

    def to_members(self) -> dict[str, bytes]:
        """The to_disk files, name -> content: what ``to_bytes`` archives."""
        return {name: bytes(data) for name, data in self.to_files().items()}

    def to_files(self) -> dict[str, FileData]:
        """``to_members`` with the arrays' archive not encoded yet (an ``NpzArchive``):
        what a model directory's writer streams into its file, so that no copy of a
        large grammar's arrays is held in memory while it is written."""
        return encode_members(self.symbols, self._arrays(), self.words)

    @classmethod
    def from_bytes(cls, data: bytes) -> LPCFG:
        return cls._from_members(unpack_zip(data, "bytes"), "bytes")

    def to_disk(self, path: str | Path) -> None:
        """Write grammar.json, symbols.json, words.json and grammar.npz into directory `path`."""
        write_directory(self.to_files(), path)

    @classmethod
    def from_disk(cls, path: str | Path) -> LPCFG:
        return cls._from_members(read_directory(path), str(path))

    @classmethod
    def _from_members(cls, members: Mapping[str, bytes], source: str) -> LPCFG:
        symbols, arrays, words = decode_members(members, source)
        try:
            return cls(symbols, arrays.pop("n_states"), words=words, **arrays)
        except GrammarError as exc:
            raise GrammarError(
                Errors.E114.format(source=source, detail=shorten(str(exc)))
            ) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LPCFG):
            return NotImplemented
        return (
            self.symbols == other.symbols
            and self.words == other.words
            and all(
                np.array_equal(getattr(self, n), getattr(other, n))
                for n in ARRAY_SPECS
                if n != "binary_weights"
            )
            and self.nonzero_binary_weights() == other.nonzero_binary_weights()
        )

    __hash__ = None  # type: ignore[assignment]  # equality compares arrays; grammars are not dict keys

    def __repr__(self) -> str:
        return (
            f"LPCFG({self.n_symbols} symbols, {len(self.binary_rules)} binary, "
            f"{len(self.unary_rules)} unary, {len(self.lexical_rules)} lexical rules, "
            f"{len(self.words)} words, up to {self.max_states} states)"
        )


def _frozen_array(name: str, value) -> np.ndarray:
    dtype = np.dtype(ARRAY_SPECS[name][0])
    array = np.asarray(value)
    if array.size and not (
        np.issubdtype(array.dtype, np.integer)
        or (dtype.kind == "f" and np.issubdtype(array.dtype, np.floating))
    ):
        raise GrammarError(
            Errors.E105.format(name=name, found=f"dtype {array.dtype}", expected=f"dtype {dtype}")
        )
    if array.size and dtype.kind == "i" and array.dtype != dtype:  # no silent wrap-around
        limits = np.iinfo(dtype)
        if array.min() < limits.min or array.max() > limits.max:
            raise GrammarError(
                Errors.E105.format(
                    name=name, found=f"values outside the {dtype} range", expected=f"dtype {dtype}"
                )
            )
    return _shared_or_copied(array, dtype)


def _frozen(array: np.ndarray) -> bool:
    """Whether neither the array nor anything it views can change: read-only arrays
    down to one that owns its data, or to a ``bytes`` object (a model file's)."""
    current: object = array
    while isinstance(current, np.ndarray):
        if current.flags.writeable:
            return False
        current = current.base
    if isinstance(current, memoryview):
        if not current.readonly:
            return False
        current = current.obj
    return current is None or type(current) is bytes


def _frozen_sparse(weights: SparseWeights) -> SparseWeights:
    positions, values = np.asarray(weights.positions), np.asarray(weights.values)
    length = weights.length
    if (
        (positions.size and not np.issubdtype(positions.dtype, np.integer))
        or (values.size and not np.issubdtype(values.dtype, np.floating))
        or not isinstance(length, (int, np.integer))
        or length < 0
    ):
        found = f"{positions.dtype} positions, {values.dtype} values, length {excerpt(length)}"
        raise GrammarError(
            Errors.E105.format(
                name="binary_weights", found=found, expected="int positions, float values"
            )
        )
    problem = SparseWeights(positions, values, int(length)).check()  # before the cast
    if problem:
        raise GrammarError(Errors.E108.format(kind="binary", detail=problem))
    nonzero = values != 0  # so that equal weights compare equal however given
    if not nonzero.all():
        positions, values = positions[nonzero], values[nonzero]
    return SparseWeights(
        _shared_or_copied(positions, np.dtype(position_dtype(int(length)))),
        _shared_or_copied(values, np.dtype(np.float64)),
        int(length),
    )


def _shared_or_copied(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`array` itself when nobody can change it and it is what the kernels take, else a
    read-only copy: shared, not copied, a grammar's size (a grammar read from a file
    uses the file's arrays)."""
    if array.dtype == dtype and array.flags.c_contiguous and array.flags.aligned and _frozen(array):
        return array
    return _read_only(np.array(array, dtype=dtype, order="C"))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _csr_offsets(sorted_keys: np.ndarray, n_keys: int) -> np.ndarray:
    offsets = np.searchsorted(sorted_keys, np.arange(n_keys + 1), side="left").astype(np.int64)
    return _read_only(offsets)


def _log_positive(weights: np.ndarray) -> np.ndarray:
    out = np.full(weights.shape, -np.inf)
    positive = weights > 0
    out[positive] = np.log(weights[positive])
    return _read_only(out)


def _project_weights(
    parents: np.ndarray,
    offsets: np.ndarray,
    weights: np.ndarray | SparseWeights,
    n_states: np.ndarray,
    state_weights: np.ndarray,
) -> np.ndarray:
    """float64[R]: sum_h w_parent[h] * (sum of row h of each rule's block).

    Vectorised over the rows (rule, parent state) of the flat weights (reduceat, or
    bincount of the non-zero ones), a run of whole rules at a time: the row index
    arrays of lexical rules (one weight a row) would each be as large as the weights.
    """
    if len(parents) == 0:
        return np.zeros(0)
    rows = np.cumsum(n_states[parents].astype(np.int64))
    cuts = np.unique(np.searchsorted(rows, np.arange(PROJECT_ROWS, rows[-1], PROJECT_ROWS)))
    bounds = [0, *(int(cut) for cut in cuts if 0 < cut < len(parents)), len(parents)]
    return np.concatenate(
        [
            _project_rules(lo, hi, parents, offsets, weights, n_states, state_weights)
            for lo, hi in zip(bounds[:-1], bounds[1:])
        ]
    )


def _project_rules(
    lo: int,
    hi: int,
    parents: np.ndarray,
    offsets: np.ndarray,
    weights: np.ndarray | SparseWeights,
    n_states: np.ndarray,
    state_weights: np.ndarray,
) -> np.ndarray:
    """``_project_weights`` of rules lo:hi."""
    parents, offsets = parents[lo:hi], offsets[lo : hi + 1]
    m_parent = n_states[parents].astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(m_parent)])
    rule_of_row = np.repeat(np.arange(len(parents)), m_parent)
    state_of_row = np.arange(row_offsets[-1]) - row_offsets[rule_of_row]
    row_length = np.diff(offsets) // m_parent
    row_starts = offsets[rule_of_row] + state_of_row * row_length[rule_of_row]
    if isinstance(weights, SparseWeights):
        first, last = np.searchsorted(weights.positions, (offsets[0], offsets[-1]))
        positions, values = weights.positions[first:last], weights.values[first:last]
        row = np.searchsorted(row_starts, positions, side="right") - 1
        row_sums = np.bincount(row, weights=values, minlength=len(row_starts))
    else:
        row_sums = np.add.reduceat(weights[offsets[0] : offsets[-1]], row_starts - offsets[0])
    state_offsets = np.concatenate([[0], np.cumsum(n_states, dtype=np.int64)])
    row_weights = state_weights[state_offsets[parents[rule_of_row]] + state_of_row]
    return np.add.reduceat(row_sums * row_weights, row_offsets[:-1])


def _pack_rules(
    kind: str, rules: Mapping[tuple[int, ...], np.ndarray], n_states: np.ndarray, arity: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted rules int32[R, arity], offsets int64[R + 1] and flat weights of a rule dict."""
    keys = sorted(rules)
    blocks = []
    for key in keys:
        if len(key) != arity:
            raise GrammarError(Errors.E106.format(kind=kind, rule=key, detail=f"needs {arity} ids"))
        symbols = key[:1] if kind == "lexical" else key
        if min(symbols) < 0 or max(symbols) >= len(n_states):
            raise GrammarError(Errors.E106.format(kind=kind, rule=key, detail="unknown symbol id"))
        expected = tuple(int(n_states[s]) for s in symbols)
        block = np.asarray(rules[key], dtype=np.float64)
        if block.shape != expected:
            if block.size != 1 or np.prod(expected) != 1:
                raise GrammarError(
                    Errors.E111.format(kind=kind, rule=key, found=block.shape, expected=expected)
                )
            block = block.reshape(expected)
        blocks.append(block.ravel())
    sizes = [len(block) for block in blocks]
    offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
    weights = np.concatenate(blocks) if blocks else np.zeros(0)
    array = np.array(keys, dtype=np.int32).reshape(len(keys), arity)
    return array, offsets, weights


def _topological_order(unary_rules: np.ndarray, symbols: SymbolTable) -> np.ndarray:
    """Symbols ordered so that every unary child precedes its parents (DFS post-order).

    Raises GrammarError naming a cycle if the unary rules are not a DAG.
    """
    n_symbols = len(symbols)
    offsets = _csr_offsets(unary_rules[:, 0], n_symbols)
    children = unary_rules[:, 1]
    state = np.zeros(n_symbols, dtype=np.int8)  # 0 new, 1 on the DFS path, 2 done
    order: list[int] = []
    for start in range(n_symbols):
        if state[start]:
            continue
        path = [start]
        cursors = [int(offsets[start])]
        state[start] = 1
        while path:
            node = path[-1]
            if cursors[-1] < offsets[node + 1]:
                child = int(children[cursors[-1]])
                cursors[-1] += 1
                if state[child] == 1:
                    cycle = path[path.index(child) :] + [child]
                    raise GrammarError(
                        Errors.E109.format(cycle=" -> ".join(symbols.name(s) for s in cycle))
                    )
                if state[child] == 0:
                    state[child] = 1
                    path.append(child)
                    cursors.append(int(offsets[child]))
            else:
                state[node] = 2
                order.append(node)
                path.pop()
                cursors.pop()
    return np.array(order, dtype=np.int32)
