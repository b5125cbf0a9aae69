#!/usr/bin/env bash
# Install, then run the main job end to end on the PTB sample.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e .
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"
EVALB_REF="${EVALB_REF:-$(cd .. && pwd)/shared/evalb_reference/cases}"

echo "== PTB sample statistics (train split)"
spacy-lpcfg stats ptb_sample --split train
echo
echo "== EVALB scoring of Berkeley parser output on wsj_0180-0199 (COLLINS.prm)"
spacy-lpcfg evaluate "$EVALB_REF/15_berkeley_sm6_wsj0180_0199.gold" \
  "$EVALB_REF/15_berkeley_sm6_wsj0180_0199.test" | tail -n 30
