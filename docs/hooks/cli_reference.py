"""MkDocs hook: write reference/cli.md from the command line itself.

The page is generated at build time from ``typer.main.get_command(spacy_lpcfg.cli.app)``:
every command and subcommand, its usage line, its help and each argument and
option with its help and default. Nothing is written into docs/, so the page
cannot drift from ``spacy-lpcfg --help``.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

PAGE = "reference/cli.md"
PROGRAM = "spacy-lpcfg"

# The tail that click appends to a parameter's help: "  [default: x; required]".
_EXTRA = re.compile(r"\s*\[((?:default|env var|required)[^\[\]]*)\]\s*$")
_MARKDOWN = re.compile(r"([\\`*_{}\[\]|#])")


def text(value: str) -> str:
    """Plain text for a Markdown paragraph or table cell: nothing in it is markup."""
    return _MARKDOWN.sub(r"\\\1", html.escape(value, quote=False))


def code(value: str) -> str:
    """A Markdown code span holding ``value`` (table-safe)."""
    value = value.replace("|", "\\|")
    fence = "``" if "`" in value else "`"
    return f"{fence}{value}{fence}"


def paragraphs(help_text: str | None) -> list[str]:
    """The help text's paragraphs, each joined into one line."""
    if not help_text:
        return []
    blocks = re.split(r"\n\s*\n", help_text.strip())
    return [" ".join(line.strip() for line in block.splitlines()) for block in blocks]


def walk(command, ctx, path):
    """Yield (path, command, context) for ``command`` and every subcommand, depth first."""
    yield path, command, ctx
    for name, sub in getattr(command, "commands", {}).items():
        if sub.hidden:
            continue
        sub_ctx = sub.context_class(sub, info_name=name, parent=ctx)
        yield from walk(sub, sub_ctx, [*path, name])


def parameter_rows(command, ctx):
    """(kind, declaration, help, default or requirement) of each visible parameter."""
    rows = []
    for param in command.params:  # without --help, which every command has
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        declaration, help_text = record
        extra = ""
        match = _EXTRA.search(help_text)
        if match:
            extra = match.group(1)
            help_text = help_text[: match.start()]
        kind = "argument" if param.param_type_name == "argument" else "option"
        rows.append((kind, declaration, help_text.strip(), extra))
    return rows


def command_markdown(path, command, ctx) -> list[str]:
    name = " ".join(path)
    level = "#" * min(len(path) + 1, 4)
    lines = [f"{level} {name}", ""]
    for paragraph in paragraphs(command.help):
        lines += [text(paragraph), ""]
    usage = command.get_usage(ctx).removeprefix("Usage:").strip()
    lines += ["```text", usage, "```", ""]
    rows = parameter_rows(command, ctx)
    for kind, title in (("argument", "Arguments"), ("option", "Options")):
        chosen = [row for row in rows if row[0] == kind]
        if not chosen:
            continue
        lines += [f"**{title}**", "", "| name | description | default |", "| --- | --- | --- |"]
        for _, declaration, help_text, extra in chosen:
            default = extra.removeprefix("default:").strip() if extra else ""
            lines.append(f"| {code(declaration)} | {text(help_text)} | {text(default)} |")
        lines.append("")
    subcommands = [sub for sub in getattr(command, "commands", {}).values() if not sub.hidden]
    if subcommands and len(path) > 1:
        lines += ["Subcommands: " + ", ".join(f"`{name} {sub.name}`" for sub in subcommands), ""]
    return lines


def cli_markdown() -> str:
    import typer

    from spacy_lpcfg import cli

    root = typer.main.get_command(cli.app)
    root_ctx = root.context_class(root, info_name=PROGRAM)
    lines = [
        "# Command line",
        "",
        "<!-- Generated at build time by docs/hooks/cli_reference.py from spacy_lpcfg.cli. -->",
        "",
        f"`{PROGRAM}` (also `python -m spacy_lpcfg`). This page is generated from the",
        "command line itself when the documentation is built, so it shows exactly what",
        f"`{PROGRAM} COMMAND --help` shows. Every command also takes `--help`.",
        "",
        "`CORPUS` is a corpus name (`ptb_sample`, `icepahc`, `floresta`, `cess_esp`,",
        "found under `--data-dir` or `$SPACY_LPCFG_DATA`) or the path of a treebank file",
        "or directory. With `--json`, the JSON object is the only thing on standard",
        "output; progress bars and messages go to standard error.",
        "",
    ]
    commands = list(walk(root, root_ctx, [PROGRAM]))
    lines += ["| command | what it does |", "| --- | --- |"]
    for path, command, _ in commands[1:]:
        anchor = "-".join(path)
        summary = paragraphs(command.help)[0] if command.help else ""
        lines.append(f"| [{' '.join(path[1:])}](#{anchor}) | {text(summary)} |")
    lines.append("")
    for path, command, ctx in commands[1:]:
        lines += command_markdown(path, command, ctx)
    return "\n".join(lines) + "\n"


def on_files(files: Files, config) -> Files:
    root = str(Path(config.config_file_path).parent)  # a checkout that is not installed
    if root not in sys.path:
        sys.path.insert(0, root)
    files.append(File.generated(config, PAGE, content=cli_markdown()))
    return files
