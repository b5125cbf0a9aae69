"""The best derivation (max-product over trees *and* latent states), in log space.

Only meaningful for non-negative grammars: a weight <= 0 counts as impossible
(log weight -inf), so with a spectral grammar this searches the derivations
whose factors are all positive, which is not the best tree. Use a sum-based
decoder on ``inside_outside`` marginals for signed grammars.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..grammar import LPCFG, LexicalScores, SymbolTable
from ..grammar.symbols import PRETERMINAL
from ..trees.tree import Tree
from .inputs import Mask, lexical_arrays, mask_args, viterbi_rule_args
from .kernel_parts import lexical_first, parents_sorted, rule_splits, unary_walk
from .scaled import KERNEL, grow

LEXICAL, BINARY, UNARY = 0, 1, 2  # back-pointer kinds


@dataclass(frozen=True)
class Derivation:
    """The best derivation with latent states projected away.

    n_words (int): sentence length.
    log_score (float): log of the derivation's weight; -inf when there is no parse.
    symbols, starts, ends (np.ndarray): int32[N], the nodes in pre-order (a unary
        chain gives several nodes with the same span, outermost first;
        preterminals included, one per word). Empty when there is no parse.
    """

    n_words: int
    log_score: float
    symbols: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @property
    def has_parse(self) -> bool:
        return len(self.symbols) > 0

    def to_tree(self, symbols: SymbolTable, words: list[str]) -> Tree:
        """The derivation as a Tree with the grammar's labels over `words`."""
        kinds = symbols.kind_codes
        stack: list[tuple[int, int, int, list[Tree]]] = []  # (symbol, start, end, children)
        finished: list[Tree] = []

        def close() -> None:
            symbol, start, _, children = stack.pop()
            if kinds[symbol] == PRETERMINAL:
                node = Tree.leaf(symbols.name(symbol), words[start])
            else:
                node = Tree(symbols.name(symbol), tuple(children))
            (stack[-1][3] if stack else finished).append(node)

        for symbol, start, end in zip(self.symbols, self.starts, self.ends):
            while stack and stack[-1][2] <= start:
                close()
            stack.append((int(symbol), int(start), int(end), []))
        while stack:
            close()
        return finished[0]


def viterbi(grammar: LPCFG, lexical: LexicalScores, mask: Mask = None) -> Derivation:
    """The highest-weight derivation over the items the mask allows.

    grammar (LPCFG): a grammar with non-negative weights (see the module docstring).
    lexical (LexicalScores): the preterminal scores of the sentence (<= 0 is impossible).
    mask (np.ndarray | MergedMask | None): the items allowed, as for inside_outside.
    RETURNS (Derivation): the best derivation, or an empty one if there is no parse.
    """
    n = lexical.n_words
    positions, tags, offsets, values = lexical_arrays(grammar, lexical)
    with np.errstate(divide="ignore"):
        log_values = np.where(values > 0, np.log(np.maximum(values, 1e-300)), -np.inf)
    score, symbols, starts, ends = _viterbi_kernel(
        n, grammar.root, *viterbi_rule_args(grammar), positions, tags, offsets, log_values,
        *mask_args(grammar, mask, n),
    )  # fmt: skip
    return Derivation(n, float(score) if len(symbols) else -math.inf, symbols, starts, ends)


@njit(**KERNEL)
def _viterbi_kernel(
    n, root, n_states, max_states,
    binary_rules, binary_offsets, log_binary, binary_by_parent,
    unary_rules, unary_offsets, log_unary, unary_by_parent, unary_parent_order,
    lex_positions, lex_tags, lex_offsets, log_lex,
    binary_parents, has_mask, mask, mask_words, columns, column_offsets, column_members,
):  # fmt: skip
    """Max-product CKY with back-pointers per (item, latent state), the arguments
    packed by ``inputs`` (``viterbi_rule_args``, ``lexical_arrays`` with log values,
    ``mask_args``).

    For a rule a -> b c the max over splits is taken per child-state pair first,
    best[h2, h3] = max_k left_k[h2] + right_k[h3], then combined once with the
    tensor: the max-semiring version of the split-accumulation trick.

    Not the latent inside pass with a max: that pass sums scaled vectors and keeps no
    back-pointers, this one adds logs and keeps one per (item, state), so a flag
    would choose between two versions of every arithmetic step. What they share is
    the skeleton (``kernel_parts``).
    """
    n_symbols = n_states.shape[0]
    table = np.full((n + 1, n + 1, n_symbols), -1, np.int32)
    scores = np.empty(256 * max_states)
    pointer_kind = np.empty(256 * max_states, np.int8)
    pointer_rule = np.empty(256 * max_states, np.int32)
    pointer_split = np.empty(256 * max_states, np.int32)
    pointer_left = np.empty(256 * max_states, np.int32)  # child state (left or unary child)
    pointer_right = np.empty(256 * max_states, np.int32)
    item_offsets = np.empty(256, np.int64)
    n_items = 0
    n_values = 0
    cell_scores = np.full((n_symbols, max_states), -np.inf)
    cell_kind = np.zeros((n_symbols, max_states), np.int8)
    cell_rule = np.zeros((n_symbols, max_states), np.int32)
    cell_split = np.zeros((n_symbols, max_states), np.int32)
    cell_left = np.zeros((n_symbols, max_states), np.int32)
    cell_right = np.zeros((n_symbols, max_states), np.int32)
    cell_live = np.zeros(n_symbols, np.bool_)
    touched = np.empty(n_symbols, np.int32)
    pair_scores = np.empty((max_states, max_states))
    pair_splits = np.empty((max_states, max_states), np.int32)
    parents = np.empty(n_symbols, np.int32)
    # The items' bitsets, as latent_kernels.latent_inside keeps them: a rule's splits
    # are the bits set in both its children's words (kernel_parts.rule_splits).
    n_words = n // 64 + 1
    start_bits = np.zeros((n + 1, n_symbols, n_words), np.uint64)
    end_bits = np.zeros((n + 1, n_symbols, n_words), np.uint64)
    splits = np.empty(n + 1, np.int64)
    unary_steps = np.empty(unary_rules.shape[0], np.int64)
    everywhere = np.ones(n_symbols, np.bool_)  # no context row (kernel_parts.unary_walk)
    lex_first = lexical_first(lex_positions, n)
    for width in range(1, n + 1):
        for i in range(n - width + 1):
            j = i + width
            n_touched = np.int64(0)  # not a literal 0 (chart.scaled)
            if width == 1:
                for lex in range(lex_first[i], lex_first[j]):
                    tag = lex_tags[lex]
                    if not has_mask or mask[i, j, columns[tag]]:
                        for h in range(n_states[tag]):
                            cell_scores[tag, h] = log_lex[lex_offsets[lex] + h]
                            cell_kind[tag, h] = LEXICAL
                        cell_live[tag] = True
                        touched[n_touched] = tag
                        n_touched += 1
            else:
                n_parents = parents_sorted(
                    i, j, binary_parents, has_mask, mask, mask_words, column_offsets,
                    column_members, parents,
                )  # fmt: skip
                for t in range(n_parents):
                    a = parents[t]
                    size_a = n_states[a]
                    for r in range(binary_by_parent[a], binary_by_parent[a + 1]):
                        b = binary_rules[r, 1]
                        c = binary_rules[r, 2]
                        size_b = n_states[b]
                        size_c = n_states[c]
                        found = False
                        n_splits = rule_splits(start_bits[i, b], end_bits[j, c], splits)
                        for q in range(n_splits):
                            k = splits[q]
                            left = table[i, k, b]
                            right = table[k, j, c]
                            base_b = item_offsets[left]
                            base_c = item_offsets[right]
                            if not found:
                                pair_scores[:size_b, :size_c] = -np.inf
                                found = True
                            for h2 in range(size_b):
                                for h3 in range(size_c):
                                    s = scores[base_b + h2] + scores[base_c + h3]
                                    if s > pair_scores[h2, h3]:
                                        pair_scores[h2, h3] = s
                                        pair_splits[h2, h3] = k
                        if not found:
                            continue
                        base = binary_offsets[r]
                        for h1 in range(size_a):
                            for h2 in range(size_b):
                                row = base + (h1 * size_b + h2) * size_c
                                for h3 in range(size_c):
                                    s = log_binary[row + h3] + pair_scores[h2, h3]
                                    if s > cell_scores[a, h1]:
                                        cell_scores[a, h1] = s
                                        cell_kind[a, h1] = BINARY
                                        cell_rule[a, h1] = r
                                        cell_split[a, h1] = pair_splits[h2, h3]
                                        cell_left[a, h1] = h2
                                        cell_right[a, h1] = h3
                                        if not cell_live[a]:
                                            cell_live[a] = True
                                            touched[n_touched] = a
                                            n_touched += 1
            # The closure touches every parent of a child in the cell; those with no
            # finite score are dropped below.
            n_touched, n_steps = unary_walk(
                i, j, unary_rules, unary_by_parent, unary_parent_order, has_mask, mask,
                columns, everywhere, cell_live, touched, n_touched, unary_steps,
            )  # fmt: skip
            for step in range(n_steps):
                r = unary_steps[step]
                p = unary_rules[r, 0]
                c = unary_rules[r, 1]
                size_c = n_states[c]
                base = unary_offsets[r]
                for h1 in range(n_states[p]):
                    for h2 in range(size_c):
                        s = log_unary[base + h1 * size_c + h2] + cell_scores[c, h2]
                        if s > cell_scores[p, h1]:
                            cell_scores[p, h1] = s
                            cell_kind[p, h1] = UNARY
                            cell_rule[p, h1] = r
                            cell_left[p, h1] = h2
            needed = n_values + n_touched * max_states
            item_offsets = grow(item_offsets, n_items + n_touched)
            scores = grow(scores, needed)
            pointer_kind = grow(pointer_kind, needed)
            pointer_rule = grow(pointer_rule, needed)
            pointer_split = grow(pointer_split, needed)
            pointer_left = grow(pointer_left, needed)
            pointer_right = grow(pointer_right, needed)
            for t in range(n_touched):
                a = touched[t]
                live = False
                for h in range(n_states[a]):
                    live = live or cell_scores[a, h] > -np.inf
                if live:
                    table[i, j, a] = n_items
                    start_bits[i, a, j // 64] |= np.uint64(1) << np.uint64(j % 64)
                    end_bits[j, a, i // 64] |= np.uint64(1) << np.uint64(i % 64)
                    item_offsets[n_items] = n_values
                    for h in range(n_states[a]):
                        scores[n_values + h] = cell_scores[a, h]
                        pointer_kind[n_values + h] = cell_kind[a, h]
                        pointer_rule[n_values + h] = cell_rule[a, h]
                        pointer_split[n_values + h] = cell_split[a, h]
                        pointer_left[n_values + h] = cell_left[a, h]
                        pointer_right[n_values + h] = cell_right[a, h]
                    n_items += 1
                    n_values += n_states[a]
                cell_live[a] = False
                cell_scores[a, :] = -np.inf
    empty = np.zeros(0, np.int32)
    top = table[0, n, root]
    if top < 0 or scores[item_offsets[top]] == -np.inf:
        return -np.inf, empty, empty, empty
    # Follow the back-pointers from (TOP, 0, n, state 0), writing nodes in pre-order.
    symbols = np.empty(4 * n, np.int32)
    starts = np.empty(4 * n, np.int32)
    ends = np.empty(4 * n, np.int32)
    stack = np.empty((4 * n, 4), np.int64)  # (symbol, start, end, state)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = root, 0, n, 0
    depth = 1
    n_nodes = 0
    while depth > 0:
        depth -= 1
        a, i, j, h = stack[depth, 0], stack[depth, 1], stack[depth, 2], stack[depth, 3]
        symbols = grow(symbols, n_nodes + 1)
        starts = grow(starts, n_nodes + 1)
        ends = grow(ends, n_nodes + 1)
        symbols[n_nodes], starts[n_nodes], ends[n_nodes] = a, i, j
        n_nodes += 1
        slot = item_offsets[table[i, j, a]] + h
        kind = pointer_kind[slot]
        if kind == LEXICAL:
            continue
        r = pointer_rule[slot]
        if depth + 2 > stack.shape[0]:
            bigger = np.empty((2 * stack.shape[0], 4), np.int64)
            bigger[: stack.shape[0]] = stack
            stack = bigger
        if kind == UNARY:
            stack[depth, 0], stack[depth, 1], stack[depth, 2] = unary_rules[r, 1], i, j
            stack[depth, 3] = pointer_left[slot]
            depth += 1
        else:
            k = pointer_split[slot]
            stack[depth, 0], stack[depth, 1], stack[depth, 2] = binary_rules[r, 2], k, j
            stack[depth, 3] = pointer_right[slot]
            stack[depth + 1, 0], stack[depth + 1, 1], stack[depth + 1, 2] = binary_rules[r, 1], i, k
            stack[depth + 1, 3] = pointer_left[slot]
            depth += 2
    return scores[item_offsets[top]], symbols[:n_nodes], starts[:n_nodes], ends[:n_nodes]
