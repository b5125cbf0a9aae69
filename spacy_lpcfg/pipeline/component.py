"""The ``lpcfg_parser`` pipeline component: L-PCFG constituency parsing inside spaCy.

``nlp.add_pipe("lpcfg_parser")`` adds it (the factory is registered through
the ``spacy_factories`` entry point, so no import is needed). The grammar comes
from ``initialize`` (``nlp.initialize``, ``spacy train``, ``spacy assemble``),
which fits the configured estimator on the reference Docs' constituents, or
from the ``model`` setting (a model directory, e.g. from ``spacy-lpcfg
train``), or from a saved pipeline. Fitting is closed-form, so ``spacy train``
needs one step (``max_steps = 1``); the component has no ``update``.

Each sentence (``doc.sents``; the whole Doc when it has no sentence boundaries
and ``missing_sentences="doc"``) is parsed on its non-whitespace tokens, with
their ``token.tag_`` as constraints when given (``use_tags``). The result goes
to ``doc.spans[spans_key]`` (layout in ``docs.py``) and the predicted tags to
``token.tag_`` (``write_tags``). Sentences longer than ``max_length`` words get
a flat tree; every fallback is listed in the group's ``attrs["fallbacks"]``
as ``[sentence index, reason]`` (reasons: ``decode.parser.FALLBACKS``).

With ``function_labeller = true`` (or a ``spacy_lpcfg.FunctionLabeller.v1``
block), ``initialize`` also fits a function labeller on the training trees and
saves it with the grammar: the parses then get its function tags (``NP-SBJ``,
``Span._.function_labels``), or the grammar's own when it keeps function tags
and ``function_labels`` says so ("grammar", or "auto" and a latent grammar). A
``model`` directory brings its own labeller, if it has one (``spacy-lpcfg train
--function-labeller``).

Put the component after any component that retokenises (``merge_entities``...):
retokenising afterwards leaves the span group's offsets stale.
"""

import dataclasses
import inspect
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab

from .. import defaults
from ..errors import Errors, GrammarError, Warnings, excerpt
from ..trees.transforms import TransformSpec
from ..trees.tree import Tree
from .docs import (
    LOG_LIKELIHOODS_KEY,
    PARSE_STRING_LABELS,
    SCORES_KEY,
    SPANS_KEY,
    TokenNormalizer,
    doc_trees,
    find_group,
    group_attrs,
    sentence_leaves,
    tree_constituents,
)
from .extensions import install_extensions
from .scorer import score_constituents

if TYPE_CHECKING:
    from ..decode.parser import Parser
    from ..grammar.model import ParsingModel

USE_TAGS = ("auto", "constrain", "ignore")
WRITE_TAGS = ("missing", "overwrite", "never")
MISSING_SENTENCES = ("doc", "error")
# Tree transforms: TransformSpec's defaults; a null head_rules is decided by the
# training data's label scheme.
DEFAULT_TRANSFORMS: dict[str, Any] = {
    **{
        field.name: field.default
        for field in dataclasses.fields(TransformSpec)
        if field.name in ("binarization", "h_markov", "v_markov", "keep_functions")
    },
    "head_rules": None,
}


@Language.factory(
    "lpcfg_parser",
    assigns=["doc.spans", "token.tag"],
    default_config={
        "model": None,
        "estimator": {"@misc": "spacy_lpcfg.MLEEstimator.v1"},
        "transforms": DEFAULT_TRANSFORMS,
        "decoder": defaults.DECODER,
        "prune_threshold": None,
        "use_tags": "auto",
        "write_tags": "missing",
        "spans_key": SPANS_KEY,
        "max_length": defaults.MAX_LENGTH,
        "missing_sentences": "doc",
        "function_labeller": False,
        "function_labels": defaults.FUNCTION_LABELS,
        "parse_string_labels": PARSE_STRING_LABELS[0],
        "scorer": {"@scorers": "spacy_lpcfg.constituency_scorer.v1"},
    },
    # short names: spacy train's table would cut "constituents_func_f" to "CONSTITUEN..."
    default_score_weights={
        "cons_f": 1.0,
        "cons_p": 0.0,
        "cons_r": 0.0,
        "cons_func_f": 0.0,
        "cons_exact": 0.0,
        "cons_tag_acc": 0.0,
    },
)
def make_lpcfg_parser(
    nlp: Language,
    name: str,
    model: Path | None,
    estimator: Any,
    transforms: dict[str, Any],
    decoder: str,
    prune_threshold: float | None,
    use_tags: str,
    write_tags: str,
    spans_key: str,
    max_length: int,
    missing_sentences: str,
    function_labeller: Any,
    function_labels: str,
    parse_string_labels: str,
    scorer: Callable | None,
) -> "LPCFGParser":
    """Create an LPCFGParser (arguments as for ``LPCFGParser``).

    The ``model`` directory is checked now, except when spaCy rebuilds a saved
    pipeline (``spacy.load``, an installed package, a ``source`` component): the
    component then reads its own copy of the grammar (``from_disk``), never the
    directory it was first made from, which may be gone or, relative to another
    working directory, another model.
    """
    component = LPCFGParser(
        nlp.vocab,
        name,
        check_model=not rebuilding_saved_pipeline(nlp, name),
        model=model,
        estimator=estimator,
        transforms=transforms,
        decoder=decoder,
        prune_threshold=prune_threshold,
        use_tags=use_tags,
        write_tags=write_tags,
        spans_key=spans_key,
        max_length=max_length,
        missing_sentences=missing_sentences,
        function_labeller=function_labeller,
        function_labels=function_labels,
        parse_string_labels=parse_string_labels,
        scorer=scorer,
    )
    component._pipeline = weakref.ref(nlp)
    return component


@dataclass(frozen=True)
class SentenceParse:
    """The parse of one sentence of a Doc.

    index (int): the sentence's position in ``doc.sents`` (0 for a Doc without sentences).
    leaves (list[int]): token indices of its words (whitespace tokens left out).
    tree (Tree): the parse in treebank labels, rooted at TOP, over those words.
    fallback (str | None): the parser fallback used, if any.
    posteriors (tuple[float, ...] | None): each constituent's posterior, in the order
        of ``tree_constituents(tree)`` (``Parse.span_posteriors``); None: not known.
    log_likelihood (float | None): the sentence's ``Parse.log_likelihood``.
    """

    index: int
    leaves: list[int]
    tree: Tree
    fallback: str | None
    posteriors: tuple[float, ...] | None = None
    log_likelihood: float | None = None


class LPCFGParser(Pipe):
    """Constituency parser with a latent-variable PCFG; writes ``doc.spans[spans_key]``.

    vocab (Vocab): the shared vocabulary.
    name (str): the component name. Defaults to "lpcfg_parser".
    model (Path | None): a model directory to parse with (``spacy-lpcfg train``),
        checked now and read when first needed (a pipeline saved with
        ``nlp.to_disk`` carries its own copy, and loads even where this path no
        longer exists). None: ``initialize`` fits the estimator.
    estimator (Any): an unfitted estimator (``spacy_lpcfg.estimators`` contract);
        the component sets its ``transform`` and ``language``, and those of nested
        estimators (an ensemble's members).
    transforms (dict[str, Any]): ``TransformSpec`` settings; ``scheme`` and
        ``head_rules`` default to the training data's.
    decoder (str): a decoder of ``decode.registry`` that suits the model: "max_rule",
        "variational", "viterbi", "mbr", "product" or "product_mbr" for a grammar or an
        ensemble; "members_product", "members_mbr" or "dual" for a model with members
        (as ``spacy-lpcfg combine`` writes them); or "auto" (the model's: the decoder
        stored with it, "product_mbr" for an ensemble, "mbr" for a signed grammar, as
        spectral ones are, and for one with latent states over collapsed unary chains,
        else "max_rule"; ``decode.parser.default_decoder``).
    prune_threshold (float | None): coarse-to-fine pruning threshold; None is the
        parser's default.
    use_tags (str): given ``token.tag_``: "auto" (constrain when present),
        "constrain" (required) or "ignore".
    write_tags (str): predicted tags to ``token.tag_``: "missing" (where empty),
        "overwrite" or "never".
    spans_key (str): key of the span group of constituents.
    max_length (int): sentences with more words get a flat tree (chart memory
        grows with the square of the length).
    missing_sentences (str): a Doc without sentence boundaries is one sentence
        ("doc") or an error ("error").
    parse_string_labels (str): the labels ``._.parse_string`` writes: "category"
        (``NP``, as benepar writes them, so that code written for benepar runs
        unchanged) or "full" (``NP-SBJ``). ``._.full_labels`` and
        ``._.function_labels`` give the function tags either way.
    function_labeller (bool | FunctionLabeller): True, or an unfitted
        ``FunctionLabeller`` (``spacy_lpcfg.FunctionLabeller.v1``, to set its C...):
        ``initialize`` fits it on the training trees and saves it with the grammar.
        False: no labeller (a ``model`` directory may bring one).
    function_labels (str): with ``function_labeller``: whose function tags the
        parses get when the grammar keeps them too, "auto" (a latent grammar's own, an
        MLE grammar's the labeller's), "labeller" or "grammar" (a grammar that strips
        them gets the labeller's).
    scorer (Callable | None): the scoring function (``Pipe.score``).
    check_model (bool): check now that ``model`` is a model directory (its files are
        read on first use). False when a saved pipeline brings its own copy: ``model``
        is then never read (``from_disk`` reads the copy; ``initialize`` still reads it).
    RAISES ValueError: a bad setting (an unknown choice, ``max_length`` < 1, a
        ``prune_threshold`` outside [0, 1), a ``model`` that is no model directory...).
    """

    def __init__(
        self,
        vocab: Vocab,
        name: str = "lpcfg_parser",
        *,
        model: Path | None,
        estimator: Any,
        transforms: dict[str, Any],
        decoder: str,
        prune_threshold: float | None,
        use_tags: str,
        write_tags: str,
        spans_key: str,
        max_length: int,
        missing_sentences: str,
        function_labeller: Any = False,
        function_labels: str = defaults.FUNCTION_LABELS,
        parse_string_labels: str = "category",
        scorer: Callable | None = score_constituents,
        check_model: bool = True,
    ):
        # The decoder names load no engine (numba): that comes when a parser is made.
        from ..decode.registry import accepted_names

        if model is not None and check_model:
            check_model_directory(Path(model), name)
        _check_prune_threshold(prune_threshold, name)
        # every registered name: whether it suits the model (a model with members takes
        # the members decoders) is checked when the parser is built
        _check_choice("decoder", decoder, accepted_names())
        _check_choice("use_tags", use_tags, USE_TAGS)
        _check_choice("write_tags", write_tags, WRITE_TAGS)
        _check_choice("missing_sentences", missing_sentences, MISSING_SENTENCES)
        _check_choice("function_labels", function_labels, defaults.FUNCTION_LABEL_SOURCES)
        _check_choice("parse_string_labels", parse_string_labels, PARSE_STRING_LABELS)
        _check_function_labeller(function_labeller, name)
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise ValueError(
                Errors.E011.format(name="max_length", value=max_length, expected="an int >= 1")
            )
        if not spans_key:
            raise ValueError(
                Errors.E011.format(name="spans_key", value=spans_key, expected="a non-empty str")
            )
        if estimator is not None and not all(
            hasattr(estimator, method) for method in ("fit", "get_params", "set_params")
        ):
            raise ValueError(Errors.E709.format(value=estimator))
        transform_spec(transforms, "penn", "en")  # reject unknown settings now, not at training
        self.vocab = vocab
        self.name = name
        self.model_path = None if model is None else Path(model)
        self.estimator = estimator
        self.transforms = dict(transforms)
        self.decoder = decoder
        self.prune_threshold = prune_threshold
        self.use_tags = use_tags
        self.write_tags = write_tags
        self.spans_key = spans_key
        self.max_length = max_length
        self.missing_sentences = missing_sentences
        self.function_labeller = function_labeller
        self.function_labels = function_labels
        self.parse_string_labels = parse_string_labels
        self.scorer = scorer
        self.cfg = {"spans_key": spans_key}  # passed to the scorer by Pipe.score
        self._model: ParsingModel | None = None
        self._parser: Parser | None = None
        self._normalizer: TokenNormalizer | None = None
        # A saved pipeline parses with its own copy only: the training-time path would
        # resolve against the current directory, where another model may be.
        self._reads_model_path = model is not None and check_model
        self._missing_copy: Path | None = None  # from_disk found no copy there
        self._warned_language = False
        self._scored_model: object = None  # the model last scored (W703)
        self._warned_scoring = False
        # The pipeline whose config says what the model is (``_describe_model``).
        self._pipeline: Callable[[], Language | None] = _no_pipeline
        install_extensions()

    # The grammar ---------------------------------------------------------------

    @property
    def parsing_model(self) -> "ParsingModel | None":
        """The grammar, lexicon and transforms, or None before they are fitted or read.

        (Not named ``model``: spaCy probes components' ``model`` attribute for
        thinc models, and reading it must have no side effects.)
        """
        return self._model

    def score(self, examples: Iterable[Example], **kwargs) -> dict[str, Any]:
        """Score Examples (``Pipe.score``), and say once when the same fitted model is
        scored again: spacy train's steps change nothing in a grammar fitted in closed
        form, so a config with more than one step evaluates it over and over (W703)."""
        if self._scored_model is self._model and not self._warned_scoring:
            self._warned_scoring = True
            warnings.warn(Warnings.W703.format(name=self.name), stacklevel=2)
        self._scored_model = self._model
        return super().score(examples, **kwargs)

    def _set_model(self, model: "ParsingModel") -> None:
        self._model = model
        self._parser = None
        self._normalizer = None
        self._missing_copy = None
        self._check_language(model)
        self._describe_model(model)

    def _describe_model(self, model: "ParsingModel") -> None:
        """Make the pipeline's config say what a model read from a directory is (its
        estimator, transforms and function labeller, ``pipeline.described``) instead of
        that directory's path and the settings of an estimator that never ran: a saved
        pipeline carries its own copy. (spaCy has no public way for a component to
        change its config: this edits the Language's record of it.)"""
        nlp = self._pipeline()
        if self.model_path is None or nlp is None:
            return  # fitted from the configured estimator: the config says so already
        config = next(
            (nlp.get_pipe_config(name) for name, pipe in nlp.pipeline if pipe is self), None
        )
        if config is not None:
            from .described import model_settings

            config.update(model_settings(model))

    def _check_language(self, model: "ParsingModel") -> None:
        """Warn (once per component) that the model was trained on another language
        than the pipeline's; a multi-language ("xx") pipeline takes any."""
        lang = self.vocab.lang
        if self._warned_language or lang in ("", "xx") or model.language == lang:
            return
        self._warned_language = True
        warning = Warnings.W702.format(name=self.name, model=model.language, lang=lang)
        warnings.warn(warning, UserWarning, stacklevel=3)

    @property
    def _has_model(self) -> bool:
        return self._model is not None or self._reads_model_path

    def _require_model(self) -> "ParsingModel":
        """The model, read from the ``model`` path on first use (not in a saved
        pipeline). RAISES ValueError: none (E718: the saved pipeline lacks its copy)."""
        if self._model is None and self._reads_model_path and self.model_path is not None:
            from ..grammar.model import ParsingModel

            self._set_model(ParsingModel.from_disk(self.model_path))
        if self._model is None and self._missing_copy is not None:
            raise self._no_copy_error(self._missing_copy)
        if self._model is None:
            raise ValueError(Errors.E701.format(name=self.name))
        return self._model

    def _no_copy_error(self, copy: Path) -> GrammarError:
        return GrammarError(Errors.E718.format(name=self.name, folder=copy.parent, copy=copy.name))

    @property
    def parser(self) -> "Parser":
        """The sentence parser over the model (built on first use)."""
        if self._parser is None:
            from ..decode.parser import Parser

            options: dict[str, Any] = (
                {} if self.prune_threshold is None else {"prune_threshold": self.prune_threshold}
            )
            self._parser = Parser(
                self._require_model(),
                decoder=self.decoder,
                use_tags=self.use_tags,
                max_length=self.max_length,
                **options,
            )
        return self._parser

    @property
    def normalizer(self) -> TokenNormalizer:
        """Token text -> the spelling the model knows (brackets, quotes, dashes)."""
        if self._normalizer is None:
            known = cast("frozenset[str]", self._require_model().lexicon.known_words)  # fitted
            self._normalizer = TokenNormalizer(known)
        return self._normalizer

    @property
    def labels(self) -> tuple[str, ...]:
        """The phrase labels the component can predict (with function tags), sorted:
        the grammar's, or with a function labeller at work (``active_labeller``) each
        of the grammar's categories with each combination of tags the labeller has.

        Empty until the grammar is read: spaCy asks for labels while it loads a
        pipeline, before ``from_disk``, and that must not read the ``model`` path.
        """
        model = self._model
        if model is None:
            return ()
        from ..trees.labels import get_scheme
        from ..trees.transforms import PARENT_SEP, UNARY_SEP, is_intermediate

        symbols = model.grammar.symbols
        found: set[str] = set()
        for index in symbols.ids("phrasal").tolist():
            name = symbols.name(index)
            if not is_intermediate(name):
                found.update(part.partition(PARENT_SEP)[0] for part in name.split(UNARY_SEP))
        labeller = model.active_labeller
        if labeller is not None:
            scheme = get_scheme(model.label_scheme)
            categories = {scheme.category(label) for label in found}
            found = {scheme.join(c, tags) for c in categories for tags in labeller.classes}
        return tuple(sorted(found))

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Language | None = None,
        treebank: str | None = None,
        split: str = "train",
        data_dir: Path | None = None,
        limit: int = 0,
        dev_corpus: Callable[[Language], Iterable[Example]] | None = None,
    ) -> None:
        """Fit the grammar on the training data, or read the ``model`` directory if
        one is configured (then the data is not used).

        get_examples (Callable[[], Iterable[Example]]): the training Examples; their
            reference Docs' constituents (``doc.spans[spans_key]``) and tags are the
            training trees (one per sentence when the reference has sentences).
        nlp (Language | None): the pipeline; its language goes to the estimator.
        treebank (str | None): train on this corpus or treebank file instead of the
            Examples (``spacy assemble`` passes no real Examples).
        split (str): the split of a named ``treebank``. Defaults to "train".
        data_dir (Path | None): the treebank data directory (default: $SPACY_LPCFG_DATA).
        limit (int): train on the first ``limit`` trees only (0: all).
        dev_corpus (Callable[[Language], Iterable[Example]] | None): dev Examples (a
            corpus reader such as ``spacy.Corpus.v1`` with ``path = ${paths.dev}``) for
            the estimators that choose on dev trees: split-merge keeps the cycle whose
            grammar parses them best (EVALB F1).
        RAISES ValueError: no training trees, trees without tags, or a dev_corpus for
            an estimator that does not use dev trees.
        """
        if nlp is not None:
            self._pipeline = weakref.ref(nlp)
        if self.model_path is not None:
            from ..grammar.model import ParsingModel

            if self.function_labeller is not False:
                raise ValueError(Errors.E715.format(name=self.name, path=self.model_path))
            self._set_model(ParsingModel.from_disk(self.model_path))
            return
        if dev_corpus is not None:  # before any data is read
            if nlp is None:
                raise ValueError(Errors.E717.format(name=self.name))
            fit = getattr(self.estimator, "fit", None)  # None: E709 when fitting
            if fit is not None and "dev_scorer" not in inspect.signature(fit).parameters:
                estimator = type(self.estimator).__name__
                raise ValueError(Errors.E716.format(name=self.name, estimator=estimator))
        if treebank is not None:
            from .readers import read_treebank

            trees, scheme = read_treebank(treebank, split, data_dir=data_dir)
        else:
            validate_get_examples(get_examples, "LPCFGParser.initialize")
            trees, scheme = self._training_trees(get_examples())
        trees = trees[:limit] if limit else trees
        if not trees:
            raise ValueError(Errors.E703.format(name=self.name, key=self.spans_key))
        language = cast(str, nlp.lang if nlp is not None else self.vocab.lang)  # a Language has one
        dev_trees = None
        if dev_corpus is not None and nlp is not None:
            dev_trees, _ = self._training_trees(dev_corpus(nlp))
        model = self._fitted_model(trees, scheme, language, dev_trees)
        if treebank is not None:  # what combine_models checks (Examples name none)
            from ..grammar.model import treebank_name

            model = model.with_treebank(treebank_name(treebank))
        if self.function_labeller is not False:
            model = self._with_labeller(model, trees)
        self._set_model(model)

    def _with_labeller(self, model: "ParsingModel", trees: list[Tree]) -> "ParsingModel":
        """The model with a function labeller fitted on the training trees (the
        ``function_labeller`` setting's parameters; the model's scheme and language)."""
        from ..estimators.function_labels import attach_function_labeller

        params = {}
        if self.function_labeller is not True:
            params = {
                key: value
                for key, value in self.function_labeller.get_params(deep=False).items()
                if key not in ("scheme", "language")
            }
        return attach_function_labeller(
            model, trees, function_labels=self.function_labels, **params
        )

    def _training_trees(self, examples: Iterable[Example]) -> tuple[list[Tree], str]:
        trees: list[Tree] = []
        schemes: set[str] = set()
        for example in examples:
            group = find_group(example.reference, self.spans_key)
            if group is None:  # e.g. the dummy Example of spacy assemble
                continue
            schemes.add(group.attrs.get("scheme", "penn"))
            trees.extend(
                doc_trees(example.reference, self.spans_key, by_sentence=True, missing_tag=None)
            )
        if len(schemes) > 1:
            raise ValueError(Errors.E707.format(schemes=", ".join(sorted(schemes))))
        return trees, schemes.pop() if schemes else "penn"

    def _fitted_model(
        self, trees: list[Tree], scheme: str, language: str, dev_trees: list[Tree] | None = None
    ) -> "ParsingModel":
        from ..estimators import clone

        if self.estimator is None:
            raise ValueError(Errors.E709.format(value=None))
        estimator = clone(self.estimator)
        # The estimator's own transform and language, and those of nested estimators
        # (``estimator__transform``: the members of an ensemble).
        params = estimator.get_params(deep=True)
        transforms = [name for name in params if name.rpartition("__")[2] == "transform"]
        if not transforms:
            raise ValueError(Errors.E708.format(estimator=type(estimator).__name__))
        spec = transform_spec(self.transforms, scheme, language)
        settings: dict[str, Any] = dict.fromkeys(transforms, spec)
        settings.update(
            (name, language) for name in params if name.rpartition("__")[2] == "language"
        )
        estimator.set_params(**settings)
        from ..training import fit_model

        return fit_model(estimator, trees, scheme, dev_trees=dev_trees)

    # Parsing -------------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        """Parse one Doc (in place) and return it."""
        error_handler = self.get_error_handler()
        try:
            self.set_annotations([doc], self.predict([doc]))
            return doc
        except Exception as error:
            return error_handler(self.name, self, [doc], error)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Parse a stream of Docs in batches; a failing batch goes to the error handler."""
        error_handler = self.get_error_handler()
        for docs in util.minibatch(stream, size=batch_size):
            try:
                self.set_annotations(docs, self.predict(docs))
                yield from docs
            except Exception as error:
                error_handler(self.name, self, docs, error)

    def predict(self, docs: Iterable[Doc]) -> list[list[SentenceParse]]:
        """Parse the sentences of each Doc without changing the Docs.

        RETURNS (list[list[SentenceParse]]): per Doc, its sentences' parses.
        RAISES ValueError: no grammar; no sentence boundaries with
            ``missing_sentences="error"``; ``use_tags="constrain"`` without tags.
        """
        parser, normalize = self.parser, self.normalizer
        constrain = self.use_tags != "ignore"
        out = []
        for doc in docs:
            sentences = []
            for index, leaves in sentence_leaves(doc, self.missing_sentences, self.name):
                tokens = [doc[i] for i in leaves]
                words = normalize([token.text for token in tokens])
                tags = [token.tag_ or None for token in tokens] if constrain else None
                if tags is not None and not any(tags):
                    tags = None
                parse = parser.parse(words, tags)
                posteriors = parse.span_posteriors
                sentences.append(
                    SentenceParse(
                        index,
                        leaves,
                        parse.tree,
                        parse.fallback,
                        None if posteriors is None else tuple(p for *_, p in posteriors),
                        parse.log_likelihood,
                    )
                )
            out.append(sentences)
        return out

    def set_annotations(self, docs: Iterable[Doc], parses: list[list[SentenceParse]]) -> None:
        """Write the constituents (and tags) of ``predict``'s parses onto the Docs."""
        scheme = self._require_model().label_scheme
        for doc, sentences in zip(docs, parses):
            spans = []
            fallbacks = []
            scores: list[float | None] = []
            log_likelihoods = []
            for sentence in sentences:
                leaves = sentence.leaves
                constituents = tree_constituents(sentence.tree)
                for label, start, end in constituents:
                    spans.append(Span(doc, leaves[start], leaves[end - 1] + 1, label=label))
                posteriors = sentence.posteriors
                known = posteriors is not None and len(posteriors) == len(constituents)
                scores.extend(
                    cast("Sequence[float]", posteriors) if known else [None] * len(constituents)
                )
                if sentence.log_likelihood is not None:
                    log_likelihoods.append([leaves[0], leaves[-1] + 1, sentence.log_likelihood])
                if self.write_tags != "never":
                    overwrite = self.write_tags == "overwrite"
                    for i, tag in zip(leaves, sentence.tree.tags()):
                        if overwrite or not doc[i].tag_:
                            doc[i].tag_ = tag
                if sentence.fallback:
                    fallbacks.append((sentence.index, sentence.fallback))
            attrs = group_attrs(scheme, fallbacks, self.parse_string_labels)
            if any(score is not None for score in scores):
                attrs[SCORES_KEY] = scores
            if log_likelihoods:
                attrs[LOG_LIKELIHOODS_KEY] = log_likelihoods
            doc.spans[self.spans_key] = SpanGroup(
                doc, name=self.spans_key, spans=spans, attrs=attrs
            )

    # Serialisation: the learned model only; settings live in config.cfg --------

    def to_bytes(self, *, exclude: Iterable[str] = util.SimpleFrozenList()) -> bytes:
        """The grammar as bytes (nothing before initialisation)."""
        serializers = {} if not self._has_model else {"model": self._require_model().to_bytes}
        return util.to_bytes(serializers, exclude)

    def from_bytes(
        self, bytes_data: bytes, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> "LPCFGParser":
        """Load ``to_bytes`` output. RAISES GrammarError: corrupt data."""
        from ..grammar.model import ParsingModel

        try:
            message = srsly.msgpack_loads(bytes_data)
        except Exception as exc:  # msgpack's errors of a corrupt container
            message = exc
        if not isinstance(message, dict):
            kind = type(message).__name__
            detail = f"not the bytes of {type(self).__name__}.to_bytes() ({kind})"
            raise GrammarError(Errors.E124.format(source="bytes", detail=detail)) from None
        if "model" in message and "model" not in exclude:
            data = message["model"]
            if not isinstance(data, bytes):
                detail = f"its model is {type(data).__name__}, not bytes"
                raise GrammarError(Errors.E124.format(source="bytes", detail=detail))
            self._set_model(ParsingModel.from_bytes(data))
        return self

    def to_disk(
        self, path: str | Path, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> None:
        """Write the grammar to ``path/model`` (a model directory, see ``ParsingModel``)."""
        serializers: dict[str, Callable[[Path], None]] = (
            {} if not self._has_model else {"model": self._require_model().to_disk}
        )
        util.to_disk(path, serializers, exclude)

    def from_disk(
        self, path: str | Path, *, exclude: Iterable[str] = util.SimpleFrozenList()
    ) -> "LPCFGParser":
        """Read ``to_disk`` output. A directory without ``model`` leaves the component
        without a grammar (first use raises E718), or, when its ``model`` setting says
        it was saved with one, fails now: it never falls back to that setting's path.
        RAISES GrammarError: a corrupt model directory, a link (E131), no copy (E718).
        """
        from ..grammar.model import ParsingModel
        from ..grammar.serialization import member_path

        def read(copy: Path) -> None:
            member_path(Path(path), copy.name)  # the pipeline's own copy, not a link
            if copy.exists():
                self._set_model(ParsingModel.from_disk(copy))
                return
            self._missing_copy = copy
            if self.model_path is not None:  # to_disk wrote it: the folder lost it
                raise self._no_copy_error(copy)

        util.from_disk(path, {"model": read}, exclude)
        return self

    def __reduce__(self):
        # nlp.pipe(n_process=...) under the spawn start method pickles the pipeline.
        # The parser and normaliser are rebuilt from the model on first use.
        state = dict(self.__dict__)
        state["_parser"] = state["_normalizer"] = None
        state["_pipeline"] = _no_pipeline  # a weak reference does not pickle
        return _unpickle_parser, (type(self), state)


def _no_pipeline() -> None:
    return None


def _unpickle_parser(cls: type[LPCFGParser], state: dict) -> LPCFGParser:
    parser = cls.__new__(cls)
    parser.__dict__.update(state)
    return parser


def transform_spec(settings: dict[str, Any], scheme: str, language: str):
    """The TransformSpec of the component's ``transforms`` for data of ``scheme``.

    Unset ``scheme`` and ``head_rules`` follow the data: Collins' head rules for
    English Penn trees, the PPCHE rules for other Penn-scheme treebanks
    (IcePaHC), the first child elsewhere.
    RAISES ValueError: an unknown setting or value.
    """
    chosen = dict(settings)
    if chosen.get("scheme") is None:
        chosen["scheme"] = scheme
    if chosen.get("head_rules") is None:
        if chosen["scheme"] == "penn":
            chosen["head_rules"] = "collins" if language == "en" else "ppche"
        else:
            chosen["head_rules"] = "first"
    try:
        return TransformSpec.from_dict(chosen)
    except TypeError as error:  # TransformSpec's own checks raise ValueError
        raise ValueError(str(error)) from None


def rebuilding_saved_pipeline(nlp: Language, name: str) -> bool:
    """Whether spaCy is rebuilding ``nlp`` from a saved pipeline that has component ``name``.

    ``spacy.load`` (and a package's ``load``, and a ``source`` component) gives the
    new Language the pipeline's meta.json, which lists its components, and calls
    ``from_disk`` only after making them; a Language made from scratch has an empty
    meta. (Private attributes: ``Language.meta`` would overwrite the component list,
    and ``_path`` is set by ``from_disk``.)
    """
    if getattr(nlp, "_path", None) is not None:
        return False  # loaded already: a component added now is a new one
    saved = getattr(nlp, "_meta", None)
    return isinstance(saved, dict) and name in (saved.get("components") or ())


def check_model_directory(path: Path, name: str) -> None:
    """RAISES ValueError: ``path`` does not exist or is no model directory (E711, E712),
    or a file of it is a link (GrammarError E131, now rather than on first use)."""
    from ..grammar.model import CFG, GRAMMAR_FILES, LEXICON, TRANSFORMS
    from ..grammar.serialization import member_path

    if not path.exists():
        raise ValueError(Errors.E711.format(name=name, path=path))
    if not path.is_dir():
        detail = "a file, not a directory"
    else:
        missing = [
            file
            for file in (CFG, TRANSFORMS, LEXICON, *GRAMMAR_FILES)
            if not member_path(path, file).is_file()
        ]
        if not missing:
            return
        detail = "no " + ", ".join(missing)
    raise ValueError(
        Errors.E712.format(name=name, path=path, detail=detail, hint=_model_hint(path))
    )


def _model_hint(path: Path) -> str:
    """Where the grammar is, when ``path`` is a saved spaCy pipeline or its component."""
    if not path.is_dir():
        return ""
    if (path / "model" / "cfg.json").is_file():  # the component's directory in a pipeline
        return f" Its grammar is in '{path / 'model'}'."
    if (path / "config.cfg").is_file():
        inside = sorted(str(cfg.parent) for cfg in path.glob("*/model/cfg.json"))
        where = f"; its grammar is in '{inside[0]}'" if inside else ""
        return f" It is a saved spaCy pipeline: load it with spacy.load('{path}'){where}."
    return ""


def _check_prune_threshold(value: Any, name: str) -> None:
    """RAISES ValueError: not None and not a number in [0, 1) (E713)."""
    if value is None:
        return
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not 0.0 <= value < 1.0:  # NaN fails the comparison
        default = defaults.PRUNE_THRESHOLD
        raise ValueError(Errors.E713.format(value=value, name=name, default=default))


def _check_function_labeller(value: Any, name: str) -> None:
    """RAISES ValueError: not a bool nor an unfitted FunctionLabeller (E714)."""
    if isinstance(value, bool):
        return
    from ..estimators.function_labels import FunctionLabeller

    if not isinstance(value, FunctionLabeller):
        raise ValueError(Errors.E714.format(name=name, value=excerpt(repr(value))))


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        expected = "one of " + ", ".join(repr(choice) for choice in choices)
        raise ValueError(Errors.E011.format(name=name, value=value, expected=expected))
