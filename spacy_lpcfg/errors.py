"""Exception types and the message catalogue.

Messages carry a code (``[LPCFG-E001]``) so users can search for them and tests can
match them; call sites fill the named placeholders with ``str.format``.
"""

from __future__ import annotations

from pathlib import Path


class _CodedMessages(type):
    def __getattribute__(cls, code: str) -> str:
        message = super().__getattribute__(code)
        if code.startswith("__"):
            return message
        # a namespace of our own: "[LPCFG-E012]" is never one of spaCy's codes
        return f"[LPCFG-{code}] {message}"


# How to replace a model that this version cannot read (E116, E125, E128).
RETRAIN = (
    "or retrain the model with this version: spacy-lpcfg train CORPUS MODEL_DIR "
    "--estimator NAME (spacy train for a spaCy pipeline)."
)


class Errors(metaclass=_CodedMessages):
    # Trees, treebanks, EVALB and pictures (E001-E099)
    E001 = "Unbalanced brackets: {detail}"
    E002 = "Empty tree"
    E003 = "Unknown treebank format '{name}'. Known formats: {known}"
    E004 = (
        "No treebank data directory. Pass --data-dir, or set SPACY_LPCFG_DATA to a folder "
        "holding ptb_sample/, icepahc/, floresta/, cess_esp/ and splits.json. The PTB sample "
        "comes with NLTK (python -m nltk.downloader treebank; files in "
        "nltk_data/corpora/treebank/combined), IcePaHC from github.com/antonkarl/icecorpus "
        "(finished/*.psd), Floresta and CESS-ESP with NLTK (floresta, cess_esp)."
    )
    E005 = "Data directory '{path}' does not exist or has no '{corpus}' folder."
    E006 = "Unknown corpus '{name}'. Known corpora: {known}. A path to a treebank file also works."
    E007 = "Unknown split '{split}' for corpus '{corpus}'. Splits: {known}"
    E008 = "Label '{label}' contains the reserved separator '{sep}' used by tree transforms."
    E009 = "Unknown label scheme '{name}'. Known schemes: {known}"
    E010 = "Cannot invert transform '{name}': {detail}"
    E011 = "Invalid value {value!r} for '{name}': {expected}"
    E012 = "Unknown EVALB parameter set '{name}'. Use 'collins', 'spmrl' or a .prm file path."
    E013 = "Cannot read EVALB parameter file {path}, line {line}: {detail}"
    E014 = "Gold and test have different numbers of trees ({gold} vs {test})."
    E015 = "{path}: not a file or directory"
    E016 = (
        "Cannot decode byte 0x{byte:02x} as {encoding} (near {near}); pass the file's "
        "encoding: --encoding on the command line, encoding=... in Python (Floresta and "
        "CESS-ESP files are latin-1)."
    )
    E017 = (
        "No treebank files ({suffixes}) in directory '{path}'; name a treebank file itself, "
        "or give the files one of these endings."
    )
    E018 = "Files in '{path}' use different label schemes ({schemes}); read them separately."
    E019 = (
        "Phrase label '{label}' begins or ends with ':', which would be ambiguous next to the "
        "reserved unary-chain separator '::' used by tree transforms."
    )
    E020 = "'{name}' is not a corpus name ({known}) and no file or directory of that name exists."
    E021 = "No trees in '{path}': {reason}."
    E022 = "Unknown encoding {name}: use a Python codec name such as utf-8 or latin-1."
    E023 = (
        "An encoding applies to treebank files only; the corpus '{name}' is read in its own "
        "encoding ({encoding})."
    )
    E024 = "Cannot read the file: {reason}."
    E025 = "Nothing to evaluate: no gold trees."
    E026 = (
        "Sentence {number}: {detail}. The predicted tree must be over the gold tree's words; "
        "are the two files aligned, one tree per line in the same order?"
    )
    E027 = "max_length must be at least 1 (or None for all sentences), not {value!r}."
    E028 = "nltk trees need nltk, which is an optional extra: pip install 'spacy-lpcfg[nltk]'."
    E029 = "Cannot fit the {what}: {detail}"
    E030 = "Unknown picture option(s): {names}. Options: {known}"
    E031 = "Invalid value {value} for picture option '{name}': expected {expected}."
    E032 = "Cannot draw the tree at '{label}': a phrase without children, or a tree without words."
    E033 = (
        "Cannot draw a {kind}: render() takes a Tree, Penn-bracketed text, a list of Trees, "
        "or a spaCy Doc or Span parsed by 'lpcfg_parser'."
    )
    E034 = "Nothing to draw: no tree in {what}."
    # Grammars, lexicons and model files (E101-E199)
    E101 = "Unknown symbol kind '{kind}' for symbol '{name}'. Kinds: {known}"
    E102 = "A symbol table needs exactly one symbol of kind 'root', named '{root}'; found {found}."
    E103 = "Duplicate symbol '{name}' in the symbol table."
    E104 = "Unknown symbol '{name}'."
    E105 = "Grammar array '{name}' has {found}; expected {expected}."
    E106 = "{kind} rule {rule} is invalid: {detail}"
    E107 = "{kind} rules must be sorted and unique by (parent, children); first offending rule: {rule}."
    E108 = "{kind} weight offsets are inconsistent with n_states: {detail}"
    E109 = (
        "Unary rules form a cycle: {cycle}. Unary rules must form a directed acyclic graph, "
        "so that unary chains can be summed exactly (collapse the chain into one label instead)."
    )
    E110 = "Grammar weights must be finite; {kind} rule {rule} has a non-finite weight."
    E111 = "Weight of {kind} rule {rule} has shape {found}; n_states gives {expected}."
    E112 = "Cannot compute expected sub-state counts: {detail}. Pass state_weights to project()."
    E113 = (
        "state_weights for symbol '{name}' must have {expected} non-negative entries with a "
        "positive sum; got {found}."
    )
    E114 = "Cannot load a grammar from {source}: {detail}"
    E115 = "{source} is not a spacy-lpcfg grammar: {detail}"
    E116 = (
        "Grammar format version {found} in {source} is newer than this version of spacy-lpcfg "
        "reads (up to {supported}). Upgrade spacy-lpcfg to load it, " + RETRAIN
    )
    E117 = "Invalid lexical scores: {detail}"
    E118 = "Invalid word vocabulary: {detail}"
    E119 = (
        "This lexicon has no emission weights: fit() computes them, and then they live in the "
        "grammar (a lexicon read with from_dict only maps words to vocabulary entries)."
    )
    E120 = "Cannot compute lexical scores: {detail}"
    E121 = "The lexicon is not fitted yet: call fit() or fit_counts(), or read a fitted one."
    E122 = "Invalid lexicon data: {detail}"
    E123 = "The lexicon does not match the grammar: {detail}"
    E124 = "Cannot load a parsing model from {source}: {detail}"
    E125 = (
        "Model format version {found} in {source} is newer than this version of spacy-lpcfg "
        "reads (up to {supported}). Upgrade spacy-lpcfg to load it, " + RETRAIN
    )
    E126 = (
        "Refusing to write a model to {path}: it exists and is not a spacy-lpcfg model "
        "directory. Choose a new or empty directory."
    )
    E127 = "Invalid parsing model: {detail}"
    E128 = (
        "{name} in {source} has the unknown format version {found} (this version of "
        "spacy-lpcfg reads 1 to {supported}): the file is damaged or was not written by "
        "spacy-lpcfg. Restore it, " + RETRAIN
    )
    E129 = "Invalid function labeller: {detail}"
    E130 = (
        "Cannot load the function labeller of {source}: {detail}. Retrain it with "
        "spacy-lpcfg train CORPUS MODEL_DIR --function-labeller, or remove the model's "
        "function_labeller files and its cfg.json entries 'function_labeller' and "
        "'function_labels' to parse without it."
    )
    E131 = (
        "Refusing to read '{name}' of {source}: it is a symbolic link or lies outside that "
        "directory. A model's files must be regular files inside its directory: replace the "
        "link by a copy of the file, or retrain the model."
    )
    E132 = (
        "Cannot combine models trained on different {what}: {first} and {other}. A model "
        "puts its treebank's labels on text of its language; the combination would mix "
        "them. Combine models of one treebank, or pass force=True (spacy-lpcfg combine "
        "--force) to combine them anyway."
    )
    E133 = "Symbol merging needs {detail}."
    # The chart engine (E201-E299)
    E201 = "Invalid pruning mask: {detail}"
    E202 = (
        "The coarse pass needs a one-state grammar (n_states == 1 for every symbol); "
        "use grammar.project() first."
    )
    E203 = "Span scores must be a float array of shape (n + 1, n + 1, n_labels) with n >= 1; got {shape}."
    E204 = "Forced spans {first} and {second} cross each other."
    E205 = "Invalid pruning setting {name}={value!r}: {expected}"
    # Decoders and parsers (E301-E399)
    E301 = "The {decoder} decoder found no parse; there is no tree to build (fall back first)."
    E302 = "Expected {expected} words, got {found}."
    E303 = "Unknown {name} '{value}'. Choose one of: {known}"
    E304 = "Chart posteriors are for {found} words, but the sentence has {expected}."
    E305 = "A product needs one {what} per grammar; got {found} for {expected} grammars."
    E306 = "The grammars of a product must parse the same sentence; got lengths {lengths}."
    E307 = (
        "The {decoder} decoder needs anchored rule posteriors: compute the chart posteriors "
        "with inside_outside(..., rule_posteriors=True)."
    )
    E308 = "A product needs at least one grammar."
    E309 = "Invalid span scores: {detail} (expected float (n+1, n+1, L) finite scores)."
    E310 = "The {decoder} decoder takes no span scores; use one of: {known}."
    E311 = (
        "k-best parsing needs one grammar with non-negative weights, decoded with "
        "viterbi, max_rule or variational; here {found}. Use Parser(model, "
        'decoder="viterbi") (or "max_rule", "variational") with a model without members '
        "(a spectral model's grammar has negative weights)."
    )
    # Estimators and recipes (E401-E499)
    E401 = (
        "This {name} instance is not fitted yet. Call 'fit' with appropriate arguments "
        "before using it."
    )
    E402 = "Invalid parameter '{name}' for estimator {estimator}. Valid parameters are: {valid}."
    E403 = (
        "Cannot clone {estimator}: its constructor does not store the parameter '{name}' "
        "unchanged (estimators must only store their arguments)."
    )
    E404 = "Cannot use {value!r} as a random state: use an int, None or a numpy Generator."
    E405 = (
        "Cannot resume split-merge training without a checkpoint folder: give the "
        "estimator checkpoint_dir=... (the command line keeps one beside MODEL_DIR)."
    )
    E406 = (
        "The split-merge checkpoint in {path} is damaged ({detail}). Remove that folder "
        "to train from the first cycle."
    )
    E407 = (
        "The split-merge checkpoint in {path} was written by another training run: "
        "{detail}. Resume with the same trees and parameters, or remove that folder "
        "(or train without resuming) to start again."
    )
    E408 = (
        "The split-merge checkpoint in {path} has format version {found}, newer than this "
        "version of spacy-lpcfg reads (up to {supported}). Upgrade spacy-lpcfg to resume "
        "from it, or remove that folder to train from the first cycle."
    )
    E409 = (
        "The split-merge checkpoint in {path} is at cycle {cycle}, beyond n_cycles="
        "{n_cycles}: resume with n_cycles >= {cycle}, or remove that folder to train anew."
    )
    E410 = (
        "Choosing the split-merge cycle on dev trees needs a dev_scorer: fit(trees, "
        "dev_trees, dev_scorer=lambda model, trees: spacy_lpcfg.evaluate("
        "spacy_lpcfg.decode.Parser(model), trees).fscore), or select_cycle_on_dev=False "
        "to train without dev trees. (The estimators do not import the parser.)"
    )
    E411 = "The dev_scorer returned {value!r} for cycle {cycle}: expected a finite number."
    E412 = (
        "Running on a Dask cluster needs dask.distributed, which is an optional extra: "
        "pip install 'spacy-lpcfg[dask]'."
    )
    # Unsupervised bracketers and plots (E501-E599)
    E501 = (
        "{path} has no split-merge training history to draw: {detail}. Give a model "
        "directory written by 'spacy-lpcfg train --estimator split_merge' (or inherit), or the "
        "checkpoint folder of such a training run in progress."
    )
    E502 = "Malformed split-merge training history ({source}): {detail}"
    E503 = "The split-merge training history ({source}) has no complete cycle to draw."
    E504 = (
        "{name} learns from POS-tagged sentences, but no training sentence has tags: give "
        "Trees or (word, tag) pairs (the treebank's tags; no trees are read)."
    )
    E505 = (
        "{name} found no word to learn from: the {count} training sentence(s) hold only "
        "punctuation (first: {excerpt})."
    )
    # The search and training (E601-E699)
    E601 = (
        "{path} is not a search trace of this version (its first line should name trace "
        "version {version}; an older trace scored its candidates otherwise): remove it to "
        "start the search again."
    )
    E602 = (
        "{path} is the trace of another search (other training or dev trees, or other "
        "settings): cannot resume from it. Remove it, or start the search with the "
        "settings that wrote it."
    )
    E603 = "{path}, line {line}: not a scored candidate (a damaged trace)."
    E604 = "The state search scores candidates on dev trees: give fit() at least one dev tree."
    E605 = "Nothing to optimize: the transforms tried must be a non-empty list, got {value!r}."
    E606 = "Cannot reach the Dask scheduler at {address}: {error}"
    # The spaCy components (E701-E799)
    E701 = (
        "The '{name}' component has no grammar. Train it with nlp.initialize() (spacy train "
        "or spacy assemble), load a pipeline that contains it, or set its 'model' setting to a "
        "model directory."
    )
    E702 = (
        "Doc has no sentence boundaries and '{name}' has missing_sentences='error'. Add a "
        "component that sets them before it ('sentencizer', 'senter' or 'parser'), or set "
        "missing_sentences='doc' to parse each Doc as one sentence."
    )
    E703 = (
        "No training trees for '{name}': no reference doc has constituents in "
        "doc.spans['{key}'] (with POS tags in token.tag_). Train from .spacy files written by "
        "'spacy-lpcfg convert', or, for 'spacy assemble', name a treebank with "
        '[initialize.components.{name}] treebank = "ptb_sample" (a corpus or a treebank file).'
    )
    E704 = "Constituents {first} and {second} in doc.spans['{key}'] cross each other: not a tree."
    E705 = (
        "Token {index} ({text!r}) has no POS tag (token.tag_); training trees need a tag on "
        "every word."
    )
    E706 = "Constituent {span} in doc.spans['{key}'] crosses a sentence boundary."
    E707 = (
        "Training docs use different label schemes ({schemes}); train on one treebank "
        "notation at a time."
    )
    E708 = (
        "The estimator {estimator} has no 'transform' parameter, so the component's "
        "transforms cannot be applied. Estimators used by the component follow the "
        "spacy_lpcfg estimator contract (see spacy_lpcfg.estimators)."
    )
    E709 = "The estimator {value!r} has no fit/get_params/set_params; use a registered estimator."
    E710 = (
        "'{path}' is a .spacy file: read it with the 'spacy.Corpus.v1' reader; "
        "'spacy_lpcfg.TreebankCorpus.v1' reads treebanks (a corpus name or bracketed files)."
    )
    E711 = (
        "The 'model' setting of '{name}' is '{path}', which does not exist. Point it at a "
        "model directory, or make one there with: spacy-lpcfg train CORPUS {path} (CORPUS: "
        "ptb_sample, another corpus name or a treebank file). Or leave 'model' unset and fit "
        "the grammar with nlp.initialize() (spacy train)."
    )
    E712 = (
        "The 'model' setting of '{name}' is '{path}', which is not a model directory "
        "({detail}). A model directory holds cfg.json, transforms.json, lexicon.json and the "
        "grammar files, as written by: spacy-lpcfg train CORPUS MODEL_DIR.{hint}"
    )
    E713 = (
        "Invalid prune_threshold {value!r} for '{name}': the coarse-to-fine passes drop the "
        "chart items whose posterior is at most this, so it is a number with 0 <= t < 1 (0 "
        "keeps every item with a non-zero posterior; null: the parser's default, {default})."
    )
    E714 = (
        "Invalid function_labeller {value} for '{name}': use true (fit a function labeller "
        "in initialize), false, or a block [components.{name}.function_labeller] with "
        '@misc = "spacy_lpcfg.FunctionLabeller.v1".'
    )
    E715 = (
        "'{name}' reads its grammar from the model directory '{path}', so it cannot fit a "
        "function labeller (function_labeller): train the model with one (spacy-lpcfg train "
        "CORPUS MODEL_DIR --function-labeller), or leave 'model' unset to fit both in "
        "initialize."
    )
    E716 = (
        "'{name}' got a dev_corpus, but its estimator {estimator} does not choose on dev "
        "trees (split-merge estimators do): remove dev_corpus from "
        "[initialize.components.{name}]."
    )
    E717 = "'{name}' needs the pipeline (nlp) to read its dev_corpus in initialize."
    E718 = (
        "The '{name}' component of a saved pipeline has no model copy: its folder '{folder}' "
        "lacks '{copy}'. A saved pipeline parses with its own copy only, never with the "
        "'model' path it was trained with. Restore the pipeline folder (or reinstall its "
        "package), or train the component (nlp.initialize()) and save the pipeline again."
    )
    E719 = "No span group '{key}' on this Doc to draw; its span groups: {known}."


class Warnings(metaclass=_CodedMessages):
    # Decoders and parsers (W301-W399)
    W301 = (
        "{count} token(s) had a POS tag that the grammar does not know, and were parsed as if "
        "untagged: {examples}. The grammar's {n_known} tags are those of its training "
        "treebank.{scope}"
    )
    # The spaCy components (W701-W799)
    W701 = (
        "Span._.{name} or Token._.{name} is already registered by another package (benepar?); "
        "spacy_lpcfg leaves it alone: its own parse is Span._.lpcfg_{name} (and doc.spans)."
    )
    W702 = (
        "'{name}' parses with a model of language '{model}', but the pipeline's language is "
        "'{lang}': the grammar and lexicon were trained on another language's treebank, so "
        "the parses will be poor. Use a model trained on '{lang}' text, or a '{model}' "
        "pipeline (spacy.blank('{model}'), or 'xx' for several languages)."
    )
    W703 = (
        "'{name}' is scored again with the same grammar: it is fitted in closed form when "
        "the pipeline is initialised, and spacy train's steps change nothing. Set [training] "
        "max_steps = 1 and max_epochs = 1 (as the configs of projects/ do; spacy init "
        "fill-config writes max_steps = 20000): one step, one evaluation."
    )


class NonConstituentException(Exception):
    """A span that is not a constituent of the parse (the name benepar uses)."""


class NotParsedError(ValueError):
    """A Doc without constituents written by spacy_lpcfg (no parser ran on it)."""


class TreebankFormatError(ValueError):
    """Malformed treebank input (or an unreadable input file), with the file, line and,
    when known, the 1-based column (in characters) where it was found."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
    ):
        self.path = None if path is None else str(path)
        self.line = line
        self.column = column
        self.detail = message
        where = [] if self.path is None else [self.path]
        if line is not None:
            where.append(f"line {line}")
            if column is not None:
                where.append(f"column {column}")
        super().__init__(", ".join(where) + ": " + message if where else message)

    def __reduce__(self):  # keep the keyword arguments when copied across processes
        return (_rebuild_format_error, (self.detail, self.path, self.line, self.column))


def _rebuild_format_error(detail, path, line, column=None):
    return TreebankFormatError(detail, path=path, line=line, column=column)


def excerpt(text: str, limit: int = 60, *, at: int | None = None) -> str:
    """``text`` quoted for an error message, at most ``limit`` characters of it.

    Longer text is cut with an ellipsis, so a message never echoes a whole line
    or file; ``at`` (a character offset) keeps the text around that position.
    The quoting (``repr``) shows control characters and newlines escaped.
    """
    if len(text) <= limit:
        return repr(text)
    start = 0 if at is None else min(max(0, at - limit // 3), len(text) - limit)
    cut = text[start : start + limit]
    return repr(("…" if start else "") + cut + ("…" if start + limit < len(text) else ""))


class TransformError(ValueError):
    """A tree cannot be transformed or inverted (reserved characters, malformed input)."""


class DataNotFoundError(FileNotFoundError):
    """The treebank data directory or a corpus in it is missing."""


class GrammarError(ValueError):
    """An invalid grammar, or a grammar file that cannot be loaded."""
