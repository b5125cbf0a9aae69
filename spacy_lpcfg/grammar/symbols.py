"""The symbol table of a grammar: names, integer ids and kinds of its symbols.

A table belongs to one grammar and is serialised with it; there is no global
registry of symbols (the Berkeley parser's global ``Numberer`` is the
anti-pattern).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import Errors, GrammarError
from ..trees.tree import ROOT_LABEL

SYMBOL_KINDS = ("root", "phrasal", "intermediate", "preterminal")
ROOT, PHRASAL, INTERMEDIATE, PRETERMINAL = range(len(SYMBOL_KINDS))


class SymbolTable:
    """An immutable two-way map between symbol names and ids ``0 .. len - 1``.

    Every symbol has a kind: "root" (exactly one, named "TOP"), "phrasal",
    "intermediate" (introduced by binarisation) or "preterminal" (POS tags).

    names (Iterable[str]): the symbol names, in id order.
    kinds (Iterable[str]): the kind of each symbol, one of SYMBOL_KINDS.
    """

    __slots__ = ("_names", "_kinds", "_index", "_codes")

    def __init__(self, names: Iterable[str], kinds: Iterable[str]):
        self._names = tuple(str(name) for name in names)
        self._kinds = tuple(str(kind) for kind in kinds)
        if len(self._kinds) != len(self._names):
            raise GrammarError(
                Errors.E105.format(
                    name="kinds", found=f"{len(self._kinds)} entries", expected=len(self._names)
                )
            )
        for name, kind in zip(self._names, self._kinds):
            if kind not in SYMBOL_KINDS:
                raise GrammarError(Errors.E101.format(kind=kind, name=name, known=SYMBOL_KINDS))
        self._index: dict[str, int] = {}
        for i, name in enumerate(self._names):
            if name in self._index:
                raise GrammarError(Errors.E103.format(name=name))
            self._index[name] = i
        roots = [name for name, kind in zip(self._names, self._kinds) if kind == "root"]
        if roots != [ROOT_LABEL]:
            raise GrammarError(Errors.E102.format(root=ROOT_LABEL, found=roots))
        codes = np.array([SYMBOL_KINDS.index(kind) for kind in self._kinds], dtype=np.int8)
        codes.flags.writeable = False
        self._codes = codes

    @classmethod
    def from_kinds(
        cls,
        *,
        phrasal: Iterable[str] = (),
        intermediate: Iterable[str] = (),
        preterminal: Iterable[str] = (),
    ) -> SymbolTable:
        """A table with the root "TOP" as id 0, then the given symbols kind by kind."""
        names, kinds = [ROOT_LABEL], ["root"]
        for kind, group in (
            ("phrasal", phrasal),
            ("intermediate", intermediate),
            ("preterminal", preterminal),
        ):
            for name in group:
                names.append(name)
                kinds.append(kind)
        return cls(names, kinds)

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolTable):
            return NotImplemented
        return self._names == other._names and self._kinds == other._kinds

    def __hash__(self) -> int:
        return hash((self._names, self._kinds))

    def __repr__(self) -> str:
        return f"SymbolTable({len(self)} symbols)"

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._kinds

    @property
    def kind_codes(self) -> np.ndarray:
        """int8[n_symbols]: the kind of each symbol as an index into SYMBOL_KINDS (read-only)."""
        return self._codes

    @property
    def root(self) -> int:
        """The id of the root symbol "TOP"."""
        return self._index[ROOT_LABEL]

    def index(self, name: str) -> int:
        """The id of a symbol name. Raises GrammarError for an unknown name."""
        try:
            return self._index[name]
        except KeyError:
            raise GrammarError(Errors.E104.format(name=name)) from None

    def name(self, symbol: int) -> str:
        return self._names[symbol]

    def kind(self, symbol: int | str) -> str:
        return self._kinds[self.index(symbol) if isinstance(symbol, str) else symbol]

    def ids(self, kind: str) -> np.ndarray:
        """int32[k]: the ids of the symbols of one kind, in increasing order."""
        if kind not in SYMBOL_KINDS:
            raise GrammarError(Errors.E101.format(kind=kind, name="?", known=SYMBOL_KINDS))
        return np.flatnonzero(self._codes == SYMBOL_KINDS.index(kind)).astype(np.int32)

    def to_dict(self) -> dict[str, list[str]]:
        return {"names": list(self._names), "kinds": list(self._kinds)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SymbolTable:
        if not isinstance(data, Mapping) or not {"names", "kinds"} <= set(data):
            raise GrammarError(
                Errors.E105.format(
                    name="symbols",
                    found=type(data).__name__,
                    expected="a mapping with 'names' and 'kinds'",
                )
            )
        names, kinds = data["names"], data["kinds"]
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise GrammarError(
                Errors.E105.format(
                    name="symbols.names", found=repr(names)[:80], expected="a list of strings"
                )
            )
        if not isinstance(kinds, list):
            raise GrammarError(
                Errors.E105.format(
                    name="symbols.kinds", found=repr(kinds)[:80], expected="a list of strings"
                )
            )
        return cls(names, kinds)
