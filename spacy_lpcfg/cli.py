"""The ``spacy-lpcfg`` command line (also ``python -m spacy_lpcfg``).

Thin wrappers over library functions: argument parsing, output formatting and
exit codes only. ``--json`` output is the only thing written to stdout;
progress and messages go to stderr. Heavy modules are imported inside the
commands so ``--help`` stays fast.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import typer

app = typer.Typer(
    name="spacy-lpcfg",
    help="Train, run and evaluate latent-variable PCFG constituency parsers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DATA_DIR_OPTION = typer.Option(
    None,
    "--data-dir",
    help="Treebank data directory (default: $SPACY_LPCFG_DATA).",
    show_default=False,
)


def _print_json(payload: dict) -> None:
    # NaN is not JSON: EVALB's "-nan" becomes null.
    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in payload.items()}
    sys.stdout.write(json.dumps(clean, indent=2, ensure_ascii=False) + "\n")


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def stats(
    corpus: str = typer.Argument(
        ..., help="Corpus name (ptb_sample, icepahc, ...) or treebank path."
    ),
    split: str | None = typer.Option(None, "--split", help="train, dev or test (default: all)."),
    data_dir: Path | None = DATA_DIR_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Treebank statistics: trees, tokens, vocabulary, labels, function tags, lengths."""
    from .corpora import open_treebank
    from .errors import DataNotFoundError, TreebankFormatError
    from .trees.normalize import NormalizeOptions
    from .trees.stats import treebank_stats

    # Read with empty elements and indices kept so they can be counted; the
    # statistics normalise before counting anything else.
    raw = NormalizeOptions(remove_empty=False, strip_indices=False)
    try:
        trees, scheme = open_treebank(corpus, split, data_dir=data_dir, options=raw)
        result = treebank_stats(trees, scheme)
    except (DataNotFoundError, TreebankFormatError, ValueError) as err:
        _fail(str(err))
    if as_json:
        _print_json(result)
        return
    for key, value in result.items():
        if isinstance(value, dict):
            top = sorted(value.items(), key=lambda kv: -kv[1])[:15]
            value = ", ".join(f"{k} {v}" for k, v in top) + (" ..." if len(value) > 15 else "")
        elif isinstance(value, float):
            value = f"{value:.2f}"
        typer.echo(f"{key:<32} {value}")


@app.command()
def evaluate(
    gold: Path = typer.Argument(..., exists=True, dir_okay=False, help="Gold trees, one per line."),
    test: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="Parsed trees, one per line."
    ),
    params: str = typer.Option("collins", "--params", help="collins, spmrl or a .prm file."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score parsed trees against gold trees with EVALB semantics (EVALB's output format)."""
    from .evaluation import evaluate_files, get_params

    try:
        result = evaluate_files(gold, test, get_params(params))
    except (OSError, ValueError) as err:
        _fail(str(err))
    for message in result.messages:
        typer.echo(message, err=True)
    if as_json:
        _print_json(result.to_dict())
    else:
        sys.stdout.write(result.format())
    if result.aborted:
        raise typer.Exit(1)


@app.command()
def convert(
    corpus: str = typer.Argument(
        ..., help="Corpus name (ptb_sample, icepahc, ...) or treebank path."
    ),
    output_dir: Path = typer.Argument(
        ..., file_okay=False, help="Where to write the .spacy files."
    ),
    split: str | None = typer.Option(
        None, "--split", help="Only this split of a named corpus (default: train, dev and test)."
    ),
    data_dir: Path | None = DATA_DIR_OPTION,
    functions: bool = typer.Option(True, "--functions/--no-functions", help="Keep function tags."),
    spans_key: str = typer.Option("constituents", "--spans-key", help="Span group key."),
) -> None:
    """Write treebank trees as spaCy training data: OUTPUT_DIR/{train,dev,test}.spacy.

    One Doc per tree, with the treebank's tokens, POS tags in token.tag_ and the
    constituents in doc.spans[SPANS_KEY]. A treebank path gives OUTPUT_DIR/<name>.spacy.
    """
    import os

    from .corpora import CORPORA, load_splits
    from .errors import DataNotFoundError, TransformError, TreebankFormatError
    from .pipeline.readers import read_treebank, trees_to_docbin

    try:
        if corpus in CORPORA:
            scheme = CORPORA[corpus].scheme
            if split:  # one split (read_treebank checks its name)
                trees, _ = read_treebank(corpus, split, data_dir=data_dir, keep_functions=functions)
                outputs = {split: trees}
            else:  # all three, reading the corpus once
                outputs = load_splits(corpus, data_dir=data_dir, keep_functions=functions)
        else:
            trees, scheme = read_treebank(corpus, keep_functions=functions)
            outputs = {Path(corpus).name.split(".")[0] or "corpus": trees}
    except (DataNotFoundError, TreebankFormatError, TransformError, ValueError) as err:
        _fail(str(err))
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, trees in outputs.items():
        target = output_dir / f"{name}.spacy"
        docbin = trees_to_docbin(trees, scheme, spans_key=spans_key)
        # Written beside the target and renamed, so an interrupted run leaves no partial file.
        partial = target.with_name(f".{target.name}.partial")
        docbin.to_disk(partial)
        os.replace(partial, target)
        typer.echo(f"{len(trees)} trees -> {target}", err=True)


ESTIMATOR_NAMES = ("mle", "spectral", "clustering")


def _make_estimator(
    name: str,
    transform,
    language: str,
    rare_threshold: int,
    n_states: int | None,
    random_state: int,
    n_models: int = 1,
    noise: str = "gaussian",
    noise_scale: float = 0.3,
):
    from .estimators import ClusteringEstimator, MLEEstimator, SpectralEstimator
    from .estimators.noise import NoisyEnsemble

    common = {"transform": transform, "language": language, "rare_threshold": rare_threshold}
    if n_models > 1 and name != "clustering":
        _fail("--n-models needs --estimator clustering (noisy clustering models)")
    if name == "mle":
        return MLEEstimator(**common)
    latent = {"random_state": random_state}
    if n_states is not None:
        latent["n_states"] = n_states
    if name == "spectral":
        return SpectralEstimator(**common, **latent)
    if name == "clustering":
        member = ClusteringEstimator(**common, **latent)
        if n_models > 1:
            return NoisyEnsemble(
                estimator=member,
                n_models=n_models,
                noise=noise,
                noise_scale=noise_scale,
                random_state=random_state,
            )
        return member
    _fail(f"unknown estimator '{name}'; available: {', '.join(ESTIMATOR_NAMES)}")


def _default_head_rules(scheme: str, language: str) -> str:
    if scheme == "penn":
        return "collins" if language == "en" else "ppche"
    return "first"


@app.command()
def train(
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    model_dir: Path = typer.Argument(..., file_okay=False, help="Where to write the model."),
    estimator: str = typer.Option(
        "mle", "--estimator", help="Estimator: " + ", ".join(ESTIMATOR_NAMES)
    ),
    split: str = typer.Option("train", "--split", help="Split of a named corpus to train on."),
    data_dir: Path | None = DATA_DIR_OPTION,
    binarization: str = typer.Option("right", "--binarization", help="right, left or head."),
    h_markov: int = typer.Option(1, "--h-markov", help="Horizontal Markov order (-1: infinite)."),
    v_markov: int = typer.Option(2, "--v-markov", help="Vertical Markov order (1: none)."),
    functions: bool = typer.Option(True, "--functions/--no-functions", help="Keep function tags."),
    head_rules: str | None = typer.Option(
        None, "--head-rules", help="collins, ppche, first, last."
    ),
    language: str | None = typer.Option(
        None, "--language", help="Language code (default: corpus's, else en)."
    ),
    rare_threshold: int = typer.Option(
        1, "--rare-threshold", help="Words seen at most this often feed unknown-word classes."
    ),
    n_states: int | None = typer.Option(
        None, "--n-states", help="Latent states per symbol (spectral: 8, clustering: 16)."
    ),
    random_state: int = typer.Option(0, "--random-state", help="Seed (spectral, clustering)."),
    n_models: int = typer.Option(
        1, "--n-models", help="Noisy clustering models decoded together (clustering)."
    ),
    noise: str = typer.Option(
        "gaussian", "--noise", help="Noise of --n-models: dropout, gaussian, multiplicative."
    ),
    noise_scale: float = typer.Option(
        0.3, "--noise-scale", help="Dropout probability or relative noise deviation."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Train a grammar on a treebank and save the model directory."""
    import time

    from .corpora import CORPORA, open_treebank
    from .errors import DataNotFoundError, GrammarError, TransformError, TreebankFormatError
    from .trees.transforms import TransformSpec

    language = language or (CORPORA[corpus].lang if corpus in CORPORA else "en")
    try:
        trees, scheme = open_treebank(corpus, split, data_dir=data_dir)
        spec = TransformSpec(
            binarization=binarization,
            h_markov=None if h_markov < 0 else h_markov,
            v_markov=v_markov,
            keep_functions=functions,
            scheme=scheme,
            head_rules=head_rules or _default_head_rules(scheme, language),
        )
        fitter = _make_estimator(
            estimator,
            spec,
            language,
            rare_threshold,
            n_states,
            random_state,
            n_models,
            noise,
            noise_scale,
        )
        start = time.perf_counter()
        fitter.fit(trees)
        seconds = time.perf_counter() - start
        fitter.model_.to_disk(model_dir)
    except (
        DataNotFoundError,
        TreebankFormatError,
        TransformError,
        GrammarError,
        ValueError,
    ) as err:
        _fail(str(err))
    grammar = fitter.model_.grammar
    summary = {
        "model_dir": str(model_dir),
        "estimator": estimator,
        "trees": len(trees),
        "symbols": grammar.n_symbols,
        "binary_rules": len(grammar.binary_rules),
        "unary_rules": len(grammar.unary_rules),
        "lexical_rules": len(grammar.lexical_rules),
        "seconds": round(seconds, 3),
    }
    if as_json:
        _print_json(summary)
    else:
        typer.echo(
            f"trained {estimator} on {len(trees)} trees in {seconds:.1f} s: {grammar.n_symbols} "
            f"symbols, {len(grammar.binary_rules)} binary and {len(grammar.unary_rules)} unary "
            f"rules -> {model_dir}",
            err=True,
        )


PARSER_OPTIONS = {
    "decoder": typer.Option(
        "auto",
        "--decoder",
        help="max_rule, variational, viterbi, mbr, product or product_mbr (ensembles); "
        "auto: product_mbr for an ensemble, mbr for a spectral model, else max_rule.",
    ),
    "threshold": typer.Option(1e-4, "--prune-threshold", help="Posterior threshold of pruning."),
    "max_length": typer.Option(150, "--max-length", help="Longer sentences get a flat tree."),
}


def _load_parser(
    model_dir: Path, decoder: str, threshold: float, max_length: int, use_tags: str = "auto"
):
    from .decode.parser import Parser
    from .errors import GrammarError
    from .grammar.model import ParsingModel

    try:
        model = ParsingModel.from_disk(model_dir)
        return Parser(
            model,
            decoder=decoder,
            prune_threshold=threshold,
            max_length=max_length,
            use_tags=use_tags,
        )
    except (GrammarError, ValueError) as err:
        _fail(str(err))


# Words that would break bracket notation, written the Penn Treebank way.
_BRACKET_WORDS = {"(": "-LRB-", ")": "-RRB-"}


def _bracketed(tree) -> str:
    return tree.with_words([_BRACKET_WORDS.get(w, w) for w in tree.words()]).pformat()


def _split_tokens(line: str, tagged: str) -> tuple[list[str], list[str] | None]:
    tokens = line.split()
    pairs = [token.rpartition("/") for token in tokens]
    looks_tagged = all(sep and word and tag for word, sep, tag in pairs)
    if tagged == "yes" or (tagged == "auto" and looks_tagged):
        if not looks_tagged:
            bad = next(t for t, (w, sep, tag) in zip(tokens, pairs) if not (sep and w and tag))
            raise ValueError(f"token {bad!r} is not of the form word/TAG")
        return [word for word, _, _ in pairs], [tag for _, _, tag in pairs]
    return tokens, None


@app.command()
def parse(
    model_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A trained model."),
    input_file: Path | None = typer.Argument(
        None,
        exists=True,
        dir_okay=False,
        help="Tokenised text, one sentence per line (default: stdin).",
    ),
    tagged: str = typer.Option("auto", "--tagged", help="Tokens are word/TAG: auto, yes or no."),
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
) -> None:
    """Parse tokenised sentences (one per line) and print one Penn-bracketed tree per line."""
    if tagged not in ("auto", "yes", "no"):
        _fail(f"--tagged must be auto, yes or no, not {tagged!r}")
    parser = _load_parser(model_dir, decoder, threshold, max_length)
    lines = input_file.open(encoding="utf-8") if input_file else sys.stdin
    for number, line in enumerate(lines, 1):
        if not line.strip():
            sys.stdout.write("\n")
            continue
        try:
            words, tags = _split_tokens(line, tagged)
        except ValueError as err:
            _fail(f"{input_file or 'stdin'}, line {number}: {err}")
        sys.stdout.write(_bracketed(parser.parse(words, tags).tree) + "\n")
        sys.stdout.flush()


@app.command("test")
def test_command(
    model_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A trained model."),
    corpus: str = typer.Argument(..., help="Corpus name or treebank path."),
    split: str = typer.Option("test", "--split", help="Split of a named corpus."),
    data_dir: Path | None = DATA_DIR_OPTION,
    decoder: str = PARSER_OPTIONS["decoder"],
    threshold: float = PARSER_OPTIONS["threshold"],
    max_length: int = PARSER_OPTIONS["max_length"],
    params: str = typer.Option(
        "collins", "--params", help="EVALB parameters: collins, spmrl or a .prm file."
    ),
    output: Path | None = typer.Option(
        None, "--output", help="Also write the parses here, one per line."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N sentences."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Parse a treebank split from its gold tokens (no gold tags) and score it with EVALB."""
    import time

    from .corpora import open_treebank
    from .errors import DataNotFoundError, TreebankFormatError
    from .evaluation import get_params, score_trees

    try:
        gold, _ = open_treebank(corpus, split, data_dir=data_dir)
        evalb = get_params(params)
    except (DataNotFoundError, TreebankFormatError, ValueError) as err:
        _fail(str(err))
    gold = gold[:limit] if limit else gold
    parser = _load_parser(model_dir, decoder, threshold, max_length)
    parser.parse(gold[0].words())  # compile the kernels before the clock starts
    parser.fallbacks.clear()
    start = time.perf_counter()
    parses = parser.parse_all((tree.words() for tree in gold), progress=True, total=len(gold))
    seconds = time.perf_counter() - start
    trees = [p.tree for p in parses]
    if output:
        output.write_text("".join(_bracketed(t) + "\n" for t in trees), encoding="utf-8")
    result = score_trees(gold, trees, evalb)
    scores = {
        key: value for key, value in result.to_dict().items() if not isinstance(value, (dict, list))
    }
    scores.update(
        seconds=round(seconds, 3),
        sentences_per_second=round(len(gold) / seconds, 2),
        fallbacks=sum(parser.fallbacks.values()),
        fallback_reasons=dict(parser.fallbacks),
        decoder=parser.decoder,
    )
    if as_json:
        _print_json(scores)
        return
    sys.stdout.write(result.format())
    typer.echo(
        f"{len(gold)} sentences in {seconds:.1f} s ({len(gold) / seconds:.1f}/s), "
        f"fallbacks: {dict(parser.fallbacks) or 0}",
        err=True,
    )


plot_app = typer.Typer(
    help="Draw figures of trained models (needs matplotlib, the package's 'plot' extra).",
    no_args_is_help=True,
)
app.add_typer(plot_app, name="plot")


@plot_app.command("spectrum")
def plot_spectrum(
    model_dir: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="A spectral or clustering model."
    ),
    output: Path | None = typer.Option(
        None, "--output", help="PNG file to write (default: MODEL_DIR/spectrum.png)."
    ),
    symbols: str = typer.Option(
        "12", "--symbols", help="How many symbols (most training nodes first), or names, a,b,c."
    ),
    normalise: bool = typer.Option(
        True, "--normalise/--no-normalise", help="Divide each symbol's values by its largest."
    ),
) -> None:
    """Plot the singular values of each symbol's SVD (log scale) to a PNG file.

    One line per symbol: where its values fall off, more latent states stop helping.
    """
    from .errors import GrammarError
    from .grammar.model import read_spectrum
    from .plots import plot_spectrum as draw_spectrum

    chosen = int(symbols) if symbols.strip().isdigit() else [s for s in symbols.split(",") if s]
    try:
        spectrum = read_spectrum(model_dir)
        if spectrum is None:
            _fail(
                f"{model_dir} has no singular-value spectrum (spectrum.npz): only models of "
                "the latent estimators (--estimator spectral or clustering) have one"
            )
        written = draw_spectrum(
            spectrum, output or model_dir / "spectrum.png", symbols=chosen, normalise=normalise
        )
    except (GrammarError, ImportError, ValueError) as err:
        _fail(str(err))
    typer.echo(f"spectrum of {len(spectrum)} symbols -> {written}", err=True)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
