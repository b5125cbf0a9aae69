"""Reading treebank files and directories in any supported format.

Each format module (``penn``, ``psd``, ``floresta``, ``cess``) turns a file's
lines into ``TOP``-rooted trees in the corpus's own label notation, with
empty elements as ``-NONE-`` preterminals; this module finds the files,
decodes them, picks the format, applies ``normalize`` and handles errors.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

from ...errors import DataNotFoundError, Errors, TreebankFormatError
from ..normalize import NormalizeOptions, normalize
from ..tree import Tree
from . import cess, floresta, penn, psd
from .text import check_encoding, decode_text, read_bytes

FORMATS: dict[str, str] = {"penn": "penn", "psd": "penn", "floresta": "floresta", "cess": "cess"}
"""Format name -> name of its label scheme (``trees.labels``)."""

TREEBANK_SUFFIXES = (".mrg", ".psd", ".tbf", ".ptb", ".tree", ".trees")
"""File name endings read from a directory (READMEs and licences are skipped)."""

_MODULES = {"penn": penn, "psd": psd, "floresta": floresta, "cess": cess}
FORMAT_ENCODINGS = {name: module.ENCODING for name, module in _MODULES.items()}
"""Format name -> the encoding its files are read in unless one is given."""
_SUFFIX_FORMATS = {".psd": "psd", ".tbf": "cess"}
ERROR_MODES = ("raise", "skip")
BATCH_SIZE = 1024  # trees parsed per pause of the garbage collector


class TreebankReader:
    """The trees of a treebank file or directory, streamed one by one.

    path (str | Path): a treebank file, or a directory: every file in it (and its
        subdirectories) ending in one of ``TREEBANK_SUFFIXES``, in Python ``str``
        order of the relative path.
    format (str): ``"auto"`` (per file, see ``detect_format``) or a key of ``FORMATS``.
    errors (str): ``"raise"`` raises ``TreebankFormatError`` (naming file and line)
        at the first malformed tree; ``"skip"`` skips it, notes it in ``skipped``
        and goes on (a file that cannot be read or decoded is skipped whole).
    options (NormalizeOptions): normalisation applied to every tree. Trees left
        without words (only empty elements) are not yielded.
    encoding (str | None): the files' encoding; None uses the format's
        (UTF-8 for ``penn`` and ``psd``, ISO-8859-1 for ``floresta`` and ``cess``).
        A UTF-8 byte-order mark is ignored. An undecodable byte raises
        ``TreebankFormatError`` naming file, line and column.
    bracket_scheme (str): the label scheme of files in Penn brackets, every
        treebank's exchange format: "penn" (the default), or e.g. "floresta" for
        Floresta trees written out in brackets (``SUBJ+np``), normalised as such.

    After (or during) an iteration, ``skipped`` lists ``(file, line, message)`` for
    each tree (or file) skipped with ``errors="skip"``.
    """

    def __init__(
        self,
        path: str | Path,
        format: str = "auto",
        *,
        errors: str = "raise",
        options: NormalizeOptions = NormalizeOptions(),
        encoding: str | None = None,
        bracket_scheme: str = FORMATS["penn"],
    ):
        if format != "auto" and format not in FORMATS:
            raise ValueError(Errors.E003.format(name=format, known=", ".join(["auto", *FORMATS])))
        if errors not in ERROR_MODES:
            raise ValueError(
                Errors.E011.format(value=errors, name="errors", expected="'raise' or 'skip'")
            )
        self.path = Path(path)
        self.format = format
        self.errors = errors
        self.options = options
        self.encoding = encoding
        if encoding is not None:
            check_encoding(encoding)
        if bracket_scheme not in set(FORMATS.values()):
            known = ", ".join(sorted(set(FORMATS.values())))
            raise ValueError(
                Errors.E011.format(value=bracket_scheme, name="bracket_scheme", expected=known)
            )
        self._schemes = {**FORMATS, "penn": bracket_scheme}
        self.files = treebank_files(self.path)
        self.skipped: list[tuple[str | None, int | None, str]] = []

    @property
    def scheme(self) -> str:
        """The label scheme name of the files (an error if they differ)."""
        schemes = {self._schemes[self._format_of(file)] for file in self.files}
        if len(schemes) != 1:
            raise ValueError(Errors.E018.format(path=self.path, schemes=", ".join(sorted(schemes))))
        return schemes.pop()

    def __iter__(self) -> Iterator[Tree]:
        self.skipped = []
        for file in self.files:
            yield from self._read_file(file)

    def _format_of(self, file: Path, data: bytes | None = None) -> str:
        return self.format if self.format != "auto" else detect_format(file, data)

    def _read_file(self, file: Path) -> Iterator[Tree]:
        try:
            data = read_bytes(file)
            name = self._format_of(file, data)
            module = _MODULES[name]
            text = decode_text(data, self.encoding or module.ENCODING, file)
        except TreebankFormatError as error:
            self._on_error(error)
            return
        scheme = self._schemes[name]
        units = module.read_units(text.split("\n"), str(file), self._on_error)
        while True:
            with _gc_paused():
                batch = list(islice(units, BATCH_SIZE))
                trees = [normalize(tree, scheme, self.options) for tree in batch]
            yield from (tree for tree in trees if tree is not None)
            if len(batch) < BATCH_SIZE:
                return

    def _on_error(self, error: TreebankFormatError) -> None:
        if self.errors == "raise":
            raise error
        self.skipped.append((error.path, error.line, error.detail))


def read_treebank(
    path: str | Path,
    format: str = "auto",
    *,
    errors: str = "raise",
    options: NormalizeOptions = NormalizeOptions(),
    encoding: str | None = None,
) -> Iterator[Tree]:
    """Stream the normalised, ``TOP``-rooted trees of a treebank file or directory.

    Arguments as for ``TreebankReader`` (use the class to see skipped trees).
    """
    return iter(TreebankReader(path, format, errors=errors, options=options, encoding=encoding))


def detect_format(path: str | Path, data: bytes | None = None) -> str:
    """The format of a file: ``.psd`` -> psd, ``.tbf`` -> cess, a first line starting
    with ``#`` -> floresta, anything else -> penn.

    data (bytes | None): the file's content, if already read.
    """
    path = Path(path)
    name = _SUFFIX_FORMATS.get(path.suffix.lower())
    if name is not None:
        return name
    if data is None:
        with path.open("rb") as file:
            data = file.read(4096)
    return "floresta" if data.lstrip().startswith(b"#") else "penn"


def treebank_files(path: str | Path) -> list[Path]:
    """The file itself, or the treebank files of a directory (see ``TreebankReader``).

    RAISES DataNotFoundError (a FileNotFoundError): no such file or directory, or a
        directory without treebank files.
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DataNotFoundError(Errors.E015.format(path=path))
    files = [
        file
        for file in path.rglob("*")
        if file.suffix.lower() in TREEBANK_SUFFIXES
        and not file.name.startswith(".")
        and file.is_file()
    ]
    if not files:
        raise DataNotFoundError(Errors.E017.format(suffixes=" ".join(TREEBANK_SUFFIXES), path=path))
    return sorted(files, key=lambda file: file.relative_to(path).as_posix())


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a batch of trees. Trees hold
    no cycles, but their millions of tuples would trigger useless collections that
    cost more than the parsing itself when the caller keeps the trees."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
