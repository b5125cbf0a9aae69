"""Hierarchical coarse-to-fine pruning (Charniak et al. 2006; Petrov & Klein 2007).

A sentence is first parsed densely (every chart item) with the coarsest
grammar, of a hundred symbols or so. Items whose posterior is at most the
threshold are pruned, and each finer level is parsed only over the items whose
image at the level above survived (a ``MergedMask`` over the coarser level's
symbols, never expanded). The levels, coarsest first:

1. merged grammars (``grammar.projection``): each is the one-state grammar
   with symbols merged by name (``decode.levels.level_label``: X-bar labels,
   then X-bar labels with Markov context, by default);
2. the one-state grammar over the final grammar's symbols; when the final
   grammar has one state this level *is* the final pass, left to the caller;
3. for a latent grammar of non-negative weights with more than ``state_groups``
   states to a symbol: the grammar with its states merged into that many
   (``chart.state_merge``), when the caller gives the final
   grammar's lexical scores;
4. the final (latent) grammar, run by the caller over the returned mask.

A threshold of 0 keeps every item with a non-zero coarse posterior, which
loses no derivation of a non-negative grammar.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..defaults import PRUNE_STATES, PRUNE_THRESHOLD, STATE_PRUNE_THRESHOLD
from ..errors import Errors
from ..grammar import LPCFG, LexicalScores
from ..grammar.projection import SymbolMerge, expected_symbol_counts, merge_symbols
from .coarse import CoarsePosteriors, coarse_posteriors
from .inputs import Mask, MergedMask, column_members
from .inside_outside import inside_outside
from .state_merge import StateMerge, merge_states


@dataclass(frozen=True)
class PruningResult:
    """mask (MergedMask | None): the final grammar's allowed items: the last level's
        kept items or, for a latent grammar, the kept items of its one-state
        projection; None when a level found no parse (the caller falls back).
    kept (tuple[int, ...]): items kept by each pass, coarsest first.
    """

    mask: MergedMask | None
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
    threshold (float | Sequence[float]): items with a posterior at most this are
        pruned: one value for every pass, or one per pass (the merged levels, then
        the one-state projection when the grammar is latent). Defaults to
        ``defaults.PRUNE_THRESHOLD``.
    state_groups (int): the states per symbol of the merged-states level; 0: no
        such level. Defaults to ``defaults.PRUNE_STATES``.
    state_threshold (float): the merged-states level's threshold. Defaults to
        ``defaults.STATE_PRUNE_THRESHOLD``.
    """

    def __init__(
        self,
        grammar: LPCFG,
        level_names: Sequence[Sequence[str]],
        *,
        coarse: LPCFG | None = None,
        threshold: float | Sequence[float] = PRUNE_THRESHOLD,
        state_groups: int = PRUNE_STATES,
        state_threshold: float = STATE_PRUNE_THRESHOLD,
    ):
        if not level_names:
            raise ValueError(
                Errors.E205.format(name="level_names", value=[], expected="at least one level")
            )
        self.grammar = grammar
        self.one_state = bool((grammar.n_states == 1).all())
        if coarse is None:
            coarse = grammar if self.one_state else grammar.project()
        self.coarse = coarse
        counts = expected_symbol_counts(coarse)
        levels = [merge_symbols(coarse, names, counts) for names in level_names]
        # A level after the first that merges no symbols is ``coarse`` itself: the
        # one-state projection the last pass parses anyway, or the final one-state
        # grammar (or the MLE grammar that prunes a one-state signed one, which then
        # runs over a looser mask). E.g. X-bar with Markov context for a grammar
        # without annotations or function tags. Its pass is skipped (with its
        # threshold, if given per pass).
        kept_levels = [
            k
            for k, level in enumerate(levels)
            if k == 0 or level.grammar.n_symbols < coarse.n_symbols
        ]
        self.levels: list[SymbolMerge] = [levels[k] for k in kept_levels]
        # refine[k][s]: the level-k symbol above symbol s of level k + 1; the masks
        # of each pass are over the symbols of the level before (MergedMask).
        self.refine = [
            _parent_map(coarser.coarse_of, finer.coarse_of, finer.grammar.n_symbols)
            for coarser, finer in zip(self.levels, self.levels[1:])
        ]
        self._columns = [
            (columns, column_members(columns, level.grammar.n_symbols))
            for columns, level in zip(self.refine + [self.levels[-1].coarse_of], self.levels)
        ]
        identity = np.arange(grammar.n_symbols, dtype=np.int32)
        self._identity = (identity, column_members(identity, grammar.n_symbols))
        if not isinstance(state_groups, int) or state_groups < 0:
            raise ValueError(
                Errors.E205.format(name="state_groups", value=state_groups, expected="an int >= 0")
            )
        if not isinstance(state_threshold, (int, float)) or not 0 <= state_threshold < 1:
            raise ValueError(
                Errors.E205.format(
                    name="state_threshold", value=state_threshold, expected="0 <= t < 1"
                )
            )
        self.state_groups = state_groups
        self.state_threshold = float(state_threshold)
        self.merges_states = bool(
            state_groups
            and not self.one_state
            and not grammar.signed
            and grammar.max_states > state_groups
        )
        n_passes = len(levels) + (0 if self.one_state else 1)
        thresholds = (
            (threshold,) * n_passes if isinstance(threshold, (int, float)) else tuple(threshold)
        )
        if len(thresholds) != n_passes or not all(0.0 <= t < 1.0 for t in thresholds):
            raise ValueError(
                Errors.E205.format(
                    name="threshold",
                    value=threshold,
                    expected=f"one value or {n_passes} (one per pass), each 0 <= t < 1",
                )
            )
        self.thresholds: tuple[float, ...] = tuple(
            thresholds[k] for k in kept_levels + list(range(len(levels), n_passes))
        )

    @functools.cached_property
    def state_merge(self) -> StateMerge:
        """The merged-states level's grammar (built on first use: it costs a fraction
        of a second for a large grammar)."""
        return merge_states(self.grammar, self.state_groups)

    def first_pass(self, lexical: LexicalScores) -> CoarsePosteriors:
        """The dense pass of the coarsest level (the same for every threshold).

        lexical (LexicalScores): as for prune.
        """
        first = self.levels[0]
        return coarse_posteriors(first.grammar, first.lexical(lexical))

    def prune(
        self,
        lexical: LexicalScores,
        *,
        scale: float = 1.0,
        first: CoarsePosteriors | None = None,
        fine: LexicalScores | None = None,
    ) -> PruningResult:
        """The mask for the final pass over one sentence.

        lexical (LexicalScores): one-state scores for the ``coarse`` grammar's symbols
            (the final grammar's own scores when it has one state).
        scale (float): multiplies every threshold (fallbacks lower them; 0 keeps every
            item with a non-zero posterior).
        first (CoarsePosteriors | None): first_pass(lexical), when already computed.
        fine (LexicalScores | None): the final grammar's scores, for the merged-states
            level (skipped without them).
        """
        thresholds = [threshold * scale for threshold in self.thresholds]
        dense = self.first_pass(lexical) if first is None else first
        if not dense.has_parse:
            return PruningResult(None, (0,))
        mask = _keep(dense.posteriors, thresholds[0])
        kept: list = [np.count_nonzero(mask)]
        for level, (columns, members), threshold in zip(
            self.levels[1:], self._columns, thresholds[1:]
        ):
            allowed = MergedMask(mask, columns, members)
            mask, count = _refine(level.grammar, level.lexical(lexical), allowed, threshold)
            kept.append(count)
            if mask is None:
                return PruningResult(None, tuple(kept))
        final: MergedMask | None = MergedMask(mask, *self._columns[-1])
        if not self.one_state:
            mask, count = _refine(self.coarse, lexical, final, thresholds[-1])
            kept.append(count)
            final = None if mask is None else MergedMask(mask, *self._identity)
        if final is not None and self.merges_states and fine is not None:
            merge = self.state_merge
            threshold = self.state_threshold * scale
            mask, count = _refine(merge.grammar, merge.lexical(fine), final, threshold)
            kept.append(count)
            final = None if mask is None else MergedMask(mask, *self._identity)
        return PruningResult(final, tuple(kept))


def _keep(posteriors: np.ndarray, threshold: float) -> np.ndarray:
    return posteriors > threshold if threshold > 0 else posteriors != 0


def _refine(grammar: LPCFG, lexical: LexicalScores, allowed: Mask, threshold: float):
    """(bool (n+1, n+1, S') or None, count): the allowed items whose posterior under
    ``grammar`` is kept, None when nothing parses."""
    chart = inside_outside(grammar, lexical, allowed, rule_posteriors=False)
    if not chart.has_parse:
        return None, 0
    keep = _keep(chart.marginals, threshold)
    n = lexical.n_words
    # Columns padded to a multiple of 8, as the kernels read them (inputs.mask_arrays).
    mask = np.zeros((n + 1, n + 1, -(-grammar.n_symbols // 8) * 8), dtype=bool)
    mask[chart.item_starts[keep], chart.item_ends[keep], chart.item_symbols[keep]] = True
    return mask, np.count_nonzero(keep)


def _parent_map(coarser: np.ndarray, finer: np.ndarray, n_finer: int) -> np.ndarray:
    parents = np.full(n_finer, -1, dtype=np.int64)
    parents[finer] = coarser
    if not (parents[finer] == coarser).all():
        raise ValueError(
            Errors.E205.format(
                name="level_names", value="...", expected="each level must refine the one before"
            )
        )
    return parents
