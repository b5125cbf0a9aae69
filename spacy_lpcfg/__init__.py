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
    "serve",
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


def render(docs, *, page=False, jupyter=None, options=None, **style):
    """Draw constituency trees as SVG, the displaCy way (``spacy_lpcfg.showing.render``).

    docs: a Doc (one tree per sentence) or Span parsed by ``lpcfg_parser``, a Tree,
        Penn-bracketed text, a list of Trees (one picture), or a list of Docs, Spans or
        texts (a picture each).
    page (bool): a whole HTML page. jupyter (bool | None): show it in the notebook
        (None: when in Jupyter). options (dict | None) or ``**style``: ``scheme``,
        ``show_root``, ``spans_key`` and the fields of ``pictures.RenderStyle``.
    RETURNS: the SVG picture (``TreeSVG``) of one object, else the markup; None when
        shown in Jupyter.
    """
    from .showing import render as render_markup

    return render_markup(docs, page=page, jupyter=jupyter, options=options, **style)


def serve(docs, *, port=5000, host="127.0.0.1", options=None, **style):
    """Serve ``render(docs, page=True)`` over HTTP until Ctrl-C (``showing.serve``)."""
    from .showing import serve as serve_page

    serve_page(docs, port=port, host=host, options=options, **style)
