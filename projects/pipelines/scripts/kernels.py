"""Compile the kernels a pipeline's first parses need into its folder (``kernels/``),
for the package to ship: ``scripts/seed_kernels.py``, packaged as the pipeline's code,
seeds numba's cache with them when the package is imported, so that the first parse
on a machine like this one loads them instead of compiling for half a minute.

    python scripts/kernels.py PIPELINE_DIR PARSES_FILE

A fresh process with an empty cache (``NUMBA_CACHE_DIR``, a new folder) loads the
pipeline and parses the words of the first trees of PARSES_FILE (the test step's
parses, one tree per line: short and long sentences), then
``spacy_lpcfg.kernel_cache.export`` copies what it compiled.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SENTENCES = 20
PARSE = """
import sys
import spacy
from spacy_lpcfg.trees import Tree
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()[: int(sys.argv[3])]
nlp = spacy.load(sys.argv[1])
for doc in nlp.pipe(" ".join(Tree.from_string(line).words()) for line in lines if line.strip()):
    assert doc.spans["constituents"]
"""
EXPORT = "import sys; from spacy_lpcfg import kernel_cache; print(kernel_cache.export(sys.argv[1]))"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("parses", type=Path)
    args = parser.parse_args()
    target = args.pipeline / "kernels"
    if target.exists():
        sys.exit(f"{target} exists: remove it first (the kernels of an earlier build)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        parse = [sys.executable, "-c", PARSE, str(args.pipeline), str(args.parses), str(SENTENCES)]
        subprocess.run(parse, env=env, check=True)
        export = [sys.executable, "-c", EXPORT, str(target)]
        done = subprocess.run(export, env=env, check=True, capture_output=True, text=True)
    print(f"{done.stdout.strip()} kernel cache files in {target}")


if __name__ == "__main__":
    main()
