"""Function tags for the phrases of parses: the linear model a FunctionLabeller learns.

``estimators.FunctionLabeller`` fits a logistic regression (scikit-learn) over
features of each phrase; what it learns is a ``FunctionTagger``: the feature
names, the function-tag combinations (classes), the coefficients and the
intercepts. That is all ``label`` needs (numpy and scipy, no scikit-learn), and
what a ``ParsingModel`` saves beside its grammar: two files, nothing pickled::

    function_labeller.json   format and version, label scheme, head rules, the
                             classes (lists of function tags), the feature names,
                             the fit's parameters and how the coefficients are stored
    function_labeller.npz    intercept (float64[r]) and coef (float64[r, features]),
                             or, when at most half of it is non-zero, its non-zero
                             values and their flat positions (int64)

with r = 1 for two classes (scikit-learn's binary model: class 1 when the score
is > 0) and one row per class otherwise (the class of the highest score, the
first on a tie, as scikit-learn's ``predict``).

Features of a phrase: its category; its parent's and grandparent's; the
categories of its left and right siblings and whether it is its parent's head;
the tag and lower-cased word of its head (head rules of the label scheme); its
first and last tags; the tags of the words before and after it and the word
before it; its length (bucketed). None depends on function tags, so a parse
with function tags gets the same ones as without.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Errors, GrammarError
from ..trees.heads import HEAD_RULES, find_head
from ..trees.labels import LabelScheme, get_scheme
from ..trees.tree import ROOT_LABEL, Tree
from .serialization import (
    MAX_ARRAY_BYTES,
    _json_bytes,
    check_version,
    excerpt,
    pack_npz,
    read_json,
    read_npz,
    shorten,
)
from .sparse_weights import SPARSE_FRACTION

LABELLER_INDEX, LABELLER_ARRAYS = "function_labeller.json", "function_labeller.npz"
FILES = (LABELLER_INDEX, LABELLER_ARRAYS)
LABELLER_FORMAT = "spacy-lpcfg function labeller"
LABELLER_VERSION = 1
LABEL_SCHEMES = ("penn", "floresta", "cess")


class FunctionTagger:
    """Puts function tags on the phrases of trees: a linear model over phrase features.

    scheme (str): the label scheme ("penn", "floresta", "cess").
    head_rules (str): the head rules of the head features ("collins", "ppche"...).
    features (Sequence[str]): the feature names, one per coefficient column.
    classes (Sequence[Sequence[str]]): the function-tag combinations, () for none;
        at least two.
    coef (np.ndarray): float64[r, len(features)], r = 1 for two classes (scores of
        the second), else one row per class.
    intercept (np.ndarray): float64[r].
    params (Mapping | None): how it was fitted (JSON: C, max_iter...), kept for the record.
    RAISES GrammarError: parts that do not fit together (E129).
    """

    def __init__(
        self,
        scheme: str,
        head_rules: str,
        features: Sequence[str],
        classes: Sequence[Sequence[str]],
        coef: np.ndarray,
        intercept: np.ndarray,
        params: Mapping[str, Any] | None = None,
    ):
        self.scheme = scheme
        self.head_rules = head_rules
        self.features = tuple(features)
        self.classes = tuple(tuple(functions) for functions in classes)
        self.coef = np.asarray(coef)
        self.intercept = np.asarray(intercept)
        self.params = dict(params or {})
        self._check()
        self._index = {name: i for i, name in enumerate(self.features)}
        self._coef_rows: np.ndarray | None = None  # coef.T, contiguous (``_scores``)
        self._scheme = get_scheme(scheme)

    def _check(self) -> None:
        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E129.format(detail=detail))

        if self.scheme not in LABEL_SCHEMES:
            raise fail(f"unknown label scheme {excerpt(self.scheme)} ({', '.join(LABEL_SCHEMES)})")
        if not (isinstance(self.head_rules, str) and self.head_rules in HEAD_RULES):
            raise fail(f"unknown head rules {excerpt(self.head_rules)} ({', '.join(HEAD_RULES)})")
        if not all(isinstance(name, str) for name in self.features):
            raise fail("feature names must be strings")
        if len(set(self.features)) != len(self.features):
            raise fail("a feature name is listed twice")
        if len(self.classes) < 2:
            raise fail(f"{len(self.classes)} classes: a labeller chooses among at least two")
        if not all(isinstance(tag, str) and tag for functions in self.classes for tag in functions):
            raise fail("classes must be lists of function tags (non-empty strings)")
        if len(set(self.classes)) != len(self.classes):
            raise fail("a class is listed twice")
        rows = n_rows(len(self.classes))
        for name, array, shape in (
            ("coef", self.coef, (rows, len(self.features))),
            ("intercept", self.intercept, (rows,)),
        ):
            if array.dtype != np.float64 or array.shape != shape:
                raise fail(
                    f"{name} is {array.dtype}{list(array.shape)}, expected float64{list(shape)} "
                    f"({len(self.classes)} classes, {len(self.features)} features)"
                )
            if not np.isfinite(array).all():
                raise fail(f"{name} has non-finite values")
        try:
            _json_bytes(self.params)
        except (TypeError, ValueError, RecursionError) as exc:
            raise fail(f"params must be JSON-serialisable ({shorten(str(exc), 120)})") from None

    # Labelling -----------------------------------------------------------------

    def label(self, trees: Sequence[Tree]) -> list[Tree]:
        """``trees`` with the predicted function tags on every phrase below TOP (tags
        the trees have are replaced); brackets, categories and words stay."""
        found = [list(phrase_features(tree, self._scheme, self.head_rules)) for tree in trees]
        predicted = iter(self.predict([feats for nodes in found for _, feats in nodes]).tolist())
        labelled = []
        for tree, nodes in zip(trees, found):
            chosen = {id(node): self.classes[next(predicted)] for node, _ in nodes}
            labelled.append(_relabel(tree, chosen, self._scheme))
        return labelled

    def vectorize(self, phrases: Sequence[Iterable[str]]):
        """The phrases' feature matrix (scipy CSR, float64 ones; unknown features left out)."""
        from scipy import sparse

        index = self._index
        columns = [sorted({index[name] for name in feats if name in index}) for feats in phrases]
        indptr = np.zeros(len(columns) + 1, dtype=np.int64)
        np.cumsum([len(row) for row in columns], out=indptr[1:])
        indices = np.fromiter((i for row in columns for i in row), np.int64, int(indptr[-1]))
        data = np.ones(len(indices))
        return sparse.csr_matrix((data, indices, indptr), shape=(len(columns), len(self.features)))

    def _scores(self, phrases: Sequence[Iterable[str]]) -> np.ndarray:
        """``decision_function(vectorize(phrases))`` without scipy, which parsing would
        otherwise import (half a second): each row sums its features' coefficients in
        column order, as the sparse product does, so the scores are the same."""
        index = self._index
        if self._coef_rows is None:
            self._coef_rows = np.ascontiguousarray(self.coef.T)
        weights = self._coef_rows
        scores = np.zeros((len(phrases), weights.shape[1]))
        for row, feats in enumerate(phrases):
            columns = sorted({index[name] for name in feats if name in index})
            if columns:
                scores[row] = weights[columns].sum(axis=0)
        return scores + self.intercept

    def decision_function(self, matrix) -> np.ndarray:
        """Scores float64[phrases, r] of a ``vectorize`` matrix (as scikit-learn's)."""
        return np.asarray(matrix @ self.coef.T) + self.intercept

    def predict(self, phrases: Sequence[Iterable[str]]) -> np.ndarray:
        """The index in ``classes`` of each phrase's function tags (int64)."""
        if not len(phrases):
            return np.zeros(0, dtype=np.int64)
        scores = self._scores(phrases)
        if len(self.classes) == 2:
            return (scores[:, 0] > 0).astype(np.int64)
        return scores.argmax(axis=1).astype(np.int64)

    # Serialisation -------------------------------------------------------------

    @property
    def sizes(self) -> dict[str, int]:
        """What a model's cfg.json records, to check the files against."""
        return {"classes": len(self.classes), "features": len(self.features)}

    def to_members(self) -> dict[str, bytes]:
        """The two files (module docstring). Mostly-zero coefficients are stored sparse."""
        positions = np.flatnonzero(self.coef)
        arrays = {"intercept": self.intercept}
        if len(positions) <= SPARSE_FRACTION * self.coef.size:
            arrays["coef_values"] = self.coef.reshape(-1)[positions]
            arrays["coef_positions"] = positions.astype(np.int64)
        else:
            arrays["coef"] = self.coef
        index = {
            "format": LABELLER_FORMAT,
            "format_version": LABELLER_VERSION,
            "scheme": self.scheme,
            "head_rules": self.head_rules,
            "classes": [list(functions) for functions in self.classes],
            "features": list(self.features),
            "coef": {"rows": len(self.coef), "stored": None}
            if "coef" in arrays
            else {"rows": len(self.coef), "stored": len(positions)},
            "params": self.params,
        }
        return {LABELLER_INDEX: _json_bytes(index), LABELLER_ARRAYS: pack_npz(arrays)}

    @classmethod
    def from_members(cls, members: Mapping[str, bytes], source: str | Path) -> FunctionTagger:
        """Read ``to_members`` output, checking every size before allocating.

        RAISES GrammarError (E130) naming the bad file and field.
        """

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E130.format(source=source, detail=detail))

        missing = [name for name in FILES if name not in members]
        if missing:
            raise fail(f"missing {', '.join(missing)}")
        index = read_json(members[LABELLER_INDEX], LABELLER_INDEX, fail)
        if not isinstance(index, dict) or index.get("format") != LABELLER_FORMAT:
            raise fail(f"{LABELLER_INDEX} is not the index of a function labeller")
        check_version(
            index.get("format_version"),
            LABELLER_INDEX,
            LABELLER_VERSION,
            source,
            newer_code="E125",
        )
        for key in ("scheme", "head_rules"):
            if not isinstance(index.get(key), str):
                raise fail(
                    f"{LABELLER_INDEX}: '{key}' must be a string, not {excerpt(index.get(key))}"
                )
        features, classes = index.get("features"), index.get("classes")
        if not isinstance(features, list):
            raise fail(
                f"{LABELLER_INDEX}: 'features' must be a list of names, not {excerpt(features)}"
            )
        if not (isinstance(classes, list) and all(isinstance(c, list) for c in classes)):
            raise fail(
                f"{LABELLER_INDEX}: 'classes' must be a list of lists of function tags, "
                f"not {excerpt(classes)}"
            )
        params = index.get("params", {})
        if not isinstance(params, dict):
            raise fail(f"{LABELLER_INDEX}: 'params' must be an object, not {excerpt(params)}")
        rows = n_rows(len(classes))
        stored = _stored_count(index.get("coef"), rows, len(features), fail)
        if stored is None:
            specs = {"intercept": ("float64", (rows,)), "coef": ("float64", (rows, len(features)))}
        else:
            specs = {
                "intercept": ("float64", (rows,)),
                "coef_values": ("float64", (stored,)),
                "coef_positions": ("int64", (stored,)),
            }
        # sparse coefficients are made dense: no views, which would keep the file alive
        arrays = read_npz(
            members[LABELLER_ARRAYS], LABELLER_ARRAYS, specs, fail, views=stored is None
        )
        coef = arrays["coef"] if stored is None else _dense_coef(arrays, rows, len(features), fail)
        try:
            return cls(
                index["scheme"],
                index["head_rules"],
                features,
                classes,
                coef,
                arrays["intercept"],
                params,
            )
        except GrammarError as exc:
            raise fail(shorten(str(exc))) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FunctionTagger):
            return NotImplemented
        return self.to_members() == other.to_members()  # __eq__ alone: unhashable, as models

    def __repr__(self) -> str:
        return (
            f"FunctionTagger({self.scheme}, {len(self.classes)} classes, "
            f"{len(self.features)} features)"
        )


def n_rows(n_classes: int) -> int:
    """Coefficient rows of a model of ``n_classes`` classes (scikit-learn's layout)."""
    return 1 if n_classes == 2 else n_classes


def _stored_count(entry: Any, rows: int, n_features: int, fail: Callable[[str], Exception]):
    """The number of stored non-zero coefficients (None: stored dense), checked."""
    if not (isinstance(entry, dict) and entry.get("rows") == rows):
        raise fail(
            f'{LABELLER_INDEX}: \'coef\' must be {{"rows": {rows}, "stored": ...}} for its '
            f"classes, not {excerpt(entry)}"
        )
    if rows * n_features * 8 > MAX_ARRAY_BYTES:
        raise fail(
            f"{LABELLER_INDEX}: {rows} x {n_features} coefficients exceed {MAX_ARRAY_BYTES} bytes"
        )
    stored = entry.get("stored")
    if stored is None:
        return None
    if not (isinstance(stored, int) and not isinstance(stored, bool)) or not (
        0 <= stored <= rows * n_features
    ):
        raise fail(
            f"{LABELLER_INDEX}: 'coef.stored' must be null or a count of coefficients from 0 "
            f"to {rows * n_features}, not {excerpt(stored)}"
        )
    return stored


def _dense_coef(arrays, rows: int, n_features: int, fail) -> np.ndarray:
    positions = arrays["coef_positions"]
    size = rows * n_features
    if len(positions) and (
        positions[0] < 0 or positions[-1] >= size or (np.diff(positions) <= 0).any()
    ):
        raise fail(f"{LABELLER_ARRAYS}: coef_positions must increase within [0, {size})")
    coef = np.zeros(size)
    coef[positions] = arrays["coef_values"]
    return coef.reshape(rows, n_features)


# Features ----------------------------------------------------------------------


def phrase_features(
    tree: Tree, scheme: LabelScheme, rules: str
) -> Iterator[tuple[Tree, list[str]]]:
    """(phrase, its feature names) for every phrase below TOP, in pre-order."""
    tags = tree.tags()
    words = tree.words()
    # Each node's length, head child and head preterminal, found once bottom-up: read
    # per phrase (for itself and for its siblings) they would be found again and again.
    lengths: dict[int, int] = {}
    head_children: dict[int, int] = {}
    heads: dict[int, Tree] = {}

    def measure(node: Tree) -> int:
        if node.is_preterminal:
            heads[id(node)] = node
            lengths[id(node)] = 1
            return 1
        length = sum(measure(child) for child in node.children)
        children = node.children
        head = find_head([child.label for child in children], node.label, scheme, rules)
        head_children[id(node)] = head
        heads[id(node)] = heads[id(children[head])]
        lengths[id(node)] = length
        return length

    def visit(node: Tree, start: int, parent: Tree | None, grandparent: Tree | None):
        end = start + lengths[id(node)]
        if not node.is_preterminal and node.label != ROOT_LABEL:
            context = (start, end, parent, grandparent, tags, words, scheme)
            yield node, _features(node, context, head_children, heads)
        position = start
        for child in node.children:
            yield from visit(child, position, node, parent)
            position += lengths[id(child)]

    measure(tree)
    yield from visit(tree, 0, None, None)


def _features(node, context, head_children, heads) -> list[str]:
    start, end, parent, grandparent, tags, words, scheme = context
    category = scheme.category(node.label)
    parent_category = scheme.category(parent.label) if parent is not None else "<none>"
    feats = [
        "cat=" + category,
        "parent=" + parent_category,
        "cat,parent=" + category + "," + parent_category,
    ]
    if grandparent is not None:
        feats.append("grandparent=" + scheme.category(grandparent.label))
    if parent is not None:
        siblings = parent.children
        index = next(i for i, child in enumerate(siblings) if child is node)
        left = scheme.category(siblings[index - 1].label) if index > 0 else "<start>"
        right = scheme.category(siblings[index + 1].label) if index + 1 < len(siblings) else "<end>"
        feats += [
            "left=" + left,
            "right=" + right,
            "cat,left,right=" + ",".join((category, left, right)),
            "is_head=" + str(index == head_children[id(parent)]),
        ]
    head = heads[id(node)]
    length = end - start
    feats += [
        "head_tag=" + head.label,
        "head_word=" + (head.word or "").lower(),
        "cat,head_tag=" + category + "," + head.label,
        "first=" + tags[start],
        "last=" + tags[end - 1],
        "before=" + (tags[start - 1] if start > 0 else "<s>"),
        "after=" + (tags[end] if end < len(tags) else "</s>"),
        "before_word=" + (words[start - 1].lower() if start > 0 else "<s>"),
        "length=" + str(length if length < 5 else 5 if length < 10 else 10),
    ]
    return feats


def _relabel(tree: Tree, chosen: dict[int, tuple[str, ...]], scheme: LabelScheme) -> Tree:
    if tree.is_preterminal:
        return tree
    children = tuple(_relabel(child, chosen, scheme) for child in tree.children)
    if id(tree) not in chosen:
        return tree.with_children(children)
    return Tree(scheme.join(scheme.category(tree.label), chosen[id(tree)]), children)
