"""Tree pictures (spacy_lpcfg.render, spacy_lpcfg.pictures): content, geometry, escaping,
spaCy Docs and Spans, the ``render`` command, Jupyter, and (slow) a real headless Chromium."""

from __future__ import annotations

import html as html_module
import json
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from itertools import islice
from pathlib import Path

import pytest
from browser import CHROMIUM, chromium
from typer.testing import CliRunner

import spacy_lpcfg
from spacy_lpcfg.cli import app
from spacy_lpcfg.pictures import (
    RenderStyle,
    TreeLayout,
    TreeSVG,
    label_parts,
    layout_tree,
    render_trees,
    text_width,
)
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.formats.reader import TreebankReader
from spacy_lpcfg.trees.labels import get_scheme

REPO = Path(__file__).resolve().parents[1]
SHARED_MODEL = REPO.parent / "models" / "mle"  # a trained MLE model, when the machine has one
SVG = "{http://www.w3.org/2000/svg}"
TREE = (
    "(TOP (S (NP-SBJ (DT The) (NN mouse)) (VP (VBD chased) (NP (DT the) (NN cat)) "
    "(PP-DIR (IN across) (NP (DT the) (NN garden)))) (. .)))"
)
runner = CliRunner()


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


# Geometry checks ----------------------------------------------------------------


def _drawn_nodes(tree: Tree) -> list[Tree]:
    """The nodes drawn for ``tree`` in pre-order (a TOP over one phrase is not drawn)."""
    while tree.label == "TOP" and len(tree.children) == 1 and tree.children[0].word is None:
        tree = tree.children[0]
    return list(tree.subtrees())


def _boxes_overlap(a, b) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _segment_enters_box(p, q, box, shrink: float = 1e-6) -> bool:
    """Does segment pq pass through the inside of the box (Liang-Barsky clipping)?"""
    left, right = box.left + shrink, box.right - shrink
    top, bottom = box.top + shrink, box.bottom - shrink
    (x1, y1), (x2, y2) = p, q
    low, high = 0.0, 1.0
    for step, distance in (
        (-(x2 - x1), x1 - left),
        (x2 - x1, right - x1),
        (-(y2 - y1), y1 - top),
        (y2 - y1, bottom - y1),
    ):
        if step == 0:
            if distance < 0:
                return False
            continue
        t = distance / step
        if step < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def _cross(p, q, r, s) -> bool:
    """Do segments pq and rs cross at a point inside both (not at an end)?"""

    def side(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2 = side(r, s, p), side(r, s, q)
    d3, d4 = side(p, q, r), side(p, q, s)
    eps = 1e-6
    return ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and (
        (d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps)
    )


def assert_clean_geometry(layout: TreeLayout) -> None:
    """No two texts overlap, no edge runs through a text, no two edges cross."""
    boxes = layout.boxes
    for i, a in enumerate(boxes):
        assert a.left >= 0 and a.right <= layout.width and a.top >= 0 and a.bottom <= layout.height
        for b in boxes[i + 1 :]:
            assert not _boxes_overlap(a, b), (a.text, b.text)
    segments = [(line, p, q) for line in layout.lines for p, q in zip(line.points, line.points[1:])]
    for line, p, q in segments:
        for index, box in enumerate(boxes):
            if index not in (line.parent, line.child):
                assert not _segment_enters_box(p, q, box), (box.text, boxes[line.child].text)
    for i, (_, p, q) in enumerate(segments):
        for _, r, s in segments[i + 1 :]:
            assert not _cross(p, q, r, s), (p, q, r, s)


def _svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    return ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]


# The picture of one tree --------------------------------------------------------


def test_render_every_word_tag_and_label_is_a_text_element():
    tree = Tree.from_string(TREE)
    svg = spacy_lpcfg.render(tree)
    assert isinstance(svg, TreeSVG) and isinstance(svg, str)
    nodes = _drawn_nodes(tree)
    expected = [node.label for node in nodes] + tree.words()
    assert Counter(_svg_texts(svg)) == Counter(expected)
    assert "TOP" not in _svg_texts(svg)
    (layout,) = svg.layouts
    assert layout.words == tuple(tree.words()) and layout.sentence.startswith("The mouse")


def test_render_words_on_the_bottom_row_in_order_tags_above():
    layout = layout_tree(Tree.from_string(TREE))
    words = [box for box in layout.boxes if box.kind == "word"]
    tags = [box for box in layout.boxes if box.kind == "tag"]
    phrases = [box for box in layout.boxes if box.kind == "phrase"]
    assert [box.text for box in words] == Tree.from_string(TREE).words()
    assert len({box.baseline for box in words}) == 1 and len({box.baseline for box in tags}) == 1
    assert [box.x for box in words] == sorted(box.x for box in words)
    assert [tag.x for tag in tags] == [word.x for word in words]
    assert max(box.bottom for box in tags) < min(box.top for box in words)
    assert max(box.bottom for box in phrases) < min(box.top for box in tags)
    root = layout.boxes[0]
    assert root.text == "S" and root.baseline == min(box.baseline for box in layout.boxes)


def test_render_edges_connect_each_parent_to_its_children():
    tree = Tree.from_string(TREE)
    layout = layout_tree(tree)
    boxes = layout.boxes
    expected = []
    for node in _drawn_nodes(tree):
        if node.word is not None:
            expected.append((node.label, node.word))
        expected.extend((node.label, child.label) for child in node.children)
    found = [(boxes[line.parent].text, boxes[line.child].text) for line in layout.lines]
    assert found == expected
    for line in layout.lines:
        parent, child = boxes[line.parent], boxes[line.child]
        assert line.points[0] == (parent.x, parent.bottom)
        assert line.points[-1] == (child.x, child.top)
        assert parent.baseline < child.baseline
    polylines = ET.fromstring(render_trees(tree)).iter(f"{SVG}polyline")
    assert sum(1 for _ in polylines) == len(layout.lines)


def test_render_layout_has_no_overlaps_on_real_trees(load_corpus):
    dev = load_corpus("ptb_sample", "dev")
    longest = sorted(dev, key=lambda tree: -tree.n_words)[:2]
    for tree in [*dev[:25], *longest]:
        layout = layout_tree(tree)
        assert_clean_geometry(layout)
        assert layout.words == tuple(tree.words())


@pytest.mark.parametrize(
    "relative", ["icepahc/1150.firstgrammar.sci-lin.psd", "floresta/Floresta_7.4.ptb"]
)
def test_render_other_treebanks_and_schemes(data_dir, relative):
    reader = TreebankReader(data_dir / relative)
    scheme = reader.scheme
    for tree in islice(reader, 8):
        layout = render_trees(tree, scheme=scheme).layouts[0]
        assert_clean_geometry(layout)
        for box in layout.boxes:
            if box.kind == "phrase":
                assert "".join(text for text, _ in box.parts) == box.text
                assert [text for text, role in box.parts if role == "category"] == [
                    get_scheme(scheme).category(box.text)
                ]


def test_render_long_flat_sentence_grows_wide_without_overlap():
    words = [f"word{i}" for i in range(150)]
    tree = Tree("TOP", tuple(Tree.leaf("NN", word) for word in words))
    layout = layout_tree(tree)
    assert layout.boxes[0].text == "TOP"  # a TOP over several nodes is drawn
    assert_clean_geometry(layout)
    assert layout.width > sum(text_width(word, 14) for word in words)


def test_render_function_labels_styled_category_bold_function_light():
    svg = render_trees(TREE, category_color="#112233", function_color="#aabbcc")
    root = ET.fromstring(svg)
    label = next(t for t in root.iter(f"{SVG}text") if "".join(t.itertext()) == "NP-SBJ")
    category, function = list(label.iter(f"{SVG}tspan"))
    assert (category.text, category.get("font-weight"), category.get("fill")) == (
        "NP",
        "bold",
        "#112233",
    )
    assert (function.text, function.get("font-weight"), function.get("fill")) == (
        "-SBJ",
        None,
        "#aabbcc",
    )
    plain = render_trees(TREE, bold_categories=False)
    assert "font-weight" not in plain
    assert label_parts("SUBJ+np", get_scheme("floresta")) == (
        ("SUBJ+", "function"),
        ("np", "category"),
    )
    assert label_parts("NP-SBJ-1", get_scheme("penn")) == (
        ("NP", "category"),
        ("-SBJ-1", "function"),
    )
    assert label_parts("-NONE-", get_scheme("penn")) == (("-NONE-", "category"),)


def test_render_escapes_xml_special_characters():
    tree = Tree(
        "TOP",
        (
            Tree(
                "NP&<x>",
                (
                    Tree.leaf("CC", "&"),
                    Tree.leaf("SYM", "<b>bold</b>"),
                    Tree.leaf("''", '"'),
                    Tree.leaf("POS", "'s"),
                    Tree.leaf("X", "a\x00b"),
                ),
            ),
        ),
    )
    svg = render_trees(tree, font_family='"Odd" <Font> & Co')
    assert "<b>" not in svg and "<x>" not in svg
    texts = _svg_texts(svg)  # parses: every special character was escaped
    assert {"NP&<x>", "&", "<b>bold</b>", '"', "'s", "''", "a\ufffdb"} <= set(texts)
    assert ET.fromstring(svg).get("font-family") == '"Odd" <Font> & Co'


def test_render_wide_characters_take_a_full_em():
    assert text_width("中文", 10) == pytest.approx(2 * (10 + 0.5))
    assert text_width("ＡＢ", 10) == pytest.approx(2 * (10 + 0.5))  # fullwidth Latin
    assert text_width("ab", 10) < text_width("中文", 10)
    assert text_width("é", 10) == text_width("e", 10)  # a base letter and an accent
    assert text_width("e\u0301", 10) == text_width("e", 10)  # combining mark: no width
    tree = Tree.from_string("(S (NP (NR 北京)) (VP (VV 欢迎) (NP (PN 你们))) (PU 。))")
    layout = layout_tree(tree)
    assert_clean_geometry(layout)
    words = [box for box in layout.boxes if box.kind == "word"]
    assert words[0].width == pytest.approx(text_width("北京", 14))
    assert words[0].width > 2 * 14
    gaps = [b.left - a.right for a, b in zip(words, words[1:])]
    assert min(gaps) >= RenderStyle().word_gap * 14 - 1e-6


def test_render_options_and_their_errors():
    small, large = render_trees(TREE), render_trees(TREE, font_size=28)
    assert large.layouts[0].width > 1.8 * small.layouts[0].width
    transparent = render_trees(TREE, background=None, line_color="#ff0000")
    assert "<rect" not in transparent and 'stroke="#ff0000"' in transparent
    with pytest.raises(ValueError, match=r"E030.*fontsize"):
        render_trees(TREE, fontsize=12)
    with pytest.raises(ValueError, match=r"E031.*font_size"):
        render_trees(TREE, font_size=-1)
    with pytest.raises(ValueError, match=r"E031.*bold_categories"):
        render_trees(TREE, bold_categories="yes")
    with pytest.raises(ValueError, match="E032"):
        render_trees(Tree("TOP", (Tree("NP"),)))
    with pytest.raises(TypeError, match="E033"):
        spacy_lpcfg.render(42)
    with pytest.raises(TypeError, match="E033"):
        spacy_lpcfg.render([Tree.from_string(TREE), "not a tree"])
    with pytest.raises(ValueError, match="E034"):
        spacy_lpcfg.render("   ")
    with pytest.raises(ValueError, match="E001"):
        spacy_lpcfg.render("(S (NP a)")


def test_render_is_deterministic_and_stacks_several_trees():
    text = TREE + "\n(TOP (S (NP (PRP It)) (VP (VBZ works))))\n(NN word)"
    first, second = render_trees(text), render_trees(text)
    assert first == second and len(first.layouts) == 3
    root = ET.fromstring(first)
    trees = [element for element in root if element.get("class") == "tree"]
    assert [float(tree.get("y")) for tree in trees] == sorted(float(t.get("y")) for t in trees)
    assert float(root.get("height")) >= sum(layout.height for layout in first.layouts)
    assert first.layouts[2].words == ("word",)  # a bare preterminal is a picture too
    show = render_trees(TREE, show_root=True).layouts[0]
    assert show.boxes[0].text == "TOP"


def test_render_import_stays_light():
    code = (
        "import sys, spacy_lpcfg; svg = spacy_lpcfg.render('(S (NP (NN a)))'); "
        "print(sorted(m for m in ('spacy', 'numba', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_render_jupyter_representations():
    svg = spacy_lpcfg.render(TREE)
    assert svg._repr_svg_() == str(svg)
    html = svg._repr_html_()
    assert "overflow-x: auto" in html and str(svg) in html
    formatters = pytest.importorskip("IPython.core.formatters")
    shown, _ = formatters.DisplayFormatter().format(svg)
    assert {"text/html", "image/svg+xml"} <= set(shown)


def test_render_save(tmp_path):
    svg = spacy_lpcfg.render(TREE)
    svg.save(tmp_path / "tree.svg")
    assert ET.parse(tmp_path / "tree.svg").getroot().tag == f"{SVG}svg"


# spaCy Docs and Spans -----------------------------------------------------------


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, data_dir) -> Path:
    """The machine's trained MLE model, else one trained on the PTB sample here."""
    if (SHARED_MODEL / "cfg.json").exists():
        return SHARED_MODEL
    path = tmp_path_factory.mktemp("models") / "mle"
    result = _invoke("train", "ptb_sample", path, "--estimator", "mle", "--data-dir", data_dir)
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def nlp(model_dir):
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"model": str(model_dir)})
    return nlp


def test_render_doc_one_tree_per_sentence(nlp):
    doc = nlp("The mouse chased the cat. Pierre Vinken will join the board as a director.")
    svg = spacy_lpcfg.render(doc)
    sentences = list(doc.sents)
    assert [layout.words for layout in svg.layouts] == [
        tuple(token.text for token in sent) for sent in sentences
    ]
    root = ET.fromstring(svg)
    assert sum(1 for element in root if element.get("class") == "tree") == 2
    texts = Counter(_svg_texts(svg))
    for token in doc:
        assert texts[token.text] >= 1 and texts[token.tag_] >= 1
    for span in doc.spans["constituents"]:
        assert texts[span.label_] >= 1
    for layout in svg.layouts:
        assert_clean_geometry(layout)


def test_render_span_draws_the_tree_over_its_words(nlp):
    doc = nlp("The mouse chased the cat. Pierre Vinken will join the board.")
    second = list(doc.sents)[1]
    (layout,) = spacy_lpcfg.render(second).layouts
    assert layout.words == tuple(token.text for token in second)
    inside = [s.label_ for s in doc.spans["constituents"] if s.start >= second.start]
    phrases = [box.text for box in layout.boxes if box.kind == "phrase"]
    assert phrases == inside
    part = spacy_lpcfg.render(doc[1:4]).layouts[0]  # not a constituent: TOP over its pieces
    assert part.words == ("mouse", "chased", "the")


def test_render_unparsed_doc_and_unknown_spans_key(nlp):
    from spacy.tokens import Doc

    bare = Doc(nlp.vocab, words=["no", "parse"])
    with pytest.raises(spacy_lpcfg.NotParsedError):
        spacy_lpcfg.render(bare)
    doc = nlp("The cat sat.")
    with pytest.raises(ValueError, match=r"E719.*nope"):
        spacy_lpcfg.render(doc, spans_key="nope")


# The render command ---------------------------------------------------------------


def _page_svgs(page: str) -> list[str]:
    return re.findall(r'<div class="picture">\n(.*?)\n</div></figure>', page, re.S)


def test_cli_render_bracketed_trees(tmp_path):
    source = tmp_path / "parses.txt"
    source.write_text(TREE + "\n\n(TOP (S (NP (PRP It)) (VP (VBZ works) (ADVP (RB &c)))))\n")
    page = tmp_path / "page.html"
    result = _invoke("render", source, "--output", page, "--title", "Two <trees>")
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<title>Two &lt;trees&gt;</title>" in html
    svgs = _page_svgs(html)
    assert len(svgs) == 2
    assert "It works &amp;c</figcaption>" in html
    assert set(Tree.from_string(TREE).words()) <= set(_svg_texts(svgs[0]))
    assert "NP-SBJ" in _svg_texts(svgs[0])


def test_cli_render_text_through_a_model(model_dir, tmp_path):
    source = tmp_path / "text.txt"
    source.write_text("The mouse chased the cat .\n\nPierre/NNP Vinken/NNP left/VBD ./.\n")
    page = tmp_path / "page.html"
    result = _invoke("render", source, "--model", model_dir, "-o", page, "--limit", "5")
    assert result.exit_code == 0, result.output
    svgs = _page_svgs(page.read_text(encoding="utf-8"))
    assert len(svgs) == 2
    assert {"The", "mouse", "chased", "cat"} <= set(_svg_texts(svgs[0]))
    assert "Pierre/NNP" in _svg_texts(svgs[1])  # words, unless --tagged
    source.write_text("Pierre/NNP Vinken/NNP left/VBD ./.\n")
    result = _invoke("render", source, "--model", model_dir, "-o", page, "--tagged")
    assert result.exit_code == 0, result.output
    (svg,) = _page_svgs(page.read_text(encoding="utf-8"))
    assert {"NNP", "VBD", "Vinken"} <= set(_svg_texts(svg))  # the given tags are used


def test_cli_render_bad_input_names_file_and_line(tmp_path, model_dir):
    broken = tmp_path / "broken.txt"
    broken.write_text("(TOP (S (NN fine)))\n(TOP (S (NN broken))\n")
    result = _invoke("render", broken, "-o", tmp_path / "x.html")
    assert result.exit_code == 1
    assert "broken.txt" in result.stderr and "line 2" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"ok line\ncaf\xe9 au lait\n")
    result = _invoke("render", latin, "--model", model_dir, "-o", tmp_path / "x.html")
    assert result.exit_code == 1
    assert "line 2" in result.stderr and "caf" in result.stderr and "--encoding" in result.stderr
    fixed = _invoke(
        "render", latin, "--model", model_dir, "-o", tmp_path / "x.html", "--encoding", "latin-1"
    )
    assert fixed.exit_code == 0, fixed.output
    assert "café" in (tmp_path / "x.html").read_text(encoding="utf-8")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    result = _invoke("render", empty, "-o", tmp_path / "x.html")
    assert result.exit_code == 1 and "no trees" in result.stderr
    result = _invoke("render", broken, "-o", tmp_path / "x.html", "--scheme", "nope")
    assert result.exit_code == 1 and "--scheme" in result.stderr


# A real browser ---------------------------------------------------------------------

MEASURE = """<script>
const found = [];
document.querySelectorAll("svg text").forEach((element) => {
  const box = element.getBoundingClientRect();
  found.push([element.textContent, box.left, box.right, box.top, box.bottom]);
});
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify(found);
document.body.appendChild(out);
</script>
"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return chromium(tmp_path / "chromium-profile", *args)


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium: apt-get install chromium")
def test_render_page_in_headless_chromium(load_corpus, tmp_path):
    dev = load_corpus("ptb_sample", "dev")
    long_tree = min(
        (tree for tree in dev if any("-" in label for label, _, _ in tree.spans())),
        key=lambda tree: abs(tree.n_words - 40),
    )
    trees = [
        long_tree,
        Tree.from_string("(S (NP (NR 北京)) (VP (VV 欢迎) (NP (PN 你们))) (PU 。))"),
        Tree.from_string("(S (NP-SBJ (NNP AT&T)) (VP (VBD said) (NP (`` \") (NN <b>) ('' \"))))"),
        *dev[:10],
    ]
    source = tmp_path / "trees.txt"
    source.write_text("".join(tree.pformat() + "\n" for tree in trees), encoding="utf-8")
    page = tmp_path / "page.html"
    assert _invoke("render", source, "-o", page).exit_code == 0
    measured_page = tmp_path / "measured.html"
    html = page.read_text(encoding="utf-8")
    measured_page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")

    out = _chromium(tmp_path, "--dump-dom", measured_page.as_uri())
    assert out.returncode == 0, out.stderr[-2000:]
    match = re.search(r'<pre id="measured">(.*?)</pre>', out.stdout, re.S)
    assert match, "the page did not load or its script did not run"
    measured = json.loads(html_module.unescape(match.group(1)))
    layouts = [render_trees(tree).layouts[0] for tree in trees]
    expected = [box for layout in layouts for box in layout.boxes]
    assert [text for text, *_ in measured] == [box.text for box in expected]
    for (text, left, right, top, bottom), box in zip(measured, expected):
        assert right - left <= box.width + 0.01, f"{text!r} drawn wider than estimated"
        assert bottom - top <= (box.bottom - box.top) + 0.01
    # No two texts of the page overlap as the browser drew them.
    rects = sorted(measured, key=lambda item: item[1])
    for i, (text, _, right, top, bottom) in enumerate(rects):
        for other, left2, _, top2, bottom2 in rects[i + 1 :]:
            if left2 >= right:
                break
            overlap = top < bottom2 and top2 < bottom
            assert not overlap, (text, other)

    screenshot = tmp_path / "page.png"
    shot = _chromium(
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1600,1200",
        f"--screenshot={screenshot}",
        page.as_uri(),
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1600, 1200)
    assert len(data) > 20_000  # a drawing, not a blank page


# displaCy's conventions: lists, page, jupyter, options, serve --------------------------


def test_render_a_list_of_docs_a_picture_each(nlp):
    docs = [nlp("The mouse chased the cat."), nlp("It ran away. Then it slept.")]
    markup = spacy_lpcfg.render(docs, jupyter=False)
    assert markup.count("<figure>") == 2 and markup.count('class="tree"') == 3  # sentences
    page = spacy_lpcfg.render(docs, page=True, jupyter=False, options={"font_size": 18})
    assert page.startswith("<!DOCTYPE html>") and page.count('class="tree"') == 3
    assert "The mouse chased the cat." in page and "It ran away. Then it slept." in page
    spans = [next(docs[0].sents), list(docs[1].sents)[1]]
    assert spacy_lpcfg.render(spans, jupyter=False).count("<figure>") == 2
    assert spacy_lpcfg.render(docs[0], jupyter=False) == spacy_lpcfg.render(docs[0])


def test_render_in_jupyter_displays_and_returns_nothing(nlp, monkeypatch):
    pytest.importorskip("IPython")
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert spacy_lpcfg.render(nlp("The cat sat."), jupyter=True) is None
    assert len(shown) == 1 and "<svg" in shown[0].data


def test_serve_answers_with_the_page(nlp):
    import threading
    import urllib.request

    from spacy_lpcfg.showing import make_server, render

    page = render([nlp("The cat sat."), nlp("A dog ran.")], page=True, jupyter=False)
    server = make_server(page, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        with urllib.request.urlopen(url, timeout=30) as answer:
            assert answer.read().decode("utf-8") == page
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium: apt-get install chromium")
def test_a_page_of_several_docs_in_headless_chromium(nlp, tmp_path):
    docs = [nlp("The mouse chased the cat."), nlp("It ran away. Then it slept.")]
    page = tmp_path / "docs.html"
    page.write_text(spacy_lpcfg.render(docs, page=True, jupyter=False), encoding="utf-8")
    out = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count('class="tree"') == 3 and "Then it slept." in out.stdout
