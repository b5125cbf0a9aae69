#!/usr/bin/env bash
# Install, then run the main job end to end on the PTB sample as a spaCy project:
# convert the treebank to .spacy files, train the lpcfg_parser with `spacy train`,
# score the test split with `spacy evaluate` (EVALB), build a wheel with
# `spacy package`; then load the trained pipeline and parse example text.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e ".[package]"
export SPACY_LPCFG_DATA="${SPACY_LPCFG_DATA:-$(cd .. && pwd)/shared/treebanks}"

echo "== spacy project run all projects/ptb_sample (convert -> train -> evaluate -> package)"
python -m spacy project run all projects/ptb_sample --vars.data_dir "$SPACY_LPCFG_DATA"

echo
echo "== Parse example text with the trained pipeline"
python - <<'PY'
import spacy

nlp = spacy.load("projects/ptb_sample/training/mle/model-best")
nlp.add_pipe("sentencizer", first=True)
doc = nlp(
    "The mouse chased the cat across the garden. "
    "Pierre Vinken, 61 years old, will join the board as a nonexecutive director."
)
for sent in doc.sents:
    print(sent._.parse_string)
print([(span.label_, span.text) for span in doc.spans["constituents"]][:6])
PY
