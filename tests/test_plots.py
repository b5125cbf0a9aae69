"""Figures: which symbols a spectrum plot draws, the PNG, and matplotlib as an optional extra."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from spacy_lpcfg.grammar.model import Spectrum
from spacy_lpcfg.plots import MATPLOTLIB_MISSING, plot_spectrum, select_symbols

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def spectrum() -> Spectrum:
    values = {
        "NP": np.array([4.0, 2.0, 1.0]),
        "VP": np.array([9.0, 0.5]),
        "NN": np.array([1.0, 0.0]),  # a zero: left out of the log axis
        "PP": np.array([2.0]),
        "EMPTY": np.zeros(0),  # never drawn
    }
    return Spectrum(values, {"NP": 50, "VP": 30, "NN": 80, "PP": 30, "EMPTY": 1})


def test_select_symbols_most_nodes_first(spectrum):
    assert select_symbols(spectrum) == ["NN", "NP", "VP", "PP"]  # ties: larger first value
    assert select_symbols(spectrum, 2) == ["NN", "NP"]


def test_select_symbols_without_counts_by_first_singular_value(spectrum):
    assert select_symbols(Spectrum(spectrum.values), 3) == ["VP", "NP", "PP"]


def test_select_symbols_by_name(spectrum):
    assert select_symbols(spectrum, ["PP", "NP"]) == ["PP", "NP"]
    assert select_symbols(spectrum, "VP") == ["VP"]


@pytest.mark.parametrize(
    "symbols,message", [(["NP", "XX"], "XX.*most frequent are: NN"), ([], "none"), (0, ">= 1")]
)
def test_select_symbols_errors(spectrum, symbols, message):
    with pytest.raises(ValueError, match=message):
        select_symbols(spectrum, symbols)


@pytest.mark.parametrize("normalise", [True, False])
def test_plot_spectrum_writes_a_png(spectrum, tmp_path, normalise):
    pytest.importorskip("matplotlib")
    written = plot_spectrum(spectrum, tmp_path / "figs" / "s.png", normalise=normalise)
    assert written == tmp_path / "figs" / "s.png"
    assert written.read_bytes().startswith(PNG_MAGIC)


def test_plot_spectrum_leaves_pyplot_alone(spectrum, tmp_path):
    """Drawing on an Agg canvas: no pyplot import, no figures left open, backend unchanged."""
    pytest.importorskip("matplotlib")
    imported = "matplotlib.pyplot" in sys.modules
    plot_spectrum(spectrum, tmp_path / "s.png", symbols=1)
    assert ("matplotlib.pyplot" in sys.modules) == imported


def test_plot_spectrum_without_matplotlib_says_how_to_install(spectrum, tmp_path, monkeypatch):
    for name in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # makes the import fail
    with pytest.raises(ImportError, match=r"pip install spacy-lpcfg\[plot\]"):
        plot_spectrum(spectrum, tmp_path / "s.png")
    assert MATPLOTLIB_MISSING.endswith("pip install spacy-lpcfg[plot]")
    assert not (tmp_path / "s.png").exists()
