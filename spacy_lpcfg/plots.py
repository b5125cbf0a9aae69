"""Figures of trained models, written as PNG files.

matplotlib is an optional extra (``pip install spacy-lpcfg[plot]``), imported
only when a figure is drawn. Figures are drawn on an Agg canvas directly, not
through pyplot, so drawing needs no display and changes no global matplotlib
state (a notebook's backend stays as it was).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import Errors

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
    missing = "No singular values for symbol(s) {unknown}; the most frequent are: {known}"
    return _pick(symbols, _by_size(spectrum, values), missing)


def _pick(symbols: int | Sequence[str], ranked: list[str], missing: str) -> list[str]:
    """The first `symbols` of `ranked`, or the names given, all of them in `ranked`.
    RAISES ValueError: ``missing`` (with {unknown} and {known}) for other names, or
    a number < 1."""
    if isinstance(symbols, str) or not isinstance(symbols, (int, np.integer)):
        names = [symbols] if isinstance(symbols, str) else list(symbols)
        known = set(ranked)
        unknown = [name for name in names if name not in known]
        if unknown or not names:
            raise ValueError(
                missing.format(
                    unknown=", ".join(unknown) or "(none given)",
                    known=", ".join(ranked[:DEFAULT_SYMBOLS]),
                )
            )
        return names
    if isinstance(symbols, bool) or symbols < 1:
        raise ValueError(f"The number of symbols to draw must be >= 1, not {symbols!r}")
    return ranked[: int(symbols)]


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


# Split-merge training --------------------------------------------------------------------

DEFAULT_TRAINING_SYMBOLS = 12
# The two EM phases of a split-merge cycle, as the history names them.
PHASES = {"split": "EM after splitting", "merge": "smoothed EM after merging"}


def read_training_history(path: str | Path) -> dict[str, Any]:
    """The split-merge training history of a model directory (``training["history"]``
    in its cfg.json; a product of seeds records its first seed's) or of a checkpoint
    folder (its checkpoint.json: the cycles that a training run, perhaps still going,
    has completed; a product's run has one folder per seed, ``seed0``...).

    path (str | Path): the model directory or checkpoint folder.
    RETURNS (dict): the history, checked by ``check_history``.
    RAISES ValueError: no history there (E501), a malformed one (E502, E503), or an
        unreadable model (GrammarError).
    """
    from .estimators.em.checkpoints import INDEX
    from .estimators.seed_product import SEED_FOLDER
    from .grammar.model import CFG, ParsingModel

    path = Path(path)
    if (path / INDEX).is_file():
        history = _checkpoint_history(path / INDEX)
    elif (path / CFG).is_file():
        model = ParsingModel.from_disk(path)
        history = model.training.get("history")
        if history is None:
            detail = (
                f"it is a model of the '{model.estimator}' estimator"
                if model.estimator not in ("split_merge", "inherit")
                else f"its {CFG} records none (trained by an older version?)"
            )
            raise ValueError(Errors.E501.format(path=path, detail=detail))
    else:
        detail = "no such directory" if not path.exists() else "not a directory"
        if path.is_dir():
            detail = f"it holds neither a model's {CFG} nor a checkpoint's {INDEX}"
            seeds = sorted(p.name for p in path.glob(SEED_FOLDER.format("*")) if p.is_dir())
            if seeds:  # a product's run: one folder per seed
                detail = f"it holds the checkpoints of a product's seeds: give one of {seeds}"
        raise ValueError(Errors.E501.format(path=path, detail=detail))
    return check_history(history, path)


def _checkpoint_history(index: Path) -> Any:
    """The history in a checkpoint index (read as is: a plot needs no fingerprint)."""
    import json

    from .estimators.em.checkpoints import CHECKPOINT_FORMAT

    try:
        record = json.loads(index.read_bytes().decode("utf8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(Errors.E502.format(source=index, detail=str(err))) from None
    if not isinstance(record, dict) or record.get("format") != CHECKPOINT_FORMAT:
        detail = "not the index of a split-merge checkpoint"
        raise ValueError(Errors.E502.format(source=index, detail=detail))
    return record.get("history")


def check_history(history: Any, source: str | Path = "as given") -> dict[str, Any]:
    """The history, checked for what the figure reads.

    history (Any): ``SplitMergeEstimator.history_`` or its JSON.
    source (str | Path): where it comes from, for messages.
    RETURNS (dict): the same history.
    RAISES ValueError: a malformed history (E502), or one without a cycle (E503).
    """

    def fail(detail: str) -> ValueError:
        return ValueError(Errors.E502.format(source=source, detail=detail))

    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    if not isinstance(history, dict):
        raise fail(f"expected an object, not {type(history).__name__}")
    missing = [key for key in ("log_likelihoods", "dev_f1", "n_states") if key not in history]
    if missing:
        raise fail(f"no {', '.join(missing)}")
    n_states, dev_f1 = history["n_states"], history["dev_f1"]
    if not isinstance(n_states, list) or not all(
        isinstance(states, dict)
        and all(
            isinstance(name, str) and isinstance(m, int) and m >= 1 for name, m in states.items()
        )
        for states in n_states
    ):
        raise fail("'n_states' must list an object {symbol: states} per cycle")
    if not n_states:
        raise ValueError(Errors.E503.format(source=source))
    if not isinstance(dev_f1, list) or len(dev_f1) not in (0, len(n_states)):
        raise fail(f"'dev_f1' must list a score for each of the {len(n_states)} cycles, or none")
    if not all(number(score) for score in dev_f1):
        raise fail("'dev_f1' must list numbers")
    best = history.get("best_cycle")
    if best is not None and not (isinstance(best, int) and 1 <= best <= len(dev_f1)):
        raise fail(f"'best_cycle' {best!r} is not one of the cycles scored on dev")
    phases = history["log_likelihoods"]
    if not isinstance(phases, list) or not all(
        isinstance(phase, dict)
        and isinstance(phase.get("cycle"), int)
        and phase.get("phase") in PHASES
        and isinstance(phase.get("values"), list)
        and all(number(value) for value in phase["values"])
        for phase in phases
    ):
        raise fail("'log_likelihoods' must list {cycle, phase: split or merge, values} objects")
    return history


def select_training_symbols(
    history: Mapping[str, Any], symbols: int | Sequence[str] = DEFAULT_TRAINING_SYMBOLS
) -> list[str]:
    """The symbols whose states the training figure draws.

    history (Mapping): a split-merge training history (``check_history``).
    symbols (int | Sequence[str]): how many (most states after the last cycle first;
        ties: more states summed over the cycles, then by name), or their names.
    RETURNS (list[str]): symbol names, in drawing (and legend) order.
    RAISES ValueError: a symbol never split, or a number < 1.
    """
    cycles = history["n_states"]
    split = {name for states in cycles for name in states}
    ranked = sorted(
        split,
        key=lambda name: (
            -cycles[-1].get(name, 1),
            -sum(states.get(name, 1) for states in cycles),
            name,
        ),
    )
    missing = "No symbol(s) {unknown} among those that training split; the most split are: {known}"
    return _pick(symbols, ranked, missing)


def training_figure(
    history: Mapping[str, Any],
    *,
    symbols: int | Sequence[str] = DEFAULT_TRAINING_SYMBOLS,
    title: str | None = None,
    source: str | Path = "as given",
):
    """The figure of ``plot_training`` (a matplotlib Figure on an Agg canvas): its
    axes are the log-likelihood, the dev F1 (or a note that there is none) and the
    states per symbol, in that order.

    RAISES ImportError: matplotlib is not installed.
    RAISES ValueError: see ``check_history`` and ``select_training_symbols``.
    """
    check_history(history, source)
    names = select_training_symbols(history, symbols)
    figure_class, canvas_class = _matplotlib()
    figure = figure_class(figsize=(12, 9), dpi=100)
    canvas_class(figure)
    grid = figure.add_gridspec(2, 2, height_ratios=(1, 1))
    _draw_log_likelihoods(figure.add_subplot(grid[0, :]), history["log_likelihoods"])
    _draw_dev_f1(figure.add_subplot(grid[1, 0]), history["dev_f1"], history.get("best_cycle"))
    _draw_states(figure.add_subplot(grid[1, 1]), history["n_states"], names)
    figure.suptitle(title or f"EM training: {len(history['n_states'])} cycles")
    figure.tight_layout()
    return figure


def plot_training(
    history: Mapping[str, Any],
    output: str | Path,
    *,
    title: str | None = None,
    symbols: int | Sequence[str] = DEFAULT_TRAINING_SYMBOLS,
) -> Path:
    """Draw a split-merge training history: the training trees' log-likelihood after
    every EM iteration (all phases in order, cycles and phases marked), the dev F1
    of each cycle with the cycle kept marked (when the model was chosen on dev), and
    the latent states of some symbols (and the total) after each cycle.

    history (Mapping): ``SplitMergeEstimator.history_``, a model's
        ``training["history"]``, or ``read_training_history``'s.
    output (str | Path): the PNG file to write (its folder is created).
    title (str | None): the figure's title.
    symbols (int | Sequence[str]): see ``select_training_symbols``.
    RETURNS (Path): the file written.
    RAISES ImportError: matplotlib is not installed.
    RAISES ValueError: see ``check_history`` and ``select_training_symbols``.
    """
    figure = training_figure(history, symbols=symbols, title=title)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, format="png")
    return output


def _draw_log_likelihoods(axes, phases: Sequence[Mapping[str, Any]]) -> None:
    """One line per EM phase on a shared axis of iterations; a grey dotted step from
    each phase to the next (what splitting or merging did to the likelihood), a solid
    rule where a cycle starts and a dotted one where its merge phase starts."""
    from matplotlib.ticker import MaxNLocator
    from matplotlib.transforms import blended_transform_factory

    top = blended_transform_factory(axes.transData, axes.transAxes)
    start, previous, labelled = 0, None, set()
    for phase in phases:
        values = np.asarray(phase["values"], dtype=float)
        x = np.arange(start, start + len(values))
        name, cycle = phase["phase"], phase["cycle"]
        if start:
            axes.axvline(start - 0.5, color="grey", lw=1, ls="-" if name == "split" else ":")
        if previous is not None and len(values):
            axes.plot([start - 1, start], [previous, values[0]], ":", color="grey", lw=1)
        if name == "split":
            axes.text(start, 0.98, f" cycle {cycle}", transform=top, va="top", fontsize="small")
        colour = "C0" if name == "split" else "C1"
        label = PHASES[name] if name not in labelled else None
        labelled.add(name)
        (line,) = axes.plot(x, values, ".-", color=colour, label=label, markersize=3)
        line.set_gid(f"log_likelihood {cycle} {name}")
        start += len(values)
        previous = values[-1] if len(values) else previous
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("EM iteration (every phase in order; a phase starts with its grammar's value)")
    axes.set_ylabel("log-likelihood of the training trees")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small", loc="lower right")


def _draw_dev_f1(axes, scores: Sequence[float], best: int | None) -> None:
    """Dev F1 per cycle and the cycle kept; without dev scores, a note saying so."""
    if not scores:
        axes.set_axis_off()
        axes.text(
            0.5,
            0.5,
            "No dev F1: no cycle was scored on dev trees,\nso the last cycle's grammar "
            "was kept\n(train with --dev to score each cycle and keep the best)",
            ha="center",
            va="center",
            transform=axes.transAxes,
        )
        return
    cycles = np.arange(1, len(scores) + 1)
    (line,) = axes.plot(cycles, scores, "o-", label="dev F1")
    line.set_gid("dev_f1")
    if best is not None:
        (kept,) = axes.plot(
            [best], [scores[best - 1]], "*", color="C3", markersize=16, label=f"kept: cycle {best}"
        )
        kept.set_gid("best_cycle")
    axes.set_xticks(cycles)
    axes.set_xlabel("cycle")
    axes.set_ylabel("dev F1")
    axes.set_title("Dev F1 after each cycle", fontsize="medium")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")


def _draw_states(axes, cycles: Sequence[Mapping[str, int]], names: Sequence[str]) -> None:
    """States per symbol after each cycle (cycle 0: the one-state grammar) as a table
    coloured by log2 of the states (a cycle at most doubles them), a row per chosen
    symbol; under each cycle the total over the symbols ever split. A table rather
    than lines: many symbols have the same numbers, and their lines would hide each
    other."""
    split = sorted({name for states in cycles for name in states})
    table = np.array([[1, *(states.get(name, 1) for states in cycles)] for name in names])
    totals = [len(split), *(sum(states.get(name, 1) for name in split) for states in cycles)]
    image = axes.imshow(
        np.log2(table), aspect="auto", cmap="viridis", vmin=0, vmax=max(1, np.log2(table.max()))
    )
    small = len(names) > 16 or len(cycles) > 12
    for (row, column), value in np.ndenumerate(table):
        dark = np.log2(value) < 0.6 * image.norm.vmax
        axes.text(
            column,
            row,
            str(value),
            ha="center",
            va="center",
            color="white" if dark else "black",
            fontsize="x-small" if small else "small",
        )
    axes.set_yticks(np.arange(len(names)), names, fontsize="x-small" if small else "small")
    axes.set_xticks(
        np.arange(len(totals)), [f"{cycle}\n{total}" for cycle, total in enumerate(totals)]
    )
    axes.set_xlabel(
        f"cycle (0: one state per symbol); total states of the {len(split)} symbols split"
    )
    axes.set_title("Latent states per symbol (most at the end first)", fontsize="medium")
