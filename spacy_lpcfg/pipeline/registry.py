"""Estimators as registered config functions, for the component's ``estimator`` block.

Each function takes an estimator's hyperparameters and returns it unfitted::

    [components.lpcfg_parser.estimator]
    @misc = "spacy_lpcfg.MLEEstimator.v1"
    rare_threshold = 1

The component owns two parameters every estimator has: ``transform`` (from its
``transforms`` setting and the label scheme of the training data) and
``language`` (``nlp.lang``), so the functions leave them out. Adding an
estimator is one more function here and its entry point in setup.cfg
(``spacy_misc``); the component does not change. The estimator modules are
imported when a function runs, not when spaCy loads the entry points.
"""

from typing import TYPE_CHECKING

from spacy.util import registry

if TYPE_CHECKING:
    from ..estimators import MLEEstimator


@registry.misc("spacy_lpcfg.MLEEstimator.v1")
def make_mle_estimator(
    rare_threshold: int = 1,
    signature: str = "auto",
    suffix_length: int = 3,
    open_class_threshold: int = 5,
    smooth_threshold: int = 10,
    word_smoothing: float = 0.1,
    signature_smoothing: float = 1.0,
) -> "MLEEstimator":
    """The treebank PCFG (relative frequencies, one state per symbol).

    The arguments are the lexicon's (see ``spacy_lpcfg.grammar.Lexicon``).
    RETURNS (MLEEstimator): the unfitted estimator.
    """
    from ..estimators import MLEEstimator

    return MLEEstimator(
        rare_threshold=rare_threshold,
        signature=signature,
        suffix_length=suffix_length,
        open_class_threshold=open_class_threshold,
        smooth_threshold=smooth_threshold,
        word_smoothing=word_smoothing,
        signature_smoothing=signature_smoothing,
    )
