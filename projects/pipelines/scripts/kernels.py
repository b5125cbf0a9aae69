"""Put the compiled kernels a pipeline's first parses need into its folder
(``kernels/``), for the package to ship: ``scripts/seed_kernels.py``, packaged as the
pipeline's code, seeds numba's cache with them when the package is imported, so that
the first parse on a machine like this one loads them instead of compiling for half
a minute.

    python scripts/kernels.py PIPELINE_DIR PARSES_FILE

A fresh process with a cache of its own (``NUMBA_CACHE_DIR``, a new folder, seeded
with this machine's cache of the package: what training and testing compiled) loads
the pipeline and parses the words of the first trees of PARSES_FILE (the test step's
parses, one tree per line: short and long sentences); the cache entries of the
kernels it used (``spacy_lpcfg.kernel_cache.used_kernels``) are copied out.
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
from spacy_lpcfg import kernel_cache
kernel_cache.seed(sys.argv[3])
import spacy
from spacy_lpcfg.trees import Tree
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()[: int(sys.argv[4])]
nlp = spacy.load(sys.argv[1])
for doc in nlp.pipe(" ".join(Tree.from_string(line).words()) for line in lines if line.strip()):
    assert doc.spans["constituents"]
print(kernel_cache.export(sys.argv[5], kernel_cache.used_kernels()))
"""
ROOT = "from spacy_lpcfg import kernel_cache; print(kernel_cache.cache_root())"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("parses", type=Path)
    args = parser.parse_args()
    target = args.pipeline / "kernels"
    if target.exists():
        sys.exit(f"{target} exists: remove it first (the kernels of an earlier build)")
    here = subprocess.run([sys.executable, "-c", ROOT], check=True, capture_output=True, text=True)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        command = [sys.executable, "-c", PARSE, str(args.pipeline), str(args.parses)]
        command += [here.stdout.strip(), str(SENTENCES), str(target)]
        done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    print(f"{done.stdout.strip().splitlines()[-1]} kernel cache files in {target}")


if __name__ == "__main__":
    main()
