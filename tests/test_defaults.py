"""One source of defaults: the estimators, the Lexicon and TransformSpec take theirs
from ``spacy_lpcfg.defaults``, and the CLI's train options, the registered estimator
functions, the component and ``Recipe()`` agree with them. A default written twice
with two values fails here."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import spacy
import typer
from spacy.util import registry

from spacy_lpcfg import defaults
from spacy_lpcfg.cli import app
from spacy_lpcfg.estimators import ClusteringEstimator, MLEEstimator, SpectralEstimator
from spacy_lpcfg.estimators.inherit import InheritEstimator
from spacy_lpcfg.estimators.noise import NoisyEnsemble
from spacy_lpcfg.estimators.seed_product import SeedProduct
from spacy_lpcfg.grammar.lexicon import Lexicon, LexiconSpec
from spacy_lpcfg.recipes import Recipe
from spacy_lpcfg.trees.transforms import TransformSpec

ESTIMATOR_CLASSES = [MLEEstimator, SpectralEstimator, ClusteringEstimator, NoisyEnsemble]
# Each owner of defaults and the sections of defaults.py its signature reads.
SECTIONS = {
    Lexicon: [defaults.LEXICON],
    MLEEstimator: [defaults.LEXICON],
    SpectralEstimator: [defaults.LEXICON, defaults.LATENT, defaults.SPECTRAL],
    ClusteringEstimator: [defaults.LEXICON, defaults.LATENT, defaults.CLUSTERING],
    NoisyEnsemble: [defaults.NOISE],
}
REGISTERED = {
    "spacy_lpcfg.MLEEstimator.v1": MLEEstimator,
    "spacy_lpcfg.SpectralEstimator.v1": SpectralEstimator,
    "spacy_lpcfg.ClusteringEstimator.v1": ClusteringEstimator,
    "spacy_lpcfg.NoisyEnsemble.v1": NoisyEnsemble,
    "spacy_lpcfg.SeedProduct.v1": SeedProduct,
    "spacy_lpcfg.InheritEstimator.v1": InheritEstimator,
}


def signature_defaults(function) -> dict:
    """Parameter name -> default, for the parameters that have one (a ``lexicon``'s
    settings by their own names: the estimators take them so too)."""
    found = {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    if isinstance(found.get("lexicon"), LexiconSpec):
        found.update(found["lexicon"].to_dict())
    return found


def train_option_defaults() -> dict:
    """The defaults of ``spacy-lpcfg train``'s options, by parameter name."""
    command = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    return {param.name: param.default for param in command.params}


def transform_defaults() -> dict:
    return {field.name: field.default for field in dataclasses.fields(TransformSpec)}


@pytest.mark.parametrize("owner", list(SECTIONS), ids=lambda owner: owner.__name__)
def test_defaults_signatures_read_their_sections(owner):
    found = signature_defaults(owner.__init__)
    for section in SECTIONS[owner]:
        written = dataclasses.asdict(section)
        # every value of the section is a parameter of its owners, with that default
        assert {name: found.get(name, "missing") for name in written} == written, owner
    latent = dataclasses.asdict(defaults.LATENT)
    if owner is not NoisyEnsemble and defaults.LATENT not in SECTIONS[owner]:
        assert not set(latent) & set(found), owner
    if owner is NoisyEnsemble:
        assert found["random_state"] == defaults.LATENT.random_state


def test_defaults_transform_spec_reads_its_section():
    spec = transform_defaults()
    assert {name: spec[name] for name in dataclasses.asdict(defaults.TRANSFORM)} == (
        dataclasses.asdict(defaults.TRANSFORM)
    )


def test_defaults_lexicon_parameters_are_the_same_in_every_estimator():
    lexicon = signature_defaults(Lexicon.__init__)
    for cls in (MLEEstimator, SpectralEstimator, ClusteringEstimator):
        found = signature_defaults(cls.__init__)
        assert {name: found[name] for name in lexicon} == lexicon, cls.__name__
        assert found["transform"] == TransformSpec(), cls.__name__


def _subclasses(cls) -> set:
    return {sub for direct in cls.__subclasses__() for sub in {direct, *_subclasses(direct)}}


def test_defaults_every_treebank_estimator_has_the_lexicon_defaults():
    """Estimators written later too (those imported by spacy_lpcfg.estimators)."""
    from spacy_lpcfg.estimators.base import TreebankEstimator

    lexicon = signature_defaults(Lexicon.__init__)
    found = [cls for cls in _subclasses(TreebankEstimator) if "__init__" in vars(cls)]
    assert {MLEEstimator, SpectralEstimator, ClusteringEstimator} <= set(found)
    for cls in found:
        params = signature_defaults(cls.__init__)
        assert {name: params.get(name, "missing") for name in lexicon} == lexicon, cls.__name__


@pytest.mark.parametrize("name", list(REGISTERED))
def test_defaults_registered_functions_have_the_estimators_defaults(name):
    function = registry.misc.get(name)
    found = signature_defaults(function)
    own = signature_defaults(REGISTERED[name].__init__)
    assert found, name
    assert {key: own[key] for key in found} == found, name
    # and the function's estimator, built with no arguments, is the class's default
    made = function().get_params(deep=False)
    expected = REGISTERED[name]().get_params(deep=False)
    expected.pop("estimator", None)  # NoisyEnsemble.v1, SeedProduct.v1: members explicit
    assert {key: made[key] for key in expected} == expected, name


def test_defaults_train_options_are_the_recipe_defaults():
    """train's options are named as Recipe's fields and default to Recipe()'s, but for
    the estimator and the labeller: without them train fits the default recipe."""
    options = train_option_defaults()
    recipe = dataclasses.asdict(Recipe())
    chosen_by_the_recipe = {"estimator", "function_labeller"}
    assert all(options[name] is None for name in chosen_by_the_recipe)
    assert {name: options[name] for name in recipe if name not in chosen_by_the_recipe} == {
        name: value for name, value in recipe.items() if name not in chosen_by_the_recipe
    }


def test_defaults_recipe_defaults_are_the_estimators_and_transforms_defaults():
    recipe = Recipe()
    spec = transform_defaults()
    assert recipe.estimator == defaults.ESTIMATOR == "combined"
    assert recipe.n_states is None  # each latent estimator's own
    assert recipe.n_models == 1  # one model, no ensemble
    for name in ("binarization", "h_markov", "v_markov", "keep_functions"):
        assert getattr(recipe, name) == spec[name], name
    lexicon = signature_defaults(Lexicon.__init__)
    assert recipe.rare_threshold == lexicon["rare_threshold"]
    noisy = signature_defaults(NoisyEnsemble.__init__)
    assert (recipe.noise, recipe.noise_scale) == (noisy["noise"], noisy["noise_scale"])
    for cls in (SpectralEstimator, ClusteringEstimator, NoisyEnsemble):
        assert recipe.random_state == signature_defaults(cls.__init__)["random_state"]


def test_defaults_train_help_names_the_latent_estimators_n_states():
    command = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    (n_states,) = [param for param in command.params if param.name == "n_states"]
    spectral = signature_defaults(SpectralEstimator.__init__)["n_states"]
    clustering = signature_defaults(ClusteringEstimator.__init__)["n_states"]
    assert f"spectral: {spectral}, clustering: {clustering}" in n_states.help


def test_defaults_train_without_options_builds_the_default_estimator():
    from spacy_lpcfg.estimators.combined import four_way_estimator

    made = Recipe().make_estimator()
    expected = four_way_estimator().set_params(transform=TransformSpec())
    members = [member.get_params() for member in made.estimators]
    assert members == [member.get_params() for member in expected.estimators]
    assert members[0] == ClusteringEstimator().get_params()  # every default its own
    for name in ("member_transforms", "transform", "decoder", "language"):
        assert made.get_params()[name] == expected.get_params()[name], name


def test_defaults_component_uses_the_same_defaults():
    meta = spacy.blank("en").get_factory_meta("lpcfg_parser")
    config = meta.default_config
    estimator = registry.misc.get(config["estimator"]["@misc"])()
    # the component's default block trains the MLE grammar (a config names its estimator)
    assert estimator.get_params() == MLEEstimator().get_params()
    spec = transform_defaults()
    transforms = config["transforms"]
    assert {key: transforms[key] for key in dataclasses.asdict(defaults.TRANSFORM)} == {
        key: spec[key] for key in dataclasses.asdict(defaults.TRANSFORM)
    }
    assert config["decoder"] == defaults.DECODER
    assert config["max_length"] == defaults.MAX_LENGTH


def test_the_search_reads_its_section():
    from spacy_lpcfg.search import LatentStateSearch, optimize

    search = dataclasses.asdict(defaults.SEARCH)
    command = typer.main.get_command(app).commands["optimize"]  # type: ignore[attr-defined]
    options = {param.name: param.default for param in command.params}
    functions = signature_defaults(optimize)
    estimator = signature_defaults(LatentStateSearch.__init__)
    for name, value in search.items():
        assert functions[name] == value, name
        if name in ("max_states", "beam", "coarse_step", "max_symbols", "min_count"):
            assert estimator[name] == value, name
        if name in ("max_states", "beam", "max_symbols", "min_count", "n_models"):
            assert options[name] == value, name
    assert functions["n_states"] == defaults.CLUSTERING.n_states
