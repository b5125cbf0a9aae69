"""Trees <-> Docs adapters and the token text table (spacy_lpcfg.pipeline.docs)."""

from __future__ import annotations

import pytest
import spacy
from spacy.tokens import Doc, Span, SpanGroup

from spacy_lpcfg.pipeline.docs import (
    TokenNormalizer,
    build_tree,
    doc_trees,
    sentence_leaves,
    tree_constituents,
    tree_to_doc,
)
from spacy_lpcfg.trees import Tree


@pytest.fixture(scope="module")
def vocab():
    return spacy.blank("en").vocab


@pytest.mark.parametrize("corpus", ["ptb_sample", "floresta"])
def test_docs_tree_doc_round_trip_is_exact(vocab, load_corpus, corpus):
    scheme = {"ptb_sample": "penn", "floresta": "floresta"}[corpus]
    for tree in load_corpus(corpus, "dev")[:200]:
        doc = tree_to_doc(vocab, tree, scheme=scheme)
        assert [token.text for token in doc] == tree.words()
        assert doc.has_unknown_spaces
        # No sentence starts (a one-word Doc has them implicitly), or gold_preproc
        # would split the Doc with Span.as_doc(), which drops span groups.
        assert len(doc) == 1 or not doc.has_annotation("SENT_START")
        group = doc.spans["constituents"]
        assert group.attrs == {"lpcfg": 1, "scheme": scheme}
        assert [(s.label_, s.start, s.end) for s in group] == tree_constituents(tree)
        assert doc_trees(doc) == [tree]


def test_docs_tree_constituents_keep_unary_chains_outermost_first():
    tree = Tree.from_string("(TOP (S (VP (VB Go) (ADVP (RB home)))))")
    assert tree_constituents(tree) == [("S", 0, 2), ("VP", 0, 2), ("ADVP", 1, 2)]


def test_docs_doc_trees_skip_whitespace_and_split_sentences(vocab):
    doc = Doc(
        vocab,
        words=["Go", "\n", "home", ".", "Stay", "."],
        tags=["VB", "_SP", "RB", ".", "VB", "."],
        sent_starts=[True, False, False, False, True, False],
    )
    spans = [("S", 0, 4), ("VP", 0, 3), ("ADVP", 2, 3), ("S", 4, 6), ("VP", 4, 5)]
    doc.spans["constituents"] = SpanGroup(
        doc, spans=[Span(doc, s, e, label=lab) for lab, s, e in spans]
    )
    first, second = doc_trees(doc, by_sentence=True)
    assert first == Tree.from_string("(TOP (S (VP (VB Go) (ADVP (RB home))) (. .)))")
    assert second == Tree.from_string("(TOP (S (VP (VB Stay)) (. .)))")
    assert len(doc_trees(doc)) == 1  # one tree per Doc unless asked


def test_docs_doc_trees_errors(vocab):
    doc = Doc(vocab, words=["a", "b", "c"], tags=["DT", "NN", ""], sent_starts=[True, False, True])
    doc.spans["constituents"] = [Span(doc, 0, 2, label="NP"), Span(doc, 1, 3, label="X")]
    with pytest.raises(ValueError, match="E706"):  # X crosses the sentence boundary
        doc_trees(doc, by_sentence=True)
    with pytest.raises(ValueError, match="E704"):  # NP and X cross
        doc_trees(doc)
    doc.spans["constituents"] = [Span(doc, 0, 3, label="NP")]
    with pytest.raises(ValueError, match="E705"):  # training needs every tag
        doc_trees(doc, missing_tag=None)
    assert doc_trees(doc)[0].tags() == ["DT", "NN", "XX"]


def test_docs_build_tree_ignores_top_and_whitespace_only_spans():
    tree = build_tree([0, 2], ["a", "b"], ["DT", "NN"], [("TOP", 0, 3), ("NP", 0, 3), ("X", 1, 2)])
    assert tree == Tree.from_string("(TOP (NP (DT a) (NN b)))")


def test_docs_sentence_leaves(vocab):
    nlp = spacy.blank("en")
    doc = nlp("One two.  Three")
    assert sentence_leaves(doc, "doc", "p") == [(0, [0, 1, 2, 4])]
    with pytest.raises(ValueError, match="E702"):
        sentence_leaves(doc, "error", "p")
    assert sentence_leaves(nlp(""), "error", "p") == []
    nlp.add_pipe("sentencizer")
    assert sentence_leaves(nlp("One two.\n\nThree."), "error", "p") == [(0, [0, 1, 2]), (1, [4, 5])]


PTB_WORDS = {"-LRB-", "-RRB-", "-LCB-", "``", "''", "--", "'s", "n't", "...", "'"}


@pytest.mark.parametrize(
    "known, texts, expected",
    [
        # PTB: escapes for brackets, `` '' for quotes (straight ones by parity), -- for dashes
        (PTB_WORDS, ["(", "a", ")", "{"], ["-LRB-", "a", "-RRB-", "-LCB-"]),
        (PTB_WORDS, ['"', "a", '"', '"'], ["``", "a", "''", "``"]),
        (PTB_WORDS, ["“", "—", "…", "’s", "n’t"], ["``", "--", "...", "'s", "n't"]),
        # IcePaHC / CESS-ESP write plain '"' and '-': known spellings stay as they are
        ({'"', "-"}, ['"', "“", "—"], ['"', '"', "-"]),
        ({"-Fpa-", "-Fpt-", '"'}, ["(", "a", ")"], ["-Fpa-", "a", "-Fpt-"]),  # CESS-ESP
        # Floresta writes parentheses as braces and quotes as « »
        ({"{", "}", "«", "»", "--"}, ["(", ")", "“", "”", "–"], ["{", "}", "«", "»", "--"]),
        # nothing known: the text is kept (the lexicon's unknown-word classes take it)
        (set(), ["(", "🎉", "naïve"], ["(", "🎉", "naïve"]),
    ],
)
def test_docs_token_normalizer_uses_the_models_spellings(known, texts, expected):
    assert TokenNormalizer(known)(texts) == expected
