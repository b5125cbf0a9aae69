"""A most-frequent-tag tagger, for sentences given without tags at parse time.

The tag-based bracketers read the treebank's POS tags in training (the field's
convention); a sentence given as plain words at parse time is tagged with the
tag each word had most often in training, else the most frequent tag of words
with the same three-letter suffix, else the most frequent tag overall. Crude,
but it is all a tag-sequence model can use without a tagger in the pipeline.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence


class MostFrequentTagger:
    """Word -> most frequent training tag, with suffix and global fallbacks."""

    def __init__(self, tagged: Iterable[tuple[Sequence[str], Sequence[str]]]):
        """tagged (Iterable[tuple[Sequence[str], Sequence[str]]]): (words, tags) pairs."""
        by_word: dict[str, Counter] = defaultdict(Counter)
        by_suffix: dict[str, Counter] = defaultdict(Counter)
        overall: Counter = Counter()
        for words, tags in tagged:
            for word, tag in zip(words, tags):
                by_word[word.lower()][tag] += 1
                by_suffix[word.lower()[-3:]][tag] += 1
                overall[tag] += 1
        self.word_tags = {word: c.most_common(1)[0][0] for word, c in by_word.items()}
        self.suffix_tags = {suffix: c.most_common(1)[0][0] for suffix, c in by_suffix.items()}
        self.default_tag = overall.most_common(1)[0][0] if overall else None

    def tag(self, words: Sequence[str]) -> list[str | None]:
        """The tags of ``words`` (None only if the tagger saw no tag at all)."""
        out = []
        for word in words:
            lowered = word.lower()
            tag = self.word_tags.get(lowered) or self.suffix_tags.get(lowered[-3:])
            out.append(tag or self.default_tag)
        return out
