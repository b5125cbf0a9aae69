"""Invertible tree transforms: unary collapse, parent annotation, binarisation.

Each transform is a pure function with a named inverse, and
``TransformPipeline`` chains them under a JSON-serialisable ``TransformSpec``
(stored beside a grammar). Transformed trees keep their state in labels built
with reserved separators: ``::`` (unary chains), ``^`` (annotations), ``@``
(first character of intermediate nodes, and of nothing else), ``|<`` and
``|>`` (end of the parent label inside an intermediate label). None of them
occurs in any label of the PTB sample, IcePaHC, Floresta or CESS-ESP (single
``|``, ``<``, ``>`` and ``+`` do, in ``ADVP|PRT`` and Floresta's ``N<+pp``,
so they cannot be reserved). Input labels are validated against them, and
phrase labels may not begin or end with ``:`` (``X:`` + ``::`` + ``Y`` would
read back as ``X`` and ``:Y``), so the inverses never misread a treebank
label. Traversals use explicit stacks.

Unary chains (``collapse_unaries`` / ``expand_unaries``). A phrase whose only
child is a phrase merges with it, top to bottom. The root (the start symbol,
``TOP``) never merges, and a phrase over a single preterminal stays a unary::

      TOP                TOP
       |                  |
       S                S::VP
       |       ==>      __|__
       VP              VB    NP
     __|__                   |
    VB    NP                 ...

Vertical markovisation (``annotate_parents`` / ``strip_annotations``). With
order ``v``, every phrase below the root gets the categories (function tags
stripped) of its ``v - 1`` nearest ancestors in the *original* tree, nearest
first: ``NP^S`` (v=2), ``NP^VP^S`` (v=3). A collapsed chain counts as the nodes
it stands for: the children of ``S::VP`` get ``^VP`` (v=2) or ``^VP^S`` (v=3).
Preterminals are annotated only on request::

       TOP                       TOP
        |                         |
        S                       S^TOP
     ___|___        v=2       ____|____
    NP      VP      ==>    NP^S       VP^S
    |     __|__             |        __|__
   PRP  VBD    NP          PRP     VBD    NP^VP

Binarisation (``binarize`` / ``debinarize``). A phrase ``X`` with more than
two children is split into binary nodes by peeling siblings off one at a time
until two remain; the new *intermediate* nodes are labelled ``@X|<ctx`` when
the sibling just peeled lies to their left and ``@X|>ctx`` when it lies to
their right, where ``ctx`` holds the last ``h`` sibling labels already
generated (top down: the peeled ones), in peeling order, joined by ``_``
(``h=None`` keeps them all, ``h=0`` none). ``X`` is the full label of the phrase,
annotations included. Three orders, for ``X -> A B C D E`` and ``h=1``. As in
the Berkeley parser and Le Roux et al. (2013), a binarisation is named by the
direction in which it grows from the child at the bottom (NLTK's
``factor="right"`` is our "left")::

    right: A picks up B, C, D, E             left: E picks up D, C, B, A
                   X                           X
                 __|__                       __|__
            @X|>E     E                     A   @X|<A
            __|__                               __|__
       @X|>D     D                             B   @X|<B
       __|__                                       __|__
  @X|>C     C                                     C   @X|<C
  __|__                                               __|__
 A     B                                             D     E

    head (here C): peel the siblings left of the head, outermost first,
    then those right of it, outermost first; the head is reached last
    (head-outward, read bottom up: the head picks up its right
    siblings, then its left ones)

            X
          __|__
         A   @X|<A
             __|__
            B   @X|<B
                __|__
           @X|>E     E
           __|__
          C     D

The head shape is the centre-parent binarisation of Dreyer & Eisner (2006,
figure 4) and the Berkeley parser's ``PARENT`` binarisation (less its final
unary); like the latter
(and unlike the former, which names the child just picked up) the context is
what was generated *above* the node, so ``h`` is the order of a Markov chain
over the children in generation order. Right binarisation is head
binarisation with the first child as head, left binarisation with the last.
The side marker (``|<`` / ``|>``) keeps head-binarised grammars free of
spurious ambiguity: a node that has started peeling right siblings never
peels a left one. Nodes with one or two children are left alone, so with
unary collapse a binarised tree has unaries only at the root (``TOP -> X``)
and above single preterminals (``X -> tag``).

Tags that are also phrase labels (``mark_phrases``). Some treebanks use one
label both as a POS tag and as a phrase category (Chinese treebanks: ``(NN (NN
x) (NN y))``; a tag ``ADV`` and a phrase ``ADV``). Without parent annotation
(or with annotated POS tags) the phrase and the tag then get the same label in
the grammar's label space, but a grammar symbol has one kind. The spec lists
such transformed phrase labels (``marked_phrases``, found on the training trees
by ``transform_treebank``), and ``apply`` marks those phrases with a trailing
``^`` (``PHRASE_MARK``), an empty annotation: ``NN^`` over ``NN`` (v=1),
``NN^NP^`` over ``NN^NP`` (annotated tags). Intermediate nodes name the marked
label (``@NN^|<NN``). Inversion needs no list: it strips annotations from
every label, the mark with them.

Inversion accepts any tree over the transformed label space, such as parser
output, not only what ``apply`` produced: every phrase whose label starts with
``@`` is spliced into its parent's children wherever it is (also directly under
``TOP``, or nested in other ways than ``binarize`` nests them), and the label it
records is ignored; annotations after ``^`` are dropped from every label;
every ``X::Y`` label becomes a chain ``X -> Y`` over the node's children (or its
word). An intermediate label on the root or on a preterminal, and empty chain
parts (``S::``) cannot be inverted and raise ``TransformError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from typing import TypeGuard, cast

from ..defaults import TRANSFORM
from ..errors import Errors, TransformError
from ..progress import progress
from .heads import HEAD_RULES, HeadRules, get_head_rules
from .labels import SCHEMES, LabelScheme, get_scheme
from .normalize import strip_functions
from .tree import ROOT_LABEL, Tree

UNARY_SEP = "::"  # S::VP, as in benepar and SuPar
PARENT_SEP = "^"  # NP^S, as in the Berkeley parser
BIN_MARK = "@"  # first character of every intermediate label (and only of those)
LEFT_CONTEXT = "|<"  # @X|<A: the sibling peeled last is on the left of the node
RIGHT_CONTEXT = "|>"  # @X|>E: ... on its right
CONTEXT_JOIN = "_"  # between context labels; never parsed back, so not reserved
PHRASE_MARK = PARENT_SEP  # NN^: a phrase whose label is also a POS tag (an empty annotation)
RESERVED_SEPARATORS = (UNARY_SEP, PARENT_SEP, BIN_MARK, LEFT_CONTEXT, RIGHT_CONTEXT)
BINARIZATIONS = ("right", "left", "head")
# Version 2 adds marked_phrases; specs without marked phrases are still written as
# version 1, so that older versions read them.
SPEC_VERSION = 2


# ---------------------------------------------------------------- labels


def validate_labels(tree: Tree, separators: tuple[str, ...] = RESERVED_SEPARATORS) -> None:
    """Check that no label of ``tree`` contains a reserved separator.

    Phrase labels must also not begin or end with ``:`` when ``UNARY_SEP`` is
    checked (``X:`` joined to ``Y`` would read back as ``X`` and ``:Y``).
    RAISES TransformError: naming the first offending label.
    """
    seen_phrases: set[str] = set()
    seen_tags: set[str] = set()
    for node in tree.subtrees():
        seen = seen_tags if node.word is not None else seen_phrases
        if node.label not in seen:
            _check_label(node.label, separators, phrase=node.word is None)
            seen.add(node.label)


def _check_label(label: str, separators: tuple[str, ...], *, phrase: bool) -> None:
    for sep in separators:
        if sep in label:
            raise TransformError(Errors.E008.format(label=label, sep=sep))
    if phrase and UNARY_SEP in separators and (label.startswith(":") or label.endswith(":")):
        raise TransformError(Errors.E019.format(label=label))


def is_intermediate(label: str) -> bool:
    """Whether ``label`` is that of a node introduced by ``binarize``."""
    return label.startswith(BIN_MARK)


def intermediate_parent(label: str) -> str:
    """The label of the phrase an intermediate node was split from: ``@NP^S|<DT`` -> ``NP^S``."""
    if not is_intermediate(label):
        raise TransformError(
            Errors.E010.format(name="binarize", detail=f"'{label}' is not an intermediate label")
        )
    ends = [end for end in (label.find(LEFT_CONTEXT), label.find(RIGHT_CONTEXT)) if end > 0]
    if not ends:
        raise TransformError(
            Errors.E010.format(name="binarize", detail=f"no context marker in '{label}'")
        )
    return label[len(BIN_MARK) : min(ends)]


def coarse_label(
    label: str,
    scheme: str | LabelScheme = "penn",
    *,
    preterminal: bool = False,
    functions: bool = False,
    annotations: bool = False,
) -> str:
    """A coarser version of a transformed label, for hierarchical pruning.

    Markov context always goes, and annotations and function tags unless kept;
    unary chains, the intermediate marker and its side stay, so every node of a
    transformed tree maps to a node of the same shape. With the defaults (the
    X-bar level): ``@NP-SBJ^S|>PP`` -> ``@NP|>``, ``S-TPC::VP^S`` -> ``S::VP``.
    POS tags lose only their annotation (unless kept).
    """
    if preterminal:
        return label if annotations else _strip_annotation(label)
    scheme = get_scheme(scheme)
    if is_intermediate(label):
        parent = intermediate_parent(label)
        side_start = len(BIN_MARK) + len(parent)
        side = label[side_start : side_start + len(LEFT_CONTEXT)]
        coarse = coarse_label(parent, scheme, functions=functions, annotations=annotations)
        return BIN_MARK + coarse + side
    base, sep, annotation = label.partition(PARENT_SEP)
    chain = base.split(UNARY_SEP)
    if not functions:
        chain = [scheme.category(part) for part in chain]
    return UNARY_SEP.join(chain) + (sep + annotation if annotations else "")


def _strip_annotation(label: str) -> str:
    return label.partition(PARENT_SEP)[0]


def _top_label(label: str) -> str:
    """The label of the outermost original node behind a (collapsed, annotated) label."""
    return _strip_annotation(label).partition(UNARY_SEP)[0]


def _bottom_label(label: str) -> str:
    """The label of the innermost original node, the parent of the node's children."""
    return _strip_annotation(label).rpartition(UNARY_SEP)[2]


# ------------------------------------------------------- the two passes


def _transform(
    tree: Tree,
    *,
    collapse: bool = False,
    v_markov: int = 1,
    scheme: LabelScheme | None = None,
    annotate_preterminals: bool = False,
    binarization: str | None = None,
    h_markov: int | None = 1,
    rules: HeadRules | None = None,
    marked: frozenset[str] = frozenset(),
) -> Tree:
    """Collapse unary chains, annotate parents, mark phrases and binarise in one traversal.

    The result equals the public steps applied one after the other: a chain is
    merged when its top is reached, annotations need only the ancestors, and a
    node is marked (its label in ``marked``) and binarised once its children are
    rebuilt. One pass instead of several is what keeps ``apply`` fast on whole
    treebanks.
    """
    depth = v_markov - 1
    done: list[list[Tree]] = [[]]
    # Frames: (node, None, suffix, ancestors) before the node is expanded, with the
    # annotation suffix and ancestor categories it gets; (node at the bottom of its
    # chain, new label, "", ()) once its children are on the stack.
    stack: list[tuple[Tree, str | None, str, tuple[str, ...]]] = [(tree, None, "", ())]
    while stack:
        node, label, suffix, ancestors = stack.pop()
        if label is not None:
            children = done.pop()
            if label in marked:
                label += PHRASE_MARK
            if binarization is None or len(children) <= 2:
                done[-1].append(_with(node, label, children))
            else:
                head = _head(label, children, binarization, rules, scheme)
                done[-1].append(_split(label, children, head, h_markov))
            continue
        if node.word is not None:
            if annotate_preterminals and suffix:
                node = Tree(node.label + suffix, (), node.word)
            done[-1].append(node)
            continue
        chain = [node.label]
        if collapse and node is not tree:
            while len(node.children) == 1 and node.children[0].word is None:
                node = node.children[0]
                chain.append(node.label)
        label = UNARY_SEP.join(chain)
        if depth:
            ancestors = (ancestors + _chain_categories(label, scheme))[-depth:]
            inner_suffix = PARENT_SEP + PARENT_SEP.join(reversed(ancestors))
        else:
            inner_suffix = ""
        done.append([])
        stack.append((node, label + suffix, "", ()))
        stack.extend([(child, None, inner_suffix, ancestors) for child in node.children[::-1]])
    return done[0][0]


@lru_cache(maxsize=65536)
def _chain_categories(label: str, scheme: LabelScheme) -> tuple[str, ...]:
    """The categories of the original nodes behind a (collapsed) phrase label, top down."""
    return tuple(scheme.category(part) for part in label.split(UNARY_SEP))


def _with(node: Tree, label: str, children: list[Tree]) -> Tree:
    """``node`` itself when nothing changed (sharing unchanged subtrees), else a new node."""
    if (
        label == node.label
        and len(children) == len(node.children)
        and all(a is b for a, b in zip(children, node.children))
    ):
        return node
    return Tree(label, tuple(children), node.word)


def _head(
    label: str,
    children: list[Tree],
    binarization: str,
    rules: HeadRules | None,
    scheme: LabelScheme | None,
) -> int:
    if binarization == "right":
        return 0
    if binarization == "left":
        return len(children) - 1
    labels = [_top_label(child.label) for child in children]
    # head binarisation: the callers pass the head rules and the scheme
    return cast(HeadRules, rules).find_head(labels, _bottom_label(label), cast(LabelScheme, scheme))


def _split(label: str, children: list[Tree], head: int, h_markov: int | None) -> Tree:
    # Top down: peel the outermost sibling left of the head while there is one, else
    # the outermost right of it, until two children remain.
    first, last = 0, len(children) - 1
    generated: list[str] = []
    peels: list[tuple[bool, Tree, str]] = []  # (peeled on the left, sibling, label below)
    while last - first > 1:
        on_left = first < head
        if on_left:
            sibling, first = children[first], first + 1
        else:
            sibling, last = children[last], last - 1
        generated.append(_top_label(sibling.label))
        if h_markov is None:
            context = generated
        else:
            context = generated[len(generated) - h_markov :] if h_markov else []
        side = LEFT_CONTEXT if on_left else RIGHT_CONTEXT
        peels.append((on_left, sibling, BIN_MARK + label + side + CONTEXT_JOIN.join(context)))
    node = Tree(peels[-1][2], (children[first], children[last]))
    for index in range(len(peels) - 1, -1, -1):
        on_left, sibling, _ = peels[index]
        above = peels[index - 1][2] if index else label
        node = Tree(above, (sibling, node) if on_left else (node, sibling))
    return node


def _restore(tree: Tree, *, splice: bool, strip: bool, expand: bool) -> Tree:
    """Splice intermediate nodes, strip annotations and expand unary chains in one traversal."""
    if splice and is_intermediate(tree.label):
        detail = f"the root '{tree.label}' is an intermediate node"
        raise TransformError(Errors.E010.format(name="binarize", detail=detail))
    done: list[list[Tree]] = [[]]
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded and node.children:
            done.append([])
            stack.append((node, True))
            stack.extend([(child, False) for child in node.children[::-1]])
            continue
        children = done.pop() if expanded else []
        label = node.label
        if splice and is_intermediate(label):
            if node.word is None:
                done[-1].extend(children)  # their own intermediates are already spliced
                continue
            detail = f"the preterminal '{label}' has an intermediate label"
            raise TransformError(Errors.E010.format(name="binarize", detail=detail))
        if strip:
            label = _strip_annotation(label)
        if expand and UNARY_SEP in label:
            done[-1].append(_expand(label, children, node.word))
        else:
            done[-1].append(_with(node, label, children))
    return done[0][0]


def _expand(label: str, children: list[Tree], word: str | None) -> Tree:
    parts = label.split(UNARY_SEP)
    if not all(parts):
        detail = f"empty part in the unary chain '{label}'"
        raise TransformError(Errors.E010.format(name="collapse_unaries", detail=detail))
    chain = Tree(parts[-1], tuple(children), word)
    for part in reversed(parts[:-1]):
        chain = Tree(part, (chain,))
    return chain


# ------------------------------------------------------ the pairs


def collapse_unaries(tree: Tree) -> Tree:
    """Merge every phrase whose only child is a phrase with that child: ``S -> VP`` to ``S::VP``.

    The root is never merged; a phrase over one preterminal stays a unary.
    RAISES TransformError: a label contains ``::`` or a phrase label begins or ends with ``:``.
    """
    validate_labels(tree, (UNARY_SEP,))
    return _transform(tree, collapse=True)


def expand_unaries(tree: Tree) -> Tree:
    """Undo ``collapse_unaries``: every ``X::Y`` node becomes ``X`` over ``Y`` over its children.

    RAISES TransformError: a chain has an empty part (``S::``).
    """
    return _restore(tree, splice=False, strip=False, expand=True)


def annotate_parents(
    tree: Tree,
    v_markov: int = 2,
    scheme: str | LabelScheme = "penn",
    *,
    annotate_preterminals: bool = False,
) -> Tree:
    """Append the categories of each node's ``v_markov - 1`` nearest ancestors to its label.

    v_markov (int): 1 leaves labels alone, 2 adds the parent (``NP^S``), 3 also the
        grandparent (``NP^VP^S``).
    scheme (str | LabelScheme): reduces ancestor labels to categories.
    annotate_preterminals (bool): annotate POS tags too (``DT^NP``).
    RAISES TransformError: a label contains ``^``.
    """
    _check_order("v_markov", v_markov, 1)
    validate_labels(tree, (PARENT_SEP,))
    return _transform(
        tree,
        v_markov=v_markov,
        scheme=get_scheme(scheme),
        annotate_preterminals=annotate_preterminals,
    )


def strip_annotations(tree: Tree) -> Tree:
    """Undo ``annotate_parents``: cut every label (phrases and tags) at its first ``^``."""
    return _restore(tree, splice=False, strip=True, expand=False)


def binarize(
    tree: Tree,
    binarization: str = "right",
    h_markov: int | None = 1,
    *,
    head_rules: str | HeadRules = "collins",
    scheme: str | LabelScheme = "penn",
) -> Tree:
    """Split every phrase with more than two children into binary intermediate nodes.

    binarization (str): "right", "left" or "head" (see the module docstring).
    h_markov (int | None): how many already generated siblings an intermediate label
        records; None records all of them.
    head_rules (str | HeadRules): head rules for "head" binarisation.
    scheme (str | LabelScheme): reduces labels to categories for the head rules.
    RAISES TransformError: a label contains ``@``, ``|<`` or ``|>``.
    """
    _check_choice("binarization", binarization, BINARIZATIONS)
    _check_order("h_markov", h_markov, 0, optional=True)
    validate_labels(tree, (BIN_MARK, LEFT_CONTEXT, RIGHT_CONTEXT))
    return _transform(
        tree,
        binarization=binarization,
        h_markov=h_markov,
        rules=get_head_rules(head_rules),
        scheme=get_scheme(scheme),
    )


def debinarize(tree: Tree) -> Tree:
    """Undo ``binarize``: splice every intermediate (``@``) phrase into its parent.

    RAISES TransformError: the root or a preterminal has an intermediate label.
    """
    return _restore(tree, splice=True, strip=False, expand=False)


def mark_phrases(tree: Tree, labels: Iterable[str]) -> Tree:
    """Append ``PHRASE_MARK`` (``^``) to the label of every phrase labelled one of ``labels``.

    The labels of POS tags do not change, so a phrase ``NN`` over tags ``NN``
    becomes ``NN^`` (see the module docstring). ``strip_annotations`` undoes it.
    RAISES TransformError: a label contains ``^``.
    """
    validate_labels(tree, (PARENT_SEP,))
    return _transform(tree, marked=frozenset(labels))


def tag_phrase_labels(trees: Iterable[Tree]) -> set[str]:
    """The labels of ``trees`` used both for POS tags and for phrases (TOP excluded)."""
    tags: set[str] = set()
    phrases: set[str] = set()
    for tree in trees:
        for node in tree.subtrees():
            (tags if node.word is not None else phrases).add(node.label)
    phrases.discard(ROOT_LABEL)
    return tags & phrases


# ------------------------------------------------------------ pipeline


def _check_choice(name: str, value: object, choices: tuple) -> None:
    if value not in choices or isinstance(value, bool) != isinstance(choices[0], bool):
        expected = "one of " + ", ".join(repr(choice) for choice in choices)
        raise ValueError(Errors.E011.format(value=value, name=name, expected=expected))


def _check_order(name: str, value: object, minimum: int, *, optional: bool = False) -> None:
    if (value is None and optional) or (_is_int(value) and value >= minimum):
        return
    expected = f"an integer >= {minimum}" + (" or None" if optional else "")
    raise ValueError(Errors.E011.format(value=value, name=name, expected=expected))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _marked_labels(labels: object) -> tuple[str, ...]:
    """``TransformSpec.marked_phrases`` checked and sorted: phrase labels, not TOP,
    intermediate labels or unary chains (those are never POS tags)."""
    expected = "a list of POS-tag labels that are also phrase labels"
    if isinstance(labels, str) or not isinstance(labels, (list, tuple)):
        raise ValueError(Errors.E011.format(value=labels, name="marked_phrases", expected=expected))
    for label in labels:
        if (
            not isinstance(label, str)
            or not label
            or label == ROOT_LABEL
            or is_intermediate(label)
            or UNARY_SEP in label
        ):
            raise ValueError(
                Errors.E011.format(value=label, name="marked_phrases", expected=expected)
            )
    return tuple(sorted(set(labels)))


@dataclass(frozen=True)
class TransformSpec:
    """The settings of a ``TransformPipeline``; stored as JSON beside a grammar.

    binarization (str): "right" (default: it needs no head table, so it suits every
        label set; it is the Berkeley parser's default, and it beat left binarisation
        with PCFG-LAs in Le Roux et al. 2013), "left" or "head" (with ``head_rules``).
    h_markov (int | None): horizontal markovisation order; None keeps every sibling.
        The default 1 with ``v_markov=2`` is Klein & Manning's (2003) setting, which
        latent states then refine.
    v_markov (int): vertical markovisation order (1: none, 2: parent, 3: grandparent).
    collapse_unary (bool): collapse unary chains into ``X::Y`` nodes.
    keep_functions (bool): keep function tags; if False they are stripped and
        ``invert(apply(t)) == strip_functions(t)``.
    annotate_preterminals (bool): annotate POS tags with their ancestors too.
    scheme (str): label scheme of the treebank: "penn", "floresta" or "cess".
    head_rules (str): head rules for "head" binarisation ("collins", "ppche", "first", "last").
    marked_phrases (tuple[str, ...]): transformed phrase labels that are also POS tags;
        their phrases get a trailing ``^`` (see the module docstring). Found on the
        training trees by ``transform_treebank``, so estimators set it; written to
        JSON only when not empty (specs without it read as before).
    """

    binarization: str = TRANSFORM.binarization
    h_markov: int | None = TRANSFORM.h_markov
    v_markov: int = TRANSFORM.v_markov
    collapse_unary: bool = True
    keep_functions: bool = TRANSFORM.keep_functions
    annotate_preterminals: bool = False
    scheme: str = "penn"
    head_rules: str = "collins"
    marked_phrases: tuple[str, ...] = ()

    def __post_init__(self):
        _check_choice("binarization", self.binarization, BINARIZATIONS)
        _check_order("h_markov", self.h_markov, 0, optional=True)
        _check_order("v_markov", self.v_markov, 1)
        for name in ("collapse_unary", "keep_functions", "annotate_preterminals"):
            _check_choice(name, getattr(self, name), (True, False))
        # names, not objects, so that the spec stays JSON-serialisable
        _check_choice("scheme", self.scheme, tuple(SCHEMES))
        _check_choice("head_rules", self.head_rules, tuple(HEAD_RULES))
        # a sorted tuple, so that specs read from JSON lists compare equal
        object.__setattr__(self, "marked_phrases", _marked_labels(self.marked_phrases))

    def to_dict(self) -> dict:
        """The spec as a JSON-serialisable dict, with the format ``version``."""
        settings = asdict(self)
        if self.marked_phrases:
            settings["marked_phrases"] = list(self.marked_phrases)
            return {"version": SPEC_VERSION, **settings}
        del settings["marked_phrases"]  # the files of other treebanks stay as they were
        return {"version": 1, **settings}

    @classmethod
    def from_dict(cls, data: Mapping) -> TransformSpec:
        """Read a dict written by ``to_dict``; missing settings take their defaults.

        RAISES ValueError: unknown keys, invalid values, or a newer format version.
        """
        settings = dict(data)
        version = settings.pop("version", SPEC_VERSION)
        if not _is_int(version) or not 1 <= version <= SPEC_VERSION:
            expected = (
                f"a transform spec format version from 1 to {SPEC_VERSION} "
                "(files written by a newer spacy_lpcfg need that version)"
            )
            raise ValueError(Errors.E011.format(value=version, name="version", expected=expected))
        known = [field.name for field in fields(cls)]
        for key in settings:
            if key not in known:
                expected = "a setting among " + ", ".join(known)
                raise ValueError(
                    Errors.E011.format(value=key, name="transform spec key", expected=expected)
                )
        return cls(**settings)


def default_head_rules(scheme: str, language: str) -> str:
    """The head rules of a treebank when none are given: Collins' for English Penn
    trees, the PPCHE rules for other Penn-scheme treebanks (IcePaHC), else the first
    child (Floresta, CESS-ESP)."""
    if scheme == "penn":
        return "collins" if language == "en" else "ppche"
    return "first"


class TransformPipeline:
    """Function stripping, unary collapse, parent annotation and binarisation, with the inverse.

    spec (TransformSpec): the settings.
    """

    def __init__(self, spec: TransformSpec | None = None):
        self.spec = spec if spec is not None else TransformSpec()
        self._scheme = get_scheme(self.spec.scheme)
        self._head_rules = get_head_rules(self.spec.head_rules)
        self._marked = frozenset(self.spec.marked_phrases)

    def apply(self, tree: Tree) -> Tree:
        """The tree in the grammar's label space (binary, annotated, unary chains collapsed).

        RAISES TransformError: a label contains a reserved separator.
        """
        spec = self.spec
        validate_labels(tree)
        if not spec.keep_functions:
            tree = strip_functions(tree, self._scheme)
            if spec.collapse_unary:  # a category can end with ':' ('X:-SBJ' -> 'X:')
                validate_labels(tree, (UNARY_SEP,))
        return _transform(
            tree,
            collapse=spec.collapse_unary,
            v_markov=spec.v_markov,
            scheme=self._scheme,
            annotate_preterminals=spec.annotate_preterminals,
            binarization=spec.binarization,
            h_markov=spec.h_markov,
            rules=self._head_rules,
            marked=self._marked,
        )

    def invert(self, tree: Tree) -> Tree:
        """A tree over the transformed label space (``apply``'s output or a parse) in treebank labels.

        RAISES TransformError: shapes no transformed tree can have (see the module docstring).
        """
        return _restore(tree, splice=True, strip=True, expand=True)

    def apply_all(self, trees: Iterable[Tree]) -> list[Tree]:
        """``apply`` to every tree."""
        return [self.apply(tree) for tree in trees]

    def invert_all(self, trees: Iterable[Tree]) -> list[Tree]:
        """``invert`` every tree."""
        return [self.invert(tree) for tree in trees]

    def to_dict(self) -> dict:
        """The spec as JSON-serialisable data (``TransformSpec.to_dict``)."""
        return self.spec.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping) -> TransformPipeline:
        """The pipeline of a spec read with ``TransformSpec.from_dict``."""
        return cls(TransformSpec.from_dict(data))

    def __repr__(self) -> str:
        return f"TransformPipeline({self.spec!r})"


def transform_treebank(
    trees: Iterable[Tree], spec: TransformSpec, *, desc: str = "transforming"
) -> tuple[TransformSpec, list[Tree]]:
    """Apply the transforms to training trees, marking the phrases whose labels are also tags.

    Whether a phrase label clashes with a tag shows only in the transformed
    treebank (it depends on the Markov orders, function tags and annotated tags),
    so the trees are transformed, and transformed again with the clashing labels
    added to ``marked_phrases`` when there are any (see the module docstring).
    trees (Iterable[Tree]): training trees in treebank labels.
    spec (TransformSpec): the transforms.
    desc (str): label of the progress bar (shown on a terminal).
    RETURNS (tuple[TransformSpec, list[Tree]]): the spec to store with the grammar
        (``spec`` itself when nothing clashes) and the transformed trees.
    RAISES TransformError: a label contains a reserved separator.
    """
    trees = trees if isinstance(trees, (list, tuple)) else list(trees)
    pipeline = TransformPipeline(spec)
    bar = progress(trees, desc=desc, unit="tree")
    transformed = [pipeline.apply(tree) for tree in bar]
    clashes = tag_phrase_labels(transformed)
    if not clashes:
        return spec, transformed
    spec = replace(spec, marked_phrases=tuple(clashes | set(spec.marked_phrases)))
    pipeline = TransformPipeline(spec)
    return spec, [pipeline.apply(tree) for tree in trees]
