"""Function-label scores: brackets compared with their full labels (``NP-SBJ``).

EVALB cuts function tags off before matching. Here the same brackets (EVALB's
deletions and spans) are compared with the label split by the treebank's
``LabelScheme``: once with the full label (category and function tags,
indices dropped), and once for the function tags alone on the brackets whose
category and span match.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Errors
from ..trees.labels import LabelScheme, get_scheme
from ..trees.tree import Tree
from .evalb import Rules, kept_brackets, read_tree
from .params import EvalbParams, get_params


@dataclass(frozen=True)
class PRF:
    """Matched, gold and test counts with recall, precision and F1 in % (0.0 when undefined)."""

    matched: int = 0
    gold: int = 0
    test: int = 0

    @property
    def recall(self) -> float:
        return 100.0 * self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return 100.0 * self.matched / self.test if self.test else 0.0

    @property
    def fscore(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0

    def __add__(self, other: PRF) -> PRF:
        return PRF(self.matched + other.matched, self.gold + other.gold, self.test + other.test)

    def to_dict(self) -> dict[str, int | float]:
        return {
            "matched": self.matched,
            "gold": self.gold,
            "test": self.test,
            "recall": self.recall,
            "precision": self.precision,
            "fscore": self.fscore,
        }


@dataclass(frozen=True)
class FunctionScores:
    """Full-label and function-tag scores.

    sentences (int): sentence pairs given.
    scored_sentences (int): pairs scored; the others have no parse or different words.
    labelled (PRF): brackets matched on span and full label (``NP-SBJ``, indices dropped).
    functions (PRF): function tags, counted on the brackets whose category and span
        match (a tag is matched when both brackets of a pair carry it).
    per_function (dict[str, PRF]): the same per function tag.
    """

    sentences: int = 0
    scored_sentences: int = 0
    labelled: PRF = PRF()
    functions: PRF = PRF()
    per_function: dict[str, PRF] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "sentences": self.sentences,
            "scored_sentences": self.scored_sentences,
            "labelled": self.labelled.to_dict(),
            "functions": self.functions.to_dict(),
            "per_function": {tag: prf.to_dict() for tag, prf in self.per_function.items()},
        }


def function_scores(
    gold: Sequence[Tree],
    test: Sequence[Tree | None],
    scheme: str | LabelScheme = "penn",
    params: EvalbParams | str | Path = "collins",
) -> FunctionScores:
    """Score full labels and function tags of parsed trees against gold trees.

    Brackets, deletions and spans are EVALB's (see ``score_trees``); pairs whose
    words differ after deletion, and parser failures, are not scored. Brackets
    with the same category and span are paired in pre-order (outermost first).

    gold (Sequence[Tree]): gold trees.
    test (Sequence[Tree | None]): parsed trees; None marks a parser failure.
    scheme (str | LabelScheme): how labels split into category and functions
        ("penn", "floresta", "cess"). Defaults to "penn".
    params (EvalbParams | str | Path): EVALB parameters. Defaults to "collins".
    RETURNS (FunctionScores): the scores.
    RAISES ValueError: gold and test differ in length.
    """
    if len(gold) != len(test):
        raise ValueError(Errors.E014.format(gold=len(gold), test=len(test)))
    scheme = get_scheme(scheme)
    rules = Rules(get_params(params))
    labelled: Counter[str] = Counter()
    tags: dict[str, Counter] = defaultdict(Counter)
    scored = 0
    for gold_tree, test_tree in zip(gold, test):
        if test_tree is None:
            continue
        gold_sentence = read_tree(gold_tree, rules)
        test_sentence = read_tree(test_tree, rules)
        if len(gold_sentence.words) != len(test_sentence.words) or not all(
            map(rules.same_word, gold_sentence.words, test_sentence.words)
        ):
            continue
        scored += 1
        gold_brackets = _split(kept_brackets(gold_sentence, rules, cut_labels=False), scheme)
        test_brackets = _split(kept_brackets(test_sentence, rules, cut_labels=False), scheme)
        _count_labelled(gold_brackets, test_brackets, labelled)
        _count_functions(gold_brackets, test_brackets, tags)
    per_function = {
        tag: PRF(tags[tag]["matched"], tags[tag]["gold"], tags[tag]["test"])
        for tag in sorted(tags, key=lambda tag: (-tags[tag]["gold"], tag))
    }
    return FunctionScores(
        sentences=len(gold),
        scored_sentences=scored,
        labelled=PRF(labelled["matched"], labelled["gold"], labelled["test"]),
        functions=sum(per_function.values(), PRF()),
        per_function=per_function,
    )


def _split(brackets, scheme: LabelScheme) -> list[tuple[str, tuple[str, ...], str, int, int]]:
    """``(category, functions, full label, start, end)`` per bracket."""
    out = []
    for label, start, end in brackets:
        parsed = scheme.split(label)
        full = scheme.join(parsed.category, parsed.functions)
        out.append((parsed.category, parsed.functions, full, start, end))
    return out


def _count_labelled(gold, test, counts: Counter) -> None:
    gold_keys = Counter((full, start, end) for _, _, full, start, end in gold)
    test_keys = Counter((full, start, end) for _, _, full, start, end in test)
    counts["gold"] += len(gold)
    counts["test"] += len(test)
    counts["matched"] += sum((gold_keys & test_keys).values())


def _count_functions(gold, test, tags: dict[str, Counter]) -> None:
    test_functions: dict[tuple[str, int, int], list[tuple[str, ...]]] = defaultdict(list)
    for category, functions, _, start, end in test:
        test_functions[category, start, end].append(functions)
    for category, functions, _, start, end in gold:
        candidates = test_functions.get((category, start, end))
        if not candidates:
            continue
        gold_tags = Counter(functions)
        test_tags = Counter(candidates.pop(0))
        for tag, count in gold_tags.items():
            tags[tag]["gold"] += count
        for tag, count in test_tags.items():
            tags[tag]["test"] += count
        for tag, count in (gold_tags & test_tags).items():
            tags[tag]["matched"] += count
