"""The parser of a combined model: its members, trained apart, decoded together.

A model with members (``combine_models``) parses each sentence with one
``GrammarParser`` per part (the model itself, then its members), each with its
own lexicon, pruning cascade and transforms; they count into this parser's
statistics. Its decoder, of kind "members" (``decode.registry``), combines what
they give: their span marginals (``members_product``, ``members_mbr``:
``decode.members``) or their subproblems of dual decomposition (``dual``:
``decode.dual``). Parts whose coarsest pruning level has the same symbols share
its first pass. When no part parses, the first part's own fallback (a flat tree)
is the parse.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Sequence
from typing import Any

from ..grammar.model import ParsingModel
from ..trees.transforms import coarse_label
from .grammar_parser import GrammarParser, SharedPasses
from .members import by_category
from .parser import Parse, Parser, default_decoder
from .scores import constituents, marginal_posteriors_of, with_posteriors
from .span_marginals import aligned, mean_marginals

# The options a combined model's parser passes on to its parts' parsers.
PART_OPTIONS = (
    "prune_threshold",
    "ensemble_threshold",
    "levels",
    "state_groups",
    "state_threshold",
    "use_tags",
    "max_length",
)


class CombinedParser(Parser):
    """The parser of a model with members (``Parser``'s arguments).

    parts (list[GrammarParser]): one per part of the model (``ParsingModel.parts``),
        each with the decoder ``default_decoder(part, member=True)``.
    """

    def __init__(self, model: ParsingModel, **options: Any):
        super().__init__(model, **options)
        passed = {name: getattr(self, name) for name in PART_OPTIONS}
        self.parts = [
            GrammarParser(
                part,
                decoder=default_decoder(part, member=True),
                statistics=self.statistics,
                **passed,
            )
            for part in model.parts
        ]
        keepers = [part for part in model.parts if part.transform.keep_functions]
        self.pipeline = (keepers or [model])[0].pipeline
        self.known_tags = frozenset().union(*(part.known_tags for part in self.parts))

    def _decoded(self, words: list[str], tags: Sequence[str | None] | None, start: float) -> Parse:
        if self._decoder.posteriors:
            return self._combined_marginals(words, tags)
        return self._dual(words, tags)

    def _kbest_unsupported(self) -> str | None:
        return "the model has members"

    def _combined_marginals(self, words: list[str], tags: Sequence[str | None] | None) -> Parse:
        """Parse with every part and combine their span marginals (``decode.members``)."""
        shared: SharedPasses = {}
        found = [part.span_marginals(words, tags, shared) for part in self.parts]
        parsed = [(part, marginals) for part, (marginals, _) in zip(self.parts, found) if marginals]
        if not parsed:  # the first part's fallback (its unknown tags were noted here)
            return self.parts[0]._decoded(words, tags, time.perf_counter())
        start = time.perf_counter()
        scheme = self.model.label_scheme
        result = self._decoder.function(
            [marginals for _, marginals in parsed],
            [part.model.transform.keep_functions for part, _ in parsed],
            scheme,
        )
        fallback = next((reason for marginals, reason in found if marginals and reason), None)
        if fallback:
            self.statistics.add("fallbacks", fallback)
        tree = self.pipeline.invert(result.to_tree(words))
        parse = Parse(tree, fallback, score=float(result.score))
        if self.scores:  # by category: the parts' mean, as the members decoders read them
            spans = constituents(tree)
            categories = mean_marginals(aligned([by_category(m, scheme) for _, m in parsed]))
            posteriors = marginal_posteriors_of(
                categories, spans, functools.partial(coarse_label, scheme=scheme)
            )
            parse = dataclasses.replace(parse, span_posteriors=with_posteriors(spans, posteriors))
        self.statistics.add("seconds", "decode", time.perf_counter() - start)
        return parse

    def _dual(self, words: list[str], tags: Sequence[str | None] | None) -> Parse:
        """Dual decomposition of the parts (``decode.dual``); the tree of the first part
        that keeps function tags."""
        shared: SharedPasses = {}
        found = [part.subproblem(words, tags, shared) for part in self.parts]
        parsed = [
            (part, subproblem, labels)
            for part, (made, _) in zip(self.parts, found)
            if made is not None
            for subproblem, labels in [made]
        ]
        if not parsed:  # the first part's fallback (its unknown tags were noted here)
            return self.parts[0]._decoded(words, tags, time.perf_counter())
        start = time.perf_counter()
        result = self._decoder.function(
            [subproblem for _, subproblem, _ in parsed],
            [labels for _, _, labels in parsed],
            self.model.label_scheme,
            len(words),
        )
        chosen = next(
            (i for i, (part, _, _) in enumerate(parsed) if part.model.transform.keep_functions),
            0,
        )
        fallback = next((reason for made, reason in found if made and reason), None)
        if fallback:
            self.statistics.add("fallbacks", fallback)
        for key, amount in (
            ("sentences", 1),
            ("certificates", int(result.certificate)),
            ("iterations", result.iterations),
        ):
            self.statistics.add("dual", key, amount)
        tree = parsed[chosen][0].pipeline.invert(result.trees[chosen].to_tree(words))
        self.statistics.add("seconds", "decode", time.perf_counter() - start)
        return Parse(tree, fallback, result.certificate, result.iterations)
