"""The recommended recipe as code: ``spacy_lpcfg.recipes``, ``train --recipe`` and the
registered ``spacy_lpcfg.recommended_*.v1`` functions (and ensemble.cfg, which names them)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import spacy
from spacy.util import registry
from typer.testing import CliRunner

import spacy_lpcfg.pipeline.registry  # noqa: F401  (registers the recipe's functions)
from spacy_lpcfg.cli import app
from spacy_lpcfg.estimators import ClusteringEstimator, MLEEstimator, SpectralEstimator
from spacy_lpcfg.estimators.base import json_params
from spacy_lpcfg.estimators.combined import FOUR_SETTINGS, CombinedEstimator
from spacy_lpcfg.estimators.noise import NoisyEnsemble
from spacy_lpcfg.grammar.model import ParsingModel
from spacy_lpcfg.recipes import RECIPES, RECOMMENDED, Recipe, get_recipe
from spacy_lpcfg.trees.transforms import TransformSpec

runner = CliRunner()
CONFIGS = Path(__file__).resolve().parents[1] / "projects" / "ptb_sample" / "configs"
# The recipe measured in BENCHMARKS.md (ptb_sample test 84.85 F1). The registered
# .v1 functions build it: a better recipe is a new one, with .v2 functions.
RECOMMENDED_V1 = {
    "estimator": "clustering",
    "n_states": 16,
    "n_cycles": None,
    "n_models": 8,
    "noise": "gaussian",
    "noise_scale": 0.3,
    "random_state": 0,
    "rare_threshold": 1,
    "binarization": "right",
    "h_markov": 1,
    "v_markov": 1,
    "keep_functions": True,
    "function_labeller": False,
}


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def described(estimator) -> dict:
    """An estimator's parameters as JSON data, a nested estimator's too (as in cfg.json)."""
    return json.loads(json.dumps(json_params(estimator), default=described))


def _trained_params(model_dir: Path) -> dict:
    return json.loads((model_dir / "cfg.json").read_text())["estimator"]


# the recipe ---------------------------------------------------------------------------


def test_recipes_recommended_is_the_measured_v1_recipe():
    assert asdict(RECOMMENDED) == RECOMMENDED_V1
    assert get_recipe("recommended") is RECOMMENDED
    assert set(RECIPES) == {
        "default",
        "four_way",
        "recommended",
        "split_merge",
        "split_merge_product",
        "clone_some",
        "inherit",
    }


def test_recipes_recommended_builds_a_noisy_ensemble_of_clustering_models():
    spec = RECOMMENDED.transform_spec("penn", "en")
    assert spec == TransformSpec(v_markov=1, scheme="penn", head_rules="collins")
    ensemble = RECOMMENDED.make_estimator(spec, "en")
    assert type(ensemble) is NoisyEnsemble
    member = ClusteringEstimator(n_states=16, transform=spec, language="en", random_state=0)
    assert ensemble.get_params() == {
        **NoisyEnsemble(
            estimator=member, n_models=8, noise="gaussian", noise_scale=0.3, random_state=0
        ).get_params(),
        "estimator": ensemble.estimator,  # compared through its parameters (estimator__*)
    }
    assert ensemble.estimator.get_params() == member.get_params()


def test_recipes_make_the_cli_estimators():
    spec = TransformSpec(binarization="left")
    assert type(Recipe(estimator="mle").make_estimator(spec)) is MLEEstimator
    default = Recipe().make_estimator(spec, "is")  # train's default: the four-way combination
    assert type(default) is CombinedEstimator and default.transform is spec
    assert default.member_transforms == [dict(s) for s in FOUR_SETTINGS]
    assert default.language == "is"
    for member in default.estimators:
        assert type(member) is ClusteringEstimator
        assert (member.n_states, member.random_state, member.language) == (16, 0, "is")
    spectral = Recipe(estimator="spectral", n_states=4, random_state=3).make_estimator(spec, "is")
    assert type(spectral) is SpectralEstimator
    assert (spectral.n_states, spectral.random_state, spectral.language) == (4, 3, "is")
    assert spectral.transform is spec
    clustering = Recipe(estimator="clustering", rare_threshold=2).make_estimator()
    assert type(clustering) is ClusteringEstimator
    assert (clustering.n_states, clustering.rare_threshold) == (16, 2)  # the class's n_states
    assert clustering.transform == TransformSpec()


def test_recipes_transforms_follow_the_treebank():
    assert RECOMMENDED.transforms() == {
        "binarization": "right",
        "h_markov": 1,
        "v_markov": 1,
        "keep_functions": True,
        "head_rules": None,
    }
    assert RECOMMENDED.transform_spec("penn", "is").head_rules == "ppche"
    assert RECOMMENDED.transform_spec("floresta", "pt").head_rules == "first"
    assert RECOMMENDED.transform_spec("penn", "en", "last").head_rules == "last"
    assert Recipe(h_markov=None).transform_spec().h_markov is None


@pytest.mark.parametrize(
    "settings, name",
    [
        ({"estimator": "em"}, "estimator"),
        ({"n_models": 0}, "n_models"),
        ({"n_models": 2}, "n_models"),  # mle
        ({"estimator": "spectral", "n_models": 2}, "n_models"),
    ],
)
def test_recipes_reject_bad_settings(settings, name):
    with pytest.raises(ValueError, match=rf"E011.*'{name}'"):
        Recipe(**settings)


def test_recipes_unknown_name():
    with pytest.raises(ValueError, match=r"E011.*'recipe': one of default, four_way"):
        get_recipe("best")


# the registry and the project config ----------------------------------------------------


def test_recipes_registered_functions_build_the_recipe():
    estimator = registry.misc.get("spacy_lpcfg.recommended_estimator.v1")()
    expected = RECOMMENDED.make_estimator()
    assert type(estimator) is NoisyEnsemble
    assert described(estimator) == described(expected)
    seeded = registry.misc.get("spacy_lpcfg.recommended_estimator.v1")(random_state=5)
    assert seeded.random_state == 5 and seeded.estimator.random_state == 5
    transforms = registry.misc.get("spacy_lpcfg.recommended_transforms.v1")
    assert transforms() == RECOMMENDED.transforms()
    assert transforms(keep_functions=False) == {**RECOMMENDED.transforms(), "keep_functions": False}


def test_recipes_project_ensemble_config_names_the_recipe():
    config = spacy.util.load_config(CONFIGS / "ensemble.cfg")
    block = config["components"]["lpcfg_parser"]
    assert block["estimator"]["@misc"] == "spacy_lpcfg.recommended_estimator.v1"
    assert block["transforms"]["@misc"] == "spacy_lpcfg.recommended_transforms.v1"
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    parser = nlp.get_pipe("lpcfg_parser")
    assert described(parser.estimator) == described(RECOMMENDED.make_estimator())
    assert parser.transforms == RECOMMENDED.transforms()


def test_recipes_component_fits_the_recipe(ptb_small, gold_examples):
    nlp = spacy.blank("en")
    config = {
        "estimator": {"@misc": "spacy_lpcfg.recommended_estimator.v1"},
        "transforms": {"@misc": "spacy_lpcfg.recommended_transforms.v1"},
    }
    parser = nlp.add_pipe("lpcfg_parser", config=config)
    parser.estimator.set_params(n_models=2, estimator__n_states=2)  # a quick fit
    examples = gold_examples(nlp, ptb_small[0][:60])
    nlp.initialize(lambda: examples)
    model = parser.parsing_model
    assert model.transform == TransformSpec(v_markov=1, scheme="penn", head_rules="collins")
    assert (
        model.estimator == "noisy_clustering" and len(model.training["ensemble"]) == 1
    )  # members 2..K
    doc = nlp("The company said it will sell its stake.")
    assert len(doc.spans["constituents"]) > 1


# spacy-lpcfg train --recipe ------------------------------------------------------------


def test_recipes_cli_trains_the_recipe(tmp_path, data_dir):
    model_dir = tmp_path / "recommended"
    result = _invoke(
        "train", "ptb_sample", model_dir, "--recipe", "recommended", "--limit", "40",
        "--data-dir", data_dir, "--json", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["estimator"], summary["recipe"], summary["n_models"], summary["trees"]) == (
        "clustering",
        "recommended",
        8,
        40,
    )
    spec = RECOMMENDED.transform_spec("penn", "en")
    trained = _trained_params(model_dir)
    assert trained["name"] == "noisy_clustering"
    assert trained["params"] == described(RECOMMENDED.make_estimator(spec, "en"))
    assert json.loads((model_dir / "transforms.json").read_text())["v_markov"] == 1


def test_recipes_cli_options_replace_the_recipes_values(tmp_path, data_dir):
    model_dir = tmp_path / "changed"
    result = _invoke(
        "train", "ptb_sample", model_dir, "--recipe", "recommended", "--limit", "30",
        "--n-models", "2", "--n-states", "2", "--no-functions", "--h-markov", "-1",
        "--data-dir", data_dir, "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    chosen = replace(RECOMMENDED, n_models=2, n_states=2, keep_functions=False, h_markov=None)
    spec = chosen.transform_spec("penn", "en")
    assert spec.v_markov == 1  # the recipe's, not the option's default
    trained = _trained_params(model_dir)
    assert trained["params"] == described(chosen.make_estimator(spec))


def test_recipes_cli_default_is_the_split_merge_product_with_a_labeller(tmp_path, data_dir):
    """train without options: three split-merge seeds over X-bar trees, decoded as one
    product, with a function labeller (BENCHMARKS.md "Defaults: candidate recipes on the four treebanks")."""
    model_dir = tmp_path / "default"
    result = _invoke("train", "ptb_sample", model_dir, "--limit", "40", "--data-dir", data_dir)
    assert result.exit_code == 0, result.output
    model = ParsingModel.from_disk(model_dir)
    assert model.estimator == "split_merge" and model.labeller is not None
    assert 1 + len(model.training["ensemble"]) == 3  # the seeds, one product
    assert not model.transform.keep_functions and model.transform.h_markov == 0


def test_recipes_cli_four_way_recipe(tmp_path, data_dir):
    model_dir = tmp_path / "four_way"
    result = _invoke(
        "train", "ptb_sample", model_dir, "--recipe", "four_way", "--limit", "40",
        "--data-dir", data_dir,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    model = ParsingModel.from_disk(model_dir)
    settings = [
        {name: getattr(part.transform, name) for name in FOUR_SETTINGS[0]} for part in model.parts
    ]
    assert settings == [dict(s) for s in FOUR_SETTINGS]
    assert {part.estimator for part in model.parts} == {"clustering"}
    assert model.decoder == "product"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--recipe", "best"], "[LPCFG-E011] Invalid value 'best' for 'recipe': one of default"),
        (["--recipe", "recommended", "--estimator", "mle"], "--n-models needs --estimator"),
        (["--estimator", "em"], "[LPCFG-E011] Invalid value 'em' for 'estimator'"),
    ],
)
def test_recipes_cli_bad_recipe_fails_before_reading(tmp_path, args, needle):
    # no data directory: the recipe is checked first
    result = _invoke("train", tmp_path / "missing.mrg", tmp_path / "m", *args)
    assert result.exit_code == 1, result.output
    assert needle in result.stderr
    assert not (tmp_path / "m").exists()


def test_project_combined_config_builds_the_four_settings():
    """combined.cfg (the ptb_sample project's default) names the four-way estimator:
    four clustering members with the settings of Le Roux et al. (2013)."""
    import spacy

    from spacy_lpcfg.estimators import ClusteringEstimator, CombinedEstimator
    from spacy_lpcfg.estimators.combined import FOUR_SETTINGS

    config = spacy.util.load_config(CONFIGS / "combined.cfg")
    block = config["components"]["lpcfg_parser"]
    assert block["estimator"]["@misc"] == "spacy_lpcfg.four_way_estimator.v1"
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    estimator = nlp.get_pipe("lpcfg_parser").estimator
    assert isinstance(estimator, CombinedEstimator)
    assert [dict(s) for s in estimator.member_transforms] == [dict(s) for s in FOUR_SETTINGS]
    assert all(
        isinstance(member, ClusteringEstimator) and member.n_states == 16
        for member in estimator.estimators
    )


def test_recipes_cli_one_models_transforms_need_one_model(tmp_path):
    result = _invoke(
        "train", tmp_path / "missing.mrg", tmp_path / "m", "--recipe", "four_way", "--no-functions"
    )
    assert result.exit_code == 1
    assert "--functions/--no-functions set the transforms of one model" in result.output
    assert "--estimator mle" in result.output and not (tmp_path / "m").exists()
