"""EVALB results: per-sentence rows, summary sections, extra tables and EVALB's text output.

Figures are percentages (0-100) computed as EVALB computes them; ``to_dict``
rounds them to the two decimals EVALB prints. An F-measure with recall and
precision both zero is NaN, printed ``-nan`` as by EVALB.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .params import EvalbParams

VALID, ERROR, SKIP = 0, 1, 2  # EVALB's sentence status codes

_HEADER = (
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n"
)
_RULE = "=" * 76 + "\n"


def _ratio(part: int, whole: int, scale: float = 100.0) -> float:
    return scale * part / whole if whole > 0 else 0.0


def _fscore(precision: float, recall: float) -> float:
    # EVALB divides 0 by 0 here and prints "-nan"; keep the NaN.
    total = precision + recall
    return 2 * precision * recall / total if total else math.nan


def _printed(value: float) -> float:
    """The value as EVALB prints it ("%6.2f"), back as a float."""
    return value if math.isnan(value) else float(f"{value:.2f}")


def printable(text: str) -> str:
    """``text`` as UTF-8 output and JSON can hold it. ``evaluate_files`` keeps bytes
    that are not UTF-8 as lone surrogates (to compare words byte for byte, as EVALB
    does); those are written ``\\xNN``, other lone surrogates ``\\udNNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _f62(value: float) -> str:
    return "  -nan" if math.isnan(value) else f"{value:6.2f}"


@dataclass(frozen=True, slots=True)
class SentenceScore:
    """One row of EVALB's per-sentence table.

    id (int): line number. length (int): gold length (for the cutoff).
    status (int): 0 valid, 1 error, 2 skip. The other fields are bracket, crossing,
    word and tag counts (all 0 for error and skip rows).
    """

    id: int
    length: int
    status: int
    matched: int
    gold_brackets: int
    test_brackets: int
    crossing: int
    words: int
    correct_tags: int

    @property
    def recall(self) -> float:
        return _ratio(self.matched, self.gold_brackets)

    @property
    def precision(self) -> float:
        return _ratio(self.matched, self.test_brackets)

    @property
    def tagging_accuracy(self) -> float:
        return _ratio(self.correct_tags, self.words)

    @property
    def complete(self) -> bool:
        """EVALB's complete match: gold, test and matched bracket counts are equal."""
        return self.gold_brackets == self.test_brackets == self.matched

    @property
    def exact(self) -> bool:
        """Complete bracket match and every tag correct."""
        return self.complete and self.correct_tags == self.words

    def format(self) -> str:
        return (
            f"{self.id:4d}  {self.length:3d}    {self.status}  "
            f"{self.recall:6.2f} {self.precision:6.2f}   {self.matched:3d}    "
            f"{self.gold_brackets:3d}  {self.test_brackets:3d}    {self.crossing:3d}"
            f"   {self.words:4d}  {self.correct_tags:4d}   {self.tagging_accuracy:6.2f}\n"
        )


@dataclass(frozen=True)
class Summary:
    """The totals of a set of rows: one section of EVALB's summary.

    Error and skip sentences count only in ``sentences``, ``error_sentences`` and
    ``skip_sentences``; every other count is over valid sentences.
    """

    sentences: int
    error_sentences: int
    skip_sentences: int
    matched: int
    gold_brackets: int
    test_brackets: int
    crossing: int
    words: int
    correct_tags: int
    complete_sentences: int
    exact_sentences: int
    no_crossing_sentences: int
    two_or_less_crossing_sentences: int

    @classmethod
    def from_rows(cls, rows: Iterable[SentenceScore]) -> Summary:
        counts: Counter[str] = Counter()
        for row in rows:
            counts["sentences"] += 1
            if row.status == ERROR:
                counts["error_sentences"] += 1
            elif row.status == SKIP:
                counts["skip_sentences"] += 1
            else:
                counts["matched"] += row.matched
                counts["gold_brackets"] += row.gold_brackets
                counts["test_brackets"] += row.test_brackets
                counts["crossing"] += row.crossing
                counts["words"] += row.words
                counts["correct_tags"] += row.correct_tags
                counts["complete_sentences"] += row.complete
                counts["exact_sentences"] += row.exact
                counts["no_crossing_sentences"] += row.crossing == 0
                counts["two_or_less_crossing_sentences"] += row.crossing <= 2
        return cls(**{name: counts[name] for name in cls.__dataclass_fields__})

    @property
    def valid_sentences(self) -> int:
        return self.sentences - self.error_sentences - self.skip_sentences

    @property
    def recall(self) -> float:
        return _ratio(self.matched, self.gold_brackets)

    @property
    def precision(self) -> float:
        return _ratio(self.matched, self.test_brackets)

    @property
    def fscore(self) -> float:
        """NaN when recall and precision are both 0 (EVALB prints ``-nan``)."""
        return _fscore(self.precision, self.recall)

    @property
    def complete_match(self) -> float:
        return _ratio(self.complete_sentences, self.valid_sentences)

    @property
    def exact_match(self) -> float:
        """% of valid sentences with complete bracket match and all tags right (not in EVALB)."""
        return _ratio(self.exact_sentences, self.valid_sentences)

    @property
    def average_crossing(self) -> float:
        return _ratio(self.crossing, self.valid_sentences, scale=1.0)

    @property
    def no_crossing(self) -> float:
        return _ratio(self.no_crossing_sentences, self.valid_sentences)

    @property
    def two_or_less_crossing(self) -> float:
        return _ratio(self.two_or_less_crossing_sentences, self.valid_sentences)

    @property
    def tagging_accuracy(self) -> float:
        return _ratio(self.correct_tags, self.words)

    def to_dict(self, suffix: str = "") -> dict[str, int | float]:
        """EVALB's summary figures as printed, keys ending in ``suffix``."""
        figures = {
            "sentences": self.sentences,
            "error_sentences": self.error_sentences,
            "skip_sentences": self.skip_sentences,
            "valid_sentences": self.valid_sentences,
            "bracketing_recall": _printed(self.recall),
            "bracketing_precision": _printed(self.precision),
            "bracketing_fscore": _printed(self.fscore),
            "complete_match": _printed(self.complete_match),
            "average_crossing": _printed(self.average_crossing),
            "no_crossing": _printed(self.no_crossing),
            "two_or_less_crossing": _printed(self.two_or_less_crossing),
            "tagging_accuracy": _printed(self.tagging_accuracy),
            "exact_match": _printed(self.exact_match),
        }
        return {key + suffix: value for key, value in figures.items()}

    def format(self, title: str) -> str:
        lines = [
            f"\n-- {title} --",
            f"Number of sentence        = {self.sentences:6d}",
            f"Number of Error sentence  = {self.error_sentences:6d}",
            f"Number of Skip  sentence  = {self.skip_sentences:6d}",
            f"Number of Valid sentence  = {self.valid_sentences:6d}",
            f"Bracketing Recall         = {_f62(self.recall)}",
            f"Bracketing Precision      = {_f62(self.precision)}",
            f"Bracketing FMeasure       = {_f62(self.fscore)}",
            f"Complete match            = {_f62(self.complete_match)}",
            f"Average crossing          = {_f62(self.average_crossing)}",
            f"No crossing               = {_f62(self.no_crossing)}",
            f"2 or less crossing        = {_f62(self.two_or_less_crossing)}",
            f"Tagging accuracy          = {_f62(self.tagging_accuracy)}",
        ]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class LabelScore:
    """Bracket counts and P/R/F of one (cut) label over valid sentences.

    matched counts the gold brackets of this label that were matched (for recall);
    matched_test the test brackets of this label that were matched (for precision).
    They differ only when EQ_LABEL pairs match brackets across labels. Scores with
    a zero denominator are 0.0.
    """

    label: str
    gold: int
    test: int
    matched: int
    matched_test: int

    @property
    def recall(self) -> float:
        return _ratio(self.matched, self.gold)

    @property
    def precision(self) -> float:
        return _ratio(self.matched_test, self.test)

    @property
    def fscore(self) -> float:
        score = _fscore(self.precision, self.recall)
        return 0.0 if math.isnan(score) else score

    def to_dict(self) -> dict[str, int | float]:
        return {
            "gold": self.gold,
            "test": self.test,
            "matched": self.matched,
            "recall": self.recall,
            "precision": self.precision,
            "fscore": self.fscore,
        }


@dataclass(frozen=True)
class LengthScore:
    """The summary of the sentences whose EVALB length is in ``[min_length, max_length]``.

    ``to_dict`` gives unrounded figures, with an F-measure of 0.0 where EVALB's is NaN.
    """

    min_length: int
    max_length: int
    summary: Summary

    def to_dict(self) -> dict[str, int | float]:
        summary = self.summary
        return {
            "min_length": self.min_length,
            "max_length": self.max_length,
            "sentences": summary.sentences,
            "valid_sentences": summary.valid_sentences,
            "bracketing_recall": summary.recall,
            "bracketing_precision": summary.precision,
            "bracketing_fscore": 0.0 if math.isnan(summary.fscore) else summary.fscore,
            "complete_match": summary.complete_match,
            "exact_match": summary.exact_match,
        }


class EvalbResult:
    """The outcome of an EVALB run.

    params (EvalbParams): the parameters used.
    rows (list[SentenceScore]): EVALB's per-sentence table.
    messages (list[str]): EVALB's stderr lines (``"2 : Length unmatch (2|3)"``).
    aborted (bool): EVALB stopped after more than MAX_ERROR errors (exit status 1,
        no summary in ``format()``); the summaries then cover the rows before the stop.
    """

    def __init__(
        self,
        params: EvalbParams,
        rows: list[SentenceScore],
        messages: list[str],
        aborted: bool,
        label_counts: dict[str, Counter],
    ):
        self.params = params
        self.rows = rows
        self.messages = messages
        self.aborted = aborted
        self._label_counts = label_counts

    def __repr__(self) -> str:
        summary = self.summary()
        return (
            f"EvalbResult(sentences={summary.sentences}, fscore={_printed(summary.fscore)}, "
            f"aborted={self.aborted})"
        )

    @property
    def exit_status(self) -> int:
        """EVALB's exit status: 1 when it aborted, else 0."""
        return 1 if self.aborted else 0

    def summary(self, cutoff: bool = False) -> Summary:
        """The "-- All --" section, or with ``cutoff`` the "-- len<=CUTOFF_LEN --" one."""
        if not cutoff:
            return Summary.from_rows(self.rows)
        limit = self.params.cutoff_len
        return Summary.from_rows(row for row in self.rows if row.length <= limit)

    def label_scores(self) -> dict[str, LabelScore]:
        """Per-label bracket scores (labels cut as EVALB cuts them), most frequent first."""
        counts = self._label_counts
        labels = set(counts["gold"]) | set(counts["test"])
        ordered = sorted(labels, key=lambda label: (-counts["gold"][label], label))
        return {
            label: LabelScore(
                label,
                counts["gold"][label],
                counts["test"][label],
                counts["matched"][label],
                counts["matched_test"][label],
            )
            for label in ordered
        }

    def length_scores(self, width: int = 10) -> list[LengthScore]:
        """Summaries per length bucket ``1-width``, ``width+1-2*width``, ... (non-empty ones)."""
        buckets: dict[int, list[SentenceScore]] = {}
        for row in self.rows:
            buckets.setdefault(max(row.length - 1, 0) // width, []).append(row)
        return [
            LengthScore(k * width + 1, (k + 1) * width, Summary.from_rows(buckets[k]))
            for k in sorted(buckets)
        ]

    def to_dict(self) -> dict:
        """EVALB's figures as printed, for all sentences and (suffix ``_CUTOFF_LEN``,
        ``_40`` with "collins", ``_70`` with "spmrl") for the length cutoff; plus
        ``exact_match``, ``cutoff_len``, ``aborted``, ``per_label`` and ``per_length``.
        An F-measure EVALB prints as ``-nan`` is ``float("nan")``.
        """
        out: dict = {}
        out.update(self.summary().to_dict())
        out.update(self.summary(cutoff=True).to_dict(f"_{self.params.cutoff_len}"))
        out["cutoff_len"] = self.params.cutoff_len
        out["aborted"] = self.aborted
        out["per_label"] = {
            printable(label): s.to_dict() for label, s in self.label_scores().items()
        }
        out["per_length"] = [bucket.to_dict() for bucket in self.length_scores()]
        return out

    def format(self) -> str:
        """EVALB's stdout, byte for byte."""
        parts = [_HEADER, _RULE]
        parts.extend(row.format() for row in self.rows)
        if self.aborted:
            return "".join(parts)
        total = self.summary()
        parts.append(_RULE)
        if total.gold_brackets > 0 and total.test_brackets > 0:
            parts.append(
                f"                {total.recall:6.2f} {total.precision:6.2f} "
                f"{total.matched:6d} {total.gold_brackets:5d} {total.test_brackets:5d}  "
                f"{total.crossing:5d}"
            )
        parts.append(
            f"  {total.words:5d} {total.correct_tags:5d}   {total.tagging_accuracy:6.2f}\n"
        )
        parts.append("=== Summary ===\n")
        parts.append(total.format("All"))
        parts.append(self.summary(cutoff=True).format(f"len<={self.params.cutoff_len}"))
        return "".join(parts)

    def format_messages(self) -> str:
        """EVALB's stderr."""
        return "".join(message + "\n" for message in self.messages)
