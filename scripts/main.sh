#!/usr/bin/env bash
# The main job, end to end: install spacy-lpcfg, build the ptb_sample pipeline with
# `train`'s default recipe (spaCy project projects/pipelines: train, test, assemble, kernels,
# package), install its wheel, parse example text with the installed package, and
# print its test scores beside the treebank PCFG (MLE) baseline's and the Berkeley
# parser's recorded figure. About 5 minutes on 2 cores (the first run also compiles
# the numba kernels). The optimize step of projects/ptb_sample is run on purpose:
# python -m spacy project run all projects/ptb_sample
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e ".[package]"
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"
PROJECT=projects/pipelines

echo "== spacy project run all: train -> test -> assemble -> kernels -> package (ptb_sample, default recipe)"
python -m spacy project run all "$PROJECT" --vars.data_dir "$SPACY_LPCFG_DATA" \
  --vars.corpus ptb_sample --vars.lang en

echo
echo "== the baseline: the treebank PCFG (MLE) on the same split"
mkdir -p "$PROJECT/models" "$PROJECT/metrics"
python -m spacy_lpcfg train ptb_sample "$PROJECT/models/ptb_sample_mle" --estimator mle -q
python -m spacy_lpcfg test "$PROJECT/models/ptb_sample_mle" ptb_sample --json \
  > "$PROJECT/metrics/ptb_sample_mle-test.json"

echo
echo "== pip install the pipeline's wheel"
python -m pip install -q --force-reinstall --no-deps \
  "$PROJECT"/packages/en_lpcfg_ptb_sample-*/dist/en_lpcfg_ptb_sample-*.whl

echo
echo "== parse example text with the installed package"
python - <<'PY'
import spacy

nlp = spacy.load("en_lpcfg_ptb_sample")
doc = nlp(
    "The mouse chased the cat across the garden. "
    "Pierre Vinken, 61 years old, will join the board as a nonexecutive director."
)
for sent in doc.sents:
    print(sent._.parse_string)
print([(span.label_, span.text) for span in doc.spans["constituents"]][:6])
PY

echo
echo "== test scores on ptb_sample test (EVALB, COLLINS.prm)"
python - <<'PY'
import json

import spacy

meta = spacy.load("en_lpcfg_ptb_sample").meta["lpcfg"]["test"]
mle = json.load(open("projects/pipelines/metrics/ptb_sample_mle-test.json"))
rows = [
    ("en_lpcfg_ptb_sample (default recipe)", meta["bracketing_fscore"],
     meta["labelled_function_fscore"], meta["sentences_per_second"]),
    ("treebank PCFG (MLE) baseline", mle["bracketing_fscore"], mle["labelled_function_fscore"],
     mle["sentences_per_second"]),
]
print(f"{'model':40} {'F1':>6} {'F1 with function labels':>24} {'sentences/s':>12}")
for name, f1, function_f1, speed in rows:
    print(f"{name:40} {f1:6.2f} {function_f1:24.2f} {speed:12.1f}")
print(f"{'Berkeley parser SM4 (recorded)':40} {85.64:6.2f} {'-':>24} {'-':>12}")
print("(the Berkeley figure: ../shared/tools/berkeley/README.md; race.sh measures it again)")
PY
