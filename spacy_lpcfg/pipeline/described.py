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

from spacy.util import registry

if TYPE_CHECKING:
    from ..grammar.model import ParsingModel

# Estimator names as models record them -> the registered function that makes one.
REGISTERED = {
    "mle": "spacy_lpcfg.MLEEstimator.v1",
    "spectral": "spacy_lpcfg.SpectralEstimator.v1",
    "clustering": "spacy_lpcfg.ClusteringEstimator.v1",
    "split_merge": "spacy_lpcfg.SplitMergeEstimator.v1",
    "inherit": "spacy_lpcfg.InheritEstimator.v1",
    "noisy_clustering": "spacy_lpcfg.NoisyEnsemble.v1",
}
SEED_PRODUCT = "spacy_lpcfg.SeedProduct.v1"
COMBINED = "spacy_lpcfg.CombinedEstimator.v1"
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
    None for an estimator without a registered function."""
    name = model.estimator
    if name == "split_merge" and model.ensemble:
        member = _block(REGISTERED[name], model.params)
        return {
            "@misc": SEED_PRODUCT,
            "n_models": 1 + len(model.ensemble),
            "random_state": model.params.get("random_state"),
            "estimator": member,
        }
    if name not in REGISTERED:
        return None
    block = _block(REGISTERED[name], model.params)
    nested = model.params.get("estimator")
    if isinstance(nested, dict):  # an ensemble's member settings
        block["estimator"] = _block(REGISTERED["clustering"], nested)
    return block


def _block(function: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` that the registered ``function`` takes, as its config block."""
    taken = inspect.signature(registry.misc.get(function)).parameters
    block = {"@misc": function}
    block.update({key: value for key, value in params.items() if key in taken})
    block.pop("estimator", None)  # nested blocks are the caller's
    return block
