"""Make a ready pipeline of a trained model: spaCy's sentencizer, then lpcfg_parser,
with a meta.json that says what it is: the treebank (where from, its licence), the
recipe, and the scores on the treebank's test split (``spacy-lpcfg test --json``).

    python scripts/assemble.py MODEL_DIR TEST_JSON OUTPUT_DIR --corpus NAME --lang LANG
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import spacy

from spacy_lpcfg.about import __version__
from spacy_lpcfg.corpora import CORPORA
from spacy_lpcfg.grammar.model import ParsingModel


def recipe(model: ParsingModel) -> dict:
    """What the model is: its estimator(s), decoder and transforms, from its cfg."""
    cfg = model.cfg
    parts = [part.cfg for part in model.parts]
    return {
        "trained_with": f"spacy-lpcfg {__version__}: spacy-lpcfg train CORPUS MODEL_DIR",
        "decoder": cfg.get("decoder"),
        "models": [part["estimator"] for part in parts],
        "function_labeller": model.labeller is not None,
    }  # fmt: skip


def performance(scores: dict) -> dict:
    """spaCy's meta "performance" (fractions, as spaCy writes scores) of the test run."""
    return {
        "constituents_p": round(scores["bracketing_precision"] / 100, 4),
        "constituents_r": round(scores["bracketing_recall"] / 100, 4),
        "constituents_f": round(scores["bracketing_fscore"] / 100, 4),
        "constituents_func_f": round(scores["labelled_function_fscore"] / 100, 4),
        "sentences_per_second": scores["sentences_per_second"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", type=Path)
    parser.add_argument("scores", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--corpus", required=True, choices=sorted(CORPORA))
    parser.add_argument("--lang", required=True)
    parser.add_argument("--version", default="0.1.0")
    args = parser.parse_args()

    corpus = CORPORA[args.corpus]
    scores = json.loads(args.scores.read_text(encoding="utf-8"))
    model = ParsingModel.from_disk(args.model)
    nlp = spacy.blank(args.lang)
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lpcfg_parser", config={"model": str(args.model)})
    nlp.initialize()  # reads the model: the config then says what it is, not its path
    nlp.meta.update(
        name=f"lpcfg_{corpus.name}",
        version=args.version,
        description=(
            f"Constituency parser for {corpus.source['name'].split(' (')[0]}: sentences "
            "split by spaCy's sentencizer, then parsed by spacy-lpcfg's lpcfg_parser "
            "(constituents in doc.spans['constituents'], with function labels such as "
            "NP-SBJ; benepar-style ._.parse_string). Scores are on the treebank's test "
            "split (EVALB, COLLINS.prm)."
        ),
        author="The spacy-lpcfg developers",
        license=corpus.source["license"],
        sources=[corpus.source],
        requirements=[f"spacy-lpcfg>={__version__}"],
        performance=performance(scores),
    )
    nlp.meta["lpcfg"] = {
        "treebank": corpus.name,
        "recipe": recipe(model),
        "test": {
            "sentences": scores["sentences"],
            "bracketing_fscore": scores["bracketing_fscore"],
            "labelled_function_fscore": scores["labelled_function_fscore"],
            "sentences_per_second": scores["sentences_per_second"],
        },
    }
    nlp.to_disk(args.output)
    print(f"{args.output}: sentencizer + lpcfg_parser, test F1 {scores['bracketing_fscore']:.2f}")


if __name__ == "__main__":
    main()
