"""Parse speed through spaCy (``nlp.pipe``) against the parser the CLI uses, same sentences.

Usage: python benchmarks/bench_spacy.py [--repeat 3] [--limit N] [--no-write]

The grammar is the MLE treebank PCFG of the PTB sample train split (what
``spacy-lpcfg train ptb_sample`` and the ptb_sample project fit); the sentences
are the test split. Three timings, each the median of ``repeat`` runs after a
warm-up parse (numba kernels compiled), run in turn so that a busy machine
slows them alike; the ratio is of CPU time (one thread):

* Parser: ``Parser.parse`` on the gold tokens, as ``spacy-lpcfg test`` does,
  and on the words the component parses for the raw text;
* component, gold tokens: ``nlp.pipe`` over Docs of the gold tokens (the
  component's own cost: normalisation, sentences, spans, tags);
* component, raw text: ``nlp.pipe`` over the sentences as plain text (spaCy's
  tokenizer included; its tokens differ from the treebank's in places, hence
  the second Parser run on exactly those words).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, write_section  # noqa: E402

# Treebank escapes back to text, and no space before punctuation and clitics.
UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]",
            "``": '"', "''": '"', "`": "'"}  # fmt: skip
NO_SPACE_BEFORE = re.compile(r" (?=[,.;:%)\]}!?]|'s\b|'re\b|n't\b|'ll\b|'d\b|'ve\b|'m\b)")
NO_SPACE_AFTER = re.compile(r"(?<=[$(\[{]) ")


def detokenize(words: list[str]) -> str:
    """Plain text for a tokenised sentence (good enough for a tokenizer benchmark)."""
    text = " ".join(UNESCAPE.get(word, word) for word in words)
    return NO_SPACE_AFTER.sub("", NO_SPACE_BEFORE.sub("", text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N test sentences.")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import spacy
    from spacy.tokens import Doc

    from spacy_lpcfg.corpora import load_split
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.grammar import ParsingModel

    test = load_split("ptb_sample", "test", data_dir=data_dir())
    test = test[: args.limit] if args.limit else test
    nlp = spacy.blank("en")
    component = nlp.add_pipe("lpcfg_parser")
    nlp.config["initialize"]["components"]["lpcfg_parser"] = {
        "treebank": "ptb_sample",
        "data_dir": str(data_dir()),
    }
    nlp.initialize()
    with tempfile.TemporaryDirectory() as tmp:  # the CLI reads a model directory
        component.parsing_model.to_disk(Path(tmp) / "model")
        cli_parser = Parser(ParsingModel.from_disk(Path(tmp) / "model"))
    gold_words = [tree.words() for tree in test]
    texts = [detokenize(words) for words in gold_words]
    tokens_raw = sum(len(doc) for doc in nlp.tokenizer.pipe(texts))
    tokens_gold = sum(map(len, gold_words))
    cli_parser.parse(gold_words[0])  # warm up: compile or load the kernels
    nlp(texts[0])

    # The words the component parses for the raw text: spaCy's tokens, normalised.
    raw_words = [
        component.normalizer([token.text for token in doc if not token.is_space])
        for doc in nlp.tokenizer.pipe(texts)
    ]

    def parse_cli():
        return [cli_parser.parse(words) for words in gold_words]

    def parse_cli_raw():
        return [cli_parser.parse(words) for words in raw_words]

    def parse_docs():
        return list(nlp.pipe(Doc(nlp.vocab, words=words) for words in gold_words))

    def parse_texts():
        return list(nlp.pipe(texts))

    # name -> (run, tokens, the Parser run on the same words)
    runs = {
        "Parser (CLI), gold tokens": (parse_cli, tokens_gold, None),
        "component, gold tokens": (parse_docs, tokens_gold, "Parser (CLI), gold tokens"),
        "Parser (CLI), spaCy's tokens": (parse_cli_raw, tokens_raw, None),
        "component, raw text": (parse_texts, tokens_raw, "Parser (CLI), spaCy's tokens"),
    }
    # Interleaved repeats, and CPU time beside wall time: the machine may be busy.
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeat):
        for name, (run, _, _) in runs.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            run()
            wall[name].append(time.perf_counter() - start_wall)
            cpu[name].append(time.process_time() - start_cpu)
    rows = []
    for name, (_, tokens, baseline) in runs.items():
        seconds, cpu_seconds = statistics.median(wall[name]), statistics.median(cpu[name])
        ratio = f"{cpu_seconds / statistics.median(cpu[baseline]):.2f}" if baseline else ""
        rows.append(
            f"| {name} | {len(test)} | {tokens:,} | {seconds:.1f} | {cpu_seconds:.1f} | "
            f"{len(test) / cpu_seconds:.1f} | {ratio} |"
        )
        print(rows[-1], file=sys.stderr)
    body = (
        "## spaCy component: parse speed against the CLI parser\n\n"
        f"`python benchmarks/bench_spacy.py --repeat {args.repeat}`: MLE grammar of the PTB "
        "sample train split (default settings: max_rule decoder, h=1, v=2), the "
        f"{len(test)} test sentences, one process; median of {args.repeat} interleaved runs "
        "after a warm-up; CPU time, as other jobs may share the machine. *Parser* is what "
        "the CLI runs (`spacy-lpcfg test` / `parse`, no tags): on the gold tokens, and on "
        "the words the component gets from the raw text (spaCy's tokens, normalised). "
        "*Component, gold tokens* is `nlp.pipe` over Docs of the gold tokens; *component, "
        "raw text* is `nlp.pipe` over the sentences detokenised to plain text, spaCy's "
        "tokenizer included. The last column compares each component run with the Parser "
        "on the same words. Target: within 10%.\n\n"
        "| run | sentences | words | wall s | CPU s | sentences per CPU s | CPU time / Parser |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
    )
    if not args.no_write:
        write_section("spacy", body)
    print(body)


if __name__ == "__main__":
    main()
