"""Figures of trained models, written as PNG files.

matplotlib is an optional extra (``pip install spacy-lpcfg[plot]``), imported
only when a figure is drawn. Figures are drawn on an Agg canvas directly, not
through pyplot, so drawing needs no display and changes no global matplotlib
state (a notebook's backend stays as it was).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .grammar.model import Spectrum

DEFAULT_SYMBOLS = 12
MATPLOTLIB_MISSING = "Plotting needs matplotlib, an optional extra: pip install spacy-lpcfg[plot]"
# More lines than the colour cycle has colours: repeat the colours with other dashes.
LINE_STYLES = ("-", "--", ":", "-.")


def select_symbols(spectrum: Spectrum, symbols: int | Sequence[str] = DEFAULT_SYMBOLS) -> list[str]:
    """The symbols to draw.

    spectrum (Spectrum): the model's spectrum.
    symbols (int | Sequence[str]): how many (those with the most training nodes,
        or, when the counts are not known, the largest first singular values), or
        the names of the symbols.
    RETURNS (list[str]): symbol names, in drawing (and legend) order.
    RAISES ValueError: a name the spectrum lacks, or a number < 1.
    """
    values = {name: array for name, array in spectrum.values.items() if len(array)}
    if isinstance(symbols, str) or not isinstance(symbols, (int, np.integer)):
        names = [symbols] if isinstance(symbols, str) else list(symbols)
        unknown = [name for name in names if name not in values]
        if unknown or not names:
            known = ", ".join(_by_size(spectrum, values)[:DEFAULT_SYMBOLS])
            raise ValueError(
                f"No singular values for symbol(s) {', '.join(unknown) or '(none given)'}; "
                f"the most frequent are: {known}"
            )
        return names
    if isinstance(symbols, bool) or symbols < 1:
        raise ValueError(f"The number of symbols to draw must be >= 1, not {symbols!r}")
    return _by_size(spectrum, values)[: int(symbols)]


def plot_spectrum(
    spectrum: Spectrum,
    output: str | Path,
    *,
    symbols: int | Sequence[str] = DEFAULT_SYMBOLS,
    normalise: bool = True,
    title: str | None = None,
) -> Path:
    """Draw the singular values of some symbols, one line each, on a log axis.

    The singular values of a symbol's cross-covariance show how many latent
    states its data supports: where they fall off, more states add noise.

    spectrum (Spectrum): the model's spectrum.
    output (str | Path): the PNG file to write (its folder is created).
    symbols (int | Sequence[str]): see ``select_symbols``.
    normalise (bool): divide each symbol's values by its largest, so that the
        decays of frequent and rare symbols compare.
    title (str | None): the figure's title.
    RETURNS (Path): the file written.
    RAISES ImportError: matplotlib is not installed.
    RAISES ValueError: see ``select_symbols``.
    """
    names = select_symbols(spectrum, symbols)
    figure_class, canvas_class = _matplotlib()
    figure = figure_class(figsize=(8, 5), dpi=100)
    canvas_class(figure)
    axes = figure.add_subplot()
    for i, name in enumerate(names):
        values = spectrum.values[name]
        if normalise and values[0] > 0:
            values = values / values[0]
        # a log axis cannot show zeros: leave them out of the line
        shown = np.where(values > 0, values, np.nan)
        label = name if spectrum.counts is None else f"{name} ({spectrum.counts[name]:,} nodes)"
        axes.plot(
            np.arange(1, len(values) + 1),
            shown,
            marker=".",
            linestyle=LINE_STYLES[(i // 10) % len(LINE_STYLES)],
            label=label,
        )
    axes.set_yscale("log")
    axes.set_xlabel("index i of the singular value")
    axes.set_ylabel("σ_i / σ_1" if normalise else "σ_i")
    axes.set_title(title or "Singular values of the cross-covariance per symbol")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small", ncol=2 if len(names) > 8 else 1)
    figure.tight_layout()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, format="png")
    return output


def _by_size(spectrum: Spectrum, values: dict[str, np.ndarray]) -> list[str]:
    """Symbol names, most training nodes first (else largest first singular value)."""
    counts = spectrum.counts or {}
    return sorted(values, key=lambda name: (-counts.get(name, 0), -values[name][0], name))


def _matplotlib():
    """(Figure, FigureCanvasAgg), or ImportError saying how to install matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(MATPLOTLIB_MISSING) from None
    return Figure, FigureCanvasAgg


def plot_trace(records: Sequence[dict], output: str | Path, *, title: str | None = None) -> Path:
    """Draw a search's dev F1 against evaluations (``optimize``'s trace): a point per
    candidate, coloured by stage, and the best so far as a line.

    records (Sequence[dict]): the trace's records (``stage``, ``dev_f1``).
    output (str | Path): the PNG file to write (its folder is created).
    RETURNS (Path): the file written.
    RAISES ImportError: matplotlib is not installed.
    """
    figure_class, canvas_class = _matplotlib()
    figure = figure_class(figsize=(8, 5), dpi=100)
    canvas_class(figure)
    axes = figure.add_subplot()
    scores = np.array([float(record["dev_f1"]) for record in records])
    evaluations = np.arange(1, len(scores) + 1)
    for stage in dict.fromkeys(record["stage"] for record in records):
        mask = np.array([record["stage"] == stage for record in records])
        axes.plot(evaluations[mask], scores[mask], ".", label=stage, alpha=0.6)
    if len(scores):
        axes.plot(evaluations, np.maximum.accumulate(scores), "-", color="black", label="best")
        low = np.percentile(scores, 5)  # a coarse value of 1 state can fall far below
        axes.set_ylim(low - 0.5, scores.max() + 0.5)
    axes.set_xlabel("candidates scored")
    axes.set_ylabel("dev F1")
    axes.set_title(title or "Search: dev F1 of each candidate")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, format="png")
    return output
