"""The documentation: the strict site build, its links in a browser, and the README.

The site (mkdocs.yml, docs/) is built with ``mkdocs build --strict``, which fails on
any warning: a broken link or anchor, a missing snippet, a docstring the API pages
cannot parse. The slow test serves the built site on 127.0.0.1 and opens every page
in headless Chromium to check every internal link of the rendered page. The README
must stay short, and every ``spacy-lpcfg`` command it shows must exist.
"""

from __future__ import annotations

import html.parser
import http.server
import os
import re
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from browser import CHROMIUM, chromium

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
README_MAX_LINES = 200


# The strict build -------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built by ``mkdocs build --strict`` from the repository root."""
    pytest.importorskip("mkdocs", reason="needs mkdocs: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_docs_build_strict(site):
    for page in ("index.html", "reference/cli/index.html", "reference/errors/index.html"):
        assert (site / page).is_file(), page
    assert (site / "benchmarks" / "index.html").is_file()


def _commands():
    """{command path: click command} of the spacy-lpcfg app, e.g. ("plot", "spectrum")."""
    import typer

    from spacy_lpcfg import cli

    found = {}

    def walk(command, path):
        found[path] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(cli.app), ())
    return found


def test_docs_cli_page_lists_every_command_and_option(site):
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for path, command in _commands().items():
        if not path:
            continue
        assert 'id="spacy-lpcfg-' + "-".join(path) + '"' in page, path
        for param in command.params:
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("--"):
                    assert opt in page, (path, opt)


def test_docs_errors_page_lists_every_code(site):
    from spacy_lpcfg import errors

    page = (site / "reference" / "errors" / "index.html").read_text(encoding="utf-8")
    for messages in (errors.Errors, errors.Warnings):
        for code in vars(messages):
            if re.fullmatch(r"[EW]\d+", code):
                assert f'id="{code}"' in page, code


def test_docs_benchmarks_page_includes_benchmarks_md(site):
    """The page includes BENCHMARKS.md itself: the figures live in one file."""
    page = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    sections = re.findall(r"^## ", (REPO / "BENCHMARKS.md").read_text(encoding="utf-8"), re.M)
    assert sections
    assert len(re.findall(r"<h2 id=", page)) == len(sections)


# Every page in a browser ------------------------------------------------------


class _Links(html.parser.HTMLParser):
    """The ids and the <a href> values of a page."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href") is not None:
            self.hrefs.append(attrs["href"])


def _serve(root: Path):
    handler = partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _dump_dom(url: str, profile: Path) -> str:
    done = chromium(profile, "--dump-dom", url)
    assert done.returncode == 0, f"chromium failed on {url}:\n{done.stderr[-2000:]}"
    assert "</html>" in done.stdout, f"no DOM for {url}"
    return done.stdout


def _page_file(site: Path, path: str) -> Path:
    """The file the server sends for a URL path."""
    target = site / unquote(path).lstrip("/")
    return target / "index.html" if path.endswith("/") or target.is_dir() else target


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium: apt-get install chromium")
def test_docs_site_has_no_broken_internal_link(site, tmp_path):
    pages = []
    for path in sorted(site.rglob("index.html")):
        folder = path.relative_to(site).parent.as_posix()
        pages.append("/" if folder == "." else f"/{folder}/")
    assert len(pages) > 20, pages
    server, thread = _serve(site)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        dom = {}
        for page in pages:
            links = _Links()
            links.feed(_dump_dom(base + page, tmp_path / "chromium-profile"))
            dom[page] = links
    finally:
        server.shutdown()
        thread.join(timeout=10)
    broken = []
    for page, links in dom.items():
        for href in links.hrefs:
            url = urlsplit(urljoin(base + page, href))
            if url.scheme not in ("http", "https") or url.netloc != urlsplit(base).netloc:
                continue  # another site, mailto:, javascript:
            target = _page_file(site, url.path)
            if not target.is_file():
                broken.append(f"{page}: {href} (no {target.relative_to(site)})")
                continue
            if url.fragment:
                key = url.path if url.path.endswith("/") else url.path + "/"
                ids = dom[key].ids if key in dom else None
                if ids is not None and unquote(url.fragment) not in ids:
                    broken.append(f"{page}: {href} (no anchor #{url.fragment})")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


# README ---------------------------------------------------------------------------


def _readme_code(text: str) -> list[str]:
    """The README's code: the lines of fenced blocks and every inline code span."""
    code = []
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    for block in fenced:
        code.extend(block.splitlines())
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    code.extend(re.findall(r"`([^`\n]+)`", prose))
    return code


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def _shown_command(code: str, names: set[str]) -> list[str] | None:
    """The words after ``spacy-lpcfg`` in a line or span of code (in any part of a pipe,
    up to a comment or a redirection), or those of a span that starts with a command and shows an option
    (``train --estimator mle``); None when it shows no command (or a placeholder such
    as ``COMMAND``)."""
    segments = re.split(r"\s(?:\||&&|;)\s", code.split(" #")[0])
    for segment in segments:
        tokens = segment.split(">")[0].split()
        if "spacy-lpcfg" in tokens:
            words = tokens[tokens.index("spacy-lpcfg") + 1 :]
            return words if words and re.fullmatch(r"[a-z][a-z_-]*", words[0]) else None
    tokens = segments[0].split()
    if tokens and tokens[0] in names and any(token.startswith("--") for token in tokens):
        return tokens
    return None


def test_readme_commands_exist():
    """Every command the README shows exists, with the options shown with it."""
    commands = _commands()
    names = {path[0] for path in commands if path}
    seen = []
    for code in _readme_code(README.read_text(encoding="utf-8")):
        words = _shown_command(code, names)
        if words is None:
            continue
        path = (words[0],)
        assert path in commands, f"README shows 'spacy-lpcfg {words[0]}': no such command"
        if len(words) > 1 and (*path, words[1]) in commands:
            path = (*path, words[1])
        seen.append(path)
        known = {
            opt for param in commands[path].params for opt in (*param.opts, *param.secondary_opts)
        }
        for option in (word for word in words if word.startswith("--")):
            assert option in known, f"README: 'spacy-lpcfg {' '.join(path)}' has no {option}"
    assert {("train",), ("test",), ("parse",)} <= set(seen), seen


def _github_slug(heading: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def test_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if "://" in target:
            continue
        path, _, anchor = target.partition("#")
        file = README if not path else (REPO / path)
        assert file.exists(), f"README links to {target}: no {path}"
        if anchor and file.is_file() and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
            assert anchor in {_github_slug(h) for h in headings}, f"README: no #{anchor} in {path}"


def test_readme_shows_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert "bash scripts/main.sh" in text and "bash scripts/test.sh" in text
    assert "<!-- pipelines-table -->" in text


def test_docs_hooks_are_not_published(site):
    assert not (site / "hooks").exists()
