#!/usr/bin/env bash
# Install, then run the main job end to end on the PTB sample as a spaCy project:
# convert the treebank to .spacy files, train `train`'s default model (four clustering
# L-PCFGs, binarised left and right, with and without function tags, decoded together)
# with `spacy train`, search the recipe and latent states (`spacy-lpcfg optimize`,
# 10 minutes here; the project's default budget is 25), score the optimized model on the test split with
# `spacy evaluate` (EVALB), build a wheel of it with `spacy package`; score the
# four-way model and the treebank PCFG (MLE) baseline the same way and print all three;
# then load the optimized pipeline, parse example text and draw its trees.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e ".[package]"
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"
PROJECT=projects/ptb_sample

echo "== spacy project run all (convert -> train -> optimize -> evaluate -> package)"
python -m spacy project run all "$PROJECT" --vars.data_dir "$SPACY_LPCFG_DATA" --vars.optimize_time 600

echo
echo "== spacy project run evaluate, model: combined (train's default, before the search)"
python -m spacy project run evaluate "$PROJECT" --vars.model combined

echo
echo "== spacy project run baseline, estimator: mle (the treebank PCFG)"
python -m spacy project run baseline "$PROJECT" --vars.data_dir "$SPACY_LPCFG_DATA" --vars.estimator mle --vars.model mle

echo
echo "== Test scores (EVALB, COLLINS.prm): the optimized model, the four-way model, the MLE baseline"
python -m spacy project run compare "$PROJECT"

echo
echo "== Parse example text with the trained pipeline"
python - <<'PY'
import spacy

import spacy_lpcfg

nlp = spacy.load("projects/ptb_sample/training/optimized/model-best")
nlp.add_pipe("sentencizer", first=True)
doc = nlp(
    "The mouse chased the cat across the garden. "
    "Pierre Vinken, 61 years old, will join the board as a nonexecutive director.\n"
)
for sent in doc.sents:
    if sent.text.strip():  # the trailing newline is a sentence of its own; it parses to ""
        print(sent._.parse_string)
print([(span.label_, span.text) for span in doc.spans["constituents"]][:6])
spacy_lpcfg.render(doc).save("projects/ptb_sample/metrics/example.svg")
print("trees drawn -> projects/ptb_sample/metrics/example.svg")
PY
