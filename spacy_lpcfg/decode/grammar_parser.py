"""The parser of one grammar, or of an ensemble of grammars decoded jointly.

For each sentence: lexical scores from the model's lexicon, a pruning mask
from the coarse-to-fine cascade, the chart of the final grammar over the mask
(an ensemble's grammars: one chart each, ``charts.ensemble_charts``), the
decoder, and the inverse transforms back to treebank labels. A sentence is
never dropped. When a step finds no parse the parser falls back, and counts
it, in this order:

``lower_threshold``  the cascade again with the thresholds divided by 10**3, then
                     by 10**6 (an unusual construction the finer grammars need
                     can have a tiny posterior under the coarse ones);
``no_pruning``       every item with a non-zero coarse posterior (sentences of
                     at most ``EXHAUSTIVE_LENGTH`` words);
``flat``             a flat tree: the grammar's most likely root category over
                     the best tag of each word.

Sentences longer than ``max_length`` words skip straight to ``flat`` (counted
as ``too_long``): chart memory grows with the square of the length.

As a member of a combined model (``decode.combined_parser``) it gives the
sentence's span marginals, or a subproblem of dual decomposition, instead of a
tree.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import defaults
from ..chart import ChartPosteriors, CoarsePosteriors, inside_outside
from ..chart.pruning import PruningCascade
from ..grammar import LPCFG, LexicalScores
from ..grammar.model import ParsingModel
from ..grammar.symbols import PHRASAL, SymbolTable
from ..trees.tree import ROOT_LABEL, Tree
from .anchored import anchored_scores, sum_anchored_scores
from .charts import ensemble_charts
from .dual import Subproblem
from .kbest import KBEST_DECODERS, kbest_results
from .levels import level_label
from .mbr import mbr_tree
from .parser import Parse, Parser
from .product import shares_rules, span_product
from .result import ParseResult
from .rule_cky import rule_cky
from .scores import (
    chart_posteriors_of,
    constituents,
    log_likelihood,
    mean_chart_posteriors,
    with_posteriors,
)
from .span_marginals import (
    SpanMarginals,
    aligned,
    grouped_names,
    mean_marginals,
    span_marginals,
)
from .span_scores import SpanScores, add_to_rules

EXHAUSTIVE_LENGTH = 60
LOWER_THRESHOLDS = (1e-3, 1e-6)  # the lower_threshold fallbacks scale the thresholds by these
# A sentence's first pruning passes by the symbols of their level (GrammarParser._first_pass).
SharedPasses = dict[frozenset[str], tuple[SymbolTable, CoarsePosteriors]]


class GrammarParser(Parser):
    """The parser of a model without members (``Parser``'s arguments).

    grammars (list[LPCFG]): the grammars decoded: the model's, then its ensemble's.
    cascade (PruningCascade): the pruning levels, coarsest first.
    """

    def __init__(self, model: ParsingModel, **options: Any):
        super().__init__(model, **options)
        self.grammars: list[LPCFG] = [model.grammar, *model.ensemble]
        self._shared_rules = shares_rules(self.grammars)
        grammar = model.grammar
        kinds = [grammar.symbols.kind(i) for i in range(grammar.n_symbols)]
        level_names = [
            [
                level_label(name, model.label_scheme, preterminal=kind == "preterminal", **level)
                for name, kind in zip(grammar.symbols.names, kinds)
            ]
            for level in self.levels
        ]
        state_groups = self.state_groups
        if state_groups is None:
            ordered = model.estimator in defaults.STATE_ORDERED_ESTIMATORS
            state_groups = defaults.PRUNE_STATES if ordered else 0
        self.cascade = PruningCascade(
            grammar,
            level_names,
            coarse=model.coarse_grammar,
            threshold=self.prune_threshold,
            state_groups=state_groups,
            state_threshold=self.state_threshold,
        )

    def _decoded(self, words: list[str], tags: Sequence[str | None] | None, start: float) -> Parse:
        lexicals, coarse_lexical = self._lexicals(words, tags, start)
        if len(words) > self.max_length:
            return self._flat(words, coarse_lexical, "too_long")
        for scale, fallback, first in self._attempts(len(words), coarse_lexical):
            decoded = self._decode(lexicals, coarse_lexical, first, scale)
            if decoded is not None:
                result, charts = decoded
                if fallback:
                    self.statistics.add("fallbacks", fallback)
                start = time.perf_counter()
                tree = self.pipeline.invert(result.to_tree(words))
                parse = Parse(
                    tree, fallback, score=float(result.score), **self._scores(tree, charts)
                )
                self.statistics.add("seconds", "decode", time.perf_counter() - start)
                return parse
        return self._flat(words, coarse_lexical, "flat")

    def _scores(self, tree: Tree, charts: list[ChartPosteriors]) -> dict:
        """The log_likelihood and span_posteriors of a parse decoded from ``charts``
        (the charts of an ensemble's grammars: their mean posteriors, no likelihood)."""
        if not charts or not self.scores:
            return {}
        spans = constituents(tree)
        if len(charts) == 1:
            posteriors = chart_posteriors_of(self.grammar, charts[0], spans)
            return {
                "log_likelihood": log_likelihood(charts[0]),
                "span_posteriors": with_posteriors(spans, posteriors),
            }
        mean = mean_chart_posteriors(self.grammars, charts, spans)
        return {"span_posteriors": None if mean is None else with_posteriors(spans, mean)}

    def _kbest_unsupported(self) -> str | None:
        if self.decoder not in KBEST_DECODERS:
            return f"the parser's decoder is {self.decoder}"
        if self.grammar.signed:
            return "the grammar has negative weights"
        return None

    def _kbest(
        self, words: list[str], tags: Sequence[str | None] | None, k: int, start: float
    ) -> list[Parse]:
        """The k best parses over the first pruning attempt whose chart has a parse."""

        def build(lexicals: list[LexicalScores], mask: np.ndarray) -> list[Parse] | None:
            chart = inside_outside(self.grammar, lexicals[0], mask, rule_posteriors=True)
            return self._kbest_parses(words, lexicals[0], chart, k) if chart.has_parse else None

        parses, fallback = self._first_found(words, tags, build)
        if parses is None:  # too long, or no attempt parsed: the flat tree
            _, coarse_lexical = self._lexicals(words, tags, start)
            return [self._flat(words, coarse_lexical, fallback)]
        if fallback:
            self.statistics.add("fallbacks", fallback)
        return [dataclasses.replace(parse, fallback=fallback) for parse in parses]

    def _kbest_parses(self, words: list[str], lexical, chart, k: int) -> list[Parse] | None:
        """The k best distinct trees of a chart in treebank labels (None: none)."""
        parses: list[Parse] = []
        seen: set[str] = set()
        for result in kbest_results(self.grammar, lexical, chart, self.decoder):
            tree = self.pipeline.invert(result.to_tree(words))
            key = tree.pformat()
            if key in seen:  # another tree of the grammar, the same once inverted
                continue
            seen.add(key)
            parses.append(
                Parse(tree, None, score=float(result.score), **self._scores(tree, [chart]))
            )
            if len(parses) == k:
                break
        return parses or None

    def _lexicals(
        self, words: list[str], tags: Sequence[str | None] | None, start: float
    ) -> tuple[list[LexicalScores], LexicalScores]:
        """The lexical scores of each decoded grammar, and of the cascade's coarse one."""
        lexical = self.model.lexical_scores(words, tags, self.use_tags)
        lexicals = [lexical] + [
            self.model.lexicon.lexical_scores(grammar, words, tags, self.use_tags)
            for grammar in self.grammars[1:]
        ]
        coarse_lexical = (
            lexical
            if self.cascade.coarse is self.grammar
            else self.model.lexicon.lexical_scores(self.cascade.coarse, words, tags, self.use_tags)
        )
        self.statistics.add("seconds", "lexicon", time.perf_counter() - start)
        return lexicals, coarse_lexical

    def _attempts(
        self, n_words: int, coarse_lexical: LexicalScores, shared: SharedPasses | None = None
    ):
        """(threshold scale, fallback name, first pass) of each try, in order."""
        attempts = [(1.0, None)] + [(scale, "lower_threshold") for scale in LOWER_THRESHOLDS]
        if n_words <= EXHAUSTIVE_LENGTH:
            attempts.append((0.0, "no_pruning"))
        start = time.perf_counter()
        first = self._first_pass(coarse_lexical, shared)
        self.statistics.add("seconds", "pruning", time.perf_counter() - start)
        for scale, fallback in attempts:
            yield scale, fallback, first

    def _first_pass(
        self, coarse_lexical: LexicalScores, shared: SharedPasses | None
    ) -> CoarsePosteriors:
        """The cascade's first (dense) pass. The members of a combined model whose
        coarsest level has the same symbols (a binarisation's X-bar grammar, with
        function tags kept or stripped below it) share the first one's, for one
        sentence: pruning only, and the largest cost of those members' pruning."""
        symbols = self.cascade.levels[0].grammar.symbols
        key = _name_set(symbols)
        if shared is not None and key in shared:
            other, first = shared[key]
            if other == symbols:
                return first
            order = _column_order(other, symbols)
            return dataclasses.replace(first, posteriors=first.posteriors[:, :, order])
        first = self.cascade.first_pass(coarse_lexical)
        if shared is not None:
            shared[key] = (symbols, first)
        return first

    def span_marginals(
        self,
        words: Sequence[str],
        tags: Sequence[str | None] | None = None,
        shared: SharedPasses | None = None,
    ) -> tuple[SpanMarginals | None, str | None]:
        """The sentence's bracket and tag marginals under this model's grammar (the mean
        over its ensemble's grammars), with the fallback it took; (None, reason) when
        the chart has no parse at any threshold or the sentence is too long. What a
        combined model's members decoders combine.

        shared (dict | None): first pruning passes of this sentence by the other members
            of a combined model (``_first_pass``); this one's is added.
        """
        return self._first_found(words, tags, self._marginals_over, shared)

    def subproblem(
        self,
        words: Sequence[str],
        tags: Sequence[str | None] | None = None,
        shared: SharedPasses | None = None,
    ) -> tuple[tuple[Subproblem, tuple[str, ...]] | None, str | None]:
        """This model as a member of a dual decomposition: ((a function from span scores
        to its best tree, the natural labels it scores), the fallback taken); the
        charts are computed once, here. (None, reason) when nothing parses. ``shared``
        as for span_marginals."""
        return self._first_found(words, tags, self._subproblem_over, shared)

    def _first_found(self, words, tags, build, shared: SharedPasses | None = None):
        """(``build(lexicals, mask)`` for the first pruning attempt where it is not None,
        the attempt's fallback), or (None, the reason nothing was found)."""
        start = time.perf_counter()
        words = list(words)
        lexicals, coarse_lexical = self._lexicals(words, tags, start)
        if len(words) > self.max_length:
            return None, "too_long"
        for scale, fallback, first in self._attempts(len(words), coarse_lexical, shared):
            start = time.perf_counter()
            pruned = self.cascade.prune(coarse_lexical, scale=scale, first=first, fine=lexicals[0])
            self.statistics.add("seconds", "pruning", time.perf_counter() - start)
            if pruned.mask is None:
                continue
            start = time.perf_counter()
            found = build(lexicals, pruned.mask)
            self.statistics.add("seconds", "chart", time.perf_counter() - start)
            if found is not None:
                return found, fallback
        return None, "flat"

    def _marginals_over(
        self, lexicals: list[LexicalScores], mask: np.ndarray
    ) -> SpanMarginals | None:
        charts = ensemble_charts(
            self.grammars, lexicals, mask, threshold=self.ensemble_threshold, rule_posteriors=False
        )
        parts = [
            span_marginals(grammar, chart)
            for grammar, chart in zip(self.grammars, charts)
            if chart.has_parse
        ]
        return mean_marginals(aligned(parts)) if parts else None

    def _subproblem_over(
        self, lexicals: list[LexicalScores], mask: np.ndarray
    ) -> tuple[Subproblem, tuple[str, ...]] | None:
        decoder = self._decoder
        grammars = self.grammars if decoder.joint else self.grammars[:1]
        shared = decoder.rule_posteriors and self._shared_rules
        found = ensemble_charts(
            grammars, lexicals, mask, threshold=self.ensemble_threshold, rule_posteriors=shared
        )
        charts = [(grammar, chart) for grammar, chart in zip(grammars, found) if chart.has_parse]
        if not charts:
            return None
        if not shared:  # span-level: mbr on the mean marginals, or their product
            parts = aligned([span_marginals(grammar, chart) for grammar, chart in charts])
            if decoder.rule_posteriors:
                return functools.partial(span_product, parts, "product"), parts[0].labels
            spans = mean_marginals(parts)
            return functools.partial(_mbr_subproblem, spans), spans.labels
        objective = "variational" if self.decoder == "variational" else "max_rule"
        anchored = sum_anchored_scores(
            [anchored_scores(grammar, chart, objective) for grammar, chart in charts]
        )
        labels = grouped_names(self.grammar.symbols, PHRASAL)[0]
        return functools.partial(_rule_subproblem, self.grammar, anchored, objective), labels

    def _decode(
        self,
        lexicals: list[LexicalScores],
        coarse_lexical: LexicalScores,
        first: CoarsePosteriors,
        scale: float,
    ) -> tuple[ParseResult, list[ChartPosteriors]] | None:
        """(the decoder's result, the charts it decoded: none for Viterbi, one per
        grammar for an ensemble decoder), or None when this attempt finds no parse."""
        start = time.perf_counter()
        pruned = self.cascade.prune(coarse_lexical, scale=scale, first=first, fine=lexicals[0])
        self.statistics.add("seconds", "pruning", time.perf_counter() - start)
        if pruned.mask is None:
            return None
        decoder = self._decoder
        start = time.perf_counter()
        if decoder.joint:
            charts = ensemble_charts(
                self.grammars,
                lexicals,
                pruned.mask,
                threshold=self.ensemble_threshold,
                rule_posteriors=decoder.rule_posteriors and self._shared_rules,
            )
            self.statistics.add("seconds", "chart", time.perf_counter() - start)
            start = time.perf_counter()
            result = decoder(self.grammars, lexicals, pruned.mask, posteriors=charts)
        elif not decoder.posteriors:  # Viterbi maximises in its own pass: "decode"
            result = decoder(self.grammars, lexicals, pruned.mask)
            charts = []
        else:
            chart = inside_outside(
                self.grammar, lexicals[0], pruned.mask, rule_posteriors=decoder.rule_posteriors
            )
            self.statistics.add("seconds", "chart", time.perf_counter() - start)
            if not chart.has_parse:
                return None
            start = time.perf_counter()
            charts = [chart]
            result = decoder(self.grammars[:1], lexicals[:1], pruned.mask, posteriors=charts)
        self.statistics.add("seconds", "decode", time.perf_counter() - start)
        return (result, charts) if result.has_parse else None

    def _flat(self, words: list[str], coarse_lexical: LexicalScores, reason: str) -> Parse:
        self.statistics.add("fallbacks", reason)
        grammar = self.cascade.coarse
        names = grammar.symbols.names
        best_tags: dict[int, tuple[float, int]] = {}
        for position, tag, value in zip(
            coarse_lexical.positions.tolist(), coarse_lexical.tags.tolist(), coarse_lexical.values
        ):
            if position not in best_tags or value > best_tags[position][0]:
                best_tags[position] = (value, tag)
        leaves = tuple(
            Tree.leaf(names[best_tags[i][1]] if i in best_tags else "X", word)
            for i, word in enumerate(words)
        )
        tree = Tree(ROOT_LABEL, (Tree(self._root_category(), leaves),))
        return Parse(self.pipeline.invert(tree), reason)

    def _root_category(self) -> str:
        """The phrasal category most likely directly below TOP."""
        grammar = self.cascade.coarse
        rules = grammar.unary_rules
        below_root = np.flatnonzero(
            (rules[:, 0] == grammar.root) & (grammar.symbols.kind_codes[rules[:, 1]] == PHRASAL)
        )
        if not len(below_root):
            return "X"
        best = below_root[np.argmax(grammar.unary_weights[below_root])]
        return grammar.symbols.name(int(rules[best, 1]))


@functools.lru_cache(maxsize=64)
def _name_set(symbols: SymbolTable) -> frozenset[str]:
    return frozenset(symbols.names)


@functools.lru_cache(maxsize=64)
def _column_order(source: SymbolTable, target: SymbolTable) -> np.ndarray:
    """int64[len(target)]: the column of each of target's symbols among source's (the
    same names in another order)."""
    return np.array([source.index(name) for name in target.names], dtype=np.int64)


def _rule_subproblem(grammar: LPCFG, anchored, objective: str, extra: SpanScores | None):
    scores = anchored if extra is None else add_to_rules(grammar, anchored, extra)
    return rule_cky(grammar, scores, objective)


def _mbr_subproblem(spans: SpanMarginals, extra: SpanScores | None) -> ParseResult:
    return mbr_tree(spans, span_scores=extra)
