"""ParseResult.to_tree, and every decoder's output through TransformPipeline.invert."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from spacy_lpcfg.decode import (
    DECODERS,
    ParseResult,
)
from spacy_lpcfg.decode.registry import decoder_names
from spacy_lpcfg.grammar import LPCFG, LexicalScores, SymbolTable
from spacy_lpcfg.trees import Tree
from spacy_lpcfg.trees.transforms import TransformPipeline, is_intermediate


def _result(names, nodes, tags, n):
    labels, starts, ends = (np.array(column, dtype=np.int32) for column in zip(*nodes))
    return ParseResult(
        n_words=n,
        label_names=tuple(names),
        labels=labels,
        starts=starts,
        ends=ends,
        tags=np.array([names.index(tag) for tag in tags], dtype=np.int32),
        score=0.0,
        decoder="test",
    )


def test_parse_result_to_tree_nests_n_ary_nodes_and_chains():
    names = ["TOP", "S", "NP", "VP", "ADVP", "DT", "NN", "VBD", "RB", "."]
    nodes = [(0, 0, 6), (1, 0, 6), (2, 1, 3), (3, 3, 5), (4, 4, 5), (2, 4, 5)]
    result = _result(names, nodes, ["RB", "DT", "NN", "VBD", "RB", "."], 6)
    tree = result.to_tree(["So", "the", "dog", "barked", "loudly", "."])
    expected = (
        "(TOP (S (RB So) (NP (DT the) (NN dog)) (VP (VBD barked) (ADVP (NP (RB loudly)))) (. .)))"
    )
    assert tree == Tree.from_string(expected)
    assert len(result.labels) == 6 and result.has_parse


def test_parse_result_to_tree_one_word():
    result = _result(["TOP", "NN"], [(0, 0, 1)], ["NN"], 1)
    assert result.to_tree(["Yes"]) == Tree.from_string("(TOP (NN Yes))")


def test_parse_result_errors():
    failed = ParseResult.failure(3, "mbr")
    assert not failed.has_parse and len(failed.labels) == 0 and failed.score == -np.inf
    with pytest.raises(ValueError, match="E301"):
        failed.to_tree(["a", "b", "c"])
    result = _result(["TOP", "NN"], [(0, 0, 1)], ["NN"], 1)
    with pytest.raises(ValueError, match="E302"):
        result.to_tree(["a", "b"])


TREEBANK = [
    "(TOP (S (NP (DT The) (NN dog)) (VP (VBD saw) (NP (DT a) (JJ big) (NN cat))) (. .)))",
    "(TOP (S (VP (VB Go) (ADVP (RB now)))))",
    "(TOP (NP (NN Yes)))",
    "(TOP (S (NP-SBJ (PRP it)) (VP (VBZ is) (ADVP (RB now)))))",
]


def _mle_grammar(trees: list[Tree]) -> LPCFG:
    """Relative-frequency PCFG of transformed trees (one latent state everywhere)."""
    rules, words = Counter(), Counter()
    for tree in trees:
        for node in tree.subtrees():
            if node.is_preterminal:
                words[(node.label, node.word)] += 1
            else:
                rules[(node.label, *(child.label for child in node.children))] += 1
    phrases = sorted({rule[0] for rule in rules} - {"TOP"})
    symbols = SymbolTable.from_kinds(
        phrasal=[label for label in phrases if not is_intermediate(label)],
        intermediate=[label for label in phrases if is_intermediate(label)],
        preterminal=sorted({tag for tag, _ in words}),
    )
    parents, tags = Counter(), Counter()
    for rule, count in rules.items():
        parents[rule[0]] += count
    for (tag, _), count in words.items():
        tags[tag] += count
    binary = {r: c / parents[r[0]] for r, c in rules.items() if len(r) == 3}
    unary = {r: c / parents[r[0]] for r, c in rules.items() if len(r) == 2}
    lexical = {r: c / tags[r[0]] for r, c in words.items()}
    return LPCFG.from_rules(symbols, {}, binary=binary, unary=unary, lexical=lexical)


@pytest.mark.parametrize("decoder", sorted(decoder_names("grammar", "ensemble")))
@pytest.mark.parametrize("text", TREEBANK)
def test_decoders_output_inverts_to_the_treebank_tree(decoder, text):
    """Every registered decoder, through the one calling convention (a joint decoder
    gets the grammar twice)."""
    pipeline = TransformPipeline()
    grammar = _mle_grammar(pipeline.apply_all(Tree.from_string(t) for t in TREEBANK))
    gold = Tree.from_string(text)
    words = gold.words()
    lexical = LexicalScores.from_word_ids(grammar, [grammar.word_index[w] for w in words])
    k = 2 if DECODERS[decoder].joint else 1
    result = DECODERS[decoder]([grammar] * k, [lexical] * k)
    if decoder in ("mbr", "product_mbr"):  # span decoders strip parent annotations
        assert not any("^" in name for name in result.label_names)
    assert pipeline.invert(result.to_tree(words)) == gold
