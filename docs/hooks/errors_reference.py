"""MkDocs hook: write reference/errors.md from spacy_lpcfg/errors.py.

Every code of ``Errors`` and ``Warnings`` with its message template, grouped
under the comments that group them in the source, and every exception class
with its docstring. Generated at build time, so the page lists exactly the
messages the code raises.
"""

from __future__ import annotations

import ast
import html
import inspect
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

PAGE = "reference/errors.md"
CODE = re.compile(r"^[EW]\d+$")
_MARKDOWN = re.compile(r"([\\`*_{}\[\]|#])")


def text(value: str) -> str:
    """Plain text for a table cell: nothing in it is markup."""
    return _MARKDOWN.sub(r"\\\1", html.escape(value, quote=False)).replace("\n", " ")


def grouped_codes(source: str, class_name: str) -> list[tuple[str, list[str]]]:
    """[(group comment, [code, ...]), ...] in source order for one message class."""
    tree = ast.parse(source)
    lines = source.splitlines()
    body = next(
        node.body
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name == class_name
    )
    groups: list[tuple[str, list[str]]] = [("", [])]
    previous_end = None
    for node in body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and CODE.match(target.id)):
            continue
        start = node.lineno - 1
        first = previous_end if previous_end is not None else body[0].lineno - 1
        comments = [
            line.strip().lstrip("#").strip()
            for line in lines[first:start]
            if line.strip().startswith("#")
        ]
        if comments:
            groups.append((" ".join(comments), []))
        groups[-1][1].append(target.id)
        previous_end = node.end_lineno
    return [(title, codes) for title, codes in groups if codes]


def errors_markdown() -> str:
    from spacy_lpcfg import errors

    source = Path(errors.__file__).read_text(encoding="utf-8")
    lines = [
        "# Errors and warnings",
        "",
        "<!-- Generated at build time by docs/hooks/errors_reference.py from spacy_lpcfg/errors.py. -->",
        "",
        "Every message that spacy-lpcfg raises or warns with has a code, printed in",
        "front of it (`[LPCFG-E006] Unknown corpus ...`): search this page for it. The",
        "templates below are filled with `str.format`; `{name}` stands for a value",
        "given at the call site. This page is generated from `spacy_lpcfg/errors.py`",
        "when the documentation is built. How errors are raised and reported is in",
        "[Error handling](../design/errors.md).",
        "",
        "## Exception types",
        "",
        "| exception | base | raised for |",
        "| --- | --- | --- |",
    ]
    for name, cls in vars(errors).items():
        if not (inspect.isclass(cls) and issubclass(cls, BaseException)):
            continue
        if cls.__module__ != errors.__name__:
            continue
        doc = " ".join((inspect.getdoc(cls) or "").split())
        base = cls.__bases__[0].__name__
        lines.append(f"| `spacy_lpcfg.errors.{name}` | `{base}` | {text(doc)} |")
    lines.append("")
    for class_name, title in (("Errors", "Errors"), ("Warnings", "Warnings")):
        messages = vars(getattr(errors, class_name))
        lines += [f"## {title}", ""]
        for group, codes in grouped_codes(source, class_name):
            if group:
                lines += [f"### {text(group)}", ""]
            lines += ["| code | message template |", "| --- | --- |"]
            for code in codes:
                lines.append(f'| <span id="{code}"></span>`{code}` | {text(messages[code])} |')
            lines.append("")
    return "\n".join(lines) + "\n"


def on_files(files: Files, config) -> Files:
    root = str(Path(config.config_file_path).parent)  # a checkout that is not installed
    if root not in sys.path:
        sys.path.insert(0, root)
    files.append(File.generated(config, PAGE, content=errors_markdown()))
    return files
