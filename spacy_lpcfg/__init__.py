"""spacy-lpcfg: latent-variable PCFG constituency parsers for spaCy.

Importing this package is cheap and has no side effects: numba, scipy,
scikit-learn and spaCy are imported by the modules that need them.
"""

from .about import __version__
from .errors import NonConstituentException, NotParsedError

__all__ = [
    "NonConstituentException",
    "NotParsedError",
    "__version__",
    "evaluate",
    "render",
    "to_nltk",
]


def to_nltk(obj):
    """The ``nltk.Tree`` of a parse, as benepar's ``Parser.parse`` returns one.

    obj: a spaCy ``Span`` parsed by ``lpcfg_parser`` (a sentence or any constituent),
        a ``Tree``, or Penn-bracketed text. Needs nltk (``spacy-lpcfg[nltk]``).
    """
    from .trees.nltk_trees import to_nltk as tree_to_nltk

    if type(obj).__module__.partition(".")[0] == "spacy":
        from .pipeline.extensions import get_parse_string

        obj = get_parse_string(obj)
    return tree_to_nltk(obj)


def evaluate(parser, gold_trees, **options):
    """Parse the words of gold trees and score the parses with EVALB semantics.

    See ``spacy_lpcfg.evaluation.evaluate``: options ``scheme``, ``params``,
    ``progress``. RETURNS (Scores): ``.fscore``, ``.function_fscore``, ``.evalb``,
    ``.parses``, ``.seconds``, ``.to_dict()``.
    """
    from .evaluation import evaluate as evaluate_parser

    return evaluate_parser(parser, gold_trees, **options)


def render(obj, **options):
    """Draw constituency trees as an SVG picture (shown inline in Jupyter).

    obj: a ``Tree``, Penn-bracketed text (one or more trees), a list of Trees, or a
        spaCy ``Span`` (one tree) or ``Doc`` (one tree per sentence, stacked) parsed
        by the ``lpcfg_parser`` component.
    **options: ``scheme`` ("penn", "floresta", "cess"; a Doc's own by default),
        ``show_root``, ``spans_key`` (Span/Doc only) and the fields of
        ``spacy_lpcfg.pictures.RenderStyle`` (font_size, colours, ...).
    RETURNS (TreeSVG): the SVG text (a ``str``), with the geometry in ``.layouts``.
    """
    if type(obj).__module__.partition(".")[0] == "spacy":
        from .pipeline.pictures import render_spacy

        return render_spacy(obj, **options)
    from .pictures import render_trees

    return render_trees(obj, **options)
