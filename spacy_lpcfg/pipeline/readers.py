"""A spaCy corpus reader for treebanks, and the DocBin writer of ``spacy-lpcfg convert``.

Both make one Doc per tree with the treebank's own tokens (gold tokenisation,
spaces unknown), POS tags in ``token.tag_`` and the constituents in
``doc.spans[spans_key]`` (``docs.tree_to_doc``). Words keep the treebank's
spelling (PTB ``-LRB-``, ``````), so a grammar trained from these Docs is the
grammar ``spacy-lpcfg train`` fits on the same trees; at parse time the
component maps raw text to those spellings (``docs.TokenNormalizer``).
No sentence starts are set: with them, ``gold_preproc`` or ``max_length``
would split reference Docs with ``Span.as_doc()``, which drops span groups.
"""

from collections.abc import Iterable, Iterator
from pathlib import Path

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..errors import Errors
from ..trees.tree import Tree
from .docs import SPANS_KEY, tree_to_doc


def read_treebank(
    treebank: str | Path,
    split: str | None = None,
    *,
    data_dir: str | Path | None = None,
    keep_functions: bool = True,
) -> tuple[list[Tree], str]:
    """The trees of a corpus split or treebank file, and their label scheme.

    treebank (str | Path): a corpus name (``ptb_sample``, ``icepahc``, ...) or a
        treebank file or directory (then ``split`` is ignored).
    RAISES ValueError: a ``.spacy`` file, an unknown corpus, a missing path.
    """
    from ..corpora import open_treebank

    if str(treebank).endswith(".spacy"):
        raise ValueError(Errors.E710.format(path=treebank))
    return open_treebank(treebank, split, data_dir, keep_functions=keep_functions)


def trees_to_docbin(
    trees: Iterable[Tree], scheme: str, *, spans_key: str = SPANS_KEY, vocab: Vocab | None = None
) -> DocBin:
    """A DocBin of one Doc per tree (``spacy.Corpus.v1`` reads it back)."""
    vocab = vocab or Vocab()
    docbin = DocBin(attrs=["ORTH", "TAG"], store_user_data=False)
    for tree in trees:
        docbin.add(tree_to_doc(vocab, tree, spans_key=spans_key, scheme=scheme))
    return docbin


class TreebankCorpus:
    """Examples from a treebank: predicted Docs of the gold words, reference Docs
    with tags and constituents. Trees are read on the first call and kept.

    path (str): a corpus name or a treebank file or directory.
    split (str | None): "train", "dev" or "test" of a named corpus (None: all of it).
    data_dir (Path | None): the treebank data directory (default: $SPACY_LPCFG_DATA).
    limit (int): use only the first ``limit`` trees (0: all).
    spans_key (str): the span group key of the constituents.
    keep_functions (bool): keep function tags in labels.
    """

    def __init__(
        self,
        path: str,
        *,
        split: str | None,
        data_dir: Path | None,
        limit: int,
        spans_key: str,
        keep_functions: bool,
    ):
        if str(path).endswith(".spacy"):
            raise ValueError(Errors.E710.format(path=path))
        self.path = path
        self.split = split
        self.data_dir = data_dir
        self.limit = limit
        self.spans_key = spans_key
        self.keep_functions = keep_functions
        self._trees: list[Tree] | None = None
        self._scheme = "penn"

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self._trees is None:
            trees, self._scheme = read_treebank(
                self.path, self.split, data_dir=self.data_dir, keep_functions=self.keep_functions
            )
            self._trees = trees[: self.limit] if self.limit else trees
        for tree in self._trees:
            reference = tree_to_doc(nlp.vocab, tree, spans_key=self.spans_key, scheme=self._scheme)
            yield Example(Doc(nlp.vocab, words=[token.text for token in reference]), reference)


@registry.readers("spacy_lpcfg.TreebankCorpus.v1")
def create_treebank_reader(
    path: str,
    split: str | None = None,
    data_dir: Path | None = None,
    limit: int = 0,
    spans_key: str = SPANS_KEY,
    keep_functions: bool = True,
) -> TreebankCorpus:
    """Read a treebank (corpus name or file) as training or evaluation Examples."""
    return TreebankCorpus(
        path,
        split=split,
        data_dir=data_dir,
        limit=limit,
        spans_key=spans_key,
        keep_functions=keep_functions,
    )
