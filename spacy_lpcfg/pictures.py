"""Constituency trees drawn as SVG pictures and HTML pages (pure Python, deterministic).

The layout is the classic top-down one: each phrase on the row of its depth,
centred over its first and last child; all POS tags on one row under the
deepest phrase, each right above its word; the words on the bottom row in
sentence order. An edge to a tag more than one row down bends under its
parent and drops straight down the tag's column, so edges never cross. Phrase
labels show their function tags (``NP-SBJ``): the category bold, the function
tags and indices lighter.

Text is never squeezed: a picture is as wide as its words need. Text widths
are estimated from the characters (advance widths of DejaVu Sans or Liberation
Sans, whichever is wider, so another font only adds space; wide East Asian
characters take a full em), and the columns are pushed apart until no two
labels of a row overlap and no label sits on an edge. Long sentences make wide
pictures: pages and notebooks scroll them sideways rather than wrap a tree.

``layout_tree`` returns the geometry as data (``TreeLayout``: text boxes and
lines), which ``render_trees`` draws and tests check. Spans and Docs are drawn
through ``spacy_lpcfg.render`` (``pipeline.pictures``); this module knows only ``Tree``.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import NoReturn
from xml.sax.saxutils import escape as _escape_xml

from .errors import Errors
from .trees.labels import LabelScheme, get_scheme
from .trees.tree import ROOT_LABEL, Tree

# Advance widths (1/100 em, rounded up) of printable ASCII, ' ' to '~': the larger of
# DejaVu Sans and Liberation Sans (Arial's metrics), regular and bold.
_ASCII = "".join(chr(code) for code in range(32, 127))
_REGULAR = (
    "32 41 46 84 64 96 78 28 40 40 50 84 32 37 32 34 64 64 64 64 64 64 64 64 64 64 34 34 84 84 84 "
    "56 102 69 69 73 78 67 62 78 76 30 50 67 56 87 75 79 67 79 73 67 62 74 69 99 69 67 69 40 34 "
    "40 84 56 50 62 64 55 64 62 36 64 64 28 28 58 28 98 64 62 64 64 42 53 40 64 60 82 60 60 53 64 "
    "34 64 84"
)
_BOLD = (
    "35 46 53 84 70 101 88 31 46 46 53 84 38 42 38 37 70 70 70 70 70 70 70 70 70 70 40 40 84 84 "
    "84 62 100 78 77 74 84 69 69 83 84 38 56 78 64 100 84 86 74 86 78 73 69 82 78 111 78 73 73 46 "
    "37 46 84 56 50 68 72 60 72 68 44 72 72 35 35 67 35 105 72 69 72 72 50 60 48 72 66 93 65 66 "
    "59 72 37 72 84"
)
ASCII_WIDTHS = {ch: int(w) / 100 for ch, w in zip(_ASCII, _REGULAR.split(), strict=True)}
ASCII_BOLD_WIDTHS = {ch: int(w) / 100 for ch, w in zip(_ASCII, _BOLD.split(), strict=True)}
# Common non-ASCII punctuation of treebanks (regular; bold adds BOLD_EXTRA).
OTHER_WIDTHS = {"—": 1.0, "–": 0.5, "…": 1.0, "“": 0.52, "”": 0.52, "‘": 0.32, "’": 0.32}
OTHER_WIDTHS.update({"«": 0.56, "»": 0.56, "„": 0.52, "·": 0.32, "°": 0.5, "€": 0.64})
WIDE_WIDTH = 1.0  # East Asian wide and fullwidth characters: one em
DEFAULT_WIDTH = 0.8  # any other character: wider than most letters of most scripts
BOLD_EXTRA = 0.1
HINTING_SLACK = 0.5  # px per character: hinted glyph advances are rounded to whole pixels
ASCENT, DESCENT = 0.95, 0.25  # text box above and below the baseline, in em (DejaVu: .93, .24)
EPSILON = 1e-6

DEFAULT_FONTS = '"DejaVu Sans", Verdana, "Liberation Sans", Arial, sans-serif'


@dataclass(frozen=True)
class RenderStyle:
    """How a tree is drawn. Every field is a keyword option of ``render`` / ``render_trees``.

    font_family (str): CSS font list of all text.
    font_size (float): size of words and phrase labels, in px; tags are ``tag_scale`` of it.
    tag_scale (float): size of tags relative to ``font_size``.
    word_color, tag_color, category_color, function_color, line_color (str): CSS colours;
        ``function_color`` draws function tags and indices (``-SBJ`` of ``NP-SBJ``).
    background (str | None): background colour; None for transparent.
    bold_categories (bool): phrase categories in bold.
    row_height (float): vertical distance of phrase rows, in em.
    word_gap (float): the least horizontal space between two texts of a row, in em.
    line_width (float): stroke width of the edges, in px.
    margin (float): space around the tree, in px.
    """

    font_family: str = DEFAULT_FONTS
    font_size: float = 14.0
    tag_scale: float = 0.86
    word_color: str = "#1b1b1b"
    tag_color: str = "#2a6f97"
    category_color: str = "#1d3557"
    function_color: str = "#8d99ae"
    line_color: str = "#b8c0cc"
    background: str | None = "#ffffff"
    bold_categories: bool = True
    row_height: float = 2.4
    word_gap: float = 0.9
    line_width: float = 1.2
    margin: float = 12.0

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.type == "float":
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    _bad_option(field.name, value, "a number")
                lowest = 0.0 if field.name in ("margin", "word_gap") else EPSILON
                if not (math.isfinite(value) and value >= lowest):
                    _bad_option(field.name, value, f"a finite number >= {lowest:g}")
            elif field.type == "bool":
                if not isinstance(value, bool):
                    _bad_option(field.name, value, "True or False")
            elif not (isinstance(value, str) or (value is None and field.name == "background")):
                _bad_option(field.name, value, "a string")

    @property
    def tag_size(self) -> float:
        return round(self.font_size * self.tag_scale, 1)  # as written in the SVG

    @classmethod
    def from_options(cls, options: dict) -> RenderStyle:
        """A style from keyword options. RAISES ValueError: an unknown option name."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                Errors.E030.format(names=", ".join(unknown), known=", ".join(sorted(known)))
            )
        return replace(cls(), **options) if options else cls()


def _bad_option(name: str, value, expected: str) -> NoReturn:
    raise ValueError(Errors.E031.format(name=name, value=_excerpt(repr(value)), expected=expected))


def _excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Text widths -------------------------------------------------------------------


def char_width(ch: str, bold: bool = False) -> float:
    """Estimated advance width of one character, in em."""
    table = ASCII_BOLD_WIDTHS if bold else ASCII_WIDTHS
    if ch in table:
        return table[ch]
    extra = BOLD_EXTRA if bold else 0.0
    if ch in OTHER_WIDTHS:
        return OTHER_WIDTHS[ch] + extra
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0.0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return WIDE_WIDTH
    base = unicodedata.normalize("NFD", ch)[0]  # á -> a
    if base in table:
        return table[base]
    return DEFAULT_WIDTH + extra


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Estimated width of ``text`` at font size ``size`` (px), at least the drawn width."""
    widths = [char_width(ch, bold) for ch in text]
    return sum(size * width + HINTING_SLACK for width in widths if width)


# Layout data -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextBox:
    """One text of a picture and the box it is drawn in.

    kind (str): "phrase", "tag" or "word".
    text (str): the text drawn.
    parts (tuple[tuple[str, str], ...]): ``(text, role)`` pieces of a phrase label, role
        "category" or "function"; one "tag" or "word" piece otherwise.
    x (float): the horizontal centre; baseline (float): the baseline; size (float): font size.
    width (float): the estimated width.
    """

    kind: str
    text: str
    parts: tuple[tuple[str, str], ...]
    x: float
    baseline: float
    size: float
    width: float

    @property
    def left(self) -> float:
        return self.x - self.width / 2

    @property
    def right(self) -> float:
        return self.x + self.width / 2

    @property
    def top(self) -> float:
        return self.baseline - ASCENT * self.size

    @property
    def bottom(self) -> float:
        return self.baseline + DESCENT * self.size


@dataclass(frozen=True, slots=True)
class Line:
    """An edge from the bottom centre of box ``parent`` to the top centre of box ``child``
    (indices into ``TreeLayout.boxes``), through ``points``: two, or three when it bends
    to drop straight down to a tag on the tag row."""

    parent: int
    child: int
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class TreeLayout:
    """The geometry of one tree: boxes in pre-order (a preterminal's tag, then its word)."""

    boxes: tuple[TextBox, ...]
    lines: tuple[Line, ...]
    width: float
    height: float
    words: tuple[str, ...]

    @property
    def sentence(self) -> str:
        return " ".join(self.words)


@dataclass
class _Nodes:
    """A tree flattened in pre-order, with what the layout needs per node."""

    labels: list[str]
    words: list[str | None]
    children: list[list[int]]
    depth: list[int]
    first: list[int]  # first and last word (leaf) index under the node
    last: list[int]
    leaf_node: list[int]  # node index of each preterminal, in word order


def _flatten(tree: Tree) -> _Nodes:
    labels: list[str] = []
    words: list[str | None] = []
    children: list[list[int]] = []
    depth: list[int] = []
    leaf_node: list[int] = []
    stack: list[tuple[Tree, int]] = [(tree, -1)]
    while stack:
        node, parent = stack.pop()
        index = len(labels)
        labels.append(node.label)
        words.append(node.word)
        children.append([])
        depth.append(depth[parent] + 1 if parent >= 0 else 0)
        if parent >= 0:
            children[parent].append(index)
        if node.word is not None:
            leaf_node.append(index)
        elif not node.children:
            raise ValueError(Errors.E032.format(label=_excerpt(node.label)))
        stack.extend((child, index) for child in reversed(node.children))
    n = len(labels)
    first, last = [0] * n, [0] * n
    for position, index in enumerate(leaf_node):
        first[index] = last[index] = position
    for index in reversed(range(n)):  # children before parents
        kids = children[index]
        if kids:
            first[index], last[index] = first[kids[0]], last[kids[-1]]
    return _Nodes(labels, words, children, depth, first, last, leaf_node)


def _drawn_root(tree: Tree, show_root: bool) -> Tree:
    """The node drawn on top: a ``TOP`` wrapper over one phrase is left out."""
    while (
        not show_root
        and tree.label == ROOT_LABEL
        and len(tree.children) == 1
        and tree.children[0].word is None
    ):
        tree = tree.children[0]
    return tree


def label_parts(label: str, scheme: LabelScheme) -> tuple[tuple[str, str], ...]:
    """The label cut into its category and the rest (function tags, indices), in order.

    ``NP-SBJ-1`` -> ``(("NP", "category"), ("-SBJ-1", "function"))``;
    Floresta ``SUBJ+np`` -> ``(("SUBJ+", "function"), ("np", "category"))``.
    """
    category = scheme.category(label) if label else ""
    if not category or category == label:
        return ((label, "category"),)
    at = label.find(category) if label.startswith(category) else label.rfind(category)
    if at < 0:
        return ((label, "category"),)
    pieces = (
        (label[:at], "function"),
        (category, "category"),
        (label[at + len(category) :], "function"),
    )
    return tuple(piece for piece in pieces if piece[0])


class _Columns:
    """Horizontal positions: one column per word, as wide as its word or tag, separated by
    ``gap`` plus the space added to pull texts apart. A phrase is centred between its
    first and last child, so it moves with the columns under it."""

    def __init__(self, nodes: _Nodes, widths: Sequence[float], gap: float):
        self.nodes = nodes
        self.widths = widths
        self.gap = gap
        self.extra = [0.0] * max(len(widths) - 1, 0)  # space added after each word

    def positions(self) -> list[float]:
        nodes = self.nodes
        centres, at = [], 0.0
        for leaf, width in enumerate(self.widths):
            if leaf:
                at += self.widths[leaf - 1] / 2 + self.gap + self.extra[leaf - 1] + width / 2
            centres.append(at)
        x = [0.0] * len(nodes.labels)
        for index in reversed(range(len(x))):
            kids = nodes.children[index]
            x[index] = (x[kids[0]] + x[kids[-1]]) / 2 if kids else centres[nodes.first[index]]
        return x

    def widen_after(self, leaf: int, amount: float) -> None:
        self.extra[leaf] += amount + EPSILON


def layout_tree(
    tree: Tree,
    style: RenderStyle = RenderStyle(),
    *,
    scheme: str | LabelScheme = "penn",
    show_root: bool = False,
) -> TreeLayout:
    """Place every label, tag and word of ``tree``.

    Phrases go on the row of their depth, all tags on one row under the deepest
    phrase, the words under their tags. An edge to a tag below the next row bends
    and drops straight down in the tag's column, so no two edges cross.
    scheme (str | LabelScheme): how phrase labels split into category and function tags.
    show_root (bool): draw a ``TOP`` node over a single phrase (left out by default).
    RAISES ValueError: a tree without words, or a phrase without children.
    """
    scheme = get_scheme(scheme)
    nodes = _flatten(_drawn_root(tree, show_root))
    size, tag_size = round(style.font_size, 1), style.tag_size  # the sizes the SVG states
    n_nodes = len(nodes.labels)
    parts: list[tuple[tuple[str, str], ...]] = []
    widths: list[float] = []
    for index, label in enumerate(nodes.labels):
        if nodes.words[index] is not None:
            parts.append(((label, "tag"),))
            widths.append(text_width(label, tag_size))
            continue
        pieces = label_parts(label, scheme)
        parts.append(pieces)
        bold = style.bold_categories
        widths.append(
            sum(text_width(text, size, bold and role == "category") for text, role in pieces)
        )
    word_widths = [text_width(nodes.words[i] or "", size) for i in nodes.leaf_node]
    columns = _Columns(
        nodes,
        [max(word, widths[node]) for word, node in zip(word_widths, nodes.leaf_node)],
        style.word_gap * size,
    )
    tag_row = max(nodes.depth[i] for i in nodes.leaf_node)
    rows: dict[int, list[int]] = {}  # phrase rows, each left to right (pre-order)
    for index in range(n_nodes):
        if nodes.words[index] is None:
            rows.setdefault(nodes.depth[index], []).append(index)

    # Pull apart the labels of each row, deepest row first: widening the space
    # between two words never brings two phrases of a row closer, so later rows
    # cannot undo earlier ones.
    x = columns.positions()
    gap = columns.gap
    for depth in sorted(rows, reverse=True):
        members = rows[depth]
        pushed = False
        for left, right in zip(members, members[1:]):
            overlap = (x[left] + widths[left] / 2 + gap) - (x[right] - widths[right] / 2)
            if overlap > EPSILON:
                columns.widen_after(nodes.last[left], overlap)
                pushed = True
        if pushed:
            x = columns.positions()
    # Keep the vertical drop of each edge to a tag clear of the labels it passes.
    clearance = 0.3 * size
    for leaf, node in enumerate(nodes.leaf_node):
        for depth in range(nodes.depth[node], tag_row):
            for other in rows.get(depth, ()):
                low = x[other] - widths[other] / 2 - clearance
                high = x[other] + widths[other] / 2 + clearance
                if low < x[node] < high:
                    if nodes.last[other] < leaf:  # the label is left of the drop
                        columns.widen_after(nodes.last[other], high - x[node])
                    else:
                        columns.widen_after(nodes.first[other] - 1, x[node] - low)
                    x = columns.positions()

    # Rows top to bottom; then everything shifted right of the margin.
    row = style.row_height * size

    def baseline(depth: int) -> float:
        return style.margin + ASCENT * size + depth * row

    word_baseline = baseline(tag_row) + DESCENT * tag_size + ASCENT * size + 0.45 * row
    lefts = [x[i] - widths[i] / 2 for i in range(n_nodes)]
    lefts += [x[node] - w / 2 for w, node in zip(word_widths, nodes.leaf_node)]
    rights = [x[i] + widths[i] / 2 for i in range(n_nodes)]
    rights += [x[node] + w / 2 for w, node in zip(word_widths, nodes.leaf_node)]
    shift = style.margin - min(lefts)
    boxes: list[TextBox] = []
    box_of = [0] * n_nodes
    word_box: dict[int, int] = {}
    for index in range(n_nodes):
        box_of[index] = len(boxes)
        word = nodes.words[index]
        at = x[index] + shift
        if word is None:
            boxes.append(
                TextBox(
                    "phrase",
                    nodes.labels[index],
                    parts[index],
                    at,
                    baseline(nodes.depth[index]),
                    size,
                    widths[index],
                )
            )
            continue
        boxes.append(
            TextBox(
                "tag",
                nodes.labels[index],
                parts[index],
                at,
                baseline(tag_row),
                tag_size,
                widths[index],
            )
        )
        word_box[index] = len(boxes)
        width = word_widths[nodes.first[index]]
        boxes.append(TextBox("word", word, ((word, "word"),), at, word_baseline, size, width))
    lines: list[Line] = []
    for index in range(n_nodes):
        top = boxes[box_of[index]]
        if index in word_box:
            below = boxes[word_box[index]]
            points: tuple[tuple[float, float], ...] = ((top.x, top.bottom), (below.x, below.top))
            lines.append(Line(box_of[index], word_box[index], points))
            continue
        for kid in nodes.children[index]:
            below = boxes[box_of[kid]]
            points = ((top.x, top.bottom), (below.x, below.top))
            if nodes.words[kid] is not None and nodes.depth[kid] < tag_row:
                bend = (below.x, baseline(nodes.depth[kid]) - ASCENT * size)
                points = (points[0], bend, points[1])
            lines.append(Line(box_of[index], box_of[kid], points))
    width = max(rights) + shift + style.margin
    height = word_baseline + DESCENT * size + style.margin
    words = tuple(nodes.words[i] or "" for i in nodes.leaf_node)
    return TreeLayout(tuple(boxes), tuple(lines), width, height, words)


# SVG ---------------------------------------------------------------------------

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
STACK_GAP = 16.0  # px between the trees of one picture


def escape_xml(text: str, *, quote: bool = False) -> str:
    """``text`` safe inside XML: ``& < >`` (and quotes in attributes) escaped,
    characters XML cannot hold (controls, surrogates) replaced by U+FFFD."""
    clean = "".join(ch if _xml_char(ch) else "\ufffd" for ch in text)
    return _escape_xml(clean, {'"': "&quot;", "'": "&apos;"} if quote else {})


def _xml_char(ch: str) -> bool:
    code = ord(ch)
    if code < 0x20:
        return ch in "\t\n\r"
    return not (0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF))


def _number(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


class TreeSVG(str):
    """An SVG picture (a ``str``) that Jupyter shows inline.

    layouts (tuple[TreeLayout, ...]): the geometry of each tree, top to bottom.
    """

    layouts: tuple[TreeLayout, ...]

    def __new__(cls, svg: str, layouts: Sequence[TreeLayout] = ()) -> TreeSVG:
        picture = super().__new__(cls, svg)
        picture.layouts = tuple(layouts)
        return picture

    def _repr_svg_(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        # Wide trees scroll sideways inside the notebook cell instead of shrinking.
        return f'<div style="overflow-x: auto; max-width: 100%">{self}</div>'

    def save(self, path: str | Path) -> None:
        """Write the picture as an ``.svg`` file (UTF-8)."""
        Path(path).write_text(str(self), encoding="utf-8")


def _attr(value: str) -> str:
    return escape_xml(value, quote=True)


def _tree_elements(layout: TreeLayout, style: RenderStyle) -> list[str]:
    out = [
        f'<g fill="none" stroke="{_attr(style.line_color)}" '
        f'stroke-width="{_number(style.line_width)}" stroke-linecap="round" '
        'stroke-linejoin="round">'
    ]
    for line in layout.lines:
        points = " ".join(f"{_number(x)},{_number(y)}" for x, y in line.points)
        out.append(f'<polyline points="{points}"/>')
    out.append("</g>")
    colours = {
        "category": style.category_color,
        "function": style.function_color,
        "tag": style.tag_color,
        "word": style.word_color,
    }
    out.append('<g text-anchor="middle">')
    for box in layout.boxes:
        spans = []
        for text, role in box.parts:
            bold = ' font-weight="bold"' if role == "category" and style.bold_categories else ""
            spans.append(f'<tspan fill="{_attr(colours[role])}"{bold}>{escape_xml(text)}</tspan>')
        out.append(
            f'<text class="{box.kind}" x="{_number(box.x)}" y="{_number(box.baseline)}" '
            f'font-size="{_number(box.size)}">{"".join(spans)}</text>'
        )
    out.append("</g>")
    return out


def svg_document(layouts: Sequence[TreeLayout], style: RenderStyle) -> str:
    """One ``<svg>`` holding each tree as a nested ``<svg>``, stacked top to bottom."""
    width = max(layout.width for layout in layouts)
    height = sum(layout.height for layout in layouts) + STACK_GAP * (len(layouts) - 1)
    w, h = _number(math.ceil(width)), _number(math.ceil(height))
    label = _attr(" / ".join(layout.sentence for layout in layouts))
    out = [
        f'<svg xmlns="{SVG_NAMESPACE}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'role="img" aria-label="{label}" font-family="{_attr(style.font_family)}">'
    ]
    if style.background is not None:
        out.append(f'<rect width="100%" height="100%" fill="{_attr(style.background)}"/>')
    top = 0.0
    for layout in layouts:
        tree_w, tree_h = _number(layout.width), _number(layout.height)
        out.append(
            f'<svg class="tree" x="0" y="{_number(top)}" width="{tree_w}" height="{tree_h}" '
            'overflow="visible">'
        )
        out.extend(_tree_elements(layout, style))
        out.append("</svg>")
        top += layout.height + STACK_GAP
    out.append("</svg>")
    return "\n".join(out)


def as_trees(obj: Tree | str | Iterable[Tree]) -> list[Tree]:
    """Trees from a Tree, a string of Penn-bracketed trees, or an iterable of Trees.

    RAISES TypeError: anything else; ValueError: no tree, or malformed brackets.
    """
    if isinstance(obj, Tree):
        return [obj]
    if isinstance(obj, str):
        from .trees.brackets import iter_raw_trees, raw_to_tree

        trees = [raw_to_tree(raw, line=line) for raw, line in iter_raw_trees(obj)]
        if not trees:
            raise ValueError(Errors.E034.format(what=f"the string {_excerpt(repr(obj))}"))
        return trees
    if isinstance(obj, Iterable) and not isinstance(obj, (bytes, dict)):
        trees = list(obj)
        bad = next((item for item in trees if not isinstance(item, Tree)), None)
        if bad is None and trees:
            return trees
        if not trees:
            raise ValueError(Errors.E034.format(what="an empty sequence"))
        raise TypeError(Errors.E033.format(kind=type(bad).__name__))
    raise TypeError(Errors.E033.format(kind=type(obj).__name__))


def render_trees(
    obj: Tree | str | Iterable[Tree],
    *,
    scheme: str | LabelScheme = "penn",
    show_root: bool = False,
    **options,
) -> TreeSVG:
    """Draw one or more trees as one SVG picture, stacked top to bottom.

    obj (Tree | str | Iterable[Tree]): a tree, trees, or Penn-bracketed text of trees.
    scheme (str | LabelScheme): the label notation ("penn", "floresta", "cess"), for
        telling categories from function tags.
    show_root (bool): draw the ``TOP`` node over a single phrase.
    **options: ``RenderStyle`` fields (font_size, colours, ...).
    RETURNS (TreeSVG): the SVG text, with the geometry in ``.layouts``.
    RAISES ValueError: an unknown option or bad value, a tree without words.
    """
    style = RenderStyle.from_options(options)
    layouts = [
        layout_tree(tree, style, scheme=scheme, show_root=show_root) for tree in as_trees(obj)
    ]
    return TreeSVG(svg_document(layouts, style), layouts)


# HTML --------------------------------------------------------------------------

PAGE_STYLE = """\
body { margin: 24px; color: #1b1b1b; background: #ffffff;
       font-family: "DejaVu Sans", Verdana, "Liberation Sans", Arial, sans-serif; }
h1 { font-size: 20px; font-weight: normal; margin: 0 0 20px; }
figure { margin: 0 0 28px; }
figcaption { font-size: 14px; margin: 0 0 6px; color: #333333; }
figcaption .number { color: #8d99ae; margin-right: 0.6em; }
.picture { overflow-x: auto; }
.picture svg { display: block; }"""


def html_page(pictures: Sequence[tuple[str, str]], *, title: str = "Constituency trees") -> str:
    """A standalone HTML page: each picture in a figure under its caption.

    pictures (Sequence[tuple[str, str]]): ``(svg, caption)`` pairs; the caption is text
        (usually the sentence), escaped here.
    """
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escape_xml(title)}</title>",
        f"<style>\n{PAGE_STYLE}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{escape_xml(title)}</h1>",
    ]
    for number, (svg, caption) in enumerate(pictures, 1):
        out.append(
            f'<figure id="tree-{number}"><figcaption><span class="number">{number}</span>'
            f"{escape_xml(caption)}</figcaption>"
        )
        out.append(f'<div class="picture">\n{svg}\n</div></figure>')
    out += ["</body>", "</html>", ""]
    return "\n".join(out)
