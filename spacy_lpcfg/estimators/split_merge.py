"""Split-merge EM PCFG-LA (Matsuzaki et al. 2005; Petrov et al. 2006).

Training starts from the one-state MLE grammar of the transformed treebank (by
default X-bar: right binarised, no parent or sibling context, no function tags,
the latent states learn the context) and repeats a cycle
(docs/design/architecture.md, 6.4):

1. split every latent state of every symbol but TOP in two: each rule weight
   is copied to the new cells (divided among the split children), perturbed by
   ``split_noise`` (1%) and renormalised. With ``split="some"``, only the
   symbols whose pairs of sibling states have diverged most (``clone_some``:
   Dreyer & Eisner 2006's "clone some", with ``merge_fraction=0``);
2. ``em_iterations`` of EM on the gold trees;
3. merge back the ``merge_fraction`` of the new pairs of states whose merging
   loses least likelihood, by Petrov's approximation at each node;
4. ``merge_em_iterations`` of EM whose M-step smooths each parent state's rules
   towards the mean over the symbol's states, ``p' = (1 - a) p + a mean_h p_h``
   (``smoothing`` for rules, ``lexical_smoothing`` for emissions), as the Berkeley
   parser's smoothing phase does.

Each step is the EM core's (``estimators.em``: the treebank laid out as nodes,
the E-step over shards of it in ``n_jobs`` threads or processes or on Dask
workers, the M-step, splitting, merging, the model of the trained grammar).
Without smoothing, the likelihood never decreases within a phase (smoothing is
not an M-step of the likelihood, so the phases after merging may dip). This
module holds the estimator and its cycles.

With ``checkpoint_dir``, each complete cycle is checkpointed (``em.checkpoints``:
the grammar, the random generator, the history) and ``fit(..., resume=True)``
goes on from the last one to the grammar an uninterrupted fit gives. With dev
trees (and a ``dev_scorer``: the estimators do not import the parser:
docs/design/architecture.md, section 2), the model of each cycle parses a sample
of them and the best cycle's grammar is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import CEILINGS, LATENT, LEXICON, SPLIT_MERGE
from ..errors import Errors
from ..grammar import LPCFG
from ..grammar.lexicon import Lexicon, LexiconSpec
from ..grammar.model import ParsingModel
from ..progress import progress
from ..trees.transforms import TransformSpec
from ..trees.tree import Tree
from .base import (
    Bool,
    Choice,
    Number,
    TreebankEstimator,
    check_random_state,
    int_range,
    json_params,
)
from .em import (
    RUN_PLACES,
    Checkpoint,
    CheckpointFolder,
    CycleState,
    EMGrammar,
    EMPhase,
    EMTreebank,
    EStep,
    ShardedTreebank,
    array_fingerprint,
    choose_merges,
    clone_some,
    generator_state,
    initial_grammar,
    latent_model,
    m_step,
    merge_grammar,
    phases_of,
    read_em_treebank,
    restore_generator,
    split_grammar,
    symbol_states,
    tree_fingerprint,
)

# Petrov et al. (2006) start from the X-bar grammar (no parent or sibling context) and let
# the latent states learn the context. On ptb_sample (4 cycles, 20 + 10 EM iterations,
# full train) it scored higher on dev and test than the other estimators' TransformSpec()
# (v=2, h=1, function tags kept) and than X-bar keeping function tags (the X-bar seeds'
# scores: BENCHMARKS.md "Split-merge EM against the Berkeley parser (ptb_sample)").
XBAR = TransformSpec(
    binarization=SPLIT_MERGE.binarization,
    h_markov=SPLIT_MERGE.h_markov,
    v_markov=SPLIT_MERGE.v_markov,
    keep_functions=SPLIT_MERGE.keep_functions,
)
SPLITS = ("all", "some")


# The estimator ------------------------------------------------------------------------


class SplitMergeEstimator(TreebankEstimator):
    """Split-merge EM PCFG-LA (Petrov et al. 2006); see the module docstring.

    n_cycles (int): split-merge cycles (each at most doubles the states). Defaults to 4.
    em_iterations (int): EM iterations after each split. Defaults to 20.
    merge_em_iterations (int): smoothed EM iterations after each merge. Defaults to 10.
    merge_fraction (float): fraction of the new splits merged back. Defaults to 0.5.
    split (str): which symbols each cycle splits: "all" (Petrov et al.), or "some":
        the symbols whose pairs of sibling states diverge more than the average
        (``clone_some``; Dreyer & Eisner 2006's "clone some"; needs
        ``merge_fraction=0``). Defaults to "all".
    split_noise (float): relative perturbation of split weights. Defaults to 0.01.
    smoothing (float): weight of the mean over the parent's states in each rule
        distribution (after merging). Defaults to 0.01.
    lexical_smoothing (float): the same for emissions. Defaults to 0.1.
    select_cycle_on_dev (bool): given dev trees, parse them after each cycle (with
        ``fit``'s ``dev_scorer``) and keep the grammar of the cycle with the best
        score. Defaults to True.
    dev_sample (int): dev trees parsed per cycle at most (evenly spaced through the
        dev trees). Defaults to 300.
    n_jobs (int): workers of the E-step (shards of the treebank; threads unless joblib
        is configured otherwise, see ``em.shards``). Defaults to 1.
    scheduler (str | distributed.Client | None): a Dask scheduler address or client: the
        E-step runs on its workers (so it does under ``joblib.parallel_config(
        backend="dask")``). ``clone`` cannot copy a client: give the address to clone
        the estimator. Defaults to None.
    checkpoint_dir (str | Path | None): where to checkpoint each complete cycle
        (``em.checkpoints``), so that ``fit(..., resume=True)`` goes on from the last one.
        Defaults to None (no checkpoints).
    random_state (int | np.random.Generator | None): seeds the split noise.
    transform (TransformSpec | dict | None): tree transforms. Defaults to ``XBAR``
        (h_markov=0, v_markov=1, function tags stripped), as Petrov et al.
    lexicon (LexiconSpec | dict | None), language (str): as for MLEEstimator.

    Fitted attributes: ``grammar_`` (LPCFG), ``coarse_grammar_`` (its projection
    with the expected state frequencies, ``extra_grammars[0]`` of ``model_``),
    ``lexicon_``, ``model_`` (ParsingModel), ``n_states_`` (dict symbol -> states,
    symbols with more than one), ``selected_cycle_`` (int, the cycle whose grammar
    was kept: the last, or the best on dev), ``log_likelihoods_`` (list[EMPhase]),
    ``history_`` (dict, JSON: "log_likelihoods" of every EM phase, "dev_f1" and
    "n_states" per cycle, "best_cycle"; also ``model_.training["history"]``),
    ``cycle_seconds_`` (list[float], training time of each cycle), ``treebank_``
    (EMTreebank, the training nodes) and ``em_grammar_`` (EMGrammar, the rules as
    trained, emissions over training entries; ``em.grammar``).
    """

    name = "split_merge"
    # the parameters, stored by __init__ (declared for type checkers)
    n_cycles: int
    em_iterations: int
    merge_em_iterations: int
    merge_fraction: float
    split: str
    split_noise: float
    smoothing: float
    lexical_smoothing: float
    select_cycle_on_dev: bool
    dev_sample: int
    n_jobs: int
    scheduler: Any
    checkpoint_dir: str | Path | None
    random_state: int | np.random.Generator | None
    transform: TransformSpec | Mapping | None
    # fitted attributes that training sets cycle by cycle
    log_likelihoods_: list[EMPhase]
    cycle_seconds_: list[float]

    def __init__(
        self,
        *,
        n_cycles: int = SPLIT_MERGE.n_cycles,
        em_iterations: int = SPLIT_MERGE.em_iterations,
        merge_em_iterations: int = SPLIT_MERGE.merge_em_iterations,
        merge_fraction: float = SPLIT_MERGE.merge_fraction,
        split: str = SPLIT_MERGE.split,
        split_noise: float = SPLIT_MERGE.split_noise,
        smoothing: float = SPLIT_MERGE.smoothing,
        lexical_smoothing: float = SPLIT_MERGE.lexical_smoothing,
        select_cycle_on_dev: bool = SPLIT_MERGE.select_cycle_on_dev,
        dev_sample: int = SPLIT_MERGE.dev_sample,
        n_jobs: int = SPLIT_MERGE.n_jobs,
        scheduler: Any = None,
        checkpoint_dir: str | Path | None = None,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        transform: TransformSpec | Mapping | None = XBAR,
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    _parameter_constraints = {
        "n_cycles": [int_range(0, CEILINGS.n_cycles)],
        "em_iterations": [int_range(0, CEILINGS.em_iterations)],
        "merge_em_iterations": [int_range(0, CEILINGS.em_iterations)],
        "n_jobs": [int_range(1, CEILINGS.n_jobs)],
        "dev_sample": [Number("an int >= 1", low=1, integer=True)],
        "merge_fraction": [Number("0 <= f <= 1", low=0.0, high=float(np.nextafter(1.0, 2.0)))],
        "split_noise": [Number("0 <= noise < 1", low=0.0, high=1.0)],
        "split": [Choice(SPLITS)],
        "smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "lexical_smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "select_cycle_on_dev": [Bool()],
    }

    def _check_params(self) -> None:
        super()._check_params()
        if self.split == "some" and self.merge_fraction > 0:
            # merging after a partial split would pair states of symbols not split
            # this cycle (and leave odd state counts the next selection misreads)
            raise ValueError(
                Errors.E011.format(
                    value=self.merge_fraction,
                    name="merge_fraction",
                    expected="0 with split='some' (clone some merges nothing back)",
                )
            )

    def fit(
        self,
        trees: Iterable[Tree],
        dev_trees: Iterable[Tree] | None = None,
        *,
        resume: bool = False,
        dev_scorer: DevScorer | None = None,
    ) -> SplitMergeEstimator:
        """Fit the grammar and lexicon.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): with ``select_cycle_on_dev``, the trees whose
            (sampled) parses choose the cycle kept.
        resume (bool): go on from the last cycle checkpointed in ``checkpoint_dir`` (from
            the start when it has none): the same grammar as an uninterrupted fit.
            Otherwise the folder's checkpoints are replaced.
        dev_scorer (Callable[[ParsingModel, list[Tree]], float] | None): the score of a
            model on dev trees, higher is better (e.g. the F1 of ``spacy_lpcfg.evaluate``
            with ``spacy_lpcfg.decode.Parser(model)``); needed with dev trees.
        RETURNS (SplitMergeEstimator): self.
        RAISES ValueError: bad parameters, or a checkpoint that cannot be resumed.
        """
        self._check_params()  # before the long part
        if resume and self.checkpoint_dir is None:
            raise ValueError(Errors.E405)
        random_state = check_random_state(self.random_state)
        dev = self._dev_sample(dev_trees)
        if dev is not None and dev_scorer is None:
            raise ValueError(Errors.E410)
        treebank = read_em_treebank(trees, self.transform, self._make_lexicon())
        checkpoints, start = None, None
        if self.checkpoint_dir is not None:
            checkpoints = CheckpointFolder(
                self.checkpoint_dir, self._fingerprint(treebank, dev, random_state)
            )
            if resume:
                start = checkpoints.load()
            else:
                checkpoints.clear()  # a new run: an earlier run's checkpoints go
            if start is not None and start.last.cycle > self.n_cycles:
                raise ValueError(
                    Errors.E409.format(
                        path=checkpoints.folder, cycle=start.last.cycle, n_cycles=self.n_cycles
                    )
                )
        sharded = ShardedTreebank(treebank, self.n_jobs, self.scheduler)
        with sharded:
            run = _Run(self, sharded, random_state, dev, dev_scorer, checkpoints)
            kept = run.train(start)
            self._set_fitted(treebank, sharded, kept, run.history)
        return self

    def _dev_sample(self, dev_trees: Iterable[Tree] | None) -> list[Tree] | None:
        """The dev trees parsed after each cycle (None: no choice on dev)."""
        if dev_trees is None or not self.select_cycle_on_dev:
            return None
        dev = list(dev_trees)
        if len(dev) > self.dev_sample:  # evenly spaced: every part of the dev set
            dev = [
                dev[i]
                for i in np.linspace(0, len(dev), self.dev_sample, endpoint=False).astype(int)
            ]
        return dev or None

    def _fingerprint(
        self, treebank: EMTreebank, dev: list[Tree] | None, random_state: np.random.Generator
    ) -> dict[str, Any]:
        """What a checkpoint must match to be resumed: the training nodes (transforms
        and lexicon entries included), the dev sample and the parameters that shape
        training."""
        nodes = treebank.nodes
        params = {
            name: value
            for name, value in json_params(self).items()
            # n_cycles: a run can go on to more cycles; the transforms are in the treebank's
            if name not in ("n_cycles", "transform", *RUN_PARAMS)
        }
        if params.get("split") == SPLIT_MERGE.split:
            del params["split"]  # checkpoints from before the parameter resume
        if isinstance(self.random_state, np.random.Generator):
            params["random_state"] = generator_state(random_state)
        return {
            "treebank": array_fingerprint(
                treebank.spec.to_dict(),
                list(treebank.counts.symbols.names),
                list(nodes.words),
                list(treebank.entries),
                *(getattr(nodes, name) for name in ("symbol", "parent", "left", "right")),
                nodes.token_word,
                treebank.node_rule,
                treebank.lexical_rules,
            ),
            "dev": None if dev is None else tree_fingerprint(dev),
            "params": params,
        }

    def _build(
        self, treebank: EMTreebank, sharded: ShardedTreebank, state: CycleState, **training: Any
    ) -> tuple[LPCFG, LPCFG, Lexicon, ParsingModel]:
        """``latent_model`` of a trained grammar, its tokens' posteriors from ``sharded``."""
        grammar = EMGrammar(state.n_states, state.weights)
        posteriors = sharded.token_posteriors(grammar)
        return latent_model(self, treebank, state, posteriors, self.lexical_smoothing, **training)

    def _set_fitted(
        self,
        treebank: EMTreebank,
        sharded: ShardedTreebank,
        state: CycleState,
        history: dict[str, Any],
    ) -> None:
        """The model of the kept cycle and the fitted attributes."""
        self.grammar_, self.coarse_grammar_, self.lexicon_, self.model_ = self._build(
            treebank, sharded, state, history=history
        )
        self.n_states_ = symbol_states(treebank, state.n_states)
        self.selected_cycle_ = state.cycle
        self.history_ = history
        self.treebank_ = treebank
        self.em_grammar_ = EMGrammar(state.n_states, state.weights)


# The cycles ------------------------------------------------------------------------------

DevScorer = Callable[[ParsingModel, list[Tree]], float]


# Parameters that say where training runs, not what it learns: not in a checkpoint's
# fingerprint (the shards of n_jobs change the sums' rounding only; the folder and the
# cluster, ``em.RUN_PLACES``, are not in the model's parameters either).
RUN_PARAMS = ("n_jobs", *RUN_PLACES)


class _Run:
    """The split-merge cycles of one fit, from the start or from a checkpoint."""

    def __init__(
        self,
        estimator: SplitMergeEstimator,
        sharded: ShardedTreebank,
        random_state: np.random.Generator,
        dev: list[Tree] | None,
        dev_scorer: DevScorer | None,
        checkpoints: CheckpointFolder | None,
    ):
        self.estimator = estimator
        self.sharded = sharded
        self.treebank = sharded.treebank
        self.random_state = random_state
        self.dev, self.dev_scorer = dev, dev_scorer
        self.checkpoints = checkpoints
        self.history: dict[str, Any] = {
            "log_likelihoods": [],
            "dev_f1": [],
            "n_states": [],
            "best_cycle": None,
        }

    def train(self, start: Checkpoint | None) -> CycleState:
        """Run the cycles left; RETURNS the grammar kept (the best on dev, else the
        last). Sets the estimator's ``log_likelihoods_`` and ``cycle_seconds_``."""
        import time

        estimator, sharded, treebank = self.estimator, self.sharded, self.treebank
        estimator.log_likelihoods_ = []
        estimator.cycle_seconds_ = []
        last: CycleState | None = None
        best: CycleState | None = None
        if start is not None:
            last, best = start.last, start.best
            self.random_state = restore_generator(start.random_state)
            self.history = start.history
            estimator.cycle_seconds_ = list(start.cycle_seconds)
            estimator.log_likelihoods_ = phases_of(self.history["log_likelihoods"])
            grammar = EMGrammar(last.n_states, last.weights)
        else:
            grammar = initial_grammar(treebank)
        first = 1 if last is None else last.cycle + 1
        cycles = range(first, estimator.n_cycles + 1)
        bar = progress(
            cycles, desc="split-merge", unit="cycle", total=estimator.n_cycles, initial=first - 1
        )
        for cycle in bar:
            started = time.perf_counter()
            chosen = clone_some(treebank, grammar) if estimator.split == "some" else None
            # Each phase's first grammar is handed over in a list that _em empties, so
            # that no name here keeps it (a grammar's size) for the whole phase.
            pending = [
                split_grammar(treebank, grammar, estimator.split_noise, self.random_state, chosen)
            ]
            del grammar
            grammar, estep = self._em(cycle, "split", pending, estimator.em_iterations, 0.0, 0.0)
            if estimator.merge_fraction > 0:
                losses = sharded.merge_losses(grammar, estep.state_counts)
                merged = choose_merges(grammar.n_states, losses, estimator.merge_fraction)
            else:
                merged = np.zeros(int(grammar.n_states.sum()), dtype=bool)
            smoothing = (estimator.smoothing, estimator.lexical_smoothing)
            n_states, counts = grammar.n_states, estep.counts
            del grammar, estep  # merging reads the counts only
            pending = [merge_grammar(treebank, n_states, counts, merged, *smoothing)]
            del counts
            grammar, estep = self._em(
                cycle, "merge", pending, estimator.merge_em_iterations, *smoothing
            )
            last = CycleState(cycle, grammar.n_states, grammar.weights, estep.state_counts)
            self.history["n_states"].append(symbol_states(treebank, grammar.n_states))
            if self.dev is not None:
                score = self._score(last)
                self.history["dev_f1"].append(score)
                if best is None or score > self.history["dev_f1"][best.cycle - 1]:
                    best, self.history["best_cycle"] = last, cycle
                bar.set_postfix(dev=f"{score:.2f}", best=self.history["best_cycle"])
            estimator.cycle_seconds_.append(time.perf_counter() - started)
            if self.checkpoints is not None:
                self.checkpoints.save(
                    Checkpoint(
                        last,
                        best,
                        generator_state(self.random_state),
                        self.history,
                        estimator.cycle_seconds_,
                    )
                )
        if last is None:  # no cycle: the one-state grammar
            estep = sharded.e_step(grammar)
            last = CycleState(0, grammar.n_states, grammar.weights, estep.state_counts)
        return best if best is not None else last

    def _em(
        self,
        cycle: int,
        phase: str,
        pending: list[EMGrammar],
        iterations: int,
        smoothing: float,
        lexical_smoothing: float,
    ) -> tuple[EMGrammar, EStep]:
        """``iterations`` EM steps from the grammar in ``pending`` (taken out of it);
        RETURNS the last grammar and its E-step. Records the log-likelihood of each
        grammar of the phase."""
        grammar = pending.pop()
        values = []
        bar = progress(range(iterations + 1), desc="EM", unit="iteration")
        for iteration in bar:
            estep = self.sharded.e_step(grammar)
            values.append(estep.log_likelihood)
            bar.set_postfix(log_likelihood=f"{estep.log_likelihood:.1f}")
            if iteration < iterations:
                # the weights overwrite the counts, which nothing reads after
                n_states, counts = grammar.n_states, estep.counts
                del grammar  # its weights go as the new ones are made
                grammar = m_step(
                    self.treebank, n_states, counts, smoothing, lexical_smoothing, overwrite=True
                )
        record = EMPhase(cycle, phase, tuple(values))
        self.estimator.log_likelihoods_.append(record)
        self.history["log_likelihoods"].append(record.to_dict())
        return grammar, estep

    def _score(self, state: CycleState) -> float:
        """The dev scorer's score of the cycle's model."""
        assert self.dev is not None and self.dev_scorer is not None
        model = self.estimator._build(self.treebank, self.sharded, state)[3]
        score = self.dev_scorer(model, self.dev)
        if not isinstance(score, (int, float, np.number)) or not np.isfinite(score):
            raise ValueError(Errors.E411.format(value=score, cycle=state.cycle))
        return float(score)
