"""Print the constituency scores of `spacy evaluate --output` files, side by side.

`spacy evaluate` prints only the `spans_constituents_*` aliases; this adds the
function-label, exact-match and tagging figures the scorer also computes.
Usage: python scripts/print_scores.py metrics/mle-test.json [metrics/ensemble-test.json ...]
A file that does not exist (an estimator not trained yet) is left out.
"""

import json
import sys
from pathlib import Path

KEYS = {
    "constituents_p": "labelled precision",
    "constituents_r": "labelled recall",
    "constituents_f": "labelled F1",
    "constituents_func_f": "F1 with function labels",
    "constituents_exact": "complete match",
    "constituents_tag_acc": "tagging accuracy",
}

paths = [Path(arg) for arg in sys.argv[1:] if Path(arg).exists()]
if not paths:
    sys.exit(f"none of {sys.argv[1:]} exists: run the evaluate step first")
columns = [json.loads(path.read_text(encoding="utf8")) for path in paths]
names = [path.name.removesuffix(".json") for path in paths]
print(f"{'test split':<26} " + " ".join(f"{name:>14}" for name in names))
for key, label in KEYS.items():
    cells = []
    for scores in columns:
        value = scores.get(key)
        cells.append(f"{'-' if value is None else f'{100 * value:.2f}':>14}")
    print(f"{label:<26} " + " ".join(cells))
