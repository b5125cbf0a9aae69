"""Print the constituency scores of a `spacy evaluate --output` file.

`spacy evaluate` prints only the `spans_constituents_*` aliases; this adds the
function-label, exact-match and tagging figures the scorer also computes.
Usage: python scripts/print_scores.py metrics/mle-test.json
"""

import json
import sys

KEYS = {
    "constituents_p": "labelled precision",
    "constituents_r": "labelled recall",
    "constituents_f": "labelled F1",
    "constituents_func_f": "F1 with function labels",
    "constituents_exact": "complete match",
    "constituents_tag_acc": "tagging accuracy",
}

scores = json.loads(open(sys.argv[1], encoding="utf8").read())
for key, name in KEYS.items():
    value = scores.get(key)
    print(f"{name:<26} {'-' if value is None else f'{100 * value:6.2f}'}")
