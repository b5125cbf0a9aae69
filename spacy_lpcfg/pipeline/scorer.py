"""The constituency scorer: EVALB on the trees of reference and predicted Docs.

Each Example gives one gold tree (``doc_trees`` of the reference) and one test
tree (of the prediction, on the reference's words), scored by
``evaluation.score_parses`` (EVALB, "collins" parameters by default), as
``spacy_lpcfg.evaluate`` and ``spacy-lpcfg test`` score. Keys, for ``spans_key="constituents"``, as fractions in [0, 1]:

==============================  ==============================================================
``constituents_p/_r/_f``        labelled brackets, function tags stripped (EVALB's figures)
``constituents_func_p/_r/_f``   labelled brackets with full labels (``NP-SBJ``)
``constituents_per_label``      ``{label: {"p", "r", "f"}}`` per category
``constituents_exact``          complete match (sentences with every bracket right)
``constituents_tag_acc``        tagging accuracy of the predicted ``token.tag_``
``spans_constituents_p/_r/_f``  aliases, with ``..._per_type``, so that
                                ``spacy evaluate --spans-key constituents`` prints them
``cons_p/_r/_f``, ``cons_func_f``...  the same figures under short names, the default score
                                weights: ``spacy train`` shows them whole (it cuts names at
                                13 characters)
==============================  ==============================================================

Unlike ``Scorer.score_spans`` the brackets are a multiset (EVALB counts a
unary ``A`` over ``A`` twice). When the two Docs tokenise the text differently
(or differ in whitespace, as spaCy allows), predicted constituents are moved to
the reference tokens by offsets among the non-whitespace characters; those
whose edges fall inside a reference token are left out, and predicted tags
count only on tokens with the same characters. Whitespace tokens are never
words, in either Doc. (Docs from ``spacy-lpcfg convert`` or the treebank
reader always share their tokens.)
"""

import math
from collections.abc import Iterable
from functools import partial
from typing import Any

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..trees.tree import Tree
from .docs import MISSING_TAG, SPANS_KEY, build_tree, doc_trees, find_group


def score_constituents(
    examples: Iterable[Example],
    *,
    spans_key: str = SPANS_KEY,
    evalb_params: str = "collins",
    **kwargs: Any,
) -> dict[str, Any]:
    """Score the predicted constituents of Examples against the reference ones.

    examples (Iterable[Example]): Examples whose reference has ``doc.spans[spans_key]``;
        the others are not scored.
    spans_key (str): the span group key. Defaults to "constituents".
    evalb_params (str): "collins", "spmrl" or a ``.prm`` file. Defaults to "collins".
    kwargs: ignored (``Pipe.score`` passes the component's cfg and labels).
    RETURNS (dict[str, Any]): the scores; None values when no Example was scored.
    """
    from ..evaluation.parsing import score_parses

    gold: list[Tree] = []
    test: list[Tree] = []
    scheme = "penn"
    for example in examples:
        group = find_group(example.reference, spans_key)
        if group is None:
            continue
        scheme = group.attrs.get("scheme", scheme)
        gold.extend(doc_trees(example.reference, spans_key))
        test.extend(_test_trees(example, spans_key))
    prefix = spans_key
    if not gold:
        return _with_short_names(
            {
                **{f"{prefix}_{name}": None for name in (*FIGURES, "per_label")},
                **{f"spans_{prefix}_{name}": None for name in ("p", "r", "f", "per_type")},
            },
            prefix,
        )
    scored = score_parses(gold, test, scheme=scheme, params=evalb_params)
    categories, full = scored.evalb, scored.functions.labelled
    summary = categories.summary()
    per_label = {
        label: {"p": score.precision / 100, "r": score.recall / 100, "f": score.fscore / 100}
        for label, score in categories.label_scores().items()
    }
    scores = {
        f"{prefix}_p": summary.precision / 100,
        f"{prefix}_r": summary.recall / 100,
        f"{prefix}_f": _finite(summary.fscore) / 100,
        f"{prefix}_func_p": full.precision / 100,
        f"{prefix}_func_r": full.recall / 100,
        f"{prefix}_func_f": full.fscore / 100,
        f"{prefix}_exact": summary.complete_match / 100,
        f"{prefix}_tag_acc": summary.tagging_accuracy / 100,
        f"{prefix}_per_label": per_label,
    }
    for name in ("p", "r", "f"):
        scores[f"spans_{prefix}_{name}"] = scores[f"{prefix}_{name}"]
    scores[f"spans_{prefix}_per_type"] = per_label
    return _with_short_names(scores, prefix)


FIGURES = ("p", "r", "f", "func_p", "func_r", "func_f", "exact", "tag_acc")
# spacy train's table cuts a column name at 13 characters ("CONSTITUEN..."): the default
# key's figures are also given under a short prefix, the names of the default weights
SHORT_PREFIX = "cons"


def _with_short_names(scores: dict[str, Any], prefix: str) -> dict[str, Any]:
    if prefix == SPANS_KEY:
        scores.update({f"{SHORT_PREFIX}_{name}": scores[f"{prefix}_{name}"] for name in FIGURES})
    return scores


@registry.scorers("spacy_lpcfg.constituency_scorer.v1")
def make_constituency_scorer(evalb_params: str = "collins"):
    """The EVALB constituency scorer (``score_constituents``) with these parameters."""
    # A partial of a module-level function pickles, as nlp.pipe(n_process=2) needs.
    return partial(score_constituents, evalb_params=evalb_params)


def _finite(value: float) -> float:
    return 0.0 if math.isnan(value) else value


def _test_trees(example: Example, spans_key: str) -> list[Tree]:
    """The prediction as one tree over the reference's words."""
    predicted, reference = example.predicted, example.reference
    if [token.text for token in predicted] == [token.text for token in reference]:
        return doc_trees(predicted, spans_key)
    leaves = [token.i for token in reference if not token.is_space]
    if not leaves:
        return []
    words = [reference[i].text for i in leaves]
    tags = [MISSING_TAG] * len(leaves)
    spans = []
    if _solid_text(predicted) == _solid_text(reference):
        # The same text but for whitespace (spaCy aligns such Docs too): match
        # tokens and constituent edges by their offsets among non-space characters.
        starts, ends = _solid_edges(reference)
        predicted_starts, predicted_ends = _solid_edges(predicted)
        by_offsets = {
            (predicted_starts[t.i], predicted_ends[t.i]): t.tag_
            for t in predicted
            if t.tag_ and not t.is_space
        }
        for position, i in enumerate(leaves):
            tags[position] = by_offsets.get((starts[i], ends[i]), MISSING_TAG)
        first_at = {starts[i]: i for i in reversed(leaves)}
        last_at = {ends[i]: i for i in leaves}
        for span in find_group(predicted, spans_key) or ():
            first = first_at.get(predicted_starts[span.start])
            last = last_at.get(predicted_ends[span.end - 1])
            if first is not None and last is not None and first <= last:
                spans.append((span.label_, first, last + 1))
    return [build_tree(leaves, words, tags, spans, spans_key)]


def _solid_text(doc: Doc) -> str:
    """The Doc's text without whitespace."""
    return "".join(doc.text.split())


def _solid_edges(doc: Doc) -> tuple[list[int], list[int]]:
    """Each token's start and end offsets among the Doc's non-whitespace characters."""
    starts, ends = [], []
    position = 0
    for token in doc:
        starts.append(position)
        position += sum(not char.isspace() for char in token.text)
        ends.append(position)
    return starts, ends
