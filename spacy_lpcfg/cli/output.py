"""What a command prints at its end: ``--json`` objects (the only thing on stdout) or
one summary line on stderr."""

from __future__ import annotations

import json
import math
import sys

import typer


def print_json(payload: dict) -> None:
    # NaN is not JSON: EVALB's "-nan" becomes null.
    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in payload.items()}
    sys.stdout.write(json.dumps(clean, indent=2, ensure_ascii=False) + "\n")


def summary(as_json: bool, quiet: bool, line: str, payload: dict) -> None:
    """A command's end: its JSON object on stdout, or its line on stderr (not quiet)."""
    if as_json:
        print_json(payload)
    elif not quiet:
        typer.echo(line, err=True)
