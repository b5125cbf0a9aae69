"""Evaluation with EVALB semantics: bracket scores, tagging, function labels.

``evaluate(parser, gold)`` parses the words of gold trees and scores the parses
(``score_parses``: categories and full labels with function tags);
``score_trees(gold, test)`` scores in-memory trees, ``evaluate_files`` and
``score_lines`` bracketed files as EVALB does (``"collins"`` or ``"spmrl"``
parameters, or a ``.prm`` file); ``params.replace(labeled=False)`` gives
unlabelled scores.
"""

from .evalb import evaluate_files, score_lines, score_trees
from .functions import PRF, FunctionScores, function_scores
from .params import EvalbParams, get_params
from .parsing import Scores, evaluate, score_parses
from .report import EvalbResult, LabelScore, LengthScore, SentenceScore, Summary

__all__ = [
    "PRF",
    "EvalbParams",
    "EvalbResult",
    "FunctionScores",
    "LabelScore",
    "LengthScore",
    "SentenceScore",
    "Scores",
    "Summary",
    "evaluate",
    "evaluate_files",
    "function_scores",
    "get_params",
    "score_lines",
    "score_parses",
    "score_trees",
]
