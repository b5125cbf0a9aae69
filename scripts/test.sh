#!/usr/bin/env bash
# Install the package with its dev extras and run the default (not slow) test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e ".[dev]"
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"
python -m pytest "$@"
