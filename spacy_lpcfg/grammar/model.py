"""A trained parser on disk: grammar, lexicon, transforms and configuration.

A model directory holds::

    cfg.json          format and version, estimator name and parameters, training
                      facts (tree counts, the treebank), language, label scheme,
                      sizes (checked on load)
    transforms.json   the TransformSpec of the trees the grammar is over
    lexicon.json      known words and unknown-word classes (Lexicon.to_dict)
    grammar.json  symbols.json  words.json  grammar.npz    the grammar (LPCFG.to_disk)
    grammars/0/ ...   optional extra grammars over the same vocabulary (coarse
                      grammars for pruning, members of an ensemble), same four files
    spectrum.json  spectrum.npz    optional: the singular values of the latent
                      estimators' SVDs (``Spectrum``; one for a whole ensemble)
    members/0/ ...    optional (format version 2): more parsing models, each a
                      model directory of its own (own transforms, lexicon and
                      grammars), decoded together with this one (``combine_models``)
    function_labeller.json  function_labeller.npz    optional: a function labeller
                      (``function_labels.FunctionTagger``) that puts function tags on
                      the parses; cfg.json then says whose tags win
                      (``function_labels``) and its sizes (``function_labeller``)

``to_disk`` writes into a temporary directory beside the target and renames it
into place (``storage``), so an interrupted save leaves no half-written model.
``from_disk`` reads regular files inside the directory only, never through a
symbolic link.
``to_bytes`` packs the same files into one zip archive. Nothing is pickled.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import defaults
from ..about import __version__
from ..errors import Errors, GrammarError
from ..trees.transforms import TransformPipeline, TransformSpec
from .function_labels import FILES as LABELLER_FILES
from .function_labels import FunctionTagger
from .lexical_scores import LexicalScores
from .lexicon import Lexicon
from .lpcfg import LPCFG
from .serialization import MEMBERS as GRAMMAR_FILES
from .serialization import (
    FileData,
    _npy_bytes,
    check_version,
    decode_members,
    excerpt,
    member_path,
    pack_zip,
    read_file,
    read_json,
    read_npz,
    shorten,
    unpack_zip,
)
from .storage import write_directory

MODEL_FORMAT = "spacy-lpcfg model"
MODEL_VERSION = 2  # written only by models with members; version 1 otherwise
MEMBERS_DIR = "members"
MAX_MEMBERS = 64  # combinations are of a few models; more is a crafted cfg.json
CFG, TRANSFORMS, LEXICON = "cfg.json", "transforms.json", "lexicon.json"
EXTRA_GRAMMARS = "grammars"
SPECTRUM_INDEX, SPECTRUM_ARRAYS = "spectrum.json", "spectrum.npz"
SPECTRUM_FORMAT = "spacy-lpcfg spectrum"
SPECTRUM_VERSION = 1
# Keys of ``training`` that index ``extra_grammars``: where cfg.json keeps the roles of
# the extra grammars (``ParsingModel.coarse_grammar`` and ``.ensemble``). Models of every
# version store them so; estimators may still pass them instead of the fields.
COARSE_GRAMMAR = "coarse_grammar"  # the one-state grammar to prune with
ENSEMBLE = "ensemble"  # the grammars decoded jointly with the grammar
# Key of ``training``: the corpus or treebank file the model was trained on
# (``treebank_name``), so that ``combine_models`` can tell models of other treebanks
# with one label scheme apart (PTB and IcePaHC are both "penn"). Older models lack it.
TREEBANK = "treebank"
MAX_JSON_BYTES = 1 << 30  # a model's JSON files are megabytes; refuse to read gigabytes


class Spectrum:
    """The singular values of every symbol's cross-covariance SVD (latent estimators),
    kept with the model to choose numbers of states and to plot (``plots.py``).

    values (Mapping[str, np.ndarray]): symbol name -> float64[k], the singular values.
    counts (Mapping[str, int] | None): symbol name -> its nodes in the training
        trees, for the symbols of ``values``; None when not known.
    RAISES GrammarError: the values or counts are malformed.
    """

    def __init__(self, values: Mapping[str, np.ndarray], counts: Mapping[str, int] | None = None):
        self.values = {str(name): np.asarray(array) for name, array in values.items()}
        self.counts = None if counts is None else {str(k): int(v) for k, v in counts.items()}
        for name, array in self.values.items():
            if array.dtype != np.float64 or array.ndim != 1:
                detail = (
                    f"the spectrum of '{name}' is {array.dtype}{list(array.shape)}, not float64[k]"
                )
                raise GrammarError(Errors.E127.format(detail=detail))
            if not (np.isfinite(array).all() and (array >= 0).all()):
                detail = f"the spectrum of '{name}' has negative or non-finite values"
                raise GrammarError(Errors.E127.format(detail=detail))
        if self.counts is not None and (
            set(self.counts) != set(self.values) or min(self.counts.values(), default=0) < 0
        ):
            detail = "spectrum counts must be node counts (>= 0) of the spectrum's symbols"
            raise GrammarError(Errors.E127.format(detail=detail))

    def __len__(self) -> int:
        return len(self.values)

    def to_members(self) -> dict[str, bytes]:
        """The two files: the symbol names (JSON) and the values as arrays + offsets."""
        names = list(self.values)
        sizes = [len(self.values[name]) for name in names]
        arrays = {
            "values": np.concatenate([self.values[n] for n in names] or [np.zeros(0)]),
            "offsets": np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64),
        }
        if self.counts is not None:
            arrays["counts"] = np.array([self.counts[n] for n in names], dtype=np.int64)
        index = {"format": SPECTRUM_FORMAT, "format_version": SPECTRUM_VERSION, "symbols": names}
        npy = {f"{key}.npy": _npy_bytes(array) for key, array in arrays.items()}
        return {SPECTRUM_INDEX: _json_bytes(index), SPECTRUM_ARRAYS: pack_zip(npy)}

    @classmethod
    def from_members(cls, members: Mapping[str, bytes], source: str | Path) -> Spectrum:
        """Read ``to_members`` output. RAISES GrammarError (E124) naming the bad file."""

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E124.format(source=source, detail=detail))

        missing = [name for name in (SPECTRUM_INDEX, SPECTRUM_ARRAYS) if name not in members]
        if missing:
            raise fail(f"missing {', '.join(missing)}")
        index = read_json(members[SPECTRUM_INDEX], SPECTRUM_INDEX, fail)
        if not isinstance(index, dict) or index.get("format") != SPECTRUM_FORMAT:
            raise fail(f"{SPECTRUM_INDEX} is not the index of a spectrum")
        check_version(
            index.get("format_version"), SPECTRUM_INDEX, SPECTRUM_VERSION, source, newer_code="E125"
        )
        names = index.get("symbols")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise fail(f"{SPECTRUM_INDEX}: 'symbols' must be a list of names, not {excerpt(names)}")
        if len(set(names)) != len(names):
            raise fail(f"{SPECTRUM_INDEX} lists a symbol twice")
        specs = {
            "values": ("float64", (None,)),
            "offsets": ("int64", (len(names) + 1,)),
            "counts": ("int64", (len(names),)),
        }
        arrays = read_npz(members[SPECTRUM_ARRAYS], SPECTRUM_ARRAYS, specs, fail, ("counts",))
        values, offsets = arrays["values"], arrays["offsets"]
        counts = arrays.get("counts")
        if not (offsets[0] == 0 and offsets[-1] == len(values) and (np.diff(offsets) >= 0).all()):
            raise fail(
                f"{SPECTRUM_ARRAYS}: offsets do not split the values into {len(names)} symbols"
            )
        try:
            return cls(
                {name: values[lo:hi] for name, lo, hi in zip(names, offsets[:-1], offsets[1:])},
                None if counts is None else dict(zip(names, counts.tolist())),
            )
        except GrammarError as exc:
            raise fail(shorten(str(exc))) from None

    def __repr__(self) -> str:
        return f"Spectrum({len(self)} symbols)"


class ParsingModel:
    """Everything a parser needs, saved and loaded as one directory.

    grammar (LPCFG): the grammar; its vocabulary is the lexicon's entries.
    lexicon (Lexicon): a fitted lexicon.
    transform (TransformSpec): the transforms the grammar's trees went through.
    estimator (str): name of the estimator that made the grammar. Defaults to "".
    params (Mapping | None): its parameters, JSON-serialisable.
    training (Mapping | None): facts about the training data (JSON), e.g. tree counts;
        its "coarse_grammar" and "ensemble" entries index ``extra_grammars`` (the
        fields below, as cfg.json stores them).
    extra_grammars (Sequence[LPCFG]): more grammars over the same vocabulary, saved
        under grammars/<i>/.
    coarse_grammar (LPCFG | None): a grammar with one state per symbol and the
        grammar's symbols to prune with (signed, spectral grammars cannot be
        projected); None: the parser projects the grammar. Stored among
        ``extra_grammars``.
    ensemble (Sequence[LPCFG]): more grammars over the grammar's symbols, decoded
        jointly with it (noisy copies, split-merge seeds); stored among
        ``extra_grammars``.
    spectrum (Spectrum | None): the singular values of a latent estimator's SVDs;
        None for grammars without (MLE).
    members (Sequence[ParsingModel]): more models decoded with this one, each with its
        own grammars, lexicon and transforms (another binarisation, function tags
        stripped...) over the same label scheme; members have no members themselves.
        ``combine_models`` builds such a model.
    decoder (str | None): how a model with members combines them by default, or the
        decoder of an ensemble (a name of ``decode.registry``; older names are kept
        as saved); None: the parser's default.
    labeller (FunctionTagger | None): puts function tags on the parses (over the
        model's label scheme); members have none of their own.
    function_labels (str): whose function tags the parses get when the grammar keeps
        function tags and a labeller is attached: "grammar" (the labeller then labels
        only grammars that strip them), "labeller" or "auto" (the grammar's when a
        latent grammar keeps them, else the labeller's). Defaults to
        ``defaults.FUNCTION_LABELS``; saved with a labeller only.
    RAISES GrammarError: the parts do not fit together.
    """

    def __init__(
        self,
        grammar: LPCFG,
        lexicon: Lexicon,
        transform: TransformSpec,
        *,
        estimator: str = "",
        params: Mapping[str, Any] | None = None,
        training: Mapping[str, Any] | None = None,
        extra_grammars: Sequence[LPCFG] = (),
        coarse_grammar: LPCFG | None = None,
        ensemble: Sequence[LPCFG] = (),
        spectrum: Spectrum | None = None,
        members: Sequence[ParsingModel] = (),
        decoder: str | None = None,
        labeller: FunctionTagger | None = None,
        function_labels: str = defaults.FUNCTION_LABELS,
    ):
        self.grammar = grammar
        self.lexicon = lexicon
        self.transform = transform
        self.estimator = estimator
        self.params = dict(params or {})
        self.training, self.extra_grammars = _stored_roles(
            dict(training or {}), tuple(extra_grammars), coarse_grammar, tuple(ensemble)
        )
        self.spectrum = spectrum
        self.members = tuple(members)
        self.decoder = decoder
        self.labeller = labeller
        self.function_labels = function_labels
        try:
            lexicon.check(grammar)
        except ValueError as exc:
            raise GrammarError(Errors.E127.format(detail=str(exc))) from None
        for i, extra in enumerate(self.extra_grammars):
            if extra.words != grammar.words:
                detail = f"extra grammar {i} has another vocabulary than the grammar"
                raise GrammarError(Errors.E127.format(detail=detail))
        try:
            json.dumps([self.params, self.training])
        except (TypeError, ValueError, RecursionError) as exc:
            detail = f"params and training must be JSON-serialisable ({shorten(str(exc), 120)})"
            raise GrammarError(Errors.E127.format(detail=detail)) from None
        if not isinstance(self.training.get(TREEBANK, ""), str):
            detail = (
                f"training '{TREEBANK}' must name a corpus or treebank file, not "
                f"{excerpt(self.training[TREEBANK])}"
            )
            raise GrammarError(Errors.E127.format(detail=detail))
        unknown = [n for n in (spectrum.values if spectrum else ()) if n not in grammar.symbols]
        if unknown:
            detail = f"the spectrum has symbols the grammar lacks: {excerpt(unknown)}"
            raise GrammarError(Errors.E127.format(detail=detail))
        self._check_linked_grammars()
        self._check_members()
        self._check_labeller()

    def _check_labeller(self) -> None:
        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E127.format(detail=detail))

        if self.function_labels not in defaults.FUNCTION_LABEL_SOURCES:
            choices = " or ".join(map(repr, defaults.FUNCTION_LABEL_SOURCES))
            raise fail(f"function_labels must be {choices}, not {excerpt(self.function_labels)}")
        if self.labeller is None:
            return
        if not isinstance(self.labeller, FunctionTagger):
            raise fail(f"the labeller must be a FunctionTagger, not {type(self.labeller).__name__}")
        if self.labeller.scheme != self.label_scheme:
            raise fail(
                f"the function labeller uses the label scheme {self.labeller.scheme!r}, "
                f"the model {self.label_scheme!r}"
            )

    def _check_members(self) -> None:
        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E127.format(detail=detail))

        if len(self.members) > MAX_MEMBERS:
            raise fail(f"{len(self.members)} members, more than {MAX_MEMBERS}")
        for i, member in enumerate(self.members):
            if not isinstance(member, ParsingModel) or member.members or member.labeller:
                raise fail(
                    f"member {i} must be a ParsingModel without members or function "
                    "labeller of its own"
                )
            if member.label_scheme != self.label_scheme:
                raise fail(
                    f"member {i} uses the label scheme {member.label_scheme!r}, "
                    f"the model {self.label_scheme!r}"
                )
        if self.decoder is not None and not (self.members or self.ensemble):
            raise fail("a decoder is stored with members or an ensemble only")
        if self.members and self.decoder is None:
            raise fail("a model with members needs the decoder that combines them")

    @property
    def parts(self) -> tuple[ParsingModel, ...]:
        """The models decoded together: this one (without its members), then its
        members; none with the function labeller, which labels their combined parse."""
        if not self.members:
            return (self if self.labeller is None else self.with_function_labeller(None),)
        return (self._replace(members=(), decoder=None, labeller=None), *self.members)

    def with_members(self, members: Sequence[ParsingModel], decoder: str | None) -> ParsingModel:
        """This model (its arrays shared, not copied) with other members and decoder."""
        return self._replace(members=members, decoder=decoder)

    @property
    def treebank(self) -> str | None:
        """The corpus or treebank file the model was trained on; None: not recorded."""
        return self.training.get(TREEBANK)

    def with_treebank(self, name: str) -> ParsingModel:
        """This model (its arrays shared, not copied), and its members, recording the
        treebank they were trained on (``treebank_name`` of the corpus or path)."""
        return self._replace(
            training={**self.training, TREEBANK: name},
            members=[member.with_treebank(name) for member in self.members],
        )

    def with_function_labeller(
        self, labeller: FunctionTagger | None, function_labels: str | None = None
    ) -> ParsingModel:
        """This model (its arrays shared, not copied) with another function labeller
        (None: without one; ``estimators.attach_function_labeller`` fits one).

        function_labels (str | None): "grammar" or "labeller" (see the class); None:
            the model's.
        """
        return self._replace(
            labeller=labeller,
            function_labels=self.function_labels if function_labels is None else function_labels,
        )

    def _replace(self, **changes: Any) -> ParsingModel:
        current = {
            "estimator": self.estimator,
            "params": self.params,
            "training": self.training,
            "extra_grammars": self.extra_grammars,
            "spectrum": self.spectrum,
            "members": self.members,
            "decoder": self.decoder,
            "labeller": self.labeller,
            "function_labels": self.function_labels,
        }
        return ParsingModel(self.grammar, self.lexicon, self.transform, **{**current, **changes})

    @property
    def keeps_functions(self) -> bool:
        """Whether the parses have the grammar's function tags (a part keeps them)."""
        return any(part.transform.keep_functions for part in (self, *self.members))

    @property
    def active_labeller(self) -> FunctionTagger | None:
        """The labeller whose tags the parses get: the model's, unless its grammar keeps
        function tags and ``function_labels`` says the grammar's ("grammar", or "auto"
        and a latent grammar keeps them: ``defaults.FUNCTION_LABELS``)."""
        keepers = [part for part in (self, *self.members) if part.transform.keep_functions]
        if keepers and (
            self.function_labels == "grammar"
            or (self.function_labels == "auto" and any(part._latent for part in keepers))
        ):
            return None
        return self.labeller

    @property
    def _latent(self) -> bool:
        """Whether a grammar this model decodes (its own or its ensemble's) has latent
        states."""
        return any(grammar.max_states > 1 for grammar in (self.grammar, *self.ensemble))

    def _check_linked_grammars(self) -> None:
        """The extra grammars that ``training`` names must be what the parser expects:
        a one-state coarse grammar and ensemble grammars, over the grammar's symbols.
        Sets the fields ``coarse_grammar`` and ``ensemble`` from them."""

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E127.format(detail=detail))

        n_extra = len(self.extra_grammars)
        coarse = self.training.get(COARSE_GRAMMAR)
        if coarse is not None:
            if not _is_index(coarse, n_extra):
                raise fail(
                    f"training '{COARSE_GRAMMAR}' must index one of the {n_extra} extra "
                    f"grammars, not {excerpt(coarse)}"
                )
            grammar = self.extra_grammars[coarse]
            if grammar.symbols != self.grammar.symbols or grammar.max_states != 1:
                raise fail(
                    f"the coarse grammar (extra grammar {coarse}) must have one state per "
                    "symbol and the grammar's symbols"
                )
        indices = self.training.get(ENSEMBLE)
        if indices is not None:
            if not (
                isinstance(indices, list)
                and all(_is_index(index, n_extra) for index in indices)
                and len(set(indices)) == len(indices)
            ):
                raise fail(
                    f"training '{ENSEMBLE}' must list distinct indices of the {n_extra} extra "
                    f"grammars, not {excerpt(indices)}"
                )
            for index in indices:
                if self.extra_grammars[index].symbols != self.grammar.symbols:
                    raise fail(f"ensemble grammar {index} has other symbols than the grammar")
        self.coarse_grammar: LPCFG | None = None if coarse is None else self.extra_grammars[coarse]
        self.ensemble = tuple(self.extra_grammars[index] for index in indices or ())

    @property
    def language(self) -> str:
        return self.lexicon.language

    @property
    def label_scheme(self) -> str:
        return self.transform.scheme

    @property
    def pipeline(self) -> TransformPipeline:
        """The transforms, to invert parses into treebank labels."""
        return TransformPipeline(self.transform)

    def lexical_scores(
        self,
        words: Sequence[str],
        tags: Sequence[str | None] | None = None,
        use_tags: str = "auto",
    ) -> LexicalScores:
        """``Lexicon.lexical_scores`` under the model's grammar."""
        return self.lexicon.lexical_scores(self.grammar, words, tags, use_tags)

    # Serialisation -------------------------------------------------------------

    @property
    def cfg(self) -> dict[str, Any]:
        """The content of cfg.json."""
        return {
            "format": MODEL_FORMAT,
            "format_version": MODEL_VERSION if self.members else 1,
            "spacy_lpcfg_version": __version__,
            "estimator": {"name": self.estimator, "params": self.params},
            "training": self.training,
            "language": self.language,
            "label_scheme": self.label_scheme,
            "grammar": _sizes(self.grammar),
            "extra_grammars": [
                {"path": _extra_dir(i), **_sizes(extra)}
                for i, extra in enumerate(self.extra_grammars)
            ],
            **({} if self.spectrum is None else {"spectrum": {"symbols": len(self.spectrum)}}),
            **(
                {}
                if not self.members
                else {"members": [{"path": _member_dir(i)} for i in range(len(self.members))]}
            ),
            **({} if self.decoder is None else {"decoder": self.decoder}),
            **(
                {}
                if self.labeller is None
                else {
                    "function_labeller": self.labeller.sizes,
                    "function_labels": self.function_labels,
                }
            ),
        }

    def _members(self) -> dict[str, bytes]:
        """File path (relative, '/'-separated) -> content."""
        groups = self._member_groups()
        return {name: bytes(data) for group in groups for name, data in group.items()}

    def _member_groups(self) -> Iterator[Mapping[str, FileData]]:
        """The files of ``_members`` (in its order), encoded one group at a time: the
        settings, each grammar, the spectrum (``to_disk`` writes and counts them so)."""
        yield {
            CFG: _json_bytes(self.cfg),
            TRANSFORMS: _json_bytes(self.transform.to_dict()),
            LEXICON: _json_bytes(self.lexicon.to_dict()),
        }
        yield self.grammar.to_files()
        for i, extra in enumerate(self.extra_grammars):
            files = extra.to_files()
            yield {f"{_extra_dir(i)}/{name}": data for name, data in files.items()}
        if self.spectrum is not None:
            yield self.spectrum.to_members()
        if self.labeller is not None:
            yield self.labeller.to_members()
        for i, member in enumerate(self.members):
            for group in member._member_groups():
                yield {f"{_member_dir(i)}/{name}": data for name, data in group.items()}

    def _n_groups(self) -> int:
        return (
            2 + len(self.extra_grammars) + (self.spectrum is not None) + (self.labeller is not None)
        )

    def to_bytes(self) -> bytes:
        """The model files as one zip archive (byte-identical for equal models)."""
        return pack_zip(self._members())

    @classmethod
    def from_bytes(cls, data: bytes) -> ParsingModel:
        """Read ``to_bytes`` output. RAISES GrammarError: corrupt or newer data."""

        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E124.format(source="bytes", detail=detail))

        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise fail(f"expected the bytes of to_bytes(), not {type(data).__name__}")
        members = unpack_zip(bytes(data), "bytes", fail)
        return cls._from_members(members, "bytes")

    def to_disk(self, path: str | Path) -> None:
        """Write the model directory atomically (``storage.write_directory``: a temporary
        directory, then a rename).

        An existing model directory (or an empty directory) at `path` is replaced;
        interrupted, the write leaves it as it was. Stale temporary directories of
        killed writes beside it are cleared first. A "writing" progress bar shows on a
        terminal (``spacy_lpcfg.progress``).
        RAISES GrammarError: `path` is a file or a non-empty directory that is not a model.
        """
        n_groups = self._n_groups() + sum(member._n_groups() for member in self.members)
        write_directory(Path(path), self._member_groups(), n_groups, check=check_replaceable)

    @classmethod
    def from_disk(cls, path: str | Path) -> ParsingModel:
        """Read a model directory. RAISES GrammarError naming the missing or bad file."""
        path = Path(path)
        if not path.is_dir():
            raise GrammarError(Errors.E124.format(source=path, detail="not a directory"))
        members = {name: _read_file(path, name) for name in _file_names(path, "")}
        return cls._from_members(members, str(path))

    @classmethod
    def _from_members(
        cls, members: Mapping[str, bytes], source: str, *, nested: bool = False
    ) -> ParsingModel:
        def fail(detail: str) -> GrammarError:
            return GrammarError(Errors.E124.format(source=source, detail=detail))

        missing = [name for name in (CFG, TRANSFORMS, LEXICON) if name not in members]
        if missing:
            raise fail(f"missing {', '.join(missing)}")
        cfg = _read_cfg(members[CFG], source)
        if nested and cfg["members"]:
            raise fail("a member of a model cannot have members of its own")
        parts = []
        for i in range(len(cfg["members"])):
            prefix = _member_dir(i) + "/"
            own = {k[len(prefix) :]: v for k, v in members.items() if k.startswith(prefix)}
            parts.append(cls._from_members(own, f"{source}/{_member_dir(i)}", nested=True))
        settings = read_json(members[TRANSFORMS], TRANSFORMS, fail)
        if not isinstance(settings, dict):
            raise fail(
                f"{TRANSFORMS} must be an object of transform settings, not {excerpt(settings)}"
            )
        try:
            transform = TransformSpec.from_dict(settings)
        except (ValueError, TypeError) as exc:
            raise fail(f"{TRANSFORMS}: {shorten(str(exc))}") from None
        try:
            lexicon = Lexicon.from_dict(read_json(members[LEXICON], LEXICON, fail))
        except GrammarError:
            raise
        except (ValueError, TypeError) as exc:
            raise fail(f"{LEXICON}: {shorten(str(exc))}") from None
        grammar = _read_grammar(members, "", cfg["grammar"], source)
        extras = [
            _read_grammar(members, _extra_dir(i) + "/", sizes, source)
            for i, sizes in enumerate(cfg["extra_grammars"])
        ]
        if len(lexicon.entries) != len(grammar.words):
            raise fail(
                f"{LEXICON} has {len(lexicon.entries)} vocabulary entries, "
                f"words.json has {len(grammar.words)} words"
            )
        for key, found in (("language", lexicon.language), ("label_scheme", transform.scheme)):
            if cfg.get(key, found) != found:
                raise fail(
                    f"{CFG} says {key} {excerpt(cfg[key])}, the model files say {excerpt(found)}"
                )
        spectrum = _read_spectrum(members, cfg, source)
        labeller = _read_labeller(members, cfg, source)
        estimator = cfg.get("estimator", {})
        try:
            return cls(
                grammar,
                lexicon,
                transform,
                estimator=estimator.get("name", ""),
                params=estimator.get("params", {}),
                training=cfg.get("training", {}),
                extra_grammars=extras,
                spectrum=spectrum,
                members=parts,
                decoder=cfg.get("decoder"),
                labeller=labeller,
                function_labels=cfg.get("function_labels", defaults.FUNCTION_LABELS),
            )
        except GrammarError as exc:
            raise fail(shorten(str(exc))) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParsingModel):
            return NotImplemented
        return self._members() == other._members()

    __hash__ = None  # type: ignore[assignment]  # equality compares contents

    def __repr__(self) -> str:
        extra = f", {len(self.extra_grammars)} extra grammars" if self.extra_grammars else ""
        extra += f", {len(self.members)} members" if self.members else ""
        extra += f", function labeller ({self.function_labels})" if self.labeller else ""
        return f"ParsingModel({self.estimator or 'unknown estimator'}, {self.grammar!r}{extra})"


def combine_models(
    models: Sequence[ParsingModel], decoder: str | None = None, *, force: bool = False
) -> ParsingModel:
    """One model that decodes ``models`` together: the first with the others (and their
    members, flattened) as its members. The models may differ in binarisation, Markov
    orders, function tags kept or stripped, estimator and lexicon; they must share the
    label scheme, the language and the treebank (where both models record it: older
    models do not).

    Models over the same grammar structure (same transforms, symbols, rules and
    vocabulary: EM grammars from other seeds, noisy clustering models) become one
    ensemble instead, pruned once per sentence and decoded as a product of grammars
    (Petrov 2010): ``product_mbr`` (mean marginals; the default, and for "mbr") or
    ``product`` (max-rule product over the shared rules; for "product"), unless the
    decoder is "dual".

    The function labeller of the first model that has one (and its ``function_labels``
    setting) labels the combined parses.

    decoder (str | None): how the parses are combined, a decoder for models with
        members (``decode.registry``: "members_product", "members_mbr", "dual", or
        "product" and "mbr" for the first two); stored as given. Defaults to
        ``defaults.MEMBER_DECODER``.
    force (bool): combine models of other languages or treebanks too (same label
        scheme still).
    RAISES GrammarError: fewer than two models, models of other languages or
        treebanks (E132, unless ``force``), or models that do not fit together.
    """
    parts = [part for model in models for part in model.parts]
    if len(parts) < 2:
        detail = "combining needs at least two models"
        raise GrammarError(Errors.E127.format(detail=detail))
    if not force:
        _check_same_treebank(parts)
    if decoder != "dual" and _same_structure(parts):
        product = decoder in ("product", "members_product")  # the others: mean marginals
        combined = _ensemble(parts, "product" if product else "product_mbr")
    else:
        combined = parts[0].with_members(parts[1:], decoder or defaults.MEMBER_DECODER)
    labelled = next((model for model in models if model.labeller is not None), None)
    if labelled is None:
        return combined
    return combined.with_function_labeller(labelled.labeller, labelled.function_labels)


def _check_same_treebank(models: Sequence[ParsingModel]) -> None:
    """RAISES GrammarError (E132): models of other languages, or of other treebanks
    where both record theirs (for older models only the language tells)."""

    def fail(what: str, first: str, other: str) -> GrammarError:
        return GrammarError(
            Errors.E132.format(what=what, first=excerpt(first), other=excerpt(other))
        )

    first = models[0]
    for model in models[1:]:
        if model.language != first.language:
            raise fail("languages", first.language, model.language)
    named = [model.treebank for model in models if model.treebank is not None]
    for name in named[1:]:
        if name != named[0]:
            raise fail("treebanks", named[0], name)


def treebank_name(source: str | Path) -> str:
    """What a model records of the treebank it was trained on (``TREEBANK``): a corpus
    name as it is, a treebank file's or folder's name (its whole path would say nothing
    on another machine, and would show where the user keeps their files)."""
    return Path(os.path.abspath(source)).name


def _same_structure(models: Sequence[ParsingModel]) -> bool:
    """Whether the models' grammars can be decoded as one product: same transforms,
    vocabulary, symbols, and binary and unary rules."""
    first = models[0]
    return all(
        model.transform == first.transform
        and model.lexicon.to_dict() == first.lexicon.to_dict()
        and model.grammar.words == first.grammar.words
        and model.grammar.symbols == first.grammar.symbols
        and np.array_equal(model.grammar.binary_rules, first.grammar.binary_rules)
        and np.array_equal(model.grammar.unary_rules, first.grammar.unary_rules)
        for model in models[1:]
    )


def _ensemble(models: Sequence[ParsingModel], decoder: str) -> ParsingModel:
    """One model whose grammar and ensemble are every grammar of ``models`` (their own
    ensembles' too), pruned with the first model's coarse grammar."""
    first = models[0]
    grammars = [grammar for model in models for grammar in (model.grammar, *model.ensemble)]
    training = {k: v for k, v in first.training.items() if k not in (ENSEMBLE, COARSE_GRAMMAR)}
    return ParsingModel(
        grammars[0],
        first.lexicon,
        first.transform,
        estimator=first.estimator,
        params=first.params,
        training=training,
        coarse_grammar=first.coarse_grammar,
        ensemble=grammars[1:],
        decoder=decoder,
    )


def _stored_roles(
    training: dict[str, Any],
    extras: tuple[LPCFG, ...],
    coarse: LPCFG | None,
    ensemble: tuple[LPCFG, ...],
) -> tuple[dict[str, Any], tuple[LPCFG, ...]]:
    """(training, extra grammars) with the coarse grammar and the ensemble given as
    fields appended to the extra grammars and indexed in training, as cfg.json keeps
    them (the same files as before the fields existed)."""
    if coarse is None and not ensemble:
        return training, extras
    if COARSE_GRAMMAR in training or ENSEMBLE in training:
        detail = (
            f"give the coarse grammar and the ensemble as fields or as training "
            f"'{COARSE_GRAMMAR}' and '{ENSEMBLE}', not both"
        )
        raise GrammarError(Errors.E127.format(detail=detail))
    if coarse is not None:
        training[COARSE_GRAMMAR] = len(extras)
        extras += (coarse,)
    if ensemble:
        training[ENSEMBLE] = list(range(len(extras), len(extras) + len(ensemble)))
        extras += ensemble
    return training, extras


def read_spectrum(path: str | Path) -> Spectrum | None:
    """The spectrum of a model directory, without reading its grammars.

    RETURNS (Spectrum | None): None when the model has none (MLE models).
    RAISES GrammarError: not a model directory, or a bad spectrum.
    """
    path = Path(path)
    if not path.is_dir():
        raise GrammarError(Errors.E124.format(source=path, detail="not a directory"))
    cfg = _read_cfg(_read_file(path, CFG), path)
    if "spectrum" not in cfg:
        return None
    members = {name: _read_file(path, name) for name in (SPECTRUM_INDEX, SPECTRUM_ARRAYS)}
    return _read_spectrum(members, cfg, path)


def _read_spectrum(
    members: Mapping[str, bytes], cfg: Mapping[str, Any], source: str | Path
) -> Spectrum | None:
    """The spectrum files, if cfg.json lists a spectrum, checked against its size."""
    if "spectrum" not in cfg:
        return None
    spectrum = Spectrum.from_members(members, source)
    expected = cfg["spectrum"]["symbols"]
    if len(spectrum) != expected:
        detail = f"{CFG} says {expected} spectrum symbols, {SPECTRUM_INDEX} has {len(spectrum)}"
        raise GrammarError(Errors.E124.format(source=source, detail=detail))
    return spectrum


def _read_labeller(
    members: Mapping[str, bytes], cfg: Mapping[str, Any], source: str | Path
) -> FunctionTagger | None:
    """The function labeller files, if cfg.json lists a labeller, checked against its sizes."""
    if "function_labeller" not in cfg:
        return None
    labeller = FunctionTagger.from_members(members, source)
    expected = cfg["function_labeller"]
    if labeller.sizes != expected:
        detail = (
            f"{CFG} says the function labeller has {expected['classes']} classes and "
            f"{expected['features']} features, {LABELLER_FILES[0]} "
            f"{labeller.sizes['classes']} and {labeller.sizes['features']}"
        )
        raise GrammarError(Errors.E124.format(source=source, detail=detail))
    return labeller


def _file_names(path: Path, prefix: str) -> list[str]:
    """The files (relative names) of the model directory ``path / prefix`` and its
    members, from the cfg.json files."""
    cfg = _read_cfg(_read_file(path, prefix + CFG), path / prefix if prefix else path)
    names = [CFG, TRANSFORMS, LEXICON, *GRAMMAR_FILES]
    for i in range(len(cfg["extra_grammars"])):
        names.extend(f"{_extra_dir(i)}/{name}" for name in GRAMMAR_FILES)
    if "spectrum" in cfg:
        names.extend((SPECTRUM_INDEX, SPECTRUM_ARRAYS))
    if "function_labeller" in cfg:
        names.extend(LABELLER_FILES)
    if prefix and cfg["members"]:
        detail = f"{prefix}{CFG}: a member of a model cannot have members of its own"
        raise GrammarError(Errors.E124.format(source=path, detail=detail))
    for i in range(len(cfg["members"])):
        names.extend(_file_names(path, f"{prefix}{_member_dir(i)}/"))
    return [prefix + name for name in names] if prefix else names


def _member_dir(index: int) -> str:
    return f"{MEMBERS_DIR}/{index}"


def _extra_dir(index: int) -> str:
    return f"{EXTRA_GRAMMARS}/{index}"


def _sizes(grammar: LPCFG) -> dict[str, int]:
    return {"symbols": grammar.n_symbols, "words": len(grammar.words)}


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).encode("utf8")


def _fail_for(source: str | Path):
    def fail(detail: str) -> GrammarError:
        return GrammarError(Errors.E124.format(source=source, detail=detail))

    return fail


def _read_file(directory: Path, name: str) -> bytes:
    """The member `name` of a model directory: a regular file inside it, never a link
    (``member_path``: no error message may quote a file from elsewhere)."""
    file = member_path(directory, name)
    if not file.is_file():
        raise GrammarError(Errors.E124.format(source=directory, detail=f"missing file {name}"))
    if file.stat().st_size > MAX_JSON_BYTES and name.endswith(".json"):
        detail = f"{name} is {file.stat().st_size} bytes, more than a model's JSON can be"
        raise GrammarError(Errors.E124.format(source=directory, detail=detail))
    return read_file(file, name, _fail_for(directory))


def _read_cfg(data: bytes, source: str | Path) -> dict[str, Any]:
    """cfg.json, checked for the format tag, the version and the sizes' shape."""
    fail = _fail_for(source)
    cfg = read_json(data, CFG, fail)
    if not isinstance(cfg, dict) or cfg.get("format") != MODEL_FORMAT:
        raise fail(f"{CFG} is not the configuration of a spacy-lpcfg model")
    check_version(cfg.get("format_version"), CFG, MODEL_VERSION, source, newer_code="E125")
    extras = cfg.get("extra_grammars", [])
    if not (
        _is_sizes(cfg.get("grammar")) and isinstance(extras, list) and all(map(_is_sizes, extras))
    ):
        raise fail(f"{CFG} lacks the grammar sizes ('grammar' and 'extra_grammars')")
    cfg["extra_grammars"] = extras  # optional: a model without extra grammars may omit it
    spectrum = cfg.get("spectrum", {"symbols": 0})
    if not (isinstance(spectrum, dict) and _is_index(spectrum.get("symbols"), 1 << 31)):
        raise fail(f"{CFG} has a bad 'spectrum' entry (expected {{\"symbols\": count}})")
    estimator = cfg.get("estimator", {})
    if not (
        isinstance(estimator, dict)
        and isinstance(estimator.get("name", ""), str)
        and isinstance(estimator.get("params", {}), dict)
        and isinstance(cfg.get("training", {}), dict)
    ):
        raise fail(f"{CFG} needs 'estimator' as {{name, params}} and 'training' as an object")
    for key in ("language", "label_scheme"):
        if not isinstance(cfg.get(key, ""), str):
            raise fail(f"{CFG}: '{key}' must be a string, not {excerpt(cfg[key])}")
    members = cfg.get("members", [])
    if not (
        isinstance(members, list)
        and len(members) <= MAX_MEMBERS
        and all(member == {"path": _member_dir(i)} for i, member in enumerate(members))
    ):
        raise fail(
            f"{CFG}: 'members' must list at most {MAX_MEMBERS} entries "
            f'{{"path": "{MEMBERS_DIR}/<i>"}} in order, not {excerpt(members)}'
        )
    cfg["members"] = members
    if not isinstance(cfg.get("decoder", ""), str):
        raise fail(f"{CFG}: 'decoder' must be a string, not {excerpt(cfg['decoder'])}")
    labeller = cfg.get("function_labeller")
    if "function_labeller" in cfg and not (
        isinstance(labeller, dict)
        and set(labeller) == {"classes", "features"}
        and all(_is_index(value, 1 << 31) for value in labeller.values())
    ):
        raise fail(
            f"{CFG} has a bad 'function_labeller' entry (expected "
            f'{{"classes": count, "features": count}}), not {excerpt(labeller)}'
        )
    if cfg.get("function_labels", defaults.FUNCTION_LABELS) not in defaults.FUNCTION_LABEL_SOURCES:
        choices = " or ".join(map(repr, defaults.FUNCTION_LABEL_SOURCES))
        raise fail(
            f"{CFG}: 'function_labels' must be {choices}, not {excerpt(cfg['function_labels'])}"
        )
    return cfg


def _is_index(value: Any, size: int) -> bool:
    """A non-negative int (not a bool) below ``size``."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _is_sizes(value: Any) -> bool:
    return isinstance(value, dict) and all(
        _is_index(value.get(k), 1 << 31) for k in ("symbols", "words")
    )


def _read_grammar(
    members: Mapping[str, bytes], prefix: str, sizes: Mapping[str, int], source: str
) -> LPCFG:
    """The grammar in files ``prefix + name``, checked against the sizes in cfg.json."""
    where = prefix.rstrip("/") or "the model directory"
    missing = [prefix + name for name in GRAMMAR_FILES if prefix + name not in members]
    if missing:
        raise GrammarError(
            Errors.E124.format(source=source, detail=f"missing {', '.join(missing)}")
        )
    own = {name: members[prefix + name] for name in GRAMMAR_FILES}
    try:
        symbols, arrays, words = decode_members(own, f"{source} ({where})")
        grammar = LPCFG(symbols, arrays.pop("n_states"), words=words, **arrays)
    except GrammarError as exc:
        raise GrammarError(Errors.E124.format(source=source, detail=str(exc))) from None
    found = _sizes(grammar)
    for key, name in (("symbols", "symbols.json"), ("words", "words.json")):
        if found[key] != sizes[key]:
            detail = f"{CFG} says {sizes[key]} {key}, {prefix}{name} has {found[key]}"
            raise GrammarError(Errors.E124.format(source=source, detail=detail))
    return grammar


def check_replaceable(path: Path) -> None:
    """Raise unless `path` is free, an empty directory or a model directory (of any version)."""
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return
    try:  # a linked cfg.json (to /dev/zero...) is no model's: refused unread
        cfg = json.loads(_read_file(path, CFG).decode("utf8"))
    except (ValueError, RecursionError):  # GrammarError, bad UTF-8 or JSON
        cfg = None
    if not (isinstance(cfg, dict) and cfg.get("format") == MODEL_FORMAT):
        raise GrammarError(Errors.E126.format(path=path))
