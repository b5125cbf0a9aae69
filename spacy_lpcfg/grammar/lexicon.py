"""The lexicon: which words a grammar knows, their emission weights, and unknown words.

``Lexicon.fit`` reads the preterminals of the (transformed) training trees, as
``(word, tag)`` pairs with optional weights over the tag's latent states (one-hot
for hard states, posteriors for EM), and decides the vocabulary: words seen
more than ``rare_threshold`` times are *known*; the rarer ones stand in for
unknown words and are counted in the classes of their signature chain (see
``signatures.py``). Emission weights follow the Berkeley parser's
SophisticatedLexicon. With ``c`` counts over the training tokens (``N`` of
them), ``x = (t, h)`` a tag and latent state, and ``U`` the rare tokens of
open-class tags:

* ``P(x | U) = c(x, U) / c(U)``
* class s with parent class p (the next in the chain; ``UNK`` is all of U):
  ``P(x | s) = (c(x, s) + signature_smoothing * P(x | p)) / (c(s) + signature_smoothing)``
* known word w: ``P(x | w) = c(x, w) / c(w)``, and for ``c(w) <= smooth_threshold``
  ``(c(x, w) + word_smoothing * P(x | U)) / (c(w) + word_smoothing)``
* emission (Bayes inversion): ``P(e | x) = P(x | e) * c(e) / c(x)`` for a
  known word or class e; ``UNK`` counts ``c(U)`` tokens.

Known words and ``UNK`` partition the training tokens, so for every open
tag state ``sum_w P(w | x) + P(UNK | x) = 1``: exactly when no known word is
smoothed, and up to the pseudo-counts the smoothing adds otherwise. Each
finer class is a part of ``UNK``. A tag is *open* (emits unknown words) when
at least ``open_class_threshold`` rare tokens carry it (or it has rare tokens
and no known ones); the rare tokens of closed tags are left out of ``U`` and of
``c(x)``, so closed tags' emissions over the known words sum to one as well.
Without open tags all tags with rare tokens are open, and without rare tokens
``UNK`` gets ``P(x)`` with one token.

The grammar's vocabulary (``LPCFG.words``) is the known words followed by one
entry per class. At parse time a token maps to (1) itself if known, (2) its
lowercase form if it is the first word of the sentence and that form is known
(the capital is then taken as sentence case; training maps rare tokens the
same way, so the Berkeley "-KNOWNLC" class stays empty), (3) the first class
of its signature chain seen in training, which at worst is ``UNK``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..defaults import LEXICON
from ..errors import Errors, excerpt
from ..trees.transforms import PARENT_SEP
from .emissions import (
    ClassCounts,
    EmissionTable,
    TagStates,
    TokenKey,
    block_positions,
    estimate_emissions,
    open_tags,
)
from .lexical_scores import LexicalScores
from .lpcfg import LPCFG
from .signatures import SIGNATURE_SCHEMES, UNKNOWN_CLASS, choose_scheme, get_signatures
from .symbols import SymbolTable

LEXICON_FORMAT = "spacy-lpcfg lexicon"
# Version 2 records the signature scheme used ("signatures") when version 1 readers do not
# know it ("cjk", which "auto" may choose); other lexicons are still written as version 1.
LEXICON_VERSION = 2
VERSION_1_SCHEMES = ("berkeley", "generic")
USE_TAGS = ("auto", "constrain", "ignore")


@dataclass(frozen=True)
class LexiconSpec:
    """The Lexicon's settings but its language: one ``lexicon`` parameter of every
    estimator that counts a treebank, as ``TransformSpec`` is its ``transform`` (a
    nested block in a spaCy config). The language is the training data's, set with the
    transforms. Values are checked when the Lexicon is made (``lexicon``); the
    Lexicon's docstring says what each does.
    """

    signature: str = LEXICON.signature
    suffix_length: int = LEXICON.suffix_length
    rare_threshold: int = LEXICON.rare_threshold
    open_class_threshold: int = LEXICON.open_class_threshold
    smooth_threshold: int = LEXICON.smooth_threshold
    word_smoothing: float = LEXICON.word_smoothing
    signature_smoothing: float = LEXICON.signature_smoothing

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LexiconSpec:
        """RAISES ValueError: a key that is not a setting."""
        unknown = sorted(set(data) - set(LEXICON_SETTINGS))
        if unknown:
            expected = "settings among " + ", ".join(LEXICON_SETTINGS)
            raise ValueError(
                Errors.E011.format(value=", ".join(unknown), name="lexicon", expected=expected)
            )
        return cls(**data)

    def lexicon(self, language: str = LEXICON.language) -> Lexicon:
        """An unfitted Lexicon with these settings (it checks them)."""
        return Lexicon(language=language, **self.to_dict())


LEXICON_SETTINGS = tuple(field.name for field in dataclasses.fields(LexiconSpec))


def as_lexicon_spec(lexicon: LexiconSpec | Mapping | None) -> LexiconSpec:
    """A LexiconSpec from an estimator's ``lexicon`` parameter (spec, dict or None).
    RAISES ValueError: anything else, or a dict with other keys."""
    if lexicon is None:
        return LexiconSpec()
    if isinstance(lexicon, LexiconSpec):
        return lexicon
    if isinstance(lexicon, Mapping):
        return LexiconSpec.from_dict(lexicon)
    expected = "a LexiconSpec, a dict of its settings, or None"
    raise ValueError(Errors.E011.format(value=lexicon, name="lexicon", expected=expected))


def with_lexicon_settings(
    lexicon: LexiconSpec | Mapping | None, settings: Mapping[str, Any]
) -> Any:
    """``lexicon`` with ``settings`` (flat keyword arguments, of an older signature)
    laid over it, in the same form (a spec stays a spec, a dict a dict). Nothing is
    checked here: an estimator checks its parameters when it fits."""
    if isinstance(lexicon, LexiconSpec):
        return dataclasses.replace(lexicon, **settings)
    if isinstance(lexicon, Mapping):
        return {**lexicon, **settings}
    if lexicon is None:
        return LexiconSpec(**settings)
    return lexicon  # invalid: ``as_lexicon_spec`` says so at fit


class Lexicon:
    """Known words, unknown-word classes and their emission weights.

    signature (str): "auto" (chosen from the training words by ``fit``: CJK classes
        when most words are in Chinese or Japanese scripts, else Berkeley classes for
        English and generic ones for other languages), "berkeley", "generic" or "cjk"
        (see ``signatures.py``).
    language (str): ISO 639-1 code, for signature="auto". Defaults to "en".
    suffix_length (int): longest suffix of the generic signature. Defaults to 3.
    rare_threshold (int): words seen at most this many times are unknown words.
        Defaults to 1 (hapaxes).
    open_class_threshold (int): rare tokens a tag needs to emit unknown words.
        Defaults to 5.
    smooth_threshold (int): known words seen at most this many times mix
        P(x | U) into P(x | w). Defaults to 10. 0 disables.
    word_smoothing (float): pseudo-count of that mixture. Defaults to 0.1 (1.0 lost 0.6
        points of tagging accuracy on the PTB sample dev set).
    signature_smoothing (float): pseudo-count of P(x | parent) in each class.
        Defaults to 1.0.

    Fitted state: ``signatures`` (the scheme used, "auto" resolved), ``tags`` (the
    preterminals it emits from), ``known_words``
    (frozenset), ``classes`` (class name ->
    vocabulary entry, normally the name itself), ``entries`` (the grammar's
    vocabulary), and the emission weights (only after ``fit``; a lexicon read
    with ``from_dict`` maps words, its weights live in the grammar).
    ``unknown_tags`` counts the given tags that could not constrain a token.
    """

    def __init__(
        self,
        *,
        signature: str = LEXICON.signature,
        language: str = LEXICON.language,
        suffix_length: int = LEXICON.suffix_length,
        rare_threshold: int = LEXICON.rare_threshold,
        open_class_threshold: int = LEXICON.open_class_threshold,
        smooth_threshold: int = LEXICON.smooth_threshold,
        word_smoothing: float = LEXICON.word_smoothing,
        signature_smoothing: float = LEXICON.signature_smoothing,
    ):
        integers: tuple[tuple[str, int], ...] = (
            ("suffix_length", suffix_length),
            ("rare_threshold", rare_threshold),
            ("open_class_threshold", open_class_threshold),
            ("smooth_threshold", smooth_threshold),
        )
        for name, number in integers:
            _check_number(name, number, integer=True)
        reals: tuple[tuple[str, float], ...] = (
            ("word_smoothing", word_smoothing),
            ("signature_smoothing", signature_smoothing),
        )
        for name, real in reals:
            _check_number(name, real, integer=False)
        if not isinstance(language, str):
            raise ValueError(Errors.E011.format(value=language, name="language", expected="a str"))
        self.signatures = get_signatures(signature, language, suffix_length)
        self.signature = signature
        self.language = language
        self.suffix_length = suffix_length
        self.rare_threshold = rare_threshold
        self.open_class_threshold = open_class_threshold
        self.smooth_threshold = smooth_threshold
        self.word_smoothing = word_smoothing
        self.signature_smoothing = signature_smoothing
        # empty until fitted (``is_fitted``)
        self.known_words: frozenset[str] = frozenset()
        self.classes: dict[str, str] = {}
        self._fitted = False
        self.tags: tuple[str, ...] = ()
        self.entries: tuple[str, ...] = ()
        self.unknown_tags: Counter[str] = Counter()
        self._emissions: EmissionTable | None = None

    @property
    def config(self) -> dict[str, Any]:
        """The constructor arguments."""
        return {
            "signature": self.signature,
            "language": self.language,
            "suffix_length": self.suffix_length,
            "rare_threshold": self.rare_threshold,
            "open_class_threshold": self.open_class_threshold,
            "smooth_threshold": self.smooth_threshold,
            "word_smoothing": self.word_smoothing,
            "signature_smoothing": self.signature_smoothing,
        }

    @property
    def is_fitted(self) -> bool:
        return self._fitted

    # Fitting -----------------------------------------------------------------

    def fit(
        self,
        sentences: Iterable[Sequence[tuple[str, str]]],
        *,
        state_weights: Iterable[Sequence[np.ndarray]] | None = None,
        n_states: Mapping[str, int] | None = None,
    ) -> Lexicon:
        """Fit from the preterminals of training sentences.

        sentences (Iterable[Sequence[tuple[str, str]]]): per sentence, its
            (word, tag) pairs; tags are the grammar's preterminal names.
        state_weights (Iterable[Sequence[np.ndarray]] | None): parallel to
            sentences, per token float64[n_states[tag]] weights over the tag's
            latent states (one-hot or posteriors, summing to one). None: one state.
        n_states (Mapping[str, int] | None): latent states per tag (default 1).
        RETURNS (Lexicon): self.
        """
        counts: dict[TokenKey, Any] = {}
        weights_iter = iter(state_weights) if state_weights is not None else None
        for sentence in sentences:
            weights = next(weights_iter) if weights_iter is not None else None
            for position, (word, tag) in enumerate(sentence):
                key = (word, tag, position == 0)
                value = 1.0 if weights is None else np.asarray(weights[position], dtype=float)
                counts[key] = counts[key] + value if key in counts else value
        return self.fit_counts(counts, n_states)

    def fit_counts(
        self, counts: Mapping[TokenKey, Any], n_states: Mapping[str, int] | None = None
    ) -> Lexicon:
        """Fit from aggregated token counts (what ``fit`` builds).

        counts (Mapping): (word, tag, is the first word of its sentence) -> count
            (float) or float64[n_states[tag]] weights summed over the occurrences.
        n_states (Mapping[str, int] | None): latent states per tag (default 1).
        RETURNS (Lexicon): self.
        """
        if not counts:
            raise ValueError(Errors.E029.format(what="lexicon", detail="no tokens"))
        states = TagStates(sorted({tag for _, tag, _ in counts}), n_states or {})
        vectors = {key: states.check(key, value) for key, value in counts.items()}
        word_totals: dict[str, float] = {}
        for (word, _, _), vector in vectors.items():
            word_totals[word] = word_totals.get(word, 0.0) + float(vector.sum())
        known = frozenset(w for w, total in word_totals.items() if total > self.rare_threshold)
        if self.signature == "auto":  # the scheme that suits the script of the words
            scheme = choose_scheme(word_totals, self.language)
            self.signatures = get_signatures(scheme, self.language, self.suffix_length)

        known_counts: dict[tuple[str, int], np.ndarray] = {}
        rare: list[tuple[str, int, bool, np.ndarray]] = []
        for (word, tag_name, initial), vector in vectors.items():
            tag = states.tag_ids[tag_name]
            entry = self._known_form(word, initial, known)
            if entry is None:
                rare.append((word, tag, initial, vector))
            else:
                pair = (entry, tag)
                known_counts[pair] = known_counts[pair] + vector if pair in known_counts else vector
        is_open = open_tags(states, known_counts, rare, self.open_class_threshold)

        # c(x) over the tokens the emissions describe: the rare tokens of closed tags
        # are left out, so that every tag's emissions sum to one.
        state_counts = np.zeros(states.n_states)
        classes = ClassCounts(np.flatnonzero(is_open[states.tag_of_state]), states.offsets)
        for (_, tag), vector in known_counts.items():
            state_counts[states.slice(tag)] += vector
        for word, tag, initial, vector in rare:
            if is_open[tag]:
                state_counts[states.slice(tag)] += vector
                chain = self.signatures.chain(word, 0 if initial else 1, known.__contains__)
                classes.add(chain, tag, vector)
        if not classes.total:  # no rare tokens: UNK gets P(x) and one token
            classes = ClassCounts(np.arange(states.n_states), states.offsets)
            classes.add_prior(state_counts / state_counts.sum())

        known_sorted = sorted(known)
        self.known_words = known
        self.classes = _class_entries(classes.names, known)
        self._fitted = True
        self.entries = tuple(known_sorted) + tuple(self.classes[n] for n in sorted(classes.names))
        self.tags = tuple(states.tags)
        self._emissions = estimate_emissions(
            known_sorted,
            known_counts,
            classes,
            state_counts,
            states,
            smooth_threshold=self.smooth_threshold,
            word_smoothing=self.word_smoothing,
            signature_smoothing=self.signature_smoothing,
        )
        self.unknown_tags = Counter()
        return self

    def _known_form(self, word: str, initial: bool, known: frozenset[str]) -> str | None:
        """The known word a token counts as (itself or its lowercase form), or None."""
        if word in known:
            return word
        if initial:
            lowered = word.lower()
            if lowered != word and lowered in known:
                return lowered
        return None

    # The grammar's lexical rules ---------------------------------------------

    def lexical_arrays(
        self, symbols: SymbolTable, *, release: bool = False
    ) -> dict[str, np.ndarray]:
        """The emission weights as LPCFG lexical arrays over ``entries`` (new arrays).

        symbols (SymbolTable): the grammar's symbols; every tag must be a preterminal.
        release (bool): then drop the emission table, which the grammar built from the
            arrays replaces (a lexicon read from disk has none either: its weights live
            in the grammar); a second call raises.
        RETURNS (dict): lexical_rules int32[RL, 2] (tag id, entry id) sorted,
            lexical_offsets int64[RL + 1], lexical_weights float64.
        """
        if self._emissions is None:
            raise ValueError(Errors.E119)
        arrays = self._emissions.lexical_arrays(symbols)
        if release:
            self._emissions = None
        return arrays

    # Parse time --------------------------------------------------------------

    def entry(self, word: str, position: int) -> str:
        """The vocabulary entry of a token: the word, its lowercase form, or a class."""
        self._require_fitted()
        known = self._known_form(word, position == 0, self.known_words)
        return known if known is not None else self.unknown_entry(word, position)

    def unknown_entry(self, word: str, position: int) -> str:
        """The entry of the token's first seen signature class (at worst "UNK")."""
        self._require_fitted()
        for name in self.signatures.chain(word, position, self.known_words.__contains__):
            if name in self.classes:
                return self.classes[name]
        return self.classes[UNKNOWN_CLASS]

    def lexical_scores(
        self,
        grammar: LPCFG,
        words: Sequence[str],
        tags: Sequence[str | None] | None = None,
        use_tags: str = "auto",
    ) -> LexicalScores:
        """The preterminal scores of a sentence under `grammar`.

        grammar (LPCFG): a grammar over this lexicon's entries (any number of states).
        words (Sequence[str]): the tokens, at least one.
        tags (Sequence[str | None] | None): given POS tags; None or "" for a token
            leaves it unconstrained.
        use_tags (str): "constrain" keeps only the preterminals of the given tag
            (its annotated variants ``NN^NP`` included); "ignore" ignores tags;
            "auto" constrains when tags are given. A tag the grammar does not have
            leaves its token unconstrained and is counted in ``unknown_tags``.
            A known word given a tag it was never seen with is scored as an
            unknown word for that tag, else with the tag's smallest emission.
        RETURNS (LexicalScores): every position has at least one preterminal.
        """
        self._require_fitted()
        if use_tags not in USE_TAGS:
            expected = "one of " + ", ".join(repr(choice) for choice in USE_TAGS)
            raise ValueError(Errors.E011.format(value=use_tags, name="use_tags", expected=expected))
        if not len(words):
            raise ValueError(Errors.E120.format(detail="a sentence needs at least one word"))
        if tags is not None and len(tags) != len(words):
            raise ValueError(Errors.E120.format(detail=f"{len(tags)} tags for {len(words)} words"))
        if use_tags == "constrain" and tags is None:
            raise ValueError(Errors.E120.format(detail="use_tags='constrain' needs tags"))
        constrain = tags is not None and use_tags != "ignore"
        if tags is None or not constrain or not any(tags):
            return _word_scores(
                grammar, [self._word_id(grammar, w, i) for i, w in enumerate(words)]
            )
        tag_index = _preterminals_by_tag(grammar.symbols)
        positions, segments = [], []
        for position, word in enumerate(words):
            tag = tags[position] if constrain else None
            segment = self._token_scores(grammar, word, position, tag, tag_index)
            positions.append(np.full(len(segment[0]), position, dtype=np.int32))
            segments.append(segment)
        sizes = np.concatenate([grammar.n_states[tags_] for tags_, _ in segments])
        return LexicalScores(
            n_words=len(words),
            positions=np.concatenate(positions),
            tags=np.concatenate([tags_ for tags_, _ in segments]).astype(np.int32),
            offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            values=np.concatenate([values for _, values in segments]).astype(np.float64),
        )

    def _word_id(self, grammar: LPCFG, word: str, position: int) -> int:
        """The grammar's word id for a token without a tag: its entry, else its
        signature class, else UNK (the fallbacks of _token_scores); -1 if none of
        them has lexical rules."""
        offsets = grammar.lexical_word_index[1]
        for entry in _fallback_entries(self, word, position):
            found = grammar.word_index.get(entry)
            if found is not None and offsets[found + 1] > offsets[found]:
                return found
        return -1

    def _token_scores(
        self,
        grammar: LPCFG,
        word: str,
        position: int,
        tag: str | None,
        tag_index: Mapping[str, np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """(preterminal ids, concatenated score vectors) of one token."""
        rules = _entry_rules(grammar, self.entry(word, position))
        if not len(rules):  # an entry the grammar dropped
            rules = _entry_rules(grammar, self.unknown_entry(word, position))
        if not len(rules):
            rules = _entry_rules(grammar, self.classes[UNKNOWN_CLASS])
        if not tag:
            return _gather(grammar, rules)
        allowed = tag_index.get(tag)
        if allowed is not None:
            kept = rules[np.isin(grammar.lexical_rules[rules, 0], allowed)]
            if not len(kept):
                unknown = _entry_rules(grammar, self.unknown_entry(word, position))
                kept = unknown[np.isin(grammar.lexical_rules[unknown, 0], allowed)]
            if len(kept):
                return _gather(grammar, kept)
            floors = [(a, _smallest_emission(grammar, a)) for a in allowed.tolist()]
            floors = [(a, floor) for a, floor in floors if floor.any()]
            if floors:
                return (
                    np.array([a for a, _ in floors], dtype=np.int32),
                    np.concatenate([floor for _, floor in floors]),
                )
        self.unknown_tags[tag] += 1
        return _gather(grammar, rules)

    def check(self, grammar: LPCFG) -> None:
        """Raise ValueError unless the grammar's vocabulary is this lexicon's entries
        and its tags are preterminals of the grammar."""
        self._require_fitted()
        if tuple(grammar.words) != self.entries:
            missing = [entry for entry in self.entries if entry not in grammar.word_index]
            detail = (
                f"the lexicon has {len(self.entries)} entries, the grammar "
                f"{len(grammar.words)} words" + (f"; missing {missing[:5]}" if missing else "")
            )
            raise ValueError(Errors.E123.format(detail=detail))
        preterminals = set(grammar.symbols.names[i] for i in grammar.symbols.ids("preterminal"))
        foreign = [tag for tag in self.tags if tag not in preterminals]
        if foreign:
            detail = f"tags {foreign[:5]} are not preterminals of the grammar"
            raise ValueError(Errors.E123.format(detail=detail))

    def _require_fitted(self) -> None:
        if not self.is_fitted:
            raise ValueError(Errors.E121)

    # Serialisation -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The configuration and vocabulary as JSON-serialisable data (no weights)."""
        self._require_fitted()
        data = {
            "format": LEXICON_FORMAT,
            "format_version": 1,
            "config": self.config,
            "tags": list(self.tags),
            "known_words": sorted(self.known_words),
            "classes": dict(sorted(self.classes.items())),
        }
        if self.signatures.name not in VERSION_1_SCHEMES:
            # with "auto" the words decide, so the choice is recorded: version 1 readers
            # resolved "auto" by the language alone
            data.update(format_version=LEXICON_VERSION, signatures=self.signatures.name)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Lexicon:
        """Read what ``to_dict`` wrote. RAISES ValueError: malformed or newer data."""
        if not isinstance(data, Mapping) or data.get("format") != LEXICON_FORMAT:
            raise ValueError(Errors.E122.format(detail="not a spacy-lpcfg lexicon"))
        version = data.get("format_version")
        if not isinstance(version, int) or not 1 <= version <= LEXICON_VERSION:
            detail = f"format_version {version!r}; this version reads up to {LEXICON_VERSION}"
            raise ValueError(Errors.E122.format(detail=detail))
        config, known, classes = data.get("config"), data.get("known_words"), data.get("classes")
        tags = data.get("tags")
        if not (
            isinstance(config, Mapping)
            and isinstance(tags, list)
            and all(isinstance(tag, str) for tag in tags)
            and isinstance(known, list)
            and all(isinstance(word, str) for word in known)
            and isinstance(classes, Mapping)
            and all(isinstance(v, str) for v in classes.values())
            and UNKNOWN_CLASS in classes
        ):
            detail = "needs config, tags and known_words (strings) and classes (with 'UNK')"
            raise ValueError(Errors.E122.format(detail=detail))
        try:
            lexicon = cls(**config)
        except TypeError as exc:
            raise ValueError(Errors.E122.format(detail=f"config: {exc}")) from None
        scheme = data.get("signatures")
        if scheme is not None:  # version 2: the scheme "auto" chose
            if (
                scheme == "auto"
                or scheme not in SIGNATURE_SCHEMES
                or lexicon.signature not in ("auto", scheme)
            ):
                detail = f"signatures {excerpt(str(scheme))} for signature={lexicon.signature!r}"
                raise ValueError(Errors.E122.format(detail=detail))
            lexicon.signatures = get_signatures(scheme, lexicon.language, lexicon.suffix_length)
        lexicon.tags = tuple(tags)
        lexicon.known_words = frozenset(known)
        lexicon.classes = dict(classes)
        lexicon._fitted = True
        lexicon.entries = tuple(sorted(known)) + tuple(classes[name] for name in sorted(classes))
        if len(set(lexicon.entries)) != len(lexicon.entries):
            raise ValueError(Errors.E122.format(detail="entries are not unique"))
        return lexicon

    def __repr__(self) -> str:
        if not self.is_fitted:
            return f"Lexicon({self.signatures.name}, not fitted)"
        return (
            f"Lexicon({self.signatures.name}, {len(self.known_words)} known words, "
            f"{len(self.classes)} unknown-word classes)"
        )


def _class_entries(names: Iterable[str], known: frozenset[str]) -> dict[str, str]:
    """Class name -> vocabulary entry: the name, bracketed until no known word equals it."""
    entries = {}
    for name in names:
        entry = name
        while entry in known:
            entry = f"<{entry}>"
        entries[name] = entry
    return entries


def _check_number(name: str, value: Any, *, integer: bool) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < 0:
        expected = "an integer >= 0" if integer else "a number >= 0"
        raise ValueError(Errors.E011.format(value=value, name=name, expected=expected))


@functools.lru_cache(maxsize=16)
def _preterminals_by_tag(symbols: SymbolTable) -> dict[str, np.ndarray]:
    """Tag -> int32 ids of the preterminals named by it, annotated variants included."""
    found: dict[str, list[int]] = {}
    for symbol in symbols.ids("preterminal").tolist():
        name = symbols.name(symbol)
        found.setdefault(name, []).append(symbol)
        base = name.partition(PARENT_SEP)[0]
        if base != name:
            found.setdefault(base, []).append(symbol)
    return {tag: np.array(sorted(set(ids)), dtype=np.int32) for tag, ids in found.items()}


def _fallback_entries(lexicon: Lexicon, word: str, position: int) -> Iterator[str]:
    yield lexicon.entry(word, position)
    yield lexicon.unknown_entry(word, position)
    yield lexicon.classes[UNKNOWN_CLASS]


def _word_scores(grammar: LPCFG, word_ids: list[int]) -> LexicalScores:
    """The lexical rules of each word (id -1: none), all positions at once."""
    order, word_offsets = grammar.lexical_word_index
    ids = np.array(word_ids, dtype=np.int64)
    ids = ids[ids >= 0]
    counts = np.zeros(len(word_ids), dtype=np.int64)
    counts[np.array(word_ids) >= 0] = word_offsets[ids + 1] - word_offsets[ids]
    rules = order[block_positions(word_offsets, ids)]
    sizes = grammar.n_states[grammar.lexical_rules[rules, 0]].astype(np.int64)
    return LexicalScores(
        n_words=len(word_ids),
        positions=np.repeat(np.arange(len(word_ids), dtype=np.int32), counts),
        tags=grammar.lexical_rules[rules, 0].astype(np.int32),
        offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        values=grammar.lexical_weights[block_positions(grammar.lexical_offsets, rules)].astype(
            np.float64
        ),
    )


def _entry_rules(grammar: LPCFG, entry: str) -> np.ndarray:
    """int32[k]: the lexical rule ids of a vocabulary entry, by preterminal id."""
    word = grammar.word_index.get(entry)
    if word is None:
        return np.zeros(0, dtype=np.int32)
    order, offsets = grammar.lexical_word_index
    return order[offsets[word] : offsets[word + 1]]


def _gather(grammar: LPCFG, rules: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(preterminal ids, concatenated weight vectors) of some lexical rules."""
    return (
        grammar.lexical_rules[rules, 0],
        grammar.lexical_weights[block_positions(grammar.lexical_offsets, rules)],
    )


def _smallest_emission(grammar: LPCFG, tag: int) -> np.ndarray:
    """float64[m_tag]: per state, the tag's smallest positive emission (0 if none)."""
    first, last = np.searchsorted(grammar.lexical_rules[:, 0], [tag, tag + 1])
    m = int(grammar.n_states[tag])
    block = grammar.lexical_weights[grammar.lexical_offsets[first] : grammar.lexical_offsets[last]]
    positive = np.where(block > 0, block, np.inf).reshape(-1, m)
    smallest = positive.min(axis=0, initial=np.inf)
    return np.where(np.isfinite(smallest), smallest, 0.0)
