"""INHERIT: latent features passed down the tree (Dreyer & Eisner 2006, section 3.2).

Every symbol but TOP carries one latent feature of ``n_states`` values. A rule
``X[h] -> Y Z`` is chosen by ``P_r(h)``, which does not look at the children's
features; then a pass pattern of the rule decides them: ``neither`` (both drawn
from ``P_ann(. | child)``), ``left`` or ``right`` (that child inherits ``h``, the
other is drawn), ``both`` (both inherit). The paper writes the patterns as "pass to
the head" and "pass to the non-head", a rule's head child being fixed by head
rules; that is the same model with ``left`` and ``right`` renamed per rule (the
probabilities still depend on the whole rule), so no head rules are needed to
train it. Unary rules pass or draw (the paper's Table 2 leaves them out; a
pattern per unary rule is the nearest reading). A child inherits only a feature
of more than one value and of as many values as its own, so TOP, with one state,
makes its child draw (and with ``L = 1`` every child draws: the grammar is the
treebank PCFG). Emissions ``P(X[h] -> w)`` are PCFG-LA's.

Free parameters (``free_parameters``): the paper's eq. 9, ``L (R_2 + R_1 + R_0) +
3 R_2 - N`` (``R_2``, ``R_1``, ``R_0``: binary, unary and lexical rules; ``N``
symbols, TOP included), plus ``R_1'``, the pass patterns of the unary rules below
TOP, less ``(L - 1) R_T``, TOP's ``R_T`` rules having one weight each; against
about ``L^3 R_2`` for PCFG-LA with ``L`` states everywhere.

Training is EM over the gold trees from the one-state MLE grammar with every
weight perturbed by ``noise``; the E-step is the folded inside-outside
(``inherit_kernels``), O(L) per node. The M-step normalises the expected counts
(rules per parent state, patterns per rule, draws per symbol) and smooths rules
and emissions towards the mean over the parent's states as split-merge does.

For parsing, the grammar is expanded into PCFG-LA blocks (``inherit_kernels.
expand_binary``) and built like split-merge's (``em.latent_model``):
its lexicon refitted on the tokens' posteriors, its coarse projection for
pruning. The chart parser then runs the general latent kernels (O(L^3) per rule
and split, after pruning) rather than the folded inside; all of its decoders,
pruning and products work on the result unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..defaults import CEILINGS, INHERIT, LATENT, LEXICON
from ..grammar.lexicon import LexiconSpec
from ..interrupts import kernel_calls
from ..progress import progress
from ..trees.transforms import TransformSpec
from ..trees.tree import Tree
from .base import Bool, Number, TreebankEstimator, check_random_state, int_range
from .em import (
    KINDS,
    CycleState,
    EMGrammar,
    EMTreebank,
    block_offsets,
    block_shape,
    block_start,
    count_distributions,
    initial_grammar,
    latent_model,
    normalise_rules,
    read_em_treebank,
)
from .split_merge import XBAR


@dataclass(frozen=True)
class InheritGrammar:
    """An INHERIT grammar being trained.

    n_states (np.ndarray): int64[n_symbols], feature values per symbol (TOP has 1).
    weights (dict[str, np.ndarray]): kind -> float64 ``P_r(h)``, a block of the
        parent's (the tag's) states per rule.
    patterns (dict[str, np.ndarray]): "binary" float64[R2, 4] (neither, left, right,
        both), "unary" float64[R1, 2] (draw, pass).
    annotation (np.ndarray): float64[sum(n_states)], ``P_ann(h | X)`` at X's states.
    """

    n_states: np.ndarray
    weights: dict[str, np.ndarray]
    patterns: dict[str, np.ndarray]
    annotation: np.ndarray

    @property
    def state_start(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.n_states)[:-1]]).astype(np.int64)


class InheritEStep(NamedTuple):
    """The log-likelihood and expected counts of an INHERIT E-step (laid out like the
    grammar's arrays), the expected nodes per state and each node's posteriors."""

    log_likelihood: float
    counts: dict[str, np.ndarray]
    pattern_counts: dict[str, np.ndarray]
    annotation_counts: np.ndarray
    state_counts: np.ndarray
    posteriors: np.ndarray


def _parent_blocks(treebank: EMTreebank, n_states: np.ndarray, kind: str):
    """(shape, offsets, start) of a kind's per-parent-state blocks (``em.grammar``)."""
    symbols = treebank.state_symbols(kind)[:, :1]
    shape = block_shape(symbols, n_states)
    return shape, block_offsets(shape), block_start(symbols, n_states)


def passable(treebank: EMTreebank, n_states: np.ndarray) -> dict[str, np.ndarray]:
    """kind -> bool[R, columns]: the patterns each rule can take (a child inherits only a
    feature of more than one value and of as many values as its own; with one value,
    inheriting and drawing are the same event)."""
    binary, unary = treebank.counts.binary_rules, treebank.counts.unary_rules
    features = n_states > 1
    left = (n_states[binary[:, 1]] == n_states[binary[:, 0]]) & features[binary[:, 0]]
    right = (n_states[binary[:, 2]] == n_states[binary[:, 0]]) & features[binary[:, 0]]
    passes = (n_states[unary[:, 1]] == n_states[unary[:, 0]]) & features[unary[:, 0]]
    return {
        "binary": np.stack([np.ones_like(left), left, right, left & right], axis=1),
        "unary": np.stack([np.ones_like(passes), passes], axis=1),
    }


def inherit_m_step(
    treebank: EMTreebank,
    n_states: np.ndarray,
    counts: Mapping[str, np.ndarray],
    pattern_counts: Mapping[str, np.ndarray],
    annotation_counts: np.ndarray,
    smoothing: float = 0.0,
    lexical_smoothing: float = 0.0,
) -> InheritGrammar:
    """Normalise expected counts: rules per parent state (binary and unary together;
    smoothed towards the mean over the parent's states), patterns per rule, draws per
    symbol (uniform for a symbol never drawn)."""
    n_states = np.asarray(n_states, dtype=np.int64)
    blocks = {kind: _parent_blocks(treebank, n_states, kind) for kind in KINDS}
    weights = normalise_rules(n_states, blocks, counts, smoothing, lexical_smoothing)
    patterns = {}
    for kind, allowed in passable(treebank, n_states).items():
        table = np.where(allowed, pattern_counts[kind], 0.0)
        totals = table.sum(axis=1, keepdims=True)
        uniform = allowed / allowed.sum(axis=1, keepdims=True)
        patterns[kind] = np.where(totals > 0, table / np.where(totals > 0, totals, 1), uniform)
    symbol_of_state = np.repeat(np.arange(len(n_states)), n_states)
    totals = np.bincount(symbol_of_state, annotation_counts, minlength=len(n_states))
    uniform = 1.0 / n_states[symbol_of_state]
    drawn = totals[symbol_of_state] > 0
    annotation = np.where(
        drawn, annotation_counts / np.where(drawn, totals[symbol_of_state], 1.0), uniform
    )
    return InheritGrammar(n_states, weights, patterns, annotation)


def initial_inherit(
    treebank: EMTreebank, n_values: int, noise: float, random_state: np.random.Generator
) -> InheritGrammar:
    """``n_values`` features for every symbol but TOP: the one-state MLE rules and
    emissions at every feature value, uniform patterns and draws, every weight times
    ``1 + noise * u`` (u uniform in [-1, 1]) and renormalised."""
    n_states = np.full(len(treebank.counts.symbols), n_values, dtype=np.int64)
    n_states[treebank.counts.symbols.root] = 1
    mle = initial_grammar(treebank)

    def jitter(values: np.ndarray) -> np.ndarray:
        return _jitter(values, noise, random_state)

    counts = {}
    for kind in KINDS:
        parents = treebank.state_symbols(kind)[:, 0]
        counts[kind] = jitter(np.repeat(mle.weights[kind], n_states[parents]))
    patterns = {
        kind: jitter(allowed.astype(float))
        for kind, allowed in passable(treebank, n_states).items()
    }
    annotation = jitter(np.ones(int(n_states.sum())))
    return inherit_m_step(treebank, n_states, counts, patterns, annotation)


def clone_values(
    treebank: EMTreebank, grammar: InheritGrammar, noise: float, random_state: np.random.Generator
) -> InheritGrammar:
    """Every feature value of every symbol but TOP in two (Dreyer & Eisner 2006's "clone
    all"): value h becomes 2h and 2h + 1, each starting from h's rule weights,
    emissions and share of the draws, times ``1 + noise * u``; patterns are kept."""
    n_states = 2 * grammar.n_states
    n_states[treebank.counts.symbols.root] = 1

    def cloned(values: np.ndarray, symbols: np.ndarray) -> np.ndarray:
        """Blocks of the symbols' states, each state's value repeated for its clones
        (renormalised by the M-step below)."""
        copies = np.repeat(
            n_states[symbols] // grammar.n_states[symbols], grammar.n_states[symbols]
        )
        return _jitter(np.repeat(values, copies), noise, random_state)

    counts = {
        kind: cloned(grammar.weights[kind], treebank.state_symbols(kind)[:, 0]) for kind in KINDS
    }
    annotation = cloned(grammar.annotation, np.arange(len(n_states)))
    return inherit_m_step(treebank, n_states, counts, grammar.patterns, annotation)


def _jitter(values: np.ndarray, noise: float, random_state: np.random.Generator) -> np.ndarray:
    """``values`` times ``1 + noise * u``, u uniform in [-1, 1]."""
    return values * (1.0 + noise * random_state.uniform(-1.0, 1.0, size=values.shape))


def inherit_e_step(treebank: EMTreebank, grammar: InheritGrammar) -> InheritEStep:
    """The folded inside-outside over every training tree (``inherit_kernels``)."""
    from .inherit_kernels import inherit_inside_outside

    nodes = treebank.nodes
    offsets = {kind: _parent_blocks(treebank, grammar.n_states, kind)[1] for kind in KINDS}
    with kernel_calls():  # Ctrl-C after the pass, never inside the kernel
        (
            log_likelihood,
            binary,
            unary,
            lexical,
            binary_patterns,
            unary_patterns,
            annotation,
            state_counts,
            posteriors,
        ) = inherit_inside_outside(
            nodes.symbol,
            nodes.left,
            nodes.right,
            nodes.parent < 0,
            treebank.node_rule,
            grammar.n_states,
            grammar.state_start,
            offsets["binary"],
            grammar.weights["binary"],
            grammar.patterns["binary"],
            offsets["unary"],
            grammar.weights["unary"],
            grammar.patterns["unary"],
            offsets["lexical"],
            grammar.weights["lexical"],
            grammar.annotation,
        )
    return InheritEStep(
        float(log_likelihood),
        {"binary": binary, "unary": unary, "lexical": lexical},
        {"binary": binary_patterns, "unary": unary_patterns},
        annotation,
        state_counts,
        posteriors,
    )


def expand(treebank: EMTreebank, grammar: InheritGrammar) -> EMGrammar:
    """The same grammar as PCFG-LA blocks (``EMGrammar``), what the parser runs."""
    from .inherit_kernels import expand_binary, expand_unary

    n_states, start = grammar.n_states, grammar.state_start
    expanded = EMGrammar(n_states, {})
    for kind, expand_kind in (("binary", expand_binary), ("unary", expand_unary)):
        expanded.weights[kind] = expand_kind(
            treebank.state_symbols(kind).astype(np.int64),
            n_states,
            _parent_blocks(treebank, n_states, kind)[1],
            grammar.weights[kind],
            grammar.patterns[kind],
            grammar.annotation,
            start,
            expanded.offsets(treebank, kind),
        )
    expanded.weights["lexical"] = grammar.weights["lexical"]
    return expanded


def free_parameters(treebank: EMTreebank, grammar: InheritGrammar) -> int:
    """Degrees of freedom: the weights less one per distribution (rules per parent
    state, emissions per tag state, patterns per rule that can pass, draws per
    symbol with more than one value); see the module docstring for the formula."""
    n_states = grammar.n_states
    weights = sum(len(grammar.weights[kind]) for kind in KINDS)
    constraints = count_distributions(treebank, n_states)
    patterns = sum(
        int((allowed.sum(axis=1) - 1).sum()) for allowed in passable(treebank, n_states).values()
    )
    draws = int((n_states[n_states > 1] - 1).sum())
    return int(weights - constraints + patterns + draws)


class InheritEstimator(TreebankEstimator):
    """The INHERIT model of Dreyer & Eisner (2006); see the module docstring.

    n_states (int): L, the values of the feature of every symbol but TOP. Defaults to 16.
    clone_all (bool): anneal (Dreyer & Eisner's "clone all", ``clone_values``): EM
        starts with the fewest values, at least 2, that doubling gives ``n_states``
        from (2 for 8 or 16, 3 for 12), and every value is cloned in two after each
        stage of ``em_iterations`` until there are ``n_states``. Otherwise EM starts
        with ``n_states``. Defaults to True.
    em_iterations (int): EM iterations of each stage. Defaults to 50.
    noise (float): relative perturbation of the initial weights. Defaults to 0.1.
    smoothing (float): weight of the mean over the parent's states in each rule
        distribution. Defaults to 0.01.
    lexical_smoothing (float): the same for emissions. Defaults to 0.3.
    random_state (int | np.random.Generator | None): seeds the perturbation.
    transform (TransformSpec | dict | None): tree transforms. Defaults to ``XBAR``.
    lexicon (LexiconSpec | dict | None), language (str): as for MLEEstimator.

    Fitted attributes: ``grammar_`` (LPCFG, the expanded grammar), ``coarse_grammar_``,
    ``lexicon_``, ``model_`` (ParsingModel), ``inherit_grammar_`` (InheritGrammar),
    ``treebank_`` (EMTreebank), ``log_likelihoods_`` (list[float], of the training
    trees under the grammar that starts each stage and after each of its M-steps:
    ``em_iterations + 1`` per stage), ``history_`` (dict, JSON: the same per stage,
    and the values per symbol, in split-merge's form, which ``plot training`` draws;
    also ``model_.training["history"]``), ``n_parameters_`` (int, free parameters,
    ``free_parameters``).
    """

    name = "inherit"
    n_states: int
    clone_all: bool
    em_iterations: int
    noise: float
    smoothing: float
    lexical_smoothing: float
    random_state: int | np.random.Generator | None
    transform: TransformSpec | Mapping | None

    def __init__(
        self,
        *,
        n_states: int = INHERIT.n_states,
        clone_all: bool = INHERIT.clone_all,
        em_iterations: int = INHERIT.em_iterations,
        noise: float = INHERIT.noise,
        smoothing: float = INHERIT.smoothing,
        lexical_smoothing: float = INHERIT.lexical_smoothing,
        random_state: int | np.random.Generator | None = LATENT.random_state,
        transform: TransformSpec | Mapping | None = XBAR,
        lexicon: LexiconSpec | Mapping | None = LexiconSpec(),
        language: str = LEXICON.language,
    ):
        self._store_params(locals())

    _parameter_constraints = {
        "n_states": [int_range(1, CEILINGS.n_states)],
        "clone_all": [Bool()],
        "em_iterations": [Number("an int >= 0", low=0, integer=True)],
        "noise": [Number("0 <= noise < 1", low=0.0, high=1.0)],
        "smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
        "lexical_smoothing": [Number("0 <= s < 1", low=0.0, high=1.0)],
    }

    def fit(
        self, trees: Iterable[Tree], dev_trees: Iterable[Tree] | None = None
    ) -> InheritEstimator:
        """Fit the grammar and lexicon.

        trees (Iterable[Tree]): training trees in treebank labels, rooted at TOP.
        dev_trees (Iterable[Tree] | None): not used (the estimator interface has it).
        RETURNS (InheritEstimator): self.
        """
        self._check_params()
        random_state = check_random_state(self.random_state)
        treebank = read_em_treebank(trees, self.transform, self._make_lexicon())
        nodes = treebank.nodes
        stages = 1
        while self.clone_all and self.n_states % 2**stages == 0 and self.n_states // 2**stages >= 2:
            stages += 1
        grammar = initial_inherit(
            treebank, self.n_states // 2 ** (stages - 1), self.noise, random_state
        )
        self.log_likelihoods_: list[float] = []
        for stage in range(stages):
            if stage:
                grammar = clone_values(treebank, grammar, self.noise, random_state)
            grammar, estep = self._em(treebank, grammar)
        expanded = expand(treebank, grammar)
        state = CycleState(0, grammar.n_states, expanded.weights, estep.state_counts)
        leaves = np.repeat((nodes.left < 0) & (nodes.right < 0), grammar.n_states[nodes.symbol])
        self.history_ = self._history(treebank, stages)
        self.grammar_, self.coarse_grammar_, self.lexicon_, self.model_ = latent_model(
            self, treebank, state, estep.posteriors[leaves], self.lexical_smoothing,
            history=self.history_,
        )  # fmt: skip
        self.inherit_grammar_ = grammar
        self.treebank_ = treebank
        self.n_parameters_ = free_parameters(treebank, grammar)
        return self

    def _history(self, treebank: EMTreebank, stages: int) -> dict:
        """The training record in split-merge's form (``plots.plot_training`` draws it):
        each stage is a cycle whose EM follows a split (the cloning), no dev scores."""
        per_stage = self.em_iterations + 1
        symbols = treebank.counts.symbols
        values = [float(v) for v in self.log_likelihoods_]
        return {
            "log_likelihoods": [
                {
                    "cycle": k + 1,
                    "phase": "split",
                    "values": values[k * per_stage : (k + 1) * per_stage],
                }
                for k in range(stages)
            ],
            "dev_f1": [],
            "n_states": [
                {
                    symbols.name(a): self.n_states // 2 ** (stages - 1 - k)
                    for a in range(len(symbols))
                    if a != symbols.root and self.n_states // 2 ** (stages - 1 - k) > 1
                }
                for k in range(stages)
            ],
            "best_cycle": None,
        }

    def _em(
        self, treebank: EMTreebank, grammar: InheritGrammar
    ) -> tuple[InheritGrammar, InheritEStep]:
        """``em_iterations`` EM steps; RETURNS the last grammar and its E-step. Records
        the log-likelihood of each grammar in ``log_likelihoods_``."""
        bar = progress(range(self.em_iterations + 1), desc="EM", unit="iteration")
        for iteration in bar:
            estep = inherit_e_step(treebank, grammar)
            self.log_likelihoods_.append(estep.log_likelihood)
            bar.set_postfix(log_likelihood=f"{estep.log_likelihood:.1f}")
            if iteration < self.em_iterations:
                grammar = inherit_m_step(
                    treebank,
                    grammar.n_states,
                    estep.counts,
                    estep.pattern_counts,
                    estep.annotation_counts,
                    self.smoothing,
                    self.lexical_smoothing,
                )
        return grammar, estep
