"""The top-bracket heuristic of Parikh, Cohen & Xing (2014, section 4.1).

The spectral learner recovers an undirected tree; the top bracket (the split of
the sentence into its two top constituents) decides which edge becomes the
root. The paper's heuristic, over the sentence *with* its punctuation (its
only use of punctuation):

1. a comma, semicolon or colon at offset ``i`` with a verb before it and,
   after it, a noun followed by a verb: split at ``i`` (the rightmost such mark);
2. else the first verb that is not a participle, at ``i``: split before it;
3. else (no verb) split before the last word.

Verbs, participles and nouns are recognised in the tag sets of the bundled
treebanks (Penn, IcePaHC, Floresta, AnCora) and the universal tags; another tag
set falls back to rule 3.
"""

from __future__ import annotations

import re

from .sentences import Sentence

# (verb, participle, noun) patterns per tag set, tried in turn.
_VERB = re.compile(
    r"VB[DPZGN]?|MD"  # Penn
    r"|(VB|BE|HV|MD|DO|RD|VA|BA|HA|DA|RA)[A-Z]*(-[A-Z])?"  # IcePaHC
    r"|.*\+v-(fin|inf|pcp|ger)"  # Floresta (function+form)
    r"|v[mas].*"  # AnCora
    r"|VERB|AUX"  # universal
)
_PARTICIPLE = re.compile(
    r"VB[NG]"  # Penn
    r"|(VB|BE|HV|DO|RD)[NG]|VAN|BAN|HAN|DAN|RAN|VAG|BAG|HAG|DAG|RAG"  # IcePaHC
    r"|.*\+v-(pcp|ger)"  # Floresta
    r"|v[mas][pg].*"  # AnCora participles and gerunds
)
_NOUN = re.compile(
    r"NNP?S?"  # Penn
    r"|(N|NS|NPR|NPRS)-[NADG]"  # IcePaHC
    r"|.*\+(n|prop)"  # Floresta
    r"|n[cp].*"  # AnCora
    r"|NOUN|PROPN"  # universal
)
_CLAUSE_MARKS = frozenset({",", ";", ":"})


def top_split(sentence: Sentence) -> int:
    """The top split point over the content words (``1 <= split < n``) for ``n >= 2``.

    sentence (Sentence): a tagged sentence (without tags: rule 3).
    RETURNS (int): the content-word offset where the second top constituent starts.
    """
    n = len(sentence.content)
    if sentence.tags is None or n < 2:
        return max(n - 1, 0)
    # offset of each token among the content words (the next content word for punctuation)
    content_index = []
    count = 0
    content = set(sentence.content)
    for i in range(len(sentence.words)):
        content_index.append(count)
        count += i in content
    tags = sentence.tags
    is_verb = [i in content and bool(_VERB.fullmatch(tags[i])) for i in range(len(tags))]
    is_finite = [v and not _PARTICIPLE.fullmatch(tags[i]) for i, v in enumerate(is_verb)]
    is_noun = [i in content and bool(_NOUN.fullmatch(tags[i])) for i in range(len(tags))]
    for i in reversed(range(len(tags))):
        if i in content or sentence.words[i] not in _CLAUSE_MARKS:
            continue
        if not any(is_verb[:i]):
            continue
        first_noun = next((j for j in range(i + 1, len(tags)) if is_noun[j]), None)
        if first_noun is not None and any(is_verb[first_noun + 1 :]):
            return min(max(content_index[i], 1), n - 1)
    first_verb = next((i for i in range(len(tags)) if is_finite[i]), None)
    if first_verb is not None:
        return min(max(content_index[first_verb], 1), n - 1)
    return n - 1
