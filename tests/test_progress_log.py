"""Progress in a log: when stderr is no terminal, a long step is reported by lines of
the ``spacy_lpcfg.progress`` logger (percentage, count, ETA), not by a bar."""

from __future__ import annotations

import logging
import time

from spacy_lpcfg import progress as progress_module
from spacy_lpcfg.progress import progress, quiet


def test_a_long_step_logs_lines_with_percentage_and_eta(caplog, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.05)
    # the command line's own handler (an earlier test) stops propagation: caplog needs it
    monkeypatch.setattr(progress_module.LOGGER, "propagate", True)
    with caplog.at_level(logging.INFO, logger="spacy_lpcfg.progress"):
        for _ in progress(range(8), desc="reading", unit="tree"):
            time.sleep(0.03)
    lines = [r.getMessage() for r in caplog.records if r.name == "spacy_lpcfg.progress"]
    assert lines and all(line.startswith("reading: ") for line in lines)
    assert "%" in lines[-1] and "ETA" in lines[-1] and "/8 tree" in lines[-1]


def test_a_short_step_or_quiet_logs_nothing(caplog, monkeypatch):
    monkeypatch.setattr(progress_module.LOGGER, "propagate", True)
    with caplog.at_level(logging.INFO, logger="spacy_lpcfg.progress"):
        for _ in progress(range(3), desc="fast", unit="tree"):
            pass  # shorter than LOG_INTERVAL
        monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.01)
        with quiet():
            for _ in progress(range(3), desc="quiet", unit="tree"):
                time.sleep(0.02)
    assert not [r for r in caplog.records if r.name == "spacy_lpcfg.progress"]
