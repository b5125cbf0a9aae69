"""``train --estimator`` spectral_unsup, ccm or a baseline: an unsupervised bracketer
trained (``spacy_lpcfg.training.train_bracketer``) and saved, with one summary line."""

from __future__ import annotations

from pathlib import Path

import typer

from .checks import check_output_dir
from .exits import fail


def train_bracketer(
    name: str,
    corpus: str,
    model_dir: Path,
    split: str,
    data_dir: Path | None,
    encoding: str | None,
    limit: int | None,
    quiet: bool,
) -> None:
    """Learn the bracketer ``name`` from the sentences' words and POS tags (no brackets
    are read) and save it to ``model_dir``, which is new, empty or a bracketer."""
    from ..errors import DataNotFoundError, TreebankFormatError
    from ..progress import quiet as quiet_bars
    from ..training import train_bracketer as train_model

    check_output_dir(model_dir)
    if (
        model_dir.exists()
        and any(model_dir.iterdir())
        and not (model_dir / "bracketer.json").exists()
    ):
        fail(f"{model_dir} is a non-empty directory that is not a bracketer: not replaced")
    try:
        with quiet_bars(quiet):
            trained = train_model(
                name,
                corpus,
                model_dir,
                split=split,
                data_dir=data_dir,
                encoding=encoding,
                limit=limit,
            )
    except (DataNotFoundError, TreebankFormatError, ValueError) as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot write the bracketer to {model_dir}: {err.strerror or err}")
    if not quiet:
        typer.echo(
            f"trained {name} on the words and tags of {trained.trees} sentences in "
            f"{trained.seconds:.1f} s -> {model_dir}",
            err=True,
        )
