"""The parser: a model's sentences parsed one at a time, never dropped.

``Parser(model)`` makes the parser the model needs: a ``GrammarParser`` for a
grammar (or an ensemble of grammars decoded jointly): lexical scores, the
coarse-to-fine pruning cascade, the chart, the decoder, the inverse transforms,
and the fallbacks when a step finds no parse (``decode.grammar_parser``); or a
``CombinedParser`` for a model with members, which parses with one grammar parser
per member and combines their parses (``decode.combined_parser``). What they
share is here: the options and their checks, the statistics they count into
(``ParseStatistics``, one object for a combined parser and its members'), given
tags the grammar lacks, and the function labeller.

A model with a function labeller (``ParsingModel.active_labeller``) has it put
function tags on every parse, fallbacks included, before the parse is returned.
"""

from __future__ import annotations

import dataclasses
import difflib
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .. import defaults
from ..errors import Errors, Warnings, excerpt
from ..grammar import LPCFG
from ..grammar.model import ParsingModel
from ..interrupts import kernel_calls
from ..progress import progress as show_progress
from ..trees.transforms import PARENT_SEP
from ..trees.tree import Tree
from .levels import DEFAULT_LEVELS
from .registry import AUTO, Decoder, decoder_for
from .scores import SpanPosteriors, relabelled

# How a parse fell back (``Parse.fallback``, ``Parser.fallbacks``; decode.grammar_parser).
FALLBACKS = ("lower_threshold", "no_pruning", "flat", "too_long")
UNKNOWN_TAG_EXAMPLES = 3  # unknown tags a warning names


def default_decoder(model: ParsingModel, *, member: bool = False) -> str:
    """The decoder of ``decoder="auto"`` (``defaults.DECODER``): the one stored with the
    model (``combine``; an older name as saved, which ``registry.decoder_for`` reads), else "product_mbr" for an ensemble, "mbr" for a signed grammar
    (a spectral model: the max-rule and Viterbi objectives need non-negative weights)
    and for a grammar with latent states over collapsed unary chains (MBR puts one
    label on a span, so without ``X::Y`` symbols it would drop the lower labels of a
    chain), else "max_rule" (the treebank PCFG).

    member (bool): for a member of a model with members: "max_rule" for any grammar
    that is not signed (dual decomposition's subproblems, and its step size, are
    max-rule ones; mbr subproblems took several times as long)."""
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
        for the viterbi decoder (it computes no sums), for ensembles and combined
        models (several grammars: no one total), for fallbacks to a flat tree, and
        when a signed grammar's Z is not positive.
    span_posteriors (tuple | None): ``(label, start, end, posterior)`` for each phrase
        of ``tree`` below TOP in pre-order (``tree.spans(include_root=False)``): the
        probability, in the chart the decoder used, of a bracket of that label over
        that span, summed over the annotated symbols, latent states and unary-chain
        symbols that project to it (decode.scores). An ensemble gives its grammars'
        mean, a model with members (members_product, members_mbr) its parts' mean by
        category (function tags aside). A function labeller's tags are in the labels; the
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


@dataclass
class ParseStatistics:
    """What parsers count, under one lock so that threads may share a parser (the
    chart kernels release the GIL). A combined model's parser passes its own to its
    members' parsers, which count into it.

    seconds (Counter[str]): seconds per stage ("lexicon", "pruning": the coarse passes,
        "chart": the final grammar's inside-outside, "decode": decoder and tree,
        "labeller": the function labeller), for benchmarks.
    fallbacks (Counter[str]): parses per fallback taken (``FALLBACKS``).
    dual (Counter[str]): dual decomposition: "sentences", "certificates" and
        "iterations" (sums).
    """

    seconds: Counter[str] = field(default_factory=Counter)
    fallbacks: Counter[str] = field(default_factory=Counter)
    dual: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, statistic: str, key: str, amount: float = 1) -> None:
        """Add ``amount`` to ``self.<statistic>[key]``."""
        with self.lock:
            getattr(self, statistic)[key] += amount


class Parser:
    """Parses tokenised sentences with a trained model: ``Parser(model, ...)`` is a
    ``GrammarParser``, or a ``CombinedParser`` for a model with members.

    model (ParsingModel): the grammar, lexicon and transforms.
    decoder (str): a decoder of ``decode.registry`` for this model, or "auto", the
        default: ``default_decoder(model)``. A grammar or an ensemble: "max_rule",
        "variational", "viterbi", "mbr", or "product", "product_mbr" (which decode an
        ensemble's grammars jointly). A model with members (``combine_models``):
        how their parses combine, "members_product", "members_mbr" or "dual"
        ("product" and "mbr" name the first two there, as ``combine`` stored them);
        each member then parses with its own lexicon, pruning and transforms.
    prune_threshold (float | Sequence[float]): posterior threshold of the pruning
        passes: one for all, or one per level (plus one for the one-state projection
        of a latent grammar). Defaults to ``defaults.PRUNE_THRESHOLD``.
    ensemble_threshold (float): an ensemble's grammars after the first parse only the
        items whose posterior under the first is above this (``ensemble_charts``; 0:
        all parse the pruning passes' items). Defaults to
        ``defaults.ENSEMBLE_PRUNE_THRESHOLD``.
    levels (Sequence[dict]): the merged pruning levels, coarsest first, as keyword
        arguments of ``levels.level_label``. Defaults to X-bar with unary chains cut
        to their lowest label and POS and phrase categories, then X-bar with the
        (X-bar) Markov context of intermediates.
    state_groups (int | None): a latent grammar is pruned once more by itself with its
        states merged into this many per symbol (``chart.pruning``); 0: not. Defaults
        to ``defaults.PRUNE_STATES`` for the models of ``defaults.STATE_ORDERED_ESTIMATORS``,
        else 0.
    state_threshold (float): that pass's posterior threshold. Defaults to
        ``defaults.STATE_PRUNE_THRESHOLD``.
    use_tags (str): "auto", "constrain" or "ignore" given tags (``Lexicon.lexical_scores``).
        A given tag that the grammar does not have leaves its token untagged; the
        first sentence with one warns (W301, once per parser), and ``unknown_tags``
        counts every such token by tag (``unknown_tags_warning()`` sums them up).
    max_length (int): longer sentences get a flat tree. Defaults to ``defaults.MAX_LENGTH``.
    scores (bool): give parses their ``log_likelihood`` and ``span_posteriors``
        (``decode.scores``; cheap beside the parse itself, whose cost is in
        BENCHMARKS.md "Parsing: speed and accuracy").
        Defaults to True; False leaves them None (``score`` is always set).
    statistics (ParseStatistics | None): what to count into (``seconds``,
        ``fallbacks``, ``dual``); None: new ones.

    The model's function labeller, when it is to label (``ParsingModel.active_labeller``:
    the grammar strips function tags, or the model's ``function_labels`` is
    "labeller"), puts its function tags on every parse (``labeller``).
    """

    def __new__(cls, model: ParsingModel, **options: Any) -> Parser:
        if cls is Parser:  # the factory: the parser this model needs
            # imported here: both modules build on this one
            from .combined_parser import CombinedParser
            from .grammar_parser import GrammarParser

            cls = CombinedParser if model.members else GrammarParser
        return super().__new__(cls)

    def __init__(
        self,
        model: ParsingModel,
        *,
        decoder: str = AUTO,
        prune_threshold: float | Sequence[float] = defaults.PRUNE_THRESHOLD,
        ensemble_threshold: float = defaults.ENSEMBLE_PRUNE_THRESHOLD,
        levels: Sequence[dict] = DEFAULT_LEVELS,
        state_groups: int | None = None,
        state_threshold: float = defaults.STATE_PRUNE_THRESHOLD,
        use_tags: str = "auto",
        max_length: int = defaults.MAX_LENGTH,
        scores: bool = True,
        statistics: ParseStatistics | None = None,
    ):
        if not isinstance(ensemble_threshold, (int, float)) or not 0 <= ensemble_threshold < 1:
            raise ValueError(
                Errors.E011.format(
                    name="ensemble_threshold", value=ensemble_threshold, expected="0 <= t < 1"
                )
            )
        top = defaults.CEILINGS.sentence_length
        if not isinstance(max_length, int) or not 1 <= max_length <= top:
            expected = f"an int from 1 to {top} (longer sentences get a flat tree)"
            raise ValueError(
                Errors.E011.format(name="max_length", value=max_length, expected=expected)
            )
        self.model = model
        resolved = default_decoder(model) if decoder == AUTO else decoder
        self._decoder: Decoder = decoder_for(resolved, members=bool(model.members))
        self.decoder = self._decoder.name
        self.prune_threshold = prune_threshold
        self.ensemble_threshold = float(ensemble_threshold)
        self.levels = levels
        self.state_groups = state_groups
        self.state_threshold = state_threshold
        self.use_tags = use_tags
        self.max_length = max_length
        self.scores = bool(scores)
        self.statistics = ParseStatistics() if statistics is None else statistics
        # the statistics' own counters (``ParseStatistics``), by their usual names
        self.seconds = self.statistics.seconds
        self.fallbacks = self.statistics.fallbacks
        self.dual = self.statistics.dual
        self.unknown_tags: Counter[str] = Counter()  # given tags not in known_tags, per token
        self._unknown_tag_words: dict[str, str] = {}  # the first word seen with each
        self._warned_unknown_tags = False
        self.known_tags = _grammar_tags(model.grammar)
        self.pipeline = model.pipeline
        self.labeller = model.active_labeller

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
            (E311: models with members, ensemble decoders, mbr, signed grammars).
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

        RAISES ValueError: k is not an int from 1 to ``defaults.CEILINGS.kbest`` (E011),
            or the parser is one k-best parsing does not support (E311).
        """
        top = defaults.CEILINGS.kbest
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= top:
            raise ValueError(
                Errors.E011.format(name="k", value=k, expected=f"an int from 1 to {top}")
            )
        unsupported = self._kbest_unsupported()
        if unsupported:
            raise ValueError(Errors.E311.format(found=unsupported))

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

    def _checked_words(self, words: Sequence[str], tags: Sequence[str | None] | None) -> list[str]:
        """The words as a list, after checking them and noting unknown tags."""
        words = list(words)
        if not all(words):
            position = next(i for i, word in enumerate(words) if not word)
            raise ValueError(
                Errors.E011.format(
                    name=f"words[{position}]", value="", expected="words are non-empty strings"
                )
            )
        if tags is not None and self.use_tags != "ignore":
            self.note_unknown_tags(words, tags)
        return words

    def unknown_tags_warning(self, scope: str = "") -> str | None:
        """The W301 message for every token with an unknown tag so far (None: none).

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
        return Warnings.W301.format(
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
        with self.statistics.lock:
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

    def _labelled(self, parses: list[Parse]) -> list[Parse]:
        """The parses with the function labeller's tags, when it labels."""
        if self.labeller is None:
            return parses
        start = time.perf_counter()
        trees = self.labeller.label([parse.tree for parse in parses])
        self.statistics.add("seconds", "labeller", time.perf_counter() - start)
        return [
            dataclasses.replace(
                parse, tree=tree, span_posteriors=relabelled(parse.span_posteriors, tree)
            )
            for parse, tree in zip(parses, trees)
        ]

    # What the two kinds of parser do their own way.

    def _decoded(self, words: list[str], tags: Sequence[str | None] | None, start: float) -> Parse:
        """The parse, before the function labeller (``start``: when parsing began)."""
        raise NotImplementedError

    def _kbest(
        self, words: list[str], tags: Sequence[str | None] | None, k: int, start: float
    ) -> list[Parse]:
        """The k best parses, before the function labeller."""
        raise NotImplementedError

    def _kbest_unsupported(self) -> str | None:
        """Why this parser makes no k-best lists (E311's ``found``); None: it does."""
        raise NotImplementedError


def _grammar_tags(grammar: LPCFG) -> frozenset[str]:
    """The tags that can constrain a token: the preterminals' names, and those names
    without annotations (``NN`` for ``NN^NP``), as ``Lexicon.lexical_scores`` reads them."""
    names = [grammar.symbols.name(a) for a in grammar.symbols.ids("preterminal").tolist()]
    return frozenset(names) | {name.partition(PARENT_SEP)[0] for name in names}
