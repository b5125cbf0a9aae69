#!/usr/bin/env bash
# Install, then run the main job end to end on the PTB sample:
# train a grammar, parse example sentences, score the test split with EVALB.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e .
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"
MODEL_DIR="${MODEL_DIR:-models/ptb_sample_mle}"

echo "== Train the treebank grammar (MLE, v=2, h=1) on the PTB sample train split"
spacy-lpcfg train ptb_sample "$MODEL_DIR" --estimator mle

echo
echo "== Parse example sentences"
printf '%s\n' \
  "The mouse chased the cat across the garden ." \
  "Pierre Vinken , 61 years old , will join the board as a nonexecutive director ." \
  "Investors/NNS sold/VBD shares/NNS on/IN Friday/NNP ./." \
  | spacy-lpcfg parse "$MODEL_DIR"

echo
echo "== Parse the PTB sample test split from gold tokens and score it (EVALB, COLLINS.prm)"
spacy-lpcfg test "$MODEL_DIR" ptb_sample --split test | tail -n 28
