"""Parse a gold set and score it: the one place where a parser meets EVALB.

``score_parses`` scores parsed trees against gold trees twice: categories
(EVALB's own figures on trees whose function tags the label scheme strips, so
Floresta's ``SUBJ:np`` counts as ``np``) and full labels with function tags
(``function_scores``). ``evaluate`` parses the gold words
with a parser first, timing it. The CLI ``test``, the spaCy scorer and the
benchmarks use them, so every figure the project reports comes from here.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import Errors
from ..trees.normalize import strip_functions
from ..trees.tree import Tree
from .evalb import ParamSpec, score_trees
from .functions import FunctionScores, function_scores
from .params import get_params
from .report import EvalbResult


class TreeParser(Protocol):
    """What ``evaluate`` needs of a parser (``spacy_lpcfg.decode.Parser`` is one)."""

    decoder: str
    fallbacks: Counter

    def parse_all(self, sentences, *, progress: bool = False, total: int | None = None): ...


@dataclass(frozen=True)
class Scores:
    """Scores of parsed trees against gold trees.

    evalb (EvalbResult): EVALB's result (rows, summary, per-label tables) on
        categories: function tags stripped from gold and parses by the label scheme.
    functions (FunctionScores): brackets with full labels (``NP-SBJ``) and
        function tags.
    parses (list[Tree | None]): the parsed trees (None: the parser gave none).
    seconds (float | None): parsing time (``evaluate`` only), kernels compiled before.
    fallbacks (Counter): parser fallbacks by reason (``evaluate`` only).
    decoder (str | None): the decoder the parser used (``evaluate`` only).
    dual (tuple[int, int, int] | None): dual decomposition (``evaluate`` only):
        sentences, certificates (members agreed), iterations in all; None otherwise.
    """

    evalb: EvalbResult
    functions: FunctionScores
    parses: list[Tree | None]
    seconds: float | None = None
    fallbacks: Counter = field(default_factory=Counter)
    decoder: str | None = None
    dual: tuple[int, int, int] | None = None

    @property
    def fscore(self) -> float:
        """Labelled bracketing F1 (EVALB's, 0-100)."""
        return self.evalb.summary().fscore

    @property
    def function_fscore(self) -> float:
        """Labelled bracketing F1 with full labels, function tags included (0-100)."""
        return self.functions.labelled.fscore

    def to_dict(self) -> dict[str, Any]:
        """Flat figures: EVALB's summary keys (``bracketing_fscore``...), the full-label
        and function-tag scores, and, after ``evaluate``, speed and fallbacks."""
        figures: dict[str, Any] = {
            key: value
            for key, value in self.evalb.to_dict().items()
            if not isinstance(value, (dict, list))
        }
        for name, prf in (
            ("labelled_function", self.functions.labelled),
            ("function_tag", self.functions.functions),
        ):
            figures.update(
                {
                    f"{name}_precision": round(prf.precision, 2),
                    f"{name}_recall": round(prf.recall, 2),
                    f"{name}_fscore": round(prf.fscore, 2),
                }
            )
        if self.seconds is not None:
            sentences = len(self.parses)
            figures.update(
                seconds=round(self.seconds, 3),
                sentences_per_second=round(sentences / self.seconds, 2) if self.seconds else None,
                fallbacks=sum(self.fallbacks.values()),
                fallback_reasons=dict(self.fallbacks),
                decoder=self.decoder,
            )
        if self.dual is not None:
            sentences, certificates, iterations = self.dual
            figures.update(
                dual_certificates=round(100 * certificates / sentences, 2),
                dual_mean_iterations=round(iterations / sentences, 2),
            )
        return figures


def score_parses(
    gold: Sequence[Tree],
    parses: Sequence[Tree | None],
    *,
    scheme: str = "penn",
    params: ParamSpec = "collins",
) -> Scores:
    """Score parsed trees against gold trees (see ``Scores``).

    scheme (str): how labels split into category and function tags ("penn",
        "floresta", "cess"). Defaults to "penn".
    params (EvalbParams | str | Path): EVALB parameters. Defaults to "collins".
    RAISES ValueError: gold and parses differ in length, or bad parameters.
    """
    if len(gold) != len(parses):
        raise ValueError(Errors.E014.format(gold=len(gold), test=len(parses)))
    params = get_params(params)
    categories = [strip_functions(tree, scheme) for tree in gold]
    parsed = [None if tree is None else strip_functions(tree, scheme) for tree in parses]
    return Scores(
        evalb=score_trees(categories, parsed, params),
        functions=function_scores(gold, parses, scheme, params),
        parses=list(parses),
    )


def f1_scorer(
    make_parser: Callable[[Any], TreeParser], scheme: str = "penn"
) -> Callable[[Any, Sequence[Tree]], float]:
    """A model's EVALB F1 on dev trees (what split-merge's ``dev_scorer`` takes).

    make_parser (Callable): builds the parser of a model (``spacy_lpcfg.decode.Parser``).
    scheme (str): the dev trees' label scheme. Defaults to "penn".
    RETURNS (Callable[[ParsingModel, Sequence[Tree]], float]): the scorer.
    """

    def score(model: Any, dev: Sequence[Tree]) -> float:
        return evaluate(make_parser(model), dev, scheme=scheme).fscore

    return score


def evaluate(
    parser: TreeParser,
    gold: Sequence[Tree],
    *,
    scheme: str = "penn",
    params: ParamSpec = "collins",
    progress: bool = False,
) -> Scores:
    """Parse the words of gold trees (no gold tags) and score the parses.

    parser (TreeParser): a ``spacy_lpcfg.decode.Parser`` (or anything with its
        ``parse_all``, ``decoder`` and ``fallbacks``).
    gold (Sequence[Tree]): gold trees, at least one.
    scheme (str): the gold trees' label scheme. Defaults to "penn".
    params (EvalbParams | str | Path): EVALB parameters. Defaults to "collins".
    progress (bool): a tqdm bar on stderr while parsing.
    RETURNS (Scores): the scores, parses, parsing time and fallbacks. The clock
        starts after one sentence is parsed (numba kernels compile on first use).
    """
    if not gold:
        raise ValueError(Errors.E025)
    params = get_params(params)  # bad parameters fail before the parsing
    parser.parse_all([gold[0].words()])  # compile the kernels before the clock starts
    parser.fallbacks.clear()
    start = time.perf_counter()
    parses = parser.parse_all((tree.words() for tree in gold), progress=progress, total=len(gold))
    trees = [parse.tree for parse in parses]
    seconds = time.perf_counter() - start
    agreed = [parse for parse in parses if getattr(parse, "certificate", None) is not None]
    dual = None
    if agreed:
        dual = (
            len(agreed),
            sum(bool(parse.certificate) for parse in agreed),
            sum(parse.iterations for parse in agreed),
        )
    scores = score_parses(gold, trees, scheme=scheme, params=params)
    return Scores(
        evalb=scores.evalb,
        functions=scores.functions,
        parses=trees,
        seconds=seconds,
        fallbacks=Counter(parser.fallbacks),
        decoder=parser.decoder,
        dual=dual,
    )
