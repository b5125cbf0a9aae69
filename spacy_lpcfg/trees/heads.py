"""Table-driven head rules: which child of a phrase is its head.

A rule set maps a parent *category* (function tags and indices stripped by the
label scheme) to an ordered list of searches. Each search is a direction and a
list of child categories, with the semantics of Collins (1999, appendix A) as
implemented by the Stanford and Berkeley head finders:

* ``left``: for each category in list order, scan the children left to right;
  the first child with that category is the head (the list is a priority order).
* ``right``: the same, scanning right to left.
* ``leftdis`` / ``rightdis``: scan the children left to right (right to left)
  and stop at the first child whose category is *any* of the list.

Searches are tried in turn; if none matches, the head is the first child
(``left*``) or the last child (``right*``) according to the *last* search's
direction. An empty list therefore means "first child" / "last child". A
category with no entry uses the rule set's ``default`` direction the same way.
A pattern ending in ``*`` matches every category with that prefix (PPCHE verb
tags: ``VB*`` for ``VBPI``, ``VBDS``, ``VBN``...).

Rule sets: ``collins`` (English Penn Treebank, Collins 1999 with his
coordination fix: a head right after ``CC`` moves to the conjunct before it),
``ppche`` (Penn-Helsinki style historical corpora such as IcePaHC: the leftmost
verb heads IP, the complementiser or wh-phrase heads CP; written for this
package, not taken from a published table), and the label-set independent
``first`` and ``last``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import Errors
from .labels import LabelScheme, get_scheme

DIRECTIONS = ("left", "right", "leftdis", "rightdis")

Search = tuple[str, tuple[str, ...]]  # (direction, child categories or prefix patterns)


@dataclass(frozen=True)
class HeadRules:
    """A named head-rule table.

    name (str): the registry name, stored in transform specs.
    table (Mapping[str, tuple[Search, ...]]): parent category -> searches, tried in order.
    default (str): direction for parent categories without an entry ("left": first child).
    coordination (bool): apply Collins' fix: a head preceded by ``CC`` (and at least the
        third child) moves to the nearest child before the ``CC`` that is not punctuation.
    punctuation (frozenset[str]): categories skipped by the coordination fix.
    """

    name: str
    table: Mapping[str, tuple[Search, ...]] = field(default_factory=dict)
    default: str = "left"
    coordination: bool = False
    punctuation: frozenset[str] = frozenset()

    def __post_init__(self):
        searches = [search for rules in self.table.values() for search in rules]
        for direction in [self.default, *(direction for direction, _ in searches)]:
            if direction not in DIRECTIONS:
                expected = f"one of {', '.join(DIRECTIONS)}"
                raise ValueError(
                    Errors.E011.format(value=direction, name="direction", expected=expected)
                )

    def find_head(
        self, labels: Sequence[str], parent: str, scheme: str | LabelScheme = "penn"
    ) -> int:
        """The index of the head among the children ``labels`` of a ``parent`` node.

        labels (Sequence[str]): the children's labels (phrase labels or POS tags).
        parent (str): the parent's label.
        scheme (str | LabelScheme): reduces labels to categories.
        RETURNS (int): an index into ``labels``.
        """
        if not labels:
            raise ValueError(
                Errors.E011.format(value=[], name="labels", expected="at least one child")
            )
        if len(labels) == 1:
            return 0
        scheme = get_scheme(scheme)
        categories = [_category(label, scheme) for label in labels]
        searches = self.table.get(_category(parent, scheme), ((self.default, ()),))
        head = None
        for direction, patterns in searches:
            head = _search(categories, direction, patterns)
            if head is not None:
                break
        else:
            head = 0 if searches[-1][0].startswith("left") else len(labels) - 1
        if self.coordination and head >= 2 and categories[head - 1] == "CC":
            before = head - 2
            while before >= 0 and categories[before] in self.punctuation:
                before -= 1
            if before >= 0:
                head = before
        return head


@lru_cache(maxsize=65536)
def _category(label: str, scheme: LabelScheme) -> str:
    return scheme.category(label)


def _matches(category: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return category.startswith(pattern[:-1])
    return category == pattern


def _search(categories: list[str], direction: str, patterns: tuple[str, ...]) -> int | None:
    order = range(len(categories))
    if direction.startswith("right"):
        order = order[::-1]
    if direction.endswith("dis"):  # position first, then any pattern
        for index in order:
            if any(_matches(categories[index], pattern) for pattern in patterns):
                return index
        return None
    for pattern in patterns:  # pattern priority first, then position
        for index in order:
            if _matches(categories[index], pattern):
                return index
    return None


def _table(entries: Mapping[str, str]) -> dict[str, tuple[Search, ...]]:
    """Read ``{"NP": "rightdis NN NNS; left NP"}``: searches split by ``;``, direction first."""
    table = {}
    for parent, text in entries.items():
        searches = [search.split() for search in text.split(";")]
        table[parent] = tuple((words[0], tuple(words[1:])) for words in searches)
    return table


# Collins (1999), appendix A; NX (missing there) takes its first child, as in Bikel (2004).
COLLINS = HeadRules(
    "collins",
    _table(
        {
            "ADJP": "left NNS QP NN $ ADVP JJ VBN VBG ADJP JJR NP JJS DT FW RBR RBS SBAR RB",
            "ADVP": "right RB RBR RBS FW ADVP TO CD JJR JJ IN NP JJS NN",
            "CONJP": "right CC RB IN",
            "FRAG": "right",
            "INTJ": "left",
            "LST": "right LS :",
            "NAC": "left NN NNS NNP NNPS NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP FW",
            "NP": "rightdis NN NNP NNPS NNS NX POS JJR; left NP; rightdis $ ADJP PRN; right CD;"
            " rightdis JJ JJS RB QP",
            "NX": "left",
            "PP": "right IN TO VBG VBN RP FW",
            "PRN": "left",
            "PRT": "right RP",
            "QP": "left $ IN NNS NN JJ RB DT CD NCD QP JJR JJS",
            "RRC": "right VP NP ADVP ADJP PP",
            "S": "left TO IN VP S SBAR ADJP UCP NP",
            "SBAR": "left WHNP WHPP WHADVP WHADJP IN DT S SQ SINV SBAR FRAG",
            "SBARQ": "left SQ S SINV SBARQ FRAG",
            "SINV": "left VBZ VBD VBP VB MD VP S SINV ADJP NP",
            "SQ": "left VBZ VBD VBP VB MD VP SQ",
            "UCP": "right",
            "VP": "left TO VBD VBN MD VBZ VB VBG VBP VP ADJP NN NNS NP",
            "WHADJP": "left CC WRB JJ ADJP",
            "WHADVP": "right CC WRB",
            "WHNP": "left WDT WP WP$ WHADJP WHPP WHNP",
            "WHPP": "right IN TO FW",
            "X": "right",
        }
    ),
    coordination=True,
    punctuation=frozenset({"''", "``", "-LRB-", "-RRB-", ".", ":", ","}),
)

# PPCHE verb tags: lexical verbs, be, have, modals, verda (RD), do, and their participles
# (VAN, BAN, HAN, ...); the case suffix of nominal tags (N-N) is cut by the penn scheme.
_VERBS = "VB* BE* HV* MD* RD* DO* VA* BA* HA* RA* DA* MA*"
_NP = (
    "leftdis N NS NPR NPRS PRO WPRO ES OTHER OTHERS ONE ONES; left NP NX WNP;"
    " leftdis Q QR QS WQ ADJ ADJR ADJS NUM D WD ADJP QP NUMP"
)
_ADJP = "leftdis ADJ ADJR ADJS WADJ VAN VAG; left ADJP WADJP ADJX"
_ADVP = "leftdis ADV ADVR ADVS WADV; left ADVP WADVP ADVX"
_PP = "left P; left PP WPP"
_QP = "leftdis Q QR QS WQ NUM ONE"

PPCHE = HeadRules(
    "ppche",
    _table(
        {
            "IP": f"leftdis {_VERBS}; left IP ADJP NP PP ADVP CP",
            "RRC": f"leftdis {_VERBS}; left ADJP NP PP ADVP",
            "CP": "leftdis C WNP WADVP WADJP WPP WQP; left IP CP FRAG",
            **dict.fromkeys(("NP", "NX", "WNP"), _NP),
            **dict.fromkeys(("ADJP", "ADJX", "WADJP"), _ADJP),
            **dict.fromkeys(("ADVP", "ADVX", "WADVP"), _ADVP),
            **dict.fromkeys(("PP", "WPP"), _PP),
            **dict.fromkeys(("QP", "WQP"), _QP),
            "NUMP": "leftdis NUM",
            "CONJP": "left CONJ",
        }
    ),
)

HEAD_RULES: dict[str, HeadRules] = {
    rules.name: rules
    for rules in (
        COLLINS,
        PPCHE,
        HeadRules("first", default="left"),
        HeadRules("last", default="right"),
    )
}


def get_head_rules(name: str | HeadRules) -> HeadRules:
    """The registered rule set called ``name`` (a ``HeadRules`` is returned as is)."""
    if isinstance(name, HeadRules):
        return name
    try:
        return HEAD_RULES[name]
    except (KeyError, TypeError):
        expected = f"one of {', '.join(HEAD_RULES)}"
        raise ValueError(
            Errors.E011.format(value=name, name="head_rules", expected=expected)
        ) from None


def find_head(
    labels: Sequence[str],
    parent: str,
    scheme: str | LabelScheme = "penn",
    rules: str | HeadRules = "collins",
) -> int:
    """The index of the head child: ``get_head_rules(rules).find_head(labels, parent, scheme)``."""
    return get_head_rules(rules).find_head(labels, parent, scheme)
