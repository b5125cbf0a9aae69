"""Dual decomposition of a model's members: one tree they agree on (Le Roux et al. 2013).

Each member (a *subproblem*: its grammar, or its ensemble's product, with its own
binarisation and labels) finds its best tree under its own objective plus
penalties on the brackets it contains; the penalties move each member
towards the brackets the others chose, until all agree (Algorithm 1 of that
paper). Agreement is on anchored categories: a bracket is (start, end,
category), the category being the natural label without function tags or
annotations (``trees.transforms.coarse_label``: ``NP-SBJ^S`` -> ``NP``,
chains kept: ``S-TPC::VP`` -> ``S::VP``), so members that strip function tags
agree with members that keep them, and the tree returned is that of a member
chosen by the caller (one that keeps function labels).

With penalties Lambda_i for member i (their sum is zero), each iteration
decodes ``T_i = argmax sigma_i(T) + z(T) . Lambda_i`` and moves
``Lambda_i -= alpha_t (z(T_i) - mean_j z(T_j))``; the dual objective
``sum_i max_T (sigma_i(T) + z(T) . Lambda_i)`` bounds the best agreeing
combination from above, and ``alpha_t = STEP_SIZE / (1 + c(t))`` with ``c(t)``
the number of times it went up (Le Roux et al. 2013, section 4, with ``STEP_SIZE`` 1).
When every member returns the same brackets the combination is optimal (a
*certificate*); otherwise the chosen member's last tree is returned after
``max_iterations``. Charts and pruning are computed once; each iteration only
re-runs the members' CKY over their anchored scores.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..trees.transforms import coarse_label, is_intermediate
from .result import ParseResult
from .span_scores import SpanScores

MAX_ITERATIONS = 1000  # as Le Roux et al. 2013 (most sentences reach a certificate within it)
# alpha_0: Le Roux et al.'s (2013) 1 / (1 + c(t)) times 3. Chosen on ptb_sample dev for four
# clustering members: more certificates than at 1, as many as at 10, about the same F1
# (BENCHMARKS.md "Combined models: members trained apart (ptb_sample)" compares it on test).
STEP_SIZE = 3.0

# A member: penalties over its natural labels (or None) -> its best tree.
Subproblem = Callable[[SpanScores | None], ParseResult]


@dataclass(frozen=True)
class DualResult:
    """trees (list[ParseResult]): each member's last tree (in its own labels).
    certificate (bool): the members agreed: the combination is optimal.
    iterations (int): the iterations run (1: they agreed at once).
    """

    trees: list[ParseResult]
    certificate: bool
    iterations: int


def dual_decompose(
    subproblems: Sequence[Subproblem],
    labels: Sequence[tuple[str, ...]],
    scheme: str,
    n_words: int,
    *,
    max_iterations: int | None = None,
) -> DualResult:
    """Run Algorithm 1 (module docstring) over ``subproblems``.

    subproblems (Sequence[Subproblem]): one decoder per member; each returns a parsed
        result.
    labels (Sequence[tuple[str, ...]]): each member's natural labels (what its span
        scores are over).
    scheme (str): the label scheme, for categories.
    n_words (int): the sentence length.
    max_iterations (int | None): give up after this many iterations. Defaults to
        ``MAX_ITERATIONS``.
    RETURNS (DualResult): the members' last trees, whether they agreed, the iterations.
    """
    max_iterations = MAX_ITERATIONS if max_iterations is None else max_iterations
    trees = [subproblem(None) for subproblem in subproblems]
    brackets = [_brackets(tree, scheme) for tree in trees]
    if all(b == brackets[0] for b in brackets[1:]):
        return DualResult(trees, True, 1)
    categories = tuple(sorted({c for b in brackets for _, _, c in b}))
    index = {c: i for i, c in enumerate(categories)}
    size = n_words + 1
    penalties = [np.zeros((size, size, len(categories))) for _ in subproblems]
    increases, previous = 0, sum(tree.score for tree in trees)  # the dual at zero penalties
    for iteration in range(2, max_iterations + 1):
        z = [_indicator(b, index, size) for b in brackets]
        mean = sum(z) / len(z)
        alpha = STEP_SIZE / (1.0 + increases)
        for penalty, own in zip(penalties, z):
            penalty -= alpha * (own - mean)
        trees = [
            subproblem(_member_scores(penalty, categories, own, scheme))
            for subproblem, penalty, own in zip(subproblems, penalties, labels)
        ]
        brackets = [_brackets(tree, scheme) for tree in trees]
        # A member may choose a category no member chose before: it enters with a zero
        # penalty everywhere (the penalties it would have had).
        unseen = {c for b in brackets for _, _, c in b if c not in index}
        if unseen:
            categories = categories + tuple(sorted(unseen))
            index = {c: i for i, c in enumerate(categories)}
            pad = ((0, 0), (0, 0), (0, len(unseen)))
            penalties = [np.pad(penalty, pad) for penalty in penalties]
        if all(b == brackets[0] for b in brackets[1:]):
            return DualResult(trees, True, iteration)
        dual = sum(tree.score for tree in trees)
        if dual > previous:
            increases += 1
        previous = dual
    return DualResult(trees, False, max_iterations)


def _brackets(result: ParseResult, scheme: str) -> frozenset[tuple[int, int, str]]:
    """The anchored categories of a tree: (start, end, category) of its natural nodes
    below TOP (counted once each: EVALB-style multiplicity does not matter here)."""
    names = result.label_names
    return frozenset(
        (int(start), int(end), _category(names[label], scheme))
        for label, start, end in zip(
            result.labels[1:].tolist(), result.starts[1:].tolist(), result.ends[1:].tolist()
        )
        if not is_intermediate(names[label])
    )


@functools.lru_cache(maxsize=4096)
def _category(label: str, scheme: str) -> str:
    return coarse_label(label, scheme)


def _indicator(brackets, index: dict[str, int], size: int) -> np.ndarray:
    z = np.zeros((size, size, len(index)))
    for start, end, category in brackets:
        z[start, end, index[category]] = 1.0
    return z


def _member_scores(
    penalty: np.ndarray, categories: tuple[str, ...], labels: tuple[str, ...], scheme: str
) -> SpanScores:
    """The penalties of categories as span scores over a member's natural labels."""
    index = {c: i for i, c in enumerate(categories)}
    columns = [index.get(_category(label, scheme), -1) for label in labels]
    padded = np.concatenate([penalty, np.zeros((*penalty.shape[:2], 1))], axis=2)
    return SpanScores(labels, padded[:, :, columns])
