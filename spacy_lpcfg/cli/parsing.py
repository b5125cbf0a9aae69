"""What parse, test and render share: finding and loading a model's parser, and
reading a line of tokenised input."""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path

from .. import defaults
from ..errors import excerpt
from .exits import fail


def parser_options(
    decoder: str,
    threshold: float,
    max_length: int,
    use_tags: str = "auto",
    ensemble_threshold: float = defaults.ENSEMBLE_PRUNE_THRESHOLD,
) -> dict:
    """The ``Parser`` keyword arguments of these commands' options (the parser of
    ``load_parser``, and of ``parse``'s spawned workers). They write trees: no
    posteriors (2% of a parse)."""
    return {
        "decoder": decoder,
        "prune_threshold": threshold,
        "ensemble_threshold": ensemble_threshold,
        "max_length": max_length,
        "use_tags": use_tags,
        "scores": False,
    }


def load_parser(model_dir: Path, options: dict):
    """The parser of the model in ``model_dir`` with ``parser_options``."""
    from ..decode.parser import Parser
    from ..errors import GrammarError
    from ..grammar.model import ParsingModel

    try:
        return Parser(ParsingModel.from_disk(model_dir), **options)
    except (GrammarError, OSError, ValueError) as err:
        fail(str(err))


def installed_pipeline_model(name: Path) -> Path:
    """The model of an installed pipeline package named ``name`` (``en_lpcfg_ptb_sample``,
    as ``spacy.load`` takes it) when no such path exists, else ``name``. The compiled
    kernels such a package ships (``kernels/``, projects/pipelines) seed numba's cache,
    as importing the package would (without importing spaCy, which that costs), sparing
    the first parse compiling. An installed package is code, trusted as its import is."""
    import importlib.util

    from .. import kernel_cache

    text = str(name)
    if name.exists() or not text.isidentifier():
        return name
    try:
        spec = importlib.util.find_spec(text)
    except (ImportError, ValueError):
        return name
    folders = [] if spec is None else list(spec.submodule_search_locations or ())
    models = sorted(Path(folders[0]).glob("*/lpcfg_parser/model")) if folders else []
    if len(models) != 1:
        return name
    for kernels in sorted(Path(folders[0]).glob("*/kernels")):
        kernel_cache.seed(kernels)
    return models[0]


def split_tokens(line: str, tagged: bool) -> tuple[list[str], list[str] | None]:
    """The words of a line of input, and with ``tagged`` the tags of its word/TAG tokens
    (split at the last "/"). RAISES ValueError: a token without a word or tag (its
    column and a short excerpt in the message)."""
    tokens = line.split()
    if not tagged:
        return tokens, None
    pairs = [token.rpartition("/") for token in tokens]
    for position, (token, (word, sep, tag)) in enumerate(zip(tokens, pairs)):
        if not (sep and word and tag):
            column = _token_column(line, position)
            raise ValueError(
                f"column {column}: token {excerpt(token)} is not of the form word/TAG "
                "(with --tagged, every token is)"
            )
    return [word for word, _, _ in pairs], [tag for _, _, tag in pairs]


def _token_column(line: str, position: int) -> int:
    """The 1-based column of the whitespace-separated token number ``position``."""
    return next(islice(re.finditer(r"\S+", line), position, None)).start() + 1
