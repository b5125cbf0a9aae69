"""Unlabelled bracketing scores in the convention of unsupervised parsing.

The field (Klein & Manning 2002, and Parikh, Cohen & Xing 2014 after them)
scores induced bracketings as follows, which this module implements:

* punctuation and empty elements are removed from both trees first, and the
  brackets are recomputed over the remaining words (a bracket left with no word
  disappears, one left with the same words as another merges with it);
* only sentences of at most ``max_length`` remaining words are scored (WSJ10:
  10; also 40);
* brackets are unlabelled spans, as a set (a unary chain is one bracket), and
  neither the span of the whole sentence nor single words count: every binary
  tree has them, so they would only inflate the figures;
* precision / recall / F1 are given both micro-averaged (brackets summed over
  the corpus) and per sentence averaged. A sentence with no bracket in either
  tree (at most two words) is left out of the sentence average, where it would
  count as a perfect score for any parser.

Punctuation is recognised by the gold tag, so that it works across the bundled
treebanks: the Penn tags ``# $ '' , -LRB- -RRB- . : ```` (the usual WSJ10
list), any tag without a letter or digit (the tags of IcePaHC and Floresta are
the punctuation marks themselves) and the ``F...`` tags of AnCora (CESS-ESP).

Each predicted tree must be over its gold tree's words, checked as EVALB checks
them: the same number of words, and the same word wherever the gold word is
kept (punctuation words, removed, are not compared); a control character written
escaped (``-U+001B-``, as ``Tree.pformat`` writes it) is the character itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import Errors, excerpt
from ..trees.brackets import unescape_controls
from ..trees.tree import EMPTY_TAG, Tree

PTB_PUNCTUATION_TAGS = frozenset({"#", "$", "''", ",", "-LRB-", "-RRB-", ".", ":", "``"})
_ANCORA_PUNCTUATION = re.compile(r"F[a-z]{1,3}")


def is_punctuation_tag(tag: str) -> bool:
    """Whether a POS tag marks punctuation (or an empty element) in the bundled treebanks.

    tag (str): a POS tag (Penn, IcePaHC, Floresta or AnCora notation).
    RETURNS (bool): True for punctuation and empty elements.
    """
    if tag in PTB_PUNCTUATION_TAGS or tag == EMPTY_TAG:
        return True
    if not any(ch.isalnum() for ch in tag):
        return True
    return _ANCORA_PUNCTUATION.fullmatch(tag) is not None


def content_brackets(tree: Tree, keep: Sequence[bool]) -> tuple[int, set[tuple[int, int]]]:
    """The unlabelled brackets of a tree over its kept words.

    tree (Tree): any tree (its root and preterminals are not brackets).
    keep (Sequence[bool]): per word of the tree, whether it stays (not punctuation).
    RETURNS (tuple[int, set[tuple[int, int]]]): the number of kept words and the
        half-open spans over kept-word offsets of at least two words, without
        the span of the whole sentence.
    """
    # new_index[i]: the kept-word offset of the first kept word at or after word i
    new_index = [0]
    for flag in keep:
        new_index.append(new_index[-1] + (1 if flag else 0))
    n_kept = new_index[-1]
    brackets = set()
    for _, start, end in tree.spans(include_root=False):
        first, last = new_index[start], new_index[end]
        if last - first >= 2 and (first, last) != (0, n_kept):
            brackets.add((first, last))
    return n_kept, brackets


def _check_words(
    number: int, gold: Sequence[str], predicted: Sequence[str], keep: Sequence[bool]
) -> None:
    """Check that a predicted tree is over the gold tree's words, as EVALB checks them.

    number (int): the sentence's number (from 1), for the message.
    gold (Sequence[str]): the gold tree's words.
    predicted (Sequence[str]): the predicted tree's words.
    keep (Sequence[bool]): per gold word, whether it is compared (not punctuation).
    RAISES ValueError: another number of words, or another kept word; the message
        quotes a few words of each tree from the first difference.
    """
    if len(predicted) != len(gold):
        detail = f"{len(gold)} gold words but {len(predicted)} predicted"
        raise ValueError(Errors.E026.format(number=number, detail=detail))
    for position, (kept, gold_word, word) in enumerate(zip(keep, gold, predicted)):
        if kept and gold_word != word and unescape_controls(gold_word) != unescape_controls(word):
            detail = (
                f"from word {position + 1}, gold words {_words_from(gold, keep, position)} "
                f"but predicted {_words_from(predicted, keep, position)}"
            )
            raise ValueError(Errors.E026.format(number=number, detail=detail))


def _words_from(words: Sequence[str], keep: Sequence[bool], position: int) -> str:
    # The compared words from ``position`` on, cut short: enough to recognise the sentence.
    text = " ".join(word for word, kept in zip(words[position:], keep[position:]) if kept)
    return excerpt(text, 40)


@dataclass(frozen=True)
class UnlabeledScores:
    """Unlabelled bracketing scores over the sentences within the length bound.

    precision, recall, f1 (float): micro-averaged, in percent.
    sentence_precision, sentence_recall, sentence_f1 (float): averages of the
        per-sentence figures, in percent, over sentences with a bracket.
    matched, gold, predicted (int): bracket counts summed over the corpus.
    n_sentences (int): sentences scored (within ``max_length``).
    n_averaged (int): sentences in the per-sentence averages.
    """

    precision: float
    recall: float
    f1: float
    sentence_precision: float
    sentence_recall: float
    sentence_f1: float
    matched: int
    gold: int
    predicted: int
    n_sentences: int
    n_averaged: int


def _prf(matched: int, gold: int, predicted: int) -> tuple[float, float, float]:
    precision = matched / predicted if predicted else 0.0
    recall = matched / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return 100 * precision, 100 * recall, 100 * f1


def unlabeled_scores(
    gold: Sequence[Tree],
    predicted: Sequence[Tree],
    *,
    max_length: int | None = 10,
    is_punctuation: Callable[[str], bool] = is_punctuation_tag,
) -> UnlabeledScores:
    """Score predicted bracketings against gold trees (see the module docstring).

    gold (Sequence[Tree]): the gold trees; their tags decide what is punctuation.
    predicted (Sequence[Tree]): the predicted trees, over the same words.
    max_length (int | None): longest sentence scored, counted without punctuation
        (None: all).
    is_punctuation (Callable[[str], bool]): whether a gold tag is removed.
    RETURNS (UnlabeledScores): the scores.
    RAISES ValueError: the lists differ in length, a pair of trees in its words (naming
        the sentence, from 1), or max_length is below 1.
    """
    if len(gold) != len(predicted):
        raise ValueError(Errors.E014.format(gold=len(gold), test=len(predicted)))
    if max_length is not None and max_length < 1:
        raise ValueError(Errors.E027.format(value=max_length))
    matched = n_gold = n_predicted = n_sentences = 0
    sums = [0.0, 0.0, 0.0]
    n_averaged = 0
    for number, (gold_tree, test_tree) in enumerate(zip(gold, predicted), 1):
        keep = [not is_punctuation(tag) for tag in gold_tree.tags()]
        _check_words(number, gold_tree.words(), test_tree.words(), keep)
        n_kept, gold_brackets = content_brackets(gold_tree, keep)
        if n_kept == 0 or (max_length is not None and n_kept > max_length):
            continue
        _, test_brackets = content_brackets(test_tree, keep)
        common = len(gold_brackets & test_brackets)
        matched += common
        n_gold += len(gold_brackets)
        n_predicted += len(test_brackets)
        n_sentences += 1
        if gold_brackets or test_brackets:
            for slot, value in enumerate(_prf(common, len(gold_brackets), len(test_brackets))):
                sums[slot] += value
            n_averaged += 1
    precision, recall, f1 = _prf(matched, n_gold, n_predicted)
    sentence_precision, sentence_recall, sentence_f1 = (
        value / n_averaged if n_averaged else 0.0 for value in sums
    )
    return UnlabeledScores(
        precision=precision,
        recall=recall,
        f1=f1,
        sentence_precision=sentence_precision,
        sentence_recall=sentence_recall,
        sentence_f1=sentence_f1,
        matched=matched,
        gold=n_gold,
        predicted=n_predicted,
        n_sentences=n_sentences,
        n_averaged=n_averaged,
    )
