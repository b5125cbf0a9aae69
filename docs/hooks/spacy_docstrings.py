"""Griffe extension: read spaCy-style docstrings as Google-style sections.

The package documents arguments the way spaCy does, one per line::

    model (ParsingModel): the grammar, lexicon and transforms.
    decoder (str): "max_rule", "mbr" ... Continuation lines are
        indented by four spaces.
    RETURNS (Scores): the scores.
    RAISES GrammarError: the parts do not fit together.

mkdocstrings renders Google-style sections as tables, so before the docstring
is parsed each run of such lines becomes an ``Args:`` (``Returns:``,
``Yields:``, ``Raises:``) section. Everything else is left as it is and is
rendered as Markdown. The source files are not touched.
"""

from __future__ import annotations

import re

import griffe

_TYPE = r"[^()]*(?:\([^()]*\)[^()]*)*"  # one level of nested parentheses
ARGUMENT = re.compile(rf"^(?P<name>\*{{0,2}}[A-Za-z_]\w*) \((?P<type>{_TYPE})\): (?P<text>.*)$")
RETURNS = re.compile(rf"^(?P<kind>RETURNS|YIELDS)(?: \((?P<type>{_TYPE})\))?: (?P<text>.*)$")
RAISES = re.compile(r"^RAISES (?P<type>[A-Z][\w.]*)(?: (?P<note>\([^()]*\)))?:? ?(?P<text>.*)$")
# An argument without a type ("params: ..."), taken as one only for a parameter of
# the function or inside a run of typed arguments: elsewhere it may be prose.
UNTYPED = re.compile(r"^(?P<name>\*{0,2}[A-Za-z_]\w*): (?P<text>.*)$")
SECTIONS = {"argument": "Args:", "RETURNS": "Returns:", "YIELDS": "Yields:", "RAISES": "Raises:"}


def parse_item(line: str, section: str | None, parameters: frozenset[str], block: bool):
    """(section kind, Google-style item) of a spaCy-style line, or (None, None).

    block (bool): the line starts a block (it follows a blank line or an item, or is
        the first): an argument cannot continue a paragraph of prose.
    """
    if match := RETURNS.match(line):
        item = f"{match['type']}: {match['text']}" if match["type"] else match["text"]
        return match["kind"], item
    if match := RAISES.match(line):
        note = f"{match['note']} " if match["note"] else ""
        return "RAISES", f"{match['type']}: {note}{match['text']}"
    if not block:
        return None, None
    if (match := ARGUMENT.match(line)) and "`" not in match["type"]:
        return "argument", f"{match['name']} ({match['type']}): {match['text']}"
    if (match := UNTYPED.match(line)) and (
        section == "argument" or match["name"].lstrip("*") in parameters
    ):
        return "argument", f"{match['name']}: {match['text']}"
    return None, None


def convert(docstring: str, parameters: frozenset[str] = frozenset()) -> str:
    """The docstring with its spaCy-style lines turned into Google-style sections.

    parameters (frozenset[str]): the function's parameter names, if it is one.
    """
    out: list[str] = []
    section = None  # the section being written, or None in prose
    blank = False  # a blank line seen inside a section, not written yet
    for line in docstring.splitlines():
        block = section is not None or not out or not out[-1].strip()
        kind, item = parse_item(line, section, parameters, block)
        if kind is not None:
            if section != kind:
                if out and out[-1].strip():
                    out.append("")
                out.append(SECTIONS[kind])
                section = kind
            out.append("    " + item)  # items of one kind stay one section
            blank = False
            continue
        if section is not None and not line.strip():
            blank = True
            continue
        if section is not None and not blank and line.startswith((" ", "\t")):
            out.append("    " + line)  # continuation of the item
            continue
        if section is not None:
            section, blank = None, False
            out.append("")  # end the section before prose
        out.append(line)
    return "\n".join(out)


class SpacyDocstrings(griffe.Extension):
    """Rewrite every docstring once, when its object is loaded."""

    def on_instance(self, *, node, obj: griffe.Object, agent, **kwargs) -> None:
        if obj.docstring is None:
            return
        parameters = frozenset()
        if isinstance(obj, griffe.Function):
            parameters = frozenset(parameter.name for parameter in obj.parameters)
        obj.docstring.value = convert(obj.docstring.value, parameters)
