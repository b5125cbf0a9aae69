"""The ``lpcfg_bracketer`` component: unlabelled constituents learned from text alone.

``nlp.add_pipe("lpcfg_bracketer")`` adds it; ``nlp.initialize`` (or ``spacy
train``) fits its bracketer (``unsupervised.BRACKETERS``; by default Klein &
Manning's CCM started from the trees of the spectral learner of Parikh, Cohen
& Xing 2014, the best of them on average over the four bundled treebanks) on
the training Docs' sentences: their
words, and their POS tags where ``token.tag_`` is set (no brackets are read).
Each sentence then gets its brackets in ``doc.spans[spans_key]`` (label "X",
pre-order, the sentence span included) and its bracketed tree in the span
group's ``attrs["trees"]``, one string per sentence. Whitespace tokens are no
words: brackets span the others. The fitted bracketer is saved with the
pipeline (JSON and npz, no pickle).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab

from ..errors import Errors, GrammarError

BRACKETS_KEY = "brackets"
LABEL = "X"  # the label of every bracket (the bracketers' trees use it too)
MODEL_DIR = "model"
DEFAULT_METHOD = "ccm"  # spectral-seeded (unsupervised.CCM's default init)


@Language.factory(
    "lpcfg_bracketer",
    assigns=["doc.spans"],
    default_config={"method": DEFAULT_METHOD, "spans_key": BRACKETS_KEY},
)
def make_lpcfg_bracketer(nlp: Language, name: str, method: str, spans_key: str) -> LPCFGBracketer:
    """Create an LPCFGBracketer (arguments as for it)."""
    return LPCFGBracketer(nlp.vocab, name, method=method, spans_key=spans_key)


class LPCFGBracketer(Pipe):
    """Unsupervised constituency bracketing.

    vocab (Vocab): the pipeline's vocabulary.
    name (str): the component name.
    method (str): "ccm" (default: CCM started from the spectral trees),
        "spectral_unsup" (the spectral learner alone), "right", "left" or "random".
    spans_key (str): the span group the brackets go to. Defaults to "brackets".
    """

    def __init__(self, vocab: Vocab, name: str = "lpcfg_bracketer", *, method: str, spans_key: str):
        from ..unsupervised import BRACKETERS

        if method not in BRACKETERS:
            expected = "one of " + ", ".join(BRACKETERS)
            raise ValueError(Errors.E011.format(name="method", value=method, expected=expected))
        self.vocab = vocab
        self.name = name
        self.method = method
        self.spans_key = spans_key
        self.bracketer: Any = None

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp=None) -> None:
        """Fit the bracketer on the reference Docs' sentences (words and tags)."""
        from ..unsupervised import BRACKETERS

        validate_get_examples(get_examples, "LPCFGBracketer.initialize")
        sentences = [
            tokens
            for example in get_examples()
            for sentence in sentences_of(example.reference)
            if (tokens := _tokens(sentence))
        ]
        self.bracketer = BRACKETERS[self.method]().fit(sentences)

    def __call__(self, doc: Doc) -> Doc:
        if self.bracketer is None:
            expected = "a fitted bracketer: call nlp.initialize() first"
            raise ValueError(
                Errors.E011.format(name=self.name, value="unfitted", expected=expected)
            )
        spans, trees = [], []
        for sentence in sentences_of(doc):
            words = [token.i for token in sentence if not token.is_space]
            if not words:
                continue
            tree = self.bracketer.predict([_tokens(sentence)])[0]
            trees.append(tree.pformat())
            for _, start, end in tree.spans(include_root=False):
                spans.append(Span(doc, words[start], words[end - 1] + 1, label=LABEL))
        doc.spans[self.spans_key] = SpanGroup(
            doc, name=self.spans_key, spans=spans, attrs={"trees": trees}
        )
        return doc

    # Serialisation: the fitted bracketer's files --------------------------------

    def to_disk(
        self, path: str | Path, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> None:
        from ..unsupervised import save_bracketer

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.bracketer is not None:
            save_bracketer(self.bracketer, path / MODEL_DIR)

    def from_disk(
        self, path: str | Path, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> LPCFGBracketer:
        from ..grammar.serialization import member_path
        from ..unsupervised import load_bracketer

        folder = member_path(Path(path), MODEL_DIR)  # never a link out of the pipeline
        if folder.is_dir():
            try:
                self.bracketer = load_bracketer(folder)
            except GrammarError:  # names the file (a link, a missing file)
                raise
            except (OSError, ValueError, KeyError) as exc:
                detail = f"not a saved bracketer ({type(exc).__name__})"
                raise GrammarError(Errors.E124.format(source=folder, detail=detail)) from None
        return self

    def to_bytes(self, *, exclude: Iterable[str] = util.SimpleFrozenList()) -> bytes:
        """The saved bracketer's files as one zip archive (``grammar.serialization``)."""
        from ..grammar.serialization import pack_zip

        with tempfile.TemporaryDirectory() as folder:
            self.to_disk(folder)
            return pack_zip(
                {
                    file.relative_to(folder).as_posix(): file.read_bytes()
                    for file in sorted(Path(folder).rglob("*"))
                    if file.is_file()
                }
            )

    def from_bytes(
        self, bytes_data: bytes, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> LPCFGBracketer:
        """Read ``to_bytes`` output. RAISES GrammarError: not such an archive."""
        from ..grammar.serialization import unpack_zip

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E124.format(source="bytes", detail=detail))

        files = unpack_zip(bytes(bytes_data), "bytes", fail)
        if any(".." in Path(name).parts or Path(name).is_absolute() for name in files):
            raise fail("a member's path leaves the archive")
        with tempfile.TemporaryDirectory() as folder:
            for name, data in files.items():
                target = Path(folder, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return self.from_disk(folder)


def sentences_of(doc: Doc) -> list:
    """The Doc's sentences, or the whole Doc when it has no sentence boundaries."""
    return list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]


def _tokens(sentence) -> list:
    """A sentence's non-whitespace tokens: (word, tag) pairs when every one has a tag,
    else the words."""
    tokens = [token for token in sentence if not token.is_space]
    if tokens and all(token.tag_ for token in tokens):
        return [(token.text, token.tag_) for token in tokens]
    return [token.text for token in tokens]
