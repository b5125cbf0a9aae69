"""Hierarchical coarse-to-fine pruning (Charniak et al. 2006; Petrov & Klein 2007).

A sentence is first parsed densely (every chart item) with the coarsest
grammar, of a few hundred symbols. Items whose posterior is at most the
threshold are pruned, and each finer level is parsed only over the items whose
image at the level above survived. The levels, coarsest first:

1. merged grammars (``grammar.projection``): each is the one-state grammar
   with symbols merged by name, e.g. ``trees.transforms.coarse_label`` with
   everything stripped (X-bar), then with annotations and function tags kept
   but no Markov context;
2. the one-state grammar over the final grammar's symbols; when the final
   grammar has one state this level *is* the final pass, left to the caller;
3. the final (latent) grammar, run by the caller over the returned mask.

A threshold of 0 keeps every item with a non-zero coarse posterior, which
loses no derivation of a non-negative grammar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.projection import SymbolMerge, expected_symbol_counts, merge_symbols
from .coarse import coarse_posteriors
from .inside_outside import inside_outside


@dataclass(frozen=True)
class PruningResult:
    """mask (np.ndarray | None): bool (n+1, n+1, S) over the final grammar's items;
        None when a level found no parse (the caller falls back).
    kept (tuple[int, ...]): items kept after each level, coarsest first.
    """

    mask: np.ndarray | None
    kept: tuple[int, ...]


class PruningCascade:
    """Coarse-to-fine masks for one grammar.

    grammar (LPCFG): the final grammar (any number of states, signed weights allowed).
    level_names (Sequence[Sequence[str]]): the merged levels, coarsest first: for
        each, the level's name of every symbol of ``grammar``. Each level must
        refine the one before (symbols with one name at a level have one name at
        every coarser level).
    coarse (LPCFG | None): the one-state grammar over ``grammar``'s symbols; defaults
        to ``grammar`` when that has one state, else ``grammar.project()``. Spectral
        grammars pass their MLE grammar here.
    threshold (float): items with a posterior at most this are pruned, at every
        level. Defaults to 1e-5.
    """

    def __init__(
        self,
        grammar: LPCFG,
        level_names: Sequence[Sequence[str]],
        *,
        coarse: LPCFG | None = None,
        threshold: float = 1e-5,
    ):
        if not 0.0 <= threshold < 1.0:
            raise ValueError(
                Errors.E402.format(name="threshold", value=threshold, expected="0 <= t < 1")
            )
        if not level_names:
            raise ValueError(
                Errors.E402.format(name="level_names", value=[], expected="at least one level")
            )
        self.grammar = grammar
        self.one_state = bool((grammar.n_states == 1).all())
        if coarse is None:
            coarse = grammar if self.one_state else grammar.project()
        self.coarse = coarse
        counts = expected_symbol_counts(coarse)
        self.levels: list[SymbolMerge] = [
            merge_symbols(coarse, names, counts) for names in level_names
        ]
        # refine[k][s]: the level-k symbol above symbol s of level k + 1.
        self.refine = [
            _parent_map(coarser.coarse_of, finer.coarse_of, finer.grammar.n_symbols)
            for coarser, finer in zip(self.levels, self.levels[1:])
        ]
        self.threshold = threshold

    def prune(self, lexical: LexicalScores, *, threshold: float | None = None) -> PruningResult:
        """The mask for the final pass over one sentence.

        lexical (LexicalScores): one-state scores for the ``coarse`` grammar's symbols
            (the final grammar's own scores when it has one state).
        threshold (float | None): overrides the cascade's threshold (fallbacks lower it).
        """
        threshold = self.threshold if threshold is None else threshold
        first = self.levels[0]
        dense = coarse_posteriors(first.grammar, first.lexical(lexical))
        if not dense.has_parse:
            return PruningResult(None, (0,))
        mask = _keep(dense.posteriors, threshold)
        kept = [int(mask.sum())]
        for level, parents in zip(self.levels[1:], self.refine):
            mask = _refine(level.grammar, level.lexical(lexical), mask[:, :, parents], threshold)
            kept.append(0 if mask is None else int(mask.sum()))
            if mask is None:
                return PruningResult(None, tuple(kept))
        mask = mask[:, :, self.levels[-1].coarse_of]
        if not self.one_state:
            mask = _refine(self.coarse, lexical, mask, threshold)
            kept.append(0 if mask is None else int(mask.sum()))
        return PruningResult(mask, tuple(kept))


def _keep(posteriors: np.ndarray, threshold: float) -> np.ndarray:
    return posteriors > threshold if threshold > 0 else posteriors != 0


def _refine(grammar: LPCFG, lexical: LexicalScores, allowed: np.ndarray, threshold: float):
    """bool (n+1, n+1, S): the allowed items whose posterior under ``grammar`` is kept."""
    chart = inside_outside(grammar, lexical, allowed, rule_posteriors=False)
    if not chart.has_parse:
        return None
    keep = _keep(chart.marginals, threshold)
    mask = np.zeros_like(allowed)
    mask[chart.item_starts[keep], chart.item_ends[keep], chart.item_symbols[keep]] = True
    return mask


def _parent_map(coarser: np.ndarray, finer: np.ndarray, n_finer: int) -> np.ndarray:
    parents = np.full(n_finer, -1, dtype=np.int64)
    parents[finer] = coarser
    if not (parents[finer] == coarser).all():
        raise ValueError(
            Errors.E402.format(
                name="level_names", value="...", expected="each level must refine the one before"
            )
        )
    return parents
