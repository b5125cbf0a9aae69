"""The parser: model + pruning cascade + decoder + fallbacks, one sentence at a time.

For each sentence: lexical scores from the model's lexicon, a pruning mask
from the coarse-to-fine cascade, the chart of the final grammar over the mask,
the decoder, and the inverse transforms back to treebank labels. A sentence is
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

A model with a function labeller (``ParsingModel.active_labeller``) has it put
function tags on every parse, fallbacks included, before the parse is returned.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .. import defaults
from ..chart import ChartPosteriors, CoarsePosteriors, inside_outside
from ..chart.pruning import PruningCascade
from ..errors import Errors, Warnings, excerpt
from ..grammar import LPCFG, LexicalScores
from ..grammar.model import ParsingModel
from ..grammar.symbols import PHRASAL, SymbolTable
from ..interrupts import kernel_calls
from ..progress import progress as show_progress
from ..trees.labels import get_scheme
from ..trees.transforms import (
    BIN_MARK,
    CONTEXT_JOIN,
    PARENT_SEP,
    RIGHT_CONTEXT,
    UNARY_SEP,
    coarse_label,
    intermediate_parent,
    is_intermediate,
)
from ..trees.tree import ROOT_LABEL, Tree
from .anchored import anchored_scores, sum_anchored_scores
from .charts import member_charts
from .dual import Slave, dual_decompose
from .kbest import KBEST_DECODERS, kbest_results
from .mbr import mbr_tree
from .members import MEMBER_DECODERS, combine_members
from .members import _categories as categories_of
from .product import shares_rules, span_product
from .registry import DECODERS
from .result import ParseResult
from .rule_cky import rule_cky
from .scores import (
    SpanPosteriors,
    chart_posteriors_of,
    constituents,
    log_likelihood,
    marginal_posteriors_of,
    mean_chart_posteriors,
    relabelled,
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
# A sentence's first pruning passes by the symbols of their level (Parser._first_pass).
SharedPasses = dict[frozenset[str], tuple[SymbolTable, CoarsePosteriors]]
FALLBACKS = ("lower_threshold", "no_pruning", "flat", "too_long")
# Pruning levels, coarsest first, as keyword arguments of level_label. The dense first
# pass is over X-bar labels with unary chains cut to their lowest label and POS tags
# and phrase labels merged into categories (fewer rules: this pass is a large share of
# the parse time on ptb_sample and most of it on CESS-ESP, whose dotted phrase features
# otherwise leave 405 symbols and 6.9k rules at this level); the second keeps chains
# and the Markov context of intermediate labels, which lets the chart drop the many
# intermediate items whose right sibling is missing (one_state_kernels). Chosen on
# ptb_sample dev and test against the former default (X-bar, X-bar with annotations)
# at 1e-5: the same F1 on average, much faster (at defaults.PRUNE_THRESHOLD; BENCHMARKS.md
# "Parsing: speed and accuracy"). Merging phrases (a change for CESS-ESP only) made
# cess_esp dev much faster with one clustering grammar at no cost in F1 (BENCHMARKS.md
# "Parse speed on other treebanks, against ptb_sample").
DEFAULT_LEVELS = (
    {"chains": "bottom", "tags": "category", "phrases": "category"},
    {"context": True},
)
CHAINS = ("keep", "bottom")
MERGES = ("keep", "category")
# Decoders of all the model's grammars at once: its main grammar and the members of
# an ensemble (``training["ensemble"]``), pruned once per sentence.
ENSEMBLE_DECODERS = tuple(name for name, decoder in DECODERS.items() if decoder.joint)
AUTO = defaults.DECODER
UNKNOWN_TAG_EXAMPLES = 3  # unknown tags a warning names


def level_label(
    label: str,
    scheme: str,
    *,
    preterminal: bool = False,
    chains: str = "keep",
    context: bool = False,
    tags: str = "keep",
    phrases: str = "keep",
    **options,
) -> str:
    """A symbol's name at a pruning level: ``trees.transforms.coarse_label`` (options:
    ``functions``, ``annotations``), then

    chains (str): "keep" unary chains, or keep their "bottom" label only
        (``S::VP`` -> ``VP``, ``@S::VP|>`` -> ``@VP|>``).
    context (bool): intermediate labels keep their Markov context, its labels coarsened
        alike (``@NP-SBJ^S|>NN`` -> ``@NP|>NN``).
    tags (str): "keep" POS tags, or merge them into their "category"
        (``LabelScheme.coarse_category``: IcePaHC ``N-D`` -> ``N``, CESS ``ncms000``
        -> ``nc``; no change for PTB tags).
    phrases (str): "keep" phrase categories, or merge them into their "category"
        (CESS ``grup.nom.ms`` -> ``grup``; no change for PTB and IcePaHC labels).
    """
    coarse = coarse_label(label, scheme, preterminal=preterminal, **options)
    checks = (("chains", chains, CHAINS), ("tags", tags, MERGES), ("phrases", phrases, MERGES))
    for name, value, choices in checks:
        if value not in choices:
            expected = "one of " + ", ".join(map(repr, choices))
            raise ValueError(Errors.E012.format(name=name, value=value, expected=expected))
    label_scheme = get_scheme(scheme)
    if preterminal:
        if tags == "category":
            return label_scheme.coarse_category(coarse, preterminal=True)
        return coarse
    if chains == "bottom":
        coarse = _chain_bottom(coarse)
    if phrases == "category":
        coarse = _map_labels(coarse, label_scheme.coarse_category)
    if context and is_intermediate(label):
        parent = intermediate_parent(label)
        side_end = len(BIN_MARK) + len(parent) + len(RIGHT_CONTEXT)
        parts = label[side_end:].split(CONTEXT_JOIN) if label[side_end:] else []
        coarse += CONTEXT_JOIN.join(coarse_label(part, scheme) for part in parts)
    return coarse


def _map_labels(coarse: str, function) -> str:
    """Apply function to every label of an X-bar name: chain links, and the parent
    of an intermediate (``@S.F.C::grup.nom|>`` -> ``@S::grup|>``)."""
    if is_intermediate(coarse):
        parent = intermediate_parent(coarse)
        side = coarse[len(BIN_MARK) + len(parent) :]
        return BIN_MARK + _map_labels(parent, function) + side
    base, sep, annotation = coarse.partition(PARENT_SEP)
    return UNARY_SEP.join(map(function, base.split(UNARY_SEP))) + sep + annotation


def _chain_bottom(coarse: str) -> str:
    if is_intermediate(coarse):
        parent = intermediate_parent(coarse)
        side = coarse[len(BIN_MARK) + len(parent) :]
        return BIN_MARK + _chain_bottom(parent) + side
    base, sep, annotation = coarse.partition(PARENT_SEP)
    return base.rpartition(UNARY_SEP)[2] + sep + annotation


def default_decoder(model: ParsingModel, *, member: bool = False) -> str:
    """The decoder of ``decoder="auto"`` (``defaults.DECODER``): the one stored with the
    model (``combine``), else "product_mbr" for an ensemble, "mbr" for a signed grammar
    (a spectral model: the max-rule and Viterbi objectives need non-negative weights)
    and for a grammar with latent states over collapsed unary chains (MBR puts one
    label on a span, so without ``X::Y`` symbols it would drop the lower labels of a
    chain), else "max_rule" (the treebank PCFG).

    member (bool): for a member of a model with members: "max_rule" for any grammar
    that is not signed (dual decomposition's slaves, and its step size, are max-rule
    ones; mbr slaves took several times as long)."""
    if model.decoder is not None:
        return model.decoder
    if model.ensemble:
        return "product_mbr"
    if model.estimator == "spectral" or model.grammar.signed:
        return "mbr"
    if not member and model.grammar.max_states > 1 and model.transform.collapse_unary:
        return "mbr"
    return "max_rule"


@dataclass(frozen=True)
class Parse:
    """tree (Tree): the parse in the treebank's labels, rooted at TOP.
    fallback (str | None): the fallback that produced it; None on the normal path.
    certificate (bool | None): dual decomposition only: whether the members agreed
        (the tree is then the optimal combination).
    iterations (int | None): dual decomposition only: the iterations it took.
    score (float | None): the decoder's objective for the tree (``ParseResult.score``):
        for viterbi the log weight of the tree's best derivation (with one state per
        symbol, log P(tree, words)), for max_rule and variational the log of the
        product of the tree's factors, for mbr the expected matched brackets minus
        their cost, for products a log score; in a ``Parser.kbest`` list, the log
        score under its decoder's objective (decode.kbest). None for fallbacks and
        dual decomposition.
    log_likelihood (float | None): log Z of the chart the decoder used, the sum over
        every derivation the pruning mask allowed (decode.scores): log P(words) over
        the trees that survived pruning, a lower bound of the unpruned value. None
        for the viterbi decoder (it computes no sums), for ensembles and models with
        members (several grammars: no one total), for fallbacks to a flat tree, and
        when a signed grammar's Z is not positive.
    span_posteriors (tuple | None): ``(label, start, end, posterior)`` for each phrase
        of ``tree`` below TOP in pre-order (``tree.spans(include_root=False)``): the
        probability, in the chart the decoder used, of a bracket of that label over
        that span, summed over the annotated symbols, latent states and unary-chain
        symbols that project to it (decode.scores). An ensemble gives its members'
        mean, a model with members (mbr, product) its parts' mean by category
        (function tags aside). A function labeller's tags are in the labels; the
        posterior is that of the bracket as the grammar labelled it. None for the
        viterbi decoder, fallbacks to a flat tree and dual decomposition.
    """

    tree: Tree
    fallback: str | None = None
    certificate: bool | None = None
    iterations: int | None = None
    score: float | None = None
    log_likelihood: float | None = None
    span_posteriors: SpanPosteriors | None = None


class Parser:
    """Parses tokenised sentences with a trained model.

    model (ParsingModel): the grammar, lexicon and transforms.
    decoder (str): "max_rule", "variational", "viterbi", "mbr", "product",
        "product_mbr" (the last two decode an ensemble's members jointly) or "auto",
        the default: ``default_decoder(model)``. For a model with members
        (``combine_models``): how their parses combine, "mbr" or "product"
        (``decode.members``); "auto" is the decoder stored with the model. Each
        member then parses with its own lexicon, pruning and transforms.
    prune_threshold (float | Sequence[float]): posterior threshold of the pruning
        passes: one for all, or one per level (plus one for the one-state projection
        of a latent grammar). Defaults to ``defaults.PRUNE_THRESHOLD`` (3e-4).
    member_threshold (float): an ensemble's members after the first parse only the
        items whose posterior under the first is above this (``member_charts``; 0:
        all parse the pruning passes' items). Defaults to
        ``defaults.MEMBER_PRUNE_THRESHOLD``.
    levels (Sequence[dict]): the merged pruning levels, coarsest first, as keyword
        arguments of ``level_label``. Defaults to X-bar with unary chains cut to their
        lowest label and POS and phrase categories, then X-bar with the (X-bar) Markov context of
        intermediates.
    state_groups (int | None): a latent grammar is pruned once more by itself with its
        states merged into this many per symbol (``chart.pruning``); 0: not. Defaults
        to ``defaults.PRUNE_STATES`` for the models of ``defaults.STATE_ORDERED_ESTIMATORS``,
        else 0.
    state_threshold (float): that pass's posterior threshold. Defaults to
        ``defaults.STATE_PRUNE_THRESHOLD``.
    use_tags (str): "auto", "constrain" or "ignore" given tags (``Lexicon.lexical_scores``).
        A given tag that the grammar does not have leaves its token untagged; the
        first sentence with one warns (W010, once per parser), and ``unknown_tags``
        counts every such token by tag (``unknown_tags_warning()`` sums them up).
    max_length (int): longer sentences get a flat tree. Defaults to ``defaults.MAX_LENGTH``.
    scores (bool): give parses their ``log_likelihood`` and ``span_posteriors``
        (``decode.scores``; cheap beside the parse itself, whose cost is in
        BENCHMARKS.md "Parsing: speed and accuracy").
        Defaults to True; False leaves them None (``score`` is always set).

    The model's function labeller, when it is to label (``ParsingModel.active_labeller``:
    the grammar strips function tags, or the model's ``function_labels`` is
    "labeller"), puts its function tags on every parse (``labeller``).
    """

    def __init__(
        self,
        model: ParsingModel,
        *,
        decoder: str = AUTO,
        prune_threshold: float | Sequence[float] = defaults.PRUNE_THRESHOLD,
        member_threshold: float = defaults.MEMBER_PRUNE_THRESHOLD,
        levels: Sequence[dict] = DEFAULT_LEVELS,
        state_groups: int | None = None,
        state_threshold: float = defaults.STATE_PRUNE_THRESHOLD,
        use_tags: str = "auto",
        max_length: int = defaults.MAX_LENGTH,
        scores: bool = True,
    ):
        choices = (AUTO, *MEMBER_DECODERS) if model.members else (AUTO, *DECODERS)
        if decoder not in choices:
            raise ValueError(
                Errors.E012.format(
                    name="decoder", value=decoder, expected="one of " + ", ".join(choices)
                )
            )
        if not isinstance(member_threshold, (int, float)) or not 0 <= member_threshold < 1:
            raise ValueError(
                Errors.E012.format(
                    name="member_threshold", value=member_threshold, expected="0 <= t < 1"
                )
            )
        top = defaults.CEILINGS.sentence_length
        if not isinstance(max_length, int) or not 1 <= max_length <= top:
            expected = f"an int from 1 to {top} (longer sentences get a flat tree)"
            raise ValueError(
                Errors.E012.format(name="max_length", value=max_length, expected=expected)
            )
        self.model = model
        self.member_threshold = float(member_threshold)
        self.use_tags = use_tags
        self.max_length = max_length
        self.scores = bool(scores)
        self.fallbacks: Counter[str] = Counter()
        self.unknown_tags: Counter[str] = Counter()  # given tags not in known_tags, per token
        self._unknown_tag_words: dict[str, str] = {}  # the first word seen with each
        self._warned_unknown_tags = False
        # Seconds spent per stage ("lexicon", "pruning": the coarse passes, "chart": the
        # final grammar's inside-outside, "decode": decoder and tree, "labeller": the
        # function labeller), for benchmarks.
        self.seconds: Counter[str] = Counter()
        # Dual decomposition: "sentences", "certificates" and "iterations" (sums).
        self.dual: Counter[str] = Counter()
        self.known_tags = _grammar_tags(model.grammar)
        self.pipeline = model.pipeline
        self.labeller = model.active_labeller
        # Parsing changes nothing but these statistics: one lock, so that threads may
        # share a parser (the chart kernels release the GIL).
        self._lock = threading.Lock()
        # A model with members: one parser per part, each with its own cascade.
        self._parts: list[Parser] = []
        if model.members:
            # the decoder stored with the members (a model with members always has one)
            self.decoder: str = default_decoder(model) if decoder == AUTO else decoder
            if self.decoder not in MEMBER_DECODERS:
                expected = "one of " + ", ".join(MEMBER_DECODERS)
                raise ValueError(
                    Errors.E012.format(name="decoder", value=self.decoder, expected=expected)
                )
            options: dict[str, Any] = {
                "prune_threshold": prune_threshold,
                "member_threshold": member_threshold,
                "levels": levels,
                "state_groups": state_groups,
                "state_threshold": state_threshold,
            }
            self._parts = [
                Parser(
                    part,
                    decoder=default_decoder(part, member=True),
                    use_tags=use_tags,
                    max_length=max_length,
                    **options,
                )
                for part in model.parts
            ]
            for part in self._parts:  # the parts count into this parser's statistics
                part.seconds, part.fallbacks, part._lock = self.seconds, self.fallbacks, self._lock
            keepers = [part for part in model.parts if part.transform.keep_functions]
            self.pipeline = (keepers or [model])[0].pipeline
            self.known_tags = frozenset().union(*(p.known_tags for p in self._parts))
            self.members = [model.grammar]
            self._shared_rules = True
            self.cascade: PruningCascade = self._parts[0].cascade
            return
        self.decoder = default_decoder(model) if decoder == AUTO else decoder
        # The grammars decoded jointly by the ensemble decoders.
        self.members = [model.grammar, *model.ensemble]
        self._shared_rules = shares_rules(self.members)
        grammar = model.grammar
        kinds = [grammar.symbols.kind(i) for i in range(grammar.n_symbols)]
        level_names = [
            [
                level_label(name, model.label_scheme, preterminal=kind == "preterminal", **options)
                for name, kind in zip(grammar.symbols.names, kinds)
            ]
            for options in levels
        ]
        if state_groups is None:
            ordered = model.estimator in defaults.STATE_ORDERED_ESTIMATORS
            state_groups = defaults.PRUNE_STATES if ordered else 0
        self.cascade = PruningCascade(
            grammar,
            level_names,
            coarse=model.coarse_grammar,
            threshold=prune_threshold,
            state_groups=state_groups,
            state_threshold=state_threshold,
        )

    @property
    def grammar(self) -> LPCFG:
        return self.model.grammar

    def parse(self, words: Sequence[str], tags: Sequence[str | None] | None = None) -> Parse:
        """Parse one sentence of at least one token; tags are optional.

        RAISES ValueError: an empty word (bracket notation cannot hold one).
        """
        start = time.perf_counter()
        words = self._checked_words(words, tags)
        with kernel_calls():  # Ctrl-C between sentences: never inside a kernel
            parse = self._decoded(words, tags, start)
        return self._labelled([parse])[0]

    def kbest(
        self, words: Sequence[str], tags: Sequence[str | None] | None = None, k: int = 10
    ) -> list[Parse]:
        """The k best parses of one sentence, best first: distinct trees in treebank
        labels, each with its ``score`` under the parser's decoder (``decode.kbest``:
        lazy enumeration over the pruned chart, Huang & Chiang 2005). Fewer than k when
        the chart (the first pruning attempt with a parse) has fewer trees; a fallback
        to a flat tree gives that one tree, with no scores.

        decoder "viterbi": scores are the log weight of each tree's best derivation
            (max over latent states; one state per symbol: log P(tree, words)), the
            first tree is the viterbi decoder's; "max_rule" and "variational": the log
            of their objectives (the Berkeley parser's k-best lists are max-rule
            ones), the first tree is that decoder's. Every parse also has the chart's
            ``log_likelihood`` and its own ``span_posteriors``; with one state per
            symbol and the viterbi decoder, ``exp(score - log_likelihood)`` is the
            tree's probability given the words (among the trees pruning kept).
        k (int): from 1 to ``defaults.CEILINGS.kbest``.
        RAISES ValueError: k out of range, or a parser k-best parsing does not support
            (E330: models with members, ensemble decoders, mbr, signed grammars).
        """
        self.check_kbest(k)
        start = time.perf_counter()
        words = self._checked_words(words, tags)
        with kernel_calls():
            parses = self._kbest(words, tags, k, start)
        return self._labelled(parses)

    def check_kbest(self, k: int) -> None:
        """Check that this parser makes k-best lists of k trees (what ``kbest`` checks
        first; a command line can check before reading any input).

        RAISES ValueError: k is not an int from 1 to ``defaults.CEILINGS.kbest`` (E012),
            or the parser is one k-best parsing does not support (E330).
        """
        top = defaults.CEILINGS.kbest
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= top:
            raise ValueError(
                Errors.E012.format(name="k", value=k, expected=f"an int from 1 to {top}")
            )
        if self._parts:
            raise ValueError(Errors.E330.format(found="the model has members"))
        if self.decoder not in KBEST_DECODERS:
            found = f"the parser's decoder is {self.decoder}"
            raise ValueError(Errors.E330.format(found=found))
        if self.grammar.signed:
            raise ValueError(Errors.E330.format(found="the grammar has negative weights"))

    def kbest_all(
        self,
        sentences: Iterable[Sequence[str]],
        tags: Iterable[Sequence[str | None] | None] | None = None,
        k: int = 10,
    ) -> list[list[Parse]]:
        """``kbest`` for many sentences."""
        sentences = list(sentences)
        tag_lists = list(tags) if tags is not None else [None] * len(sentences)
        return [
            self.kbest(words, sentence_tags, k)
            for words, sentence_tags in zip(sentences, tag_lists)
        ]

    def _checked_words(self, words: Sequence[str], tags: Sequence[str | None] | None) -> list[str]:
        """The words as a list, after checking them and noting unknown tags."""
        words = list(words)
        if not all(words):
            position = next(i for i, word in enumerate(words) if not word)
            raise ValueError(
                Errors.E012.format(
                    name=f"words[{position}]", value="", expected="words are non-empty strings"
                )
            )
        if tags is not None and self.use_tags != "ignore":
            self.note_unknown_tags(words, tags)
        return words

    def _labelled(self, parses: list[Parse]) -> list[Parse]:
        """The parses with the function labeller's tags, when it labels."""
        if self.labeller is None:
            return parses
        start = time.perf_counter()
        trees = self.labeller.label([parse.tree for parse in parses])
        self._add("seconds", "labeller", time.perf_counter() - start)
        return [
            dataclasses.replace(
                parse, tree=tree, span_posteriors=relabelled(parse.span_posteriors, tree)
            )
            for parse, tree in zip(parses, trees)
        ]

    def _decoded(self, words: list[str], tags: Sequence[str | None] | None, start: float) -> Parse:
        """The parse, before the function labeller (``start``: when parsing began)."""
        if self._parts:
            return self._parse_members(words, tags)
        lexicals, coarse_lexical = self._lexicals(words, tags, start)
        if len(words) > self.max_length:
            return self._flat(words, coarse_lexical, "too_long")
        for scale, fallback, first in self._attempts(len(words), coarse_lexical):
            decoded = self._decode(lexicals, coarse_lexical, first, scale)
            if decoded is not None:
                result, charts = decoded
                if fallback:
                    self._add("fallbacks", fallback)
                start = time.perf_counter()
                tree = self.pipeline.invert(result.to_tree(words))
                parse = Parse(
                    tree, fallback, score=float(result.score), **self._scores(tree, charts)
                )
                self._add("seconds", "decode", time.perf_counter() - start)
                return parse
        return self._flat(words, coarse_lexical, "flat")

    def _scores(self, tree: Tree, charts: list[ChartPosteriors]) -> dict:
        """The log_likelihood and span_posteriors of a parse decoded from ``charts``
        (the members' charts of an ensemble: their mean posteriors, no likelihood)."""
        if not charts or not self.scores:
            return {}
        spans = constituents(tree)
        if len(charts) == 1:
            posteriors = chart_posteriors_of(self.grammar, charts[0], spans)
            return {
                "log_likelihood": log_likelihood(charts[0]),
                "span_posteriors": with_posteriors(spans, posteriors),
            }
        mean = mean_chart_posteriors(self.members, charts, spans)
        return {"span_posteriors": None if mean is None else with_posteriors(spans, mean)}

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
            self._add("fallbacks", fallback)
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

    def _add(self, statistic: str, key: str, amount: float = 1) -> None:
        """Add ``amount`` to ``self.<statistic>[key]`` (seconds or fallbacks)."""
        with self._lock:
            getattr(self, statistic)[key] += amount

    def _lexicals(
        self, words: list[str], tags: Sequence[str | None] | None, start: float
    ) -> tuple[list[LexicalScores], LexicalScores]:
        """The lexical scores of each decoded grammar, and of the cascade's coarse one."""
        lexical = self.model.lexical_scores(words, tags, self.use_tags)
        lexicals = [lexical] + [
            self.model.lexicon.lexical_scores(member, words, tags, self.use_tags)
            for member in self.members[1:]
        ]
        coarse_lexical = (
            lexical
            if self.cascade.coarse is self.grammar
            else self.model.lexicon.lexical_scores(self.cascade.coarse, words, tags, self.use_tags)
        )
        self._add("seconds", "lexicon", time.perf_counter() - start)
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
        self._add("seconds", "pruning", time.perf_counter() - start)
        for scale, fallback in attempts:
            yield scale, fallback, first

    def _first_pass(
        self, coarse_lexical: LexicalScores, shared: SharedPasses | None
    ) -> CoarsePosteriors:
        """The cascade's first (dense) pass. The parts of a combination whose coarsest
        level has the same symbols (a binarisation's X-bar grammar, with function tags
        kept or stripped below it) share the first one's, for one sentence: pruning
        only, and the largest cost of those parts' pruning."""
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
        over an ensemble's members), with the fallback it took; (None, reason) when the
        chart has no parse at any threshold or the sentence is too long. What a model
        with members combines.

        shared (dict | None): first pruning passes of this sentence by the other parts
            of a combination (``_first_pass``); this part's is added.
        """
        return self._first_found(words, tags, self._marginals_over, shared)

    def slave(
        self,
        words: Sequence[str],
        tags: Sequence[str | None] | None = None,
        shared: SharedPasses | None = None,
    ) -> tuple[tuple[Slave, tuple[str, ...]] | None, str | None]:
        """This model as a member of a dual decomposition: ((a function from span scores
        to its best tree, the natural labels it scores), the fallback taken); the
        charts are computed once, here. (None, reason) when nothing parses. ``shared``
        as for span_marginals."""
        return self._first_found(words, tags, self._slave_over, shared)

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
            self._add("seconds", "pruning", time.perf_counter() - start)
            if pruned.mask is None:
                continue
            start = time.perf_counter()
            found = build(lexicals, pruned.mask)
            self._add("seconds", "chart", time.perf_counter() - start)
            if found is not None:
                return found, fallback
        return None, "flat"

    def _marginals_over(
        self, lexicals: list[LexicalScores], mask: np.ndarray
    ) -> SpanMarginals | None:
        charts = member_charts(
            self.members, lexicals, mask, threshold=self.member_threshold, rule_posteriors=False
        )
        parts = [
            span_marginals(grammar, chart)
            for grammar, chart in zip(self.members, charts)
            if chart.has_parse
        ]
        return mean_marginals(aligned(parts)) if parts else None

    def _slave_over(
        self, lexicals: list[LexicalScores], mask: np.ndarray
    ) -> tuple[Slave, tuple[str, ...]] | None:
        decoder = DECODERS[self.decoder]
        grammars = self.members if decoder.joint else self.members[:1]
        shared = decoder.rule_posteriors and self._shared_rules
        found = member_charts(
            grammars, lexicals, mask, threshold=self.member_threshold, rule_posteriors=shared
        )
        charts = [(grammar, chart) for grammar, chart in zip(grammars, found) if chart.has_parse]
        if not charts:
            return None
        if not shared:  # span-level: mbr on the mean marginals, or their product
            parts = aligned([span_marginals(grammar, chart) for grammar, chart in charts])
            if decoder.rule_posteriors:
                return functools.partial(span_product, parts, "product"), parts[0].labels
            spans = mean_marginals(parts)
            return functools.partial(_mbr_slave, spans), spans.labels
        objective = "variational" if self.decoder == "variational" else "max_rule"
        anchored = sum_anchored_scores(
            [anchored_scores(grammar, chart, objective) for grammar, chart in charts]
        )
        labels = grouped_names(self.grammar.symbols, PHRASAL)[0]
        return functools.partial(_rule_slave, self.grammar, anchored, objective), labels

    def _parse_dual(self, words: list[str], tags: Sequence[str | None] | None) -> Parse:
        """Dual decomposition of the parts (``decode.dual``); the tree of the first part
        that keeps function tags."""
        shared: SharedPasses = {}
        found = [part.slave(words, tags, shared) for part in self._parts]
        parsed = [
            (part, slave, labels)
            for part, (made, _) in zip(self._parts, found)
            if made is not None
            for slave, labels in [made]
        ]
        if not parsed:  # every part failed: the first part's own fallback (a flat tree)
            return self._parts[0].parse(words, tags)
        start = time.perf_counter()
        result = dual_decompose(
            [slave for _, slave, _ in parsed],
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
            self._add("fallbacks", fallback)
        with self._lock:
            self.dual.update(
                sentences=1, certificates=int(result.certificate), iterations=result.iterations
            )
        tree = parsed[chosen][0].pipeline.invert(result.trees[chosen].to_tree(words))
        self._add("seconds", "decode", time.perf_counter() - start)
        return Parse(tree, fallback, result.certificate, result.iterations)

    def _parse_members(self, words: list[str], tags: Sequence[str | None] | None) -> Parse:
        """Parse with every part and combine their marginals (``decode.members``)."""
        if self.decoder == "dual":
            return self._parse_dual(words, tags)
        shared: SharedPasses = {}
        found = [part.span_marginals(words, tags, shared) for part in self._parts]
        parsed = [
            (part, marginals) for part, (marginals, _) in zip(self._parts, found) if marginals
        ]
        if not parsed:  # every part failed: the first part's own fallback (a flat tree)
            # counts its fallback here (shared); its unknown tags were noted here already
            return self._parts[0]._decoded(words, tags, time.perf_counter())
        start = time.perf_counter()
        result = combine_members(
            [marginals for _, marginals in parsed],
            [part.model.transform.keep_functions for part, _ in parsed],
            self.model.label_scheme,
            self.decoder,
        )
        fallback = next((reason for marginals, reason in found if marginals and reason), None)
        if fallback:
            self._add("fallbacks", fallback)
        tree = self.pipeline.invert(result.to_tree(words))
        parse = Parse(tree, fallback, score=float(result.score))
        if self.scores:  # by category: the parts' mean, as combine_members reads them
            scheme = self.model.label_scheme
            spans = constituents(tree)
            categories = mean_marginals(aligned([categories_of(m, scheme) for _, m in parsed]))
            posteriors = marginal_posteriors_of(
                categories, spans, functools.partial(coarse_label, scheme=scheme)
            )
            parse = dataclasses.replace(parse, span_posteriors=with_posteriors(spans, posteriors))
        self._add("seconds", "decode", time.perf_counter() - start)
        return parse

    def parse_all(
        self,
        sentences: Iterable[Sequence[str]],
        tags: Iterable[Sequence[str | None] | None] | None = None,
        *,
        progress: bool = False,
        total: int | None = None,
    ) -> list[Parse]:
        """Parse many sentences (with a tqdm bar on stderr when ``progress``)."""
        sentences = list(sentences)
        tag_lists = list(tags) if tags is not None else [None] * len(sentences)
        items = zip(sentences, tag_lists)
        if progress:
            items = show_progress(items, desc="parsing", total=total or len(sentences), unit="sent")
        return [self.parse(words, sentence_tags) for words, sentence_tags in items]

    def unknown_tags_warning(self, scope: str = "") -> str | None:
        """The W010 message for every token with an unknown tag so far (None: none).

        scope (str): appended to the message (what the count covers).
        """
        if not self.unknown_tags:
            return None
        examples = []
        for tag, count in self.unknown_tags.most_common(UNKNOWN_TAG_EXAMPLES):
            word = self._unknown_tag_words[tag]
            detail = f"{count} token{'s' if count > 1 else ''}"
            close = difflib.get_close_matches(tag, self.known_tags, n=1)
            if not close and tag.upper() in self.known_tags:  # "nn": too short for difflib
                close = [tag.upper()]
            if close:
                detail += f"; did you mean {close[0]!r}?"
            examples.append(f"{excerpt(tag, 20)} on {excerpt(word, 20)} ({detail})")
        if len(self.unknown_tags) > UNKNOWN_TAG_EXAMPLES:
            examples.append(f"and {len(self.unknown_tags) - UNKNOWN_TAG_EXAMPLES} other tag(s)")
        return Warnings.W010.format(
            count=sum(self.unknown_tags.values()),
            examples=", ".join(examples),
            n_known=len({tag.partition(PARENT_SEP)[0] for tag in self.known_tags}),
            scope=scope,
        )

    def note_unknown_tags(self, words: list[str], tags: Sequence[str | None]) -> None:
        """Count the given tags the grammar does not have; warn at the first sentence."""
        unknown = [
            (tag, word) for word, tag in zip(words, tags) if tag and tag not in self.known_tags
        ]
        if not unknown:
            return
        with self._lock:
            for tag, word in unknown:
                self.unknown_tags[tag] += 1
                self._unknown_tag_words.setdefault(tag, word)
            first = not self._warned_unknown_tags
            self._warned_unknown_tags = True
        if first:
            scope = " (Warned once per parser; its unknown_tags counts every such token.)"
            # the caller of parse/kbest: parse -> _checked_words -> here
            # unknown tags were just counted: a message, not None
            warnings.warn(cast(str, self.unknown_tags_warning(scope)), stacklevel=4)

    def _decode(
        self,
        lexicals: list[LexicalScores],
        coarse_lexical: LexicalScores,
        first: CoarsePosteriors,
        scale: float,
    ) -> tuple[ParseResult, list[ChartPosteriors]] | None:
        """(the decoder's result, the charts it decoded: none for Viterbi, one per
        member for an ensemble decoder), or None when this attempt finds no parse."""
        start = time.perf_counter()
        pruned = self.cascade.prune(coarse_lexical, scale=scale, first=first, fine=lexicals[0])
        self._add("seconds", "pruning", time.perf_counter() - start)
        if pruned.mask is None:
            return None
        decoder = DECODERS[self.decoder]
        start = time.perf_counter()
        if decoder.joint:
            charts = member_charts(
                self.members,
                lexicals,
                pruned.mask,
                threshold=self.member_threshold,
                rule_posteriors=decoder.rule_posteriors and self._shared_rules,
            )
            self._add("seconds", "chart", time.perf_counter() - start)
            start = time.perf_counter()
            result = decoder(self.members, lexicals, pruned.mask, posteriors=charts)
        elif not decoder.posteriors:  # Viterbi maximises in its own pass: "decode"
            result = decoder(self.members, lexicals, pruned.mask)
            charts = []
        else:
            chart = inside_outside(
                self.grammar, lexicals[0], pruned.mask, rule_posteriors=decoder.rule_posteriors
            )
            self._add("seconds", "chart", time.perf_counter() - start)
            if not chart.has_parse:
                return None
            start = time.perf_counter()
            charts = [chart]
            result = decoder(self.members[:1], lexicals[:1], pruned.mask, posteriors=charts)
        self._add("seconds", "decode", time.perf_counter() - start)
        return (result, charts) if result.has_parse else None

    def _flat(self, words: list[str], coarse_lexical: LexicalScores, reason: str) -> Parse:
        self._add("fallbacks", reason)
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


def _rule_slave(grammar: LPCFG, anchored, objective: str, extra: SpanScores | None):
    scores = anchored if extra is None else add_to_rules(grammar, anchored, extra)
    return rule_cky(grammar, scores, objective)


def _mbr_slave(spans: SpanMarginals, extra: SpanScores | None) -> ParseResult:
    return mbr_tree(spans, span_scores=extra)


def _grammar_tags(grammar: LPCFG) -> frozenset[str]:
    """The tags that can constrain a token: the preterminals' names, and those names
    without annotations (``NN`` for ``NN^NP``), as ``Lexicon.lexical_scores`` reads them."""
    names = [grammar.symbols.name(a) for a in grammar.symbols.ids("preterminal").tolist()]
    return frozenset(names) | {name.partition(PARENT_SEP)[0] for name in names}
