"""``spacy-lpcfg plot spectrum`` and ``plot training``: figures of trained models."""

from __future__ import annotations

from pathlib import Path

import typer

from ..training import checkpoint_dir
from .checks import refuse_overwrite
from .exits import fail, guarded

plot_app = typer.Typer(
    help="Draw figures of trained models (needs matplotlib, the package's 'plot' extra).",
    no_args_is_help=True,
)


@plot_app.command("spectrum")
@guarded
def plot_spectrum(
    model_dir: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="A spectral or clustering model."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="PNG file to write, outside MODEL_DIR (default: MODEL_DIR-spectrum.png beside it).",
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
    from ..errors import GrammarError
    from ..grammar.model import read_spectrum
    from ..plots import plot_spectrum as draw_spectrum

    chosen = int(symbols) if symbols.strip().isdigit() else [s for s in symbols.split(",") if s]
    output = output or _beside(model_dir, "spectrum.png")
    refuse_overwrite(output, "the figure", [model_dir])
    try:
        spectrum = read_spectrum(model_dir)
        if spectrum is None:
            fail(
                f"{model_dir} has no singular-value spectrum (spectrum.npz): only models of "
                "the latent estimators (--estimator spectral or clustering) have one"
            )
        written = draw_spectrum(spectrum, output, symbols=chosen, normalise=normalise)
    except (GrammarError, ImportError, ValueError) as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot write {output}: {err.strerror or err}")
    typer.echo(f"spectrum of {len(spectrum)} symbols -> {written}", err=True)


def _beside(folder: Path, name: str) -> Path:
    """A default output file next to ``folder``, never in it: FOLDER-NAME."""
    folder = folder.absolute()
    return folder.parent / f"{folder.name}-{name}"


@plot_app.command("training")
@guarded
def plot_training(
    model_dir: Path = typer.Argument(
        ...,
        help="A split_merge or inherit model, or the checkpoint folder of a training run "
        "(also found beside MODEL_DIR while 'train' has not written it yet).",
    ),
    output_argument: Path | None = typer.Argument(
        None, metavar="[OUTPUT]", help="PNG file to write (or --output)."
    ),
    output_option: Path | None = typer.Option(
        None,
        "--output",
        help="PNG file to write, outside MODEL_DIR (default: MODEL_DIR-training.png beside it).",
    ),
    symbols: str = typer.Option(
        "12", "--symbols", help="How many symbols (most states first), or names, a,b,c."
    ),
) -> None:
    """Plot a split-merge (or INHERIT) training: log-likelihood per EM iteration, dev F1
    per cycle (and the cycle kept), latent states per symbol per cycle, to a PNG file."""
    from ..errors import GrammarError
    from ..plots import plot_training as draw_training
    from ..plots import read_training_history

    if output_argument is not None and output_option is not None:
        fail("give the PNG file once: as OUTPUT or as --output", 2)
    chosen = int(symbols) if symbols.strip().isdigit() else [s for s in symbols.split(",") if s]
    source = model_dir
    if not model_dir.exists() and checkpoint_dir(model_dir).is_dir():
        source = checkpoint_dir(model_dir)  # a run in progress: its cycles so far
    output = output_argument or output_option or _beside(model_dir, "training.png")
    refuse_overwrite(output, "the figure", [model_dir, source])
    try:
        history = read_training_history(source)
        written = draw_training(history, output, symbols=chosen)
    except (GrammarError, ImportError, ValueError) as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot write {output}: {err.strerror or err}")
    cycles = len(history["n_states"])
    seeds = _product_seeds(source)
    which = f"{source}, the first of its {seeds} seeds" if seeds > 1 else str(source)
    typer.echo(f"training history of {cycles} cycles ({which}) -> {written}", err=True)


def _product_seeds(model_dir: Path) -> int:
    """How many grammars a model decodes as one ensemble (a product of seeds; 1 for a
    checkpoint folder or a single grammar)."""
    from ..grammar.model import CFG, ENSEMBLE, _read_cfg, _read_file

    try:
        training = _read_cfg(_read_file(model_dir, CFG), model_dir)["training"]
        return 1 + len(training.get(ENSEMBLE, ()))
    except (OSError, ValueError, KeyError, TypeError):
        return 1
