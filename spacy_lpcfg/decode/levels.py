"""Pruning levels: the names a grammar's symbols get at each level of the cascade.

A level merges the symbols whose names coincide once coarsened (``level_label``);
``chart.pruning.PruningCascade`` builds the merged grammars from these names and
prunes with them, coarsest first.
"""

from __future__ import annotations

from ..errors import Errors
from ..trees.labels import get_scheme
from ..trees.transforms import (
    BIN_MARK,
    CONTEXT_JOIN,
    PARENT_SEP,
    RIGHT_CONTEXT,
    UNARY_SEP,
    coarse_label,
    intermediate_parent,
    is_intermediate,
)

# Pruning levels, coarsest first, as keyword arguments of level_label. The dense first
# pass is over X-bar labels with unary chains cut to their lowest label and POS tags
# and phrase labels merged into categories (fewer rules: this pass is a large share of
# the parse time on ptb_sample and most of it on CESS-ESP, whose dotted phrase features
# otherwise leave 405 symbols and 6.9k rules at this level); the second keeps chains
# and the Markov context of intermediate labels, which lets the chart drop the many
# intermediate items whose right sibling is missing (one_state_kernels). Chosen on
# ptb_sample dev and test against the former default (X-bar, X-bar with annotations)
# at 1e-5: the same F1 on average, much faster (at defaults.PRUNE_THRESHOLD; BENCHMARKS.md
# "Parsing: speed and accuracy"). Merging phrases (a change for CESS-ESP only) made
# cess_esp dev much faster with one clustering grammar at no cost in F1 (BENCHMARKS.md
# "Parse speed on other treebanks, against ptb_sample").
DEFAULT_LEVELS = (
    {"chains": "bottom", "tags": "category", "phrases": "category"},
    {"context": True},
)
CHAINS = ("keep", "bottom")
MERGES = ("keep", "category")


def level_label(
    label: str,
    scheme: str,
    *,
    preterminal: bool = False,
    chains: str = "keep",
    context: bool = False,
    tags: str = "keep",
    phrases: str = "keep",
    **options,
) -> str:
    """A symbol's name at a pruning level: ``trees.transforms.coarse_label`` (options:
    ``functions``, ``annotations``), then

    chains (str): "keep" unary chains, or keep their "bottom" label only
        (``S::VP`` -> ``VP``, ``@S::VP|>`` -> ``@VP|>``).
    context (bool): intermediate labels keep their Markov context, its labels coarsened
        alike (``@NP-SBJ^S|>NN`` -> ``@NP|>NN``).
    tags (str): "keep" POS tags, or merge them into their "category"
        (``LabelScheme.coarse_category``: IcePaHC ``N-D`` -> ``N``, CESS ``ncms000``
        -> ``nc``; no change for PTB tags).
    phrases (str): "keep" phrase categories, or merge them into their "category"
        (CESS ``grup.nom.ms`` -> ``grup``; no change for PTB and IcePaHC labels).
    """
    coarse = coarse_label(label, scheme, preterminal=preterminal, **options)
    checks = (("chains", chains, CHAINS), ("tags", tags, MERGES), ("phrases", phrases, MERGES))
    for name, value, choices in checks:
        if value not in choices:
            expected = "one of " + ", ".join(map(repr, choices))
            raise ValueError(Errors.E011.format(name=name, value=value, expected=expected))
    label_scheme = get_scheme(scheme)
    if preterminal:
        if tags == "category":
            return label_scheme.coarse_category(coarse, preterminal=True)
        return coarse
    if chains == "bottom":
        coarse = _chain_bottom(coarse)
    if phrases == "category":
        coarse = _map_labels(coarse, label_scheme.coarse_category)
    if context and is_intermediate(label):
        parent = intermediate_parent(label)
        side_end = len(BIN_MARK) + len(parent) + len(RIGHT_CONTEXT)
        parts = label[side_end:].split(CONTEXT_JOIN) if label[side_end:] else []
        coarse += CONTEXT_JOIN.join(coarse_label(part, scheme) for part in parts)
    return coarse


def _map_labels(coarse: str, function) -> str:
    """Apply function to every label of an X-bar name: chain links, and the parent
    of an intermediate (``@S.F.C::grup.nom|>`` -> ``@S::grup|>``)."""
    if is_intermediate(coarse):
        parent = intermediate_parent(coarse)
        side = coarse[len(BIN_MARK) + len(parent) :]
        return BIN_MARK + _map_labels(parent, function) + side
    base, sep, annotation = coarse.partition(PARENT_SEP)
    return UNARY_SEP.join(map(function, base.split(UNARY_SEP))) + sep + annotation


def _chain_bottom(coarse: str) -> str:
    if is_intermediate(coarse):
        parent = intermediate_parent(coarse)
        side = coarse[len(BIN_MARK) + len(parent) :]
        return BIN_MARK + _chain_bottom(parent) + side
    base, sep, annotation = coarse.partition(PARENT_SEP)
    return base.rpartition(UNARY_SEP)[2] + sep + annotation
