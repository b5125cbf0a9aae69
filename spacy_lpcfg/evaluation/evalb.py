"""EVALB in Python: bracket scoring that reproduces ``evalb`` and ``evalb_spmrl`` exactly.

The scorer follows the C program step by step (read a line into terminals and
brackets, reinsert quotes, check lengths and words, delete and cut labels,
match brackets greedily one-to-one, count crossings and tags), including its
quirks, so that ``EvalbResult.format()`` is byte-identical to EVALB's stdout
and ``EvalbResult.messages`` to its stderr. Where EVALB has undefined
behaviour (more than 200 words or brackets, lines over 5000 bytes, a ``)``
closing nothing) this scorer reads whole lines, has no size limits and
ignores the unmatched ``)`` while keeping EVALB's bracket counter and messages.

Words are compared as EVALB compares them, as C strings, with one addition: a
control character written as ``Tree.pformat`` writes it (``-U+001B-``) is the
character itself, so a parse printed by this package scores against gold that
holds the raw character (EVALB would report "Words unmatch" there).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from ..errors import Errors
from ..trees.brackets import unescape_controls
from ..trees.formats.text import read_bytes, read_text
from ..trees.tree import Tree
from .params import EvalbParams, get_params
from .report import ERROR, SKIP, VALID, EvalbResult, SentenceScore

_WS = r"[ \t\n\v\f\r]"  # C isspace() in the "C" locale EVALB runs in
_NT = r"[^ \t\n\v\f\r()]"  # a label or word character (not a terminator)
# One step of EVALB's read_line() loop, after optional space. ``open`` is a phrase
# whose label is followed by "(" or ")" (after optional space) or the end; ``odd`` a
# label followed by a word that does not close the bracket, which EVALB reports and
# cannot read past (the word is then an unexpected character). NUL is no terminator:
# EVALB copies it into a label or word (where, as the end of a C string, it cuts
# it), but its reading loop stops at one where a token would begin (``end``).
_TOKEN = re.compile(
    rf"{_WS}*(?:"
    rf"\((?P<tag>{_NT}*){_WS}+(?P<word>{_NT}*)\)"
    rf"|\((?P<open>{_NT}*)(?={_WS}*\(|\)|\Z)"
    rf"|\((?P<odd>{_NT}*)"
    rf"|(?P<close>\))"
    rf"|(?P<end>\0)"
    rf"|(?P<junk>.)"
    rf"|\Z)",
    re.DOTALL,
)
_AFTER_ODD = re.compile(rf"{_WS}+{_NT}*(?P<next>.?)", re.DOTALL)
_QUOTE_WORDS = frozenset({"'", '"', "/"})

ParamSpec = EvalbParams | str | Path
Item = TypeVar("Item")


class _Abort(Exception):
    """EVALB's exit(1) after too many errors."""


class _Quote:
    """A quote-like terminal (QUOTE_LABEL) and where it was read."""

    __slots__ = ("tag", "word", "index", "bracket", "open_brackets")

    def __init__(self, tag: str, word: str, index: int, bracket: int, open_brackets: list[int]):
        self.tag = tag
        self.word = word
        self.index = index
        self.bracket = bracket
        self.open_brackets = open_brackets


class _Sentence:
    """One side of a sentence as EVALB reads it.

    brackets holds ``[label, start, end]`` in opening order (end -1 while unclosed);
    length counts the terminals not in DELETE_LABEL_FOR_LENGTH, deleted or not.
    """

    __slots__ = ("words", "tags", "brackets", "length", "quotes")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.tags: list[str] = []
        self.brackets: list[list] = []
        self.length = 0
        self.quotes: list[_Quote] = []

    def add_terminal(self, tag: str, word: str, rules: Rules, open_brackets) -> None:
        if tag not in rules.length_deleted_tags:
            self.length += 1
        if tag in rules.quote_tags and word in _QUOTE_WORDS:
            self.quotes.append(
                _Quote(tag, word, len(self.words), len(self.brackets), list(open_brackets))
            )
        if rules.params.delete_terminals and tag in rules.deleted_tags:
            return
        self.words.append(word)
        self.tags.append(tag)


class Rules:
    """Deletions and label, tag and word comparisons derived from the parameters."""

    def __init__(self, params: EvalbParams):
        self.params = params
        self._cut_pattern = re.compile("[" + re.escape(params.label_cut_chars) + "]")
        self._cut_cache: dict[str, str] = {}
        pairs = params.equivalent_labels
        self.equivalent = {(a, b) for a, b in pairs} | {(b, a) for a, b in pairs}
        words = params.equivalent_words
        self.equivalent_words = {(a, b) for a, b in words} | {(b, a) for a, b in words}
        self.deleted_tags = frozenset(params.delete_labels)
        self.length_deleted_tags = frozenset(params.delete_labels_for_length)
        self.quote_tags = frozenset(params.quote_labels)
        deleted = set(params.delete_labels)
        if params.cut_compared_labels:
            deleted = {self.cut(label) for label in deleted}
        # A phrase is deleted when its cut label equals, or is EQ_LABEL to, a deleted label.
        self.deleted_phrases = deleted | {a for a, b in self.equivalent if b in deleted}

    def cut(self, label: str) -> str:
        """The label up to the first cut character (EVALB's modify_label)."""
        cut = self._cut_cache.get(label)
        if cut is None:
            match = self._cut_pattern.search(label)
            cut = self._cut_cache[label] = label if match is None else label[: match.start()]
        return cut

    def same_label(self, a: str, b: str) -> bool:
        return a == b or (a, b) in self.equivalent

    def same_tag(self, a: str, b: str) -> bool:
        if self.params.cut_compared_labels:
            a, b = self.cut(a), self.cut(b)
        return a == b or (a, b) in self.equivalent

    def same_word(self, a: str, b: str) -> bool:
        if a == b or (a, b) in self.equivalent_words:
            return True
        a, b = _as_compared(a), _as_compared(b)
        return a == b or (a, b) in self.equivalent_words


def _as_compared(word: str) -> str:
    # A word as EVALB compares it (strcmp: up to a NUL), control escapes read back.
    return unescape_controls(word).partition("\0")[0]


def _c_string(text: str) -> str:
    return text.partition("\0")[0]


def read_line(line: str, rules: Rules, error: Callable[[str], None]) -> _Sentence:
    """Read one bracketed line as EVALB's read_line() does, reporting through ``error``."""
    # Labels and words are C strings to EVALB: kept up to a NUL inside them.
    cut = _c_string if "\0" in line else str
    sentence = _Sentence()
    brackets = sentence.brackets
    # EVALB's bracket stack is an array with a counter that may go negative; a dict
    # keyed by position keeps what a push wrote where the array would.
    stack: dict[int, int] = {}
    top = 0
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        if kind == "word":  # a terminal "(TAG WORD)"; the word group closes last
            open_brackets = [stack[i] for i in range(top)] if rules.quote_tags else ()
            sentence.add_terminal(cut(match["tag"]), cut(match["word"]), rules, open_brackets)
        elif kind == "open" or kind == "odd":
            if kind == "odd" and cast(re.Match, _AFTER_ODD.match(line, match.end()))["next"] != "(":
                error("More than two elements in a bracket")
            stack[top] = len(brackets)
            top += 1
            brackets.append([cut(match[kind]), len(sentence.words), -1])
        elif kind == "close":
            bracket = stack.get(top - 1)
            if top < 0:
                error("Bracketing unbalance (too many close bracket)")
            top -= 1
            if bracket is not None:
                brackets[bracket][2] = len(sentence.words)
        elif kind == "end":
            break
        elif kind == "junk":  # EVALB does not advance past it: it errs until it stops
            while True:
                error("Reading sentence")
    if top != 0:
        error("Bracketing is unbalanced (too many open bracket)")
    return sentence


def read_tree(tree: Tree | None, rules: Rules) -> _Sentence:
    """A ``Tree`` as EVALB would read its bracketed form; None reads as an empty line."""
    sentence = _Sentence()
    if tree is None:
        return sentence
    brackets = sentence.brackets
    open_brackets: list[int] = []
    stack: list[Tree | None] = [tree]  # None closes the innermost open bracket
    while stack:
        node = stack.pop()
        if node is None:
            brackets[open_brackets.pop()][2] = len(sentence.words)
        elif node.word is not None:
            sentence.add_terminal(node.label, node.word, rules, open_brackets)
        else:
            open_brackets.append(len(brackets))
            brackets.append([node.label, len(sentence.words), -1])
            stack.append(None)
            stack.extend(reversed(node.children))
    return sentence


class _Scorer:
    """EVALB's main loop state: totals come from the rows, errors count toward MAX_ERROR."""

    def __init__(self, params: EvalbParams):
        self.params = params
        self.rules = Rules(params)
        self.rows: list[SentenceScore] = []
        self.messages: list[str] = []
        self.labels: dict[str, Counter] = {
            key: Counter() for key in ("gold", "test", "matched", "matched_test")
        }
        self.errors = 0
        self.line = 0
        self.status = VALID

    def error(self, message: str) -> None:
        self.status = ERROR
        self.messages.append(f"{self.line} : {message}")
        self.errors += 1
        if self.errors - 1 > self.params.max_error:
            raise _Abort

    def run(
        self, gold: Iterable[Item], test: Iterable[Item], read: Callable[[Item], _Sentence]
    ) -> EvalbResult:
        test_items = iter(test)
        line = 0
        try:
            for line, gold_item in enumerate(gold, 1):
                self.line = line
                self.status = VALID
                gold_sentence = read(gold_item)
                test_item = next(test_items, _END)
                if test_item is _END:
                    self.error("Number of lines unmatch (too many lines in gold file)")
                    break
                self.score(gold_sentence, read(cast(Item, test_item)))
            else:
                self.line = line + 1
                if next(test_items, _END) is not _END:
                    self.error("Number of lines unmatch (too many lines in test file)")
        except _Abort:
            return self._result(aborted=True)
        return self._result(aborted=False)

    def _result(self, *, aborted: bool) -> EvalbResult:
        return EvalbResult(self.params, self.rows, self.messages, aborted, self.labels)

    def score(self, gold: _Sentence, test: _Sentence) -> None:
        """EVALB's calc_result() for one sentence."""
        params = self.params
        if not test.words:
            self.status = SKIP
            self.record(gold)
            return
        if len(gold.words) != len(test.words):
            if self.rules.quote_tags:
                self._fix_quotes(gold, test)
            if len(gold.words) != len(test.words):
                message = f"Length unmatch ({len(gold.words)}|{len(test.words)})"
                if params.count_length_mismatch_as_valid:
                    self.record(gold)  # before error() sets the status: a "valid" empty row
                if len(gold.words) > 1 or not params.ignore_one_word_length_mismatch:
                    self.error(message)
                    if not params.count_length_mismatch_as_valid:
                        self.record(gold)
                    return
        for gold_word, test_word in zip(gold.words, test.words):
            if not self.rules.same_word(gold_word, test_word):
                self.error(f"Words unmatch ({_shortened(gold_word)}|{_shortened(test_word)})")
                self.record(gold)
                return
        self._score_brackets(gold, test)

    def _score_brackets(self, gold: _Sentence, test: _Sentence) -> None:
        rules = self.rules
        gold_kept = kept_brackets(gold, rules)
        test_kept = kept_brackets(test, rules)
        # Greedy one-to-one matching in EVALB's order: each gold bracket takes the
        # first unmatched test bracket with the same span and an equal label.
        by_span: dict[tuple[int, int], list[int]] = defaultdict(list)
        for index, (_, start, end) in enumerate(test_kept):
            by_span[start, end].append(index)
        test_hit = [False] * len(test_kept)
        gold_hit = [False] * len(gold_kept)
        labeled = self.params.labeled
        for index, (label, start, end) in enumerate(gold_kept):
            for candidate in by_span.get((start, end), ()):
                if not test_hit[candidate] and (
                    not labeled or rules.same_label(label, test_kept[candidate][0])
                ):
                    test_hit[candidate] = gold_hit[index] = True
                    break
        # A test bracket crosses when some gold bracket overlaps it without nesting.
        gold_spans = {(start, end) for _, start, end in gold_kept}
        crossing = 0
        for (start, end), count in Counter((s, e) for _, s, e in test_kept).items():
            for gold_start, gold_end in gold_spans:
                if (gold_start < start < gold_end < end) or (start < gold_start < end < gold_end):
                    crossing += count
                    break
        words = len(gold.words)
        tags = sum(map(rules.same_tag, gold.tags, test.tags[:words]))
        self.record(
            gold,
            matched=sum(gold_hit),
            gold_brackets=len(gold_kept),
            test_brackets=len(test_kept),
            crossing=crossing,
            words=words,
            correct_tags=tags,
        )
        if self.status == VALID:
            labels = self.labels
            labels["gold"].update(label for label, _, _ in gold_kept)
            labels["test"].update(label for label, _, _ in test_kept)
            labels["matched"].update(b[0] for b, hit in zip(gold_kept, gold_hit) if hit)
            labels["matched_test"].update(b[0] for b, hit in zip(test_kept, test_hit) if hit)

    def _fix_quotes(self, gold: _Sentence, test: _Sentence) -> None:
        """EVALB's fix_quote(): reinsert a quote terminal deleted on one side only."""
        deleted = self.rules.deleted_tags
        for i, test_quote in enumerate(test.quotes):
            index = test_quote.index
            for j, gold_quote in enumerate(gold.quotes):
                if gold_quote.index != index or gold_quote.tag == test_quote.tag:
                    continue
                if gold_quote.tag in deleted and test_quote.tag not in deleted:
                    _reinsert(gold, gold_quote)
                    for later in gold.quotes[j:]:
                        later.index += 1
                elif test_quote.tag in deleted and gold_quote.tag not in deleted:
                    _reinsert(test, test_quote)
                    for later in test.quotes[i:]:
                        later.index += 1

    def record(
        self,
        gold: _Sentence,
        *,
        matched: int = 0,
        gold_brackets: int = 0,
        test_brackets: int = 0,
        crossing: int = 0,
        words: int = 0,
        correct_tags: int = 0,
    ) -> None:
        """EVALB's individual_result(): one row, with the status at the time of the call."""
        self.rows.append(
            SentenceScore(
                self.line,
                gold.length,
                self.status,
                matched,
                gold_brackets,
                test_brackets,
                crossing,
                words,
                correct_tags,
            )
        )


def kept_brackets(
    sentence: _Sentence, rules: Rules, *, cut_labels: bool = True
) -> list[tuple[str, int, int]]:
    """The brackets EVALB scores (after its massage_data()): ``(label, start, end)``.

    cut_labels (bool): give labels cut as EVALB compares them, else as written.
        Defaults to True.
    """
    kept = []
    for label, start, end in sentence.brackets:
        if start != end:
            cut = rules.cut(label)
            if cut not in rules.deleted_phrases:
                kept.append((cut if cut_labels else label, start, end))
    return kept


def _reinsert(sentence: _Sentence, quote: _Quote) -> None:
    # As EVALB's reinsert_term(): brackets opened after the quote shift right and
    # the brackets open around it grow by one word.
    sentence.words.insert(quote.index, quote.word)
    sentence.tags.insert(quote.index, quote.tag)
    for bracket in sentence.brackets[quote.bracket :]:
        bracket[1] += 1
        bracket[2] += 1
    for index in quote.open_brackets:
        sentence.brackets[index][2] += 1


_END = object()


def _shortened(word: str, limit: int = 60) -> str:
    # Messages quote words as EVALB does (unquoted), but never a huge one whole.
    return word if len(word) <= limit else word[: limit - 1] + "…"


def _split_lines(text: str) -> list[str]:
    # fgets() splits at "\n" only; a final "\n" does not start another line.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def score_lines(
    gold_lines: Iterable[str] | str, test_lines: Iterable[str] | str, params: ParamSpec = "collins"
) -> EvalbResult:
    """Score bracketed lines, one tree per line, exactly as EVALB scores two files.

    gold_lines (Iterable[str] | str): gold trees, one per line (a str is split at "\\n").
    test_lines (Iterable[str] | str): test trees, aligned with the gold lines. An
        empty line or ``(())`` is a skipped sentence (parser failure).
    params (EvalbParams | str | Path): parameter set, see ``get_params``. Defaults to "collins".
    RETURNS (EvalbResult): rows, totals and messages; ``aborted`` after too many errors.
    """
    if isinstance(gold_lines, str):
        gold_lines = _split_lines(gold_lines)
    if isinstance(test_lines, str):
        test_lines = _split_lines(test_lines)
    scorer = _Scorer(get_params(params))
    rules = scorer.rules
    return scorer.run(gold_lines, test_lines, lambda line: read_line(line, rules, scorer.error))


def _read_bytes_as_text(path: str | Path) -> str:
    # Bytes that are not UTF-8 survive as surrogates, so words compare byte for byte.
    return read_bytes(path).decode("utf-8", "surrogateescape").removeprefix("\ufeff")


def evaluate_files(
    gold_path: str | Path,
    test_path: str | Path,
    params: ParamSpec = "collins",
    *,
    encoding: str | None = None,
) -> EvalbResult:
    """Score a test file against a gold file: ``evalb -p PRM GOLD TEST``.

    gold_path (str | Path): gold trees, one per line.
    test_path (str | Path): test trees, one per line.
    params (EvalbParams | str | Path): parameter set, see ``get_params``. Defaults to "collins".
    encoding (str | None): the files' encoding; None compares words byte for byte, as
        EVALB does (UTF-8 text, other bytes kept as they are). A UTF-8 byte-order mark
        is ignored.
    RETURNS (EvalbResult): rows, totals and messages.
    RAISES TreebankFormatError (a ValueError): a file cannot be read or decoded
        (naming file, line and column). ValueError: unknown encoding.
    """
    gold = read_text(gold_path, encoding) if encoding else _read_bytes_as_text(gold_path)
    test = read_text(test_path, encoding) if encoding else _read_bytes_as_text(test_path)
    return score_lines(_split_lines(gold), _split_lines(test), params)


def score_trees(
    gold: Sequence[Tree], test: Sequence[Tree | None], params: ParamSpec = "collins"
) -> EvalbResult:
    """Score parsed trees against gold trees with EVALB semantics.

    The trees are read as EVALB reads their bracketed lines (except that a word
    may hold any character); the root counts as a bracket unless its label is
    deleted (readers root trees at "TOP", which "collins" and "spmrl" delete).

    gold (Sequence[Tree]): gold trees.
    test (Sequence[Tree | None]): parsed trees; None marks a parser failure (skipped).
    params (EvalbParams | str | Path): parameter set, see ``get_params``. Defaults to "collins".
    RETURNS (EvalbResult): rows, totals and messages.
    RAISES ValueError: gold and test differ in length.
    """
    if len(gold) != len(test):
        raise ValueError(Errors.E014.format(gold=len(gold), test=len(test)))
    scorer = _Scorer(get_params(params))
    rules = scorer.rules
    return scorer.run(gold, test, lambda tree: read_tree(tree, rules))
