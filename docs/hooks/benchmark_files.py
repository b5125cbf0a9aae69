"""MkDocs hook: publish the pictures that BENCHMARKS.md shows.

docs/benchmarks.md includes the repository's BENCHMARKS.md (pymdownx.snippets),
so the figures live in one file. Its pictures are linked relative to the
repository root (``benchmarks/estimators_f1_vs_m.png``); this hook adds each
one to the site under the same path, where the included page finds it.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

SOURCE = "BENCHMARKS.md"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def on_files(files: Files, config) -> Files:
    root = Path(config.config_file_path).parent
    for link in IMAGE.findall((root / SOURCE).read_text(encoding="utf-8")):
        if "://" in link or link.startswith("/"):
            continue
        path = (root / link).resolve()
        if path.is_file() and path.is_relative_to(root) and files.get_file_from_path(link) is None:
            files.append(File.generated(config, link, abs_src_path=str(path)))
    return files
