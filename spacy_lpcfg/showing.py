"""``render`` and ``serve`` the displaCy way: one object or a list, a page or markup,
inline in Jupyter, or served over HTTP on this machine.

spaCy is imported only for spaCy objects; the drawing is ``pictures``.
"""

from __future__ import annotations

import sys
from typing import Any

from .pictures import TreeSVG, html_page


def picture(obj: Any, **style: Any) -> TreeSVG:
    """The SVG picture of one Doc, Span, Tree, tree text or list of Trees."""
    if type(obj).__module__.partition(".")[0] == "spacy":
        from .pipeline.pictures import render_spacy

        return render_spacy(obj, **style)
    from .pictures import render_trees

    return render_trees(obj, **style)


def caption(obj: Any) -> str:
    """The text under a picture on a page: a Doc's or Span's text, a tree's words."""
    if hasattr(obj, "text"):
        return str(obj.text)
    if hasattr(obj, "words"):
        return " ".join(obj.words())
    return ""


def _many(obj: Any) -> bool:
    """A list of things to draw one by one (a list of Trees alone is one picture)."""
    if not isinstance(obj, (list, tuple)) or not obj:
        return False
    return type(obj[0]).__module__.partition(".")[0] == "spacy" or isinstance(obj[0], str)


def render(
    docs: Any,
    *,
    page: bool = False,
    jupyter: bool | None = None,
    options: dict[str, Any] | None = None,
    title: str = "Constituency trees",
    **style: Any,
):
    """Draw constituency trees, as ``spacy.displacy.render`` draws dependencies.

    docs: a Doc (one tree per sentence) or Span parsed by ``lpcfg_parser``, a Tree,
        Penn-bracketed text, a list of Trees (one picture), or a list of Docs, Spans or
        texts (a picture each).
    page (bool): a whole HTML page, each picture over its text.
    jupyter (bool | None): show the markup in the notebook and return None; None:
        when running in Jupyter.
    options (dict | None): style options (``scheme``, ``show_root``, ``spans_key`` and
        the fields of ``pictures.RenderStyle``), as displaCy takes them; ``**style``
        works too.
    RETURNS: the picture (``TreeSVG``, shown inline by Jupyter) for one object, else
        the markup (str); None when shown in Jupyter.
    """
    style = {**(options or {}), **style}
    objects = list(docs) if _many(docs) else [docs]
    pictures = [picture(obj, **style) for obj in objects]
    if page:
        markup: str = html_page([(svg, caption(obj)) for svg, obj in zip(pictures, objects)],
                                title=title)  # fmt: skip
    elif len(pictures) == 1:
        markup = pictures[0]
    else:
        markup = "\n".join(f"<figure>{svg}</figure>" for svg in pictures)
    if jupyter if jupyter is not None else _in_jupyter():
        from IPython.display import HTML, display

        display(HTML(markup if not isinstance(markup, TreeSVG) else markup._repr_html_()))
        return None
    return markup


def serve(
    docs: Any,
    *,
    port: int = 5000,
    host: str = "127.0.0.1",
    options: dict[str, Any] | None = None,
    title: str = "Constituency trees",
    **style: Any,
) -> None:
    """Serve the page of ``render(docs, page=True)`` at http://HOST:PORT until Ctrl-C
    (on this machine only unless ``host`` says otherwise, as displaCy's serve)."""
    markup = render(docs, page=True, jupyter=False, options=options, title=title, **style)
    server = make_server(markup, host, port)
    sys.stderr.write(f"Serving the trees on http://{host}:{server.server_port} (Ctrl-C ends)\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.stderr.write("Stopped serving.\n")
    finally:
        server.server_close()


def make_server(markup: str, host: str, port: int):
    """An HTTP server (not started) that answers every GET with the page."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = markup.encode("utf-8")

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet, as displaCy
            pass

    return ThreadingHTTPServer((host, port), Page)


def _in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (displaCy's test)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        return False
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"
