"""The branching baselines: right-, left-branching and random binary trees."""

from __future__ import annotations

import numpy as np

from .base import Bracketer
from .sentences import Sentence


class RightBranching(Bracketer):
    """Every constituent is a word and the rest of its parent: ``(w1 (w2 (w3 w4)))``."""

    name = "right"

    def __init__(self):
        self._store_params(locals())

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        n = len(sentence.content)
        return [(i, n) for i in range(n - 1)]


class LeftBranching(Bracketer):
    """The mirror image: ``(((w1 w2) w3) w4)``."""

    name = "left"

    def __init__(self):
        self._store_params(locals())

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        n = len(sentence.content)
        return [(0, j) for j in range(2, n + 1)]


class RandomBranching(Bracketer):
    """Binary trees drawn top-down, each split point uniform in its span.

    random_state (int | None): seeds the draws of each ``predict`` call (the same
        int gives the same trees; None: fresh entropy).
    """

    name = "random"

    def __init__(self, *, random_state=0):
        self._store_params(locals())

    def predict(self, sentences):
        self._rng = np.random.default_rng(self.random_state)
        return super().predict(sentences)

    def _bracket(self, sentence: Sentence) -> list[tuple[int, int]]:
        out, todo = [], [(0, len(sentence.content))]
        while todo:
            i, j = todo.pop()
            if j - i < 2:
                continue
            out.append((i, j))
            k = int(self._rng.integers(i + 1, j))
            todo += [(i, k), (k, j)]
        return out
