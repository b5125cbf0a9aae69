"""The component settings that say what a trained model is.

A pipeline made from a model directory (``model = "models/ptb_sample"``) parses
with its own copy of the model, so its config should name neither that path
(another machine's, once the pipeline travels) nor the default estimator block
that never ran. ``model_settings`` rebuilds from the model's own record the
settings that would train such a model: the estimator block, the transforms and
whether a function labeller is fitted, with ``model = null``. The component
writes them into its pipeline's config (``LPCFGParser``).

Settings the model does not record stay out: an estimator's execution settings
that no registered function takes (``dev_sample`` of split-merge), and a
function labeller's own hyperparameters (``function_labeller = true`` is its
defaults).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import catalogue
from spacy.util import registry

if TYPE_CHECKING:
    from ..estimators.registry import EstimatorEntry
    from ..grammar.model import ParsingModel

# An ensemble of noisy clustering models records its own name (its members are
# "clustering", a registered estimator); a product of split-merge seeds records its
# members' name and its ensemble (the entry's, ``SeedProduct``).
NOISY_ENSEMBLE = ("noisy_clustering", "spacy_lpcfg.NoisyEnsemble.v1", "clustering")
COMBINED = "spacy_lpcfg.CombinedEstimator.v1"
# Any registered estimator, by name (``pipeline.registry.make_estimator``).
BY_NAME = "spacy_lpcfg.estimator.v1"
# What the component sets on every estimator, not a setting of its block.
COMPONENT_PARAMS = ("transform", "language")
# The transform settings the model's data decided (marked phrases) or that only
# version the file are not settings of the component.
DATA_SETTINGS = ("version", "marked_phrases")


def model_settings(model: ParsingModel) -> dict[str, Any]:
    """The component settings of a trained model: ``model`` (None: the pipeline has
    its copy), ``estimator`` (left out when the model's estimator has no registered
    function), ``transforms`` and ``function_labeller``."""
    parts = model.parts
    if len(parts) == 1:
        estimator = estimator_block(parts[0])
    else:
        members = [estimator_block(part) for part in parts]
        estimator = None
        if all(member is not None for member in members):
            from ..estimators.combined import MEMBER_SETTINGS

            estimator = {
                "@misc": COMBINED,
                "member_transforms": [
                    {key: part.transform.to_dict()[key] for key in MEMBER_SETTINGS}
                    for part in parts
                ],
                "decoder": model.decoder if model.decoder in ("product", "mbr", "dual") else None,
                "*": {f"member{k}": member for k, member in enumerate(members)},
            }
    settings: dict[str, Any] = {
        "model": None,
        "transforms": transform_settings(parts[0]),
        "function_labeller": model.labeller is not None,
    }
    if estimator is not None:
        settings["estimator"] = estimator
    return settings


def transform_settings(model: ParsingModel) -> dict[str, Any]:
    """The model's ``TransformSpec`` as the component's ``transforms``."""
    spec = model.transform.to_dict()
    return {key: value for key, value in spec.items() if key not in DATA_SETTINGS}


def estimator_block(model: ParsingModel) -> dict[str, Any] | None:
    """The config block of the estimator that trained one model (with its ensemble);
    None for an estimator that is not registered (``estimators.registry``)."""
    name = model.estimator
    if name == NOISY_ENSEMBLE[0]:
        block = _block(NOISY_ENSEMBLE[1], model.params)
        nested = model.params.get("estimator")
        if isinstance(nested, dict):  # the members' settings
            block["estimator"] = _registered_block(NOISY_ENSEMBLE[2], nested)
        return block
    member = _registered_block(name, model.params)
    entry = _entry(name)
    if member is None or entry is None or entry.ensemble is None or not model.ensemble:
        return member
    # the ensemble of members of one estimator (a product of split-merge seeds)
    recorded = {
        "n_models": 1 + len(model.ensemble),
        "random_state": model.params.get("random_state"),
    }
    function = f"spacy_lpcfg.{entry.ensemble.rpartition(':')[2]}.v1"
    return {**_block(function, recorded), "estimator": member}


def _entry(name: str) -> EstimatorEntry | None:
    from ..estimators.registry import estimator_entry

    try:
        return estimator_entry(name)
    except ValueError:  # not registered
        return None


def _registered_block(name: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The block of the estimator registered as ``name`` with the recorded ``params``:
    its class's own function (``spacy_lpcfg.MLEEstimator.v1``) when there is one, else
    ``spacy_lpcfg.estimator.v1`` by name; None: not registered."""
    from ..estimators.registry import accepted_params
    from ..grammar.lexicon import LEXICON_SETTINGS

    entry = _entry(name)
    if entry is None:
        return None
    target = entry.resolve()
    function = f"spacy_lpcfg.{getattr(target, '__name__', '')}.v1"
    try:
        return _block(function, params)
    except catalogue.RegistryError:  # not the package's: by name
        pass
    taken = accepted_params(target) - set(COMPONENT_PARAMS)
    block: dict[str, Any] = {"@misc": BY_NAME, "name": name}
    block["params"] = {key: value for key, value in params.items() if key in taken}
    if "lexicon" in taken:  # recorded by the settings' own names
        block["lexicon"] = {key: params[key] for key in LEXICON_SETTINGS if key in params}
        block["params"].pop("lexicon", None)
    return block


def _block(function: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` that the registered ``function`` takes, as its config block.
    RAISES catalogue.RegistryError: no such function."""
    taken = inspect.signature(registry.misc.get(function)).parameters
    block = {"@misc": function}
    block.update({key: value for key, value in params.items() if key in taken})
    block.pop("estimator", None)  # nested blocks are the caller's
    return block
