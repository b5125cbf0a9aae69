"""SymbolTable: ids, kinds, serialisation and errors."""

from __future__ import annotations

import pytest

from spacy_lpcfg.errors import GrammarError
from spacy_lpcfg.grammar import SymbolTable


def test_symbols_from_kinds():
    table = SymbolTable.from_kinds(phrasal=["S", "NP"], intermediate=["@S"], preterminal=["DT"])
    assert table.names == ("TOP", "S", "NP", "@S", "DT")
    assert table.root == 0 and table.index("NP") == 2 and table.name(3) == "@S"
    assert table.kind("DT") == "preterminal" and table.kind(1) == "phrasal"
    assert table.ids("phrasal").tolist() == [1, 2]
    assert table.kind_codes.tolist() == [0, 1, 1, 2, 3]
    assert "S" in table and "VP" not in table and len(table) == 5 and list(table)[0] == "TOP"


def test_symbols_roundtrip():
    table = SymbolTable(["NP", "TOP", "DT"], ["phrasal", "root", "preterminal"])
    again = SymbolTable.from_dict(table.to_dict())
    assert again == table and hash(again) == hash(table) and again.root == 1


@pytest.mark.parametrize(
    "names,kinds,code",
    [
        (["TOP", "S", "S"], ["root", "phrasal", "phrasal"], "E103"),
        (["TOP", "S"], ["root", "noun"], "E101"),
        (["S"], ["phrasal"], "E102"),
        (["TOP", "ROOT"], ["root", "root"], "E102"),
        (["ROOT"], ["root"], "E102"),
        (["TOP", "S"], ["root"], "E105"),
    ],
)
def test_symbols_invalid(names, kinds, code):
    with pytest.raises(GrammarError, match=code):
        SymbolTable(names, kinds)


def test_symbols_unknown_name_and_bad_dict():
    table = SymbolTable.from_kinds(phrasal=["S"])
    with pytest.raises(GrammarError, match="E104"):
        table.index("VP")
    with pytest.raises(GrammarError, match="E105"):
        SymbolTable.from_dict({"names": ["TOP"]})
    with pytest.raises(GrammarError, match="E105"):
        SymbolTable.from_dict({"names": [1], "kinds": ["root"]})
