"""The four bundled corpora, their train/dev/test splits, and opening any treebank.

The data directory (``--data-dir``, else ``$SPACY_LPCFG_DATA``) holds one
folder per corpus (``ptb_sample/``, ``icepahc/``, ``floresta/``,
``cess_esp/``) and ``splits.json``. The split rules below reproduce the tree
and token counts of ``splits.json`` exactly; see the data's README, section
"Splits".
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from .errors import DataNotFoundError, Errors
from .trees.formats import (
    FORMAT_ENCODINGS,
    FORMATS,
    TreebankReader,
    read_treebank,
    treebank_files,
)
from .trees.normalize import NormalizeOptions
from .trees.tree import Tree

DATA_ENV = "SPACY_LPCFG_DATA"
SPLITS = ("train", "dev", "test")

ReadFile = Callable[[Path], Iterator[Tree]]


@dataclass(frozen=True)
class WholeFiles:
    """Every tree of a file goes to the split ``assign(position, file_name)`` names
    (None: no split); ``position`` is the file's 0-based index in sorted order."""

    assign: Callable[[int, str], str | None]

    def iter_split(self, files: list[Path], split: str, read: ReadFile) -> Iterator[Tree]:
        for position, file in enumerate(files):
            if self.assign(position, file.name) == split:
                yield from read(file)

    def divide(self, position: int, name: str, trees: list[Tree]) -> dict[str, list[Tree]]:
        """The trees of one file by split."""
        split = self.assign(position, name)
        return {split: trees} if split is not None else {}


@dataclass(frozen=True)
class PerFileShares:
    """Each file's trees, in order, are cut into train ``[0, ⌊n·train/total⌋)``,
    dev ``[⌊n·train/total⌋, ⌊n·(train+dev)/total⌋)`` and test (the rest)."""

    train: int
    dev: int
    total: int

    def iter_split(self, files: list[Path], split: str, read: ReadFile) -> Iterator[Tree]:
        for file in files:
            trees = list(read(file))
            yield from trees[slice(*self.bounds(len(trees))[split])]

    def divide(self, _position: int, _name: str, trees: list[Tree]) -> dict[str, list[Tree]]:
        """The trees of one file by split."""
        return {split: trees[start:end] for split, (start, end) in self.bounds(len(trees)).items()}

    def bounds(self, n: int) -> dict[str, tuple[int, int]]:
        """The ``[start, end)`` tree range of each split for a file of ``n`` trees."""
        first = n * self.train // self.total
        second = n * (self.train + self.dev) // self.total
        return {"train": (0, first), "dev": (first, second), "test": (second, n)}


@dataclass(frozen=True)
class Corpus:
    """A corpus of the data directory.

    name (str): registry name, also its folder under the data directory.
    format (str): treebank format (key of ``trees.formats.FORMATS``).
    lang (str): ISO 639-1 language code.
    split_rule (WholeFiles | PerFileShares): how its trees are split.
    source (dict[str, str]): what a pipeline trained on it credits (spaCy's meta
        "sources": name, author, url, license as the source states it).
    """

    name: str
    format: str
    lang: str
    split_rule: WholeFiles | PerFileShares
    source: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def scheme(self) -> str:
        """The label scheme of its trees."""
        return FORMATS[self.format]


def _ptb_file_split(_position: int, name: str) -> str | None:
    # train wsj_0001-0159, dev wsj_0160-0179, test wsj_0180-0199 (whole files).
    match = re.search(r"\d+", name)
    number = int(match.group()) if match else -1
    for split, (first, last) in (("train", (1, 159)), ("dev", (160, 179)), ("test", (180, 199))):
        if first <= number <= last:
            return split
    return None


def _interleaved_file_split(position: int, _name: str) -> str:
    # Files in str order interleaved, so newswire and genre samples are in every split.
    return {8: "dev", 9: "test"}.get(position % 10, "train")


_EIGHTY_TEN_TEN = PerFileShares(8, 1, 10)  # every period and genre is in every split

CORPORA: dict[str, Corpus] = {
    corpus.name: corpus
    for corpus in (
        Corpus(
            "ptb_sample",
            "penn",
            "en",
            WholeFiles(_ptb_file_split),
            {
                "name": "Penn Treebank sample (WSJ, NLTK data package 'treebank')",
                "author": "LDC, University of Pennsylvania (1995)",
                "url": "https://catalog.ldc.upenn.edu/LDC99T42",
                "license": "non-commercial use only (a fragment of the Penn Treebank, (C) LDC)",
            },
        ),
        Corpus(
            "icepahc",
            "psd",
            "is",
            _EIGHTY_TEN_TEN,
            {
                "name": "IcePaHC, the Icelandic Parsed Historical Corpus (2024.03)",
                "author": "Wallenberg, Ingason, Sigurðsson, Rögnvaldsson",
                "url": "https://github.com/antonkarl/icecorpus",
                "license": "CC BY 4.0",
            },
        ),
        Corpus(
            "floresta",
            "floresta",
            "pt",
            _EIGHTY_TEN_TEN,
            {
                "name": "Floresta Sintá(c)tica 7.4 (NLTK data package 'floresta')",
                "author": "Linguateca",
                "url": "https://www.linguateca.pt/Floresta/",
                "license": "non-commercial use only (distributed with permission)",
            },
        ),
        Corpus(
            "cess_esp",
            "cess",
            "es",
            WholeFiles(_interleaved_file_split),
            {
                "name": "CESS-ESP (NLTK data package 'cess_esp')",
                "author": "Martí, Taulé, Márquez, Bertran (2007), CLiC-UB and partners",
                "url": "https://clic.ub.edu/cessece/",
                "license": "no licence given: the owners' permission is needed; cite the source",
            },
        ),
    )
}


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """The treebank data directory: ``data_dir``, else ``$SPACY_LPCFG_DATA``.

    RAISES DataNotFoundError: neither is set (the message says where to get the data).
    """
    chosen = data_dir or os.environ.get(DATA_ENV)
    if not chosen:
        raise DataNotFoundError(Errors.E004)
    return Path(chosen)


def get_corpus(name: str) -> Corpus:
    """The registered corpus ``name``. RAISES ValueError: unknown name."""
    try:
        return CORPORA[name]
    except KeyError:
        raise ValueError(Errors.E006.format(name=name, known=", ".join(CORPORA))) from None


def iter_corpus(
    corpus: str,
    split: str | None = None,
    *,
    data_dir: str | Path | None = None,
    keep_functions: bool = True,
    options: NormalizeOptions | None = None,
) -> Iterator[Tree]:
    """Stream the trees of a corpus split (``None``: all trees, in corpus order).

    corpus (str): a key of ``CORPORA``.
    split (str | None): ``"train"``, ``"dev"``, ``"test"`` or None.
    data_dir (str | Path | None): the data directory (see ``resolve_data_dir``).
    keep_functions (bool): keep function tags on phrase labels.
    options (NormalizeOptions | None): full normalisation options (overrides keep_functions).
    RAISES ValueError: unknown corpus or split. DataNotFoundError: data missing
        (both on the call, not on the first tree).
    """
    info = get_corpus(corpus)
    if split is not None and split not in SPLITS:
        raise ValueError(Errors.E007.format(split=split, corpus=corpus, known=", ".join(SPLITS)))
    files = _corpus_files(info, data_dir)
    read = _file_reader(info, options or NormalizeOptions(keep_functions=keep_functions))
    if split is None:
        return chain.from_iterable(map(read, files))
    return info.split_rule.iter_split(files, split, read)


def load_split(
    corpus: str,
    split: str | None = None,
    *,
    data_dir: str | Path | None = None,
    keep_functions: bool = True,
    options: NormalizeOptions | None = None,
) -> list[Tree]:
    """The trees of a corpus split as a list (arguments as for ``iter_corpus``)."""
    return list(
        iter_corpus(
            corpus, split, data_dir=data_dir, keep_functions=keep_functions, options=options
        )
    )


def load_splits(
    corpus: str,
    *,
    data_dir: str | Path | None = None,
    keep_functions: bool = True,
    options: NormalizeOptions | None = None,
) -> dict[str, list[Tree]]:
    """All splits of a corpus, ``{"train": [...], "dev": [...], "test": [...]}``, reading
    it once (arguments as for ``iter_corpus``)."""
    info = get_corpus(corpus)
    read = _file_reader(info, options or NormalizeOptions(keep_functions=keep_functions))
    out: dict[str, list[Tree]] = {split: [] for split in SPLITS}
    for position, file in enumerate(_corpus_files(info, data_dir)):
        for split, trees in info.split_rule.divide(position, file.name, list(read(file))).items():
            out[split].extend(trees)
    return out


def spread(trees: list[Tree], limit: int | None) -> list[Tree]:
    """About ``limit`` of ``trees``, every k-th: a sample of the whole split (a treebank
    in file order changes text, genre or century along the way), all of them when
    ``limit`` is None or not smaller."""
    if limit is None or len(trees) <= limit:
        return trees
    return trees[:: -(-len(trees) // limit)]


def open_treebank(
    name_or_path: str | Path,
    split: str | None = None,
    data_dir: str | Path | None = None,
    *,
    keep_functions: bool = True,
    options: NormalizeOptions | None = None,
    format: str = "auto",
    encoding: str | None = None,
    bracket_scheme: str = "penn",
) -> tuple[list[Tree], str]:
    """The trees of a registered corpus (split) or of a treebank file or directory.

    name_or_path (str | Path): a key of ``CORPORA``, or a path (then ``split`` is ignored).
    format (str): the format of a path (``"auto"`` detects it).
    encoding (str | None): the encoding of a path's files (None: the format's own, see
        ``TreebankReader``); corpora are read in their own encodings.
    bracket_scheme (str): the label scheme of a path's files in Penn brackets
        (``TreebankReader``); corpora have their own.
    RETURNS (tuple[list[Tree], str]): the trees (at least one) and the name of their
        label scheme.
    RAISES ValueError: an unknown corpus or split, a path that does not exist, an
        encoding given with a corpus, or no trees. TreebankFormatError (a ValueError):
        a file cannot be read, decoded or parsed (it names file and line).
        DataNotFoundError: corpus data missing, or a directory without treebank files.
    """
    if str(name_or_path) in CORPORA:
        info = CORPORA[str(name_or_path)]
        if encoding is not None:
            used = FORMAT_ENCODINGS[info.format]
            raise ValueError(Errors.E023.format(name=info.name, encoding=used))
        trees = load_split(
            info.name, split, data_dir=data_dir, keep_functions=keep_functions, options=options
        )
        return trees, info.scheme
    path = Path(name_or_path)
    if not path.exists():
        known = ", ".join(CORPORA)
        if _looks_like_path(str(name_or_path)):
            raise ValueError(Errors.E020.format(name=name_or_path, known=known))
        raise ValueError(Errors.E006.format(name=name_or_path, known=known))
    options = options or NormalizeOptions(keep_functions=keep_functions)
    reader = TreebankReader(
        path, format, options=options, encoding=encoding, bracket_scheme=bracket_scheme
    )
    trees = list(reader)
    if not trees:
        raise ValueError(Errors.E021.format(path=path, reason=_NO_TREES))
    return trees, reader.scheme


_NO_TREES = "no bracketed tree with words, such as (TOP (S (NN word)))"


def _looks_like_path(name: str) -> bool:
    """A name with a folder separator or a file name ending: a path, not a corpus typo."""
    return "/" in name or os.sep in name or bool(Path(name).suffix)


def _file_reader(info: Corpus, options: NormalizeOptions) -> ReadFile:
    def read(file: Path) -> Iterator[Tree]:
        return read_treebank(file, info.format, options=options)

    return read


def _corpus_files(info: Corpus, data_dir: str | Path | None) -> list[Path]:
    folder = resolve_data_dir(data_dir) / info.name
    if not folder.is_dir():
        raise DataNotFoundError(Errors.E005.format(path=folder.parent, corpus=info.name))
    return treebank_files(folder)
