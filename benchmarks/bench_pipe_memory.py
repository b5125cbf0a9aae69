"""Memory of a long ``nlp.pipe`` run: resident memory must stay flat after warm-up.

Usage: python benchmarks/bench_pipe_memory.py [--sentences 100000] [--model DIR]
           [--per-doc 5] [--batch-size 64] [--max-words N] [--tolerance 0.05] [--no-write]

Pipeline: ``spacy.blank("en")`` + ``sentencizer`` + ``lpcfg_parser`` with the
MLE model of the PTB sample train split (trained first, in a subprocess, with
``spacy-lpcfg train ptb_sample --estimator mle``), or the model directory ``--model``. Text:
the sentences of the whole PTB sample (all splits, detokenised to plain text as
in ``bench_spacy.py``), cycled until ``--sentences`` sentences, ``--per-doc``
to a Doc, with paragraph breaks ("\\n\\n") inside Docs and a newline at the
end, so whitespace tokens and whitespace-only sentences come through too.
Each parsed Doc is read as a user would (``sent._.parse_string`` of every
sentence) and dropped.

Resident memory (psutil if installed, else VmRSS in /proc/self/status) is
read at the start (model loaded, nothing parsed), after the warm-up (one pass
over the distinct sentences: every sentence shape, word and label seen once),
at every 10% and at the end. Memory is flat when the end is within
``--tolerance`` (5%) of the warm-up figure; the script exits with status 1
when it is not.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spacy import detokenize  # noqa: E402
from common import data_dir, peak_rss_mb, write_section  # noqa: E402

MB = 2**20


def rss_mb() -> float:
    """Resident memory of this process now, in MiB."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return psutil.Process().memory_info().rss / MB
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return peak_rss_mb()  # neither: the peak is the best we have


def corpus_sentences(max_words: int) -> list[str]:
    """Every sentence of the PTB sample as plain text (at most ``max_words`` words)."""
    from spacy_lpcfg.corpora import load_split

    texts = []
    for split in ("train", "dev", "test"):
        for tree in load_split("ptb_sample", split, data_dir=data_dir()):
            words = tree.words()
            if not max_words or len(words) <= max_words:
                texts.append(detokenize(words))
    return texts


def doc_texts(sentences: list[str], total: int, per_doc: int) -> Iterator[tuple[str, int]]:
    """(text, number of sentences) of each Doc: ``total`` sentences cycled, ``per_doc``
    to a Doc; a paragraph break after every other sentence and a newline at the end."""
    stream = itertools.islice(itertools.cycle(sentences), total)
    while chunk := list(itertools.islice(stream, per_doc)):
        parts = []
        for position, sentence in enumerate(chunk):
            if position:
                parts.append("\n\n" if position % 2 == 0 else " ")
            parts.append(sentence)
        yield "".join(parts) + "\n", len(chunk)


def train_model(directory: Path) -> Path:
    """The MLE model of the PTB sample train split, trained by the CLI in a subprocess
    (so that training leaves nothing in this process's memory)."""
    model = directory / "mle_ptb_sample"
    command = [
        sys.executable,
        "-m",
        "spacy_lpcfg",
        "train",
        "ptb_sample",
        str(model),
        "--estimator",
        "mle",
    ]
    command += ["--data-dir", str(data_dir())]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return model


def reading_label(mark: int, warmup: int, total: int) -> str:
    percent = f"{100 * mark // total}%"
    if mark != warmup:
        return percent
    return f"warm-up ({percent})" if mark * 10 % total == 0 else "warm-up"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--model", type=Path, help="A model directory (default: train MLE).")
    parser.add_argument("--per-doc", type=int, default=5, help="Sentences per Doc.")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-words", type=int, default=0, help="Longest sentence (0: all).")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import spacy

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or train_model(Path(tmp))
        sentences = corpus_sentences(args.max_words)
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("lpcfg_parser", config={"model": str(model)})
        nlp.initialize()  # reads the model now: start is measured with it loaded
    model_name = str(args.model) if args.model else "MLE, ptb_sample train"
    total = args.sentences
    warmup = min(total, len(sentences))
    marks = sorted({warmup, total} | {total * k // 10 for k in range(1, 11)})
    gc.collect()
    readings = [("start", 0, 0, 0.0, rss_mb())]
    print(f"{readings[0][0]}: {readings[0][4]:.1f} MiB", file=sys.stderr)

    texts = doc_texts(sentences, total, args.per_doc)
    counts: list[int] = []

    def counted() -> Iterator[str]:
        for text, count in texts:
            counts.append(count)
            yield text

    done = docs = spacy_sentences = parsed = 0
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    next_mark = iter(marks)
    mark = next(next_mark)
    for doc in nlp.pipe(counted(), batch_size=args.batch_size):
        for sent in doc.sents:
            parsed += bool(sent._.parse_string)  # "" for a whitespace-only sentence
            spacy_sentences += 1
        done += counts[docs]
        docs += 1
        while mark is not None and done >= mark:
            label = reading_label(mark, warmup, total)
            reading = (label, done, docs, time.perf_counter() - start_wall, rss_mb())
            readings.append(reading)
            print(
                f"{label}: {done:,} sentences, {docs:,} docs, {reading[3]:.0f} s, "
                f"{reading[4]:.1f} MiB",
                file=sys.stderr,
            )
            mark = next(next_mark, None)
        del doc
    cpu_seconds = time.process_time() - start_cpu
    wall_seconds = time.perf_counter() - start_wall

    after_warmup = next(r[4] for r in readings if r[0].startswith("warm-up"))
    later = [r[4] for r in readings if r[1] > warmup]
    end = readings[-1][4]
    growth = (end - after_warmup) / after_warmup
    most = (max(later) - after_warmup) / after_warmup if later else 0.0
    flat = growth < args.tolerance
    rows = "\n".join(
        f"| {label} | {sentences_done:,} | {docs_done:,} | {seconds:.0f} | {rss:.1f} | "
        f"{(rss - after_warmup) / after_warmup:+.1%} |"
        for label, sentences_done, docs_done, seconds, rss in readings
    )
    verdict = (
        f"{'flat' if flat else 'NOT flat'}: {growth:+.2%} from warm-up to end "
        f"(largest reading {most:+.2%}; tolerance {args.tolerance:.0%}); "
        f"peak RSS {peak_rss_mb():.1f} MiB"
    )
    command = (
        f"python benchmarks/bench_pipe_memory.py --sentences {total} --per-doc {args.per_doc} "
        f"--batch-size {args.batch_size}"
        + (f" --max-words {args.max_words}" if args.max_words else "")
        + (f" --model {args.model}" if args.model else "")
    )
    body = (
        "## spaCy component: memory over a long `nlp.pipe` run\n\n"
        f"`{command}`: `spacy.blank('en')` + sentencizer + lpcfg_parser ({model_name}), "
        f"one process, over {total:,} sentences of real text (the {len(sentences):,} PTB "
        f"sample sentences detokenised, cycled), {args.per_doc} to a Doc with paragraph "
        f"breaks: {docs:,} Docs, {spacy_sentences:,} spaCy sentences ({parsed:,} with words, "
        f"the others whitespace only), every `sent._.parse_string` read. {wall_seconds:.0f} s wall, "
        f"{cpu_seconds:.0f} s CPU ({total / cpu_seconds:.1f} sentences per CPU second). "
        "Resident memory (RSS) at the start (model loaded), after the warm-up (one pass over "
        "the distinct sentences), at every 10% and at the end.\n\n"
        "| reading | sentences | docs | seconds | RSS MiB | vs warm-up |\n"
        "|---|---:|---:|---:|---:|---:|\n"
        f"{rows}\n\n"
        f"Memory {verdict}."
    )
    if not args.no_write:
        write_section("pipe_memory", body)
    print(body)
    if not flat:
        sys.exit(1)


if __name__ == "__main__":
    main()
