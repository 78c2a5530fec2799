"""The family descriptors: settings checked with near names, and each part fits the others."""

import importlib
import inspect

import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ParameterError
from sortie.missions.registry import FAMILIES
from sortie.missions.runtime import MissionRuntime


def test_a_misspelt_setting_is_refused_with_the_near_name_and_the_list():
    with pytest.raises(ParameterError, match=r"no setting 'skill'\. Did you mean 'skills'\?.*"):
        FAMILIES.get("household").parse_settings({"skill": "perfect"})


def test_a_value_the_model_refuses_names_what_is_allowed():
    with pytest.raises(ParameterError, match=r"setting='sensor'.*'privileged' or 'sensor-only'"):
        FAMILIES.get("household").parse_settings({"setting": "sensor"})


def test_settings_not_given_take_their_defaults():
    settings = FAMILIES.get("rescue").parse_settings({}).model_dump(mode="json")
    assert settings == {"triggers": "assisted"}


@pytest.mark.parametrize("name", FAMILIES.names())
def test_each_family_runtime_takes_its_settings_as_one_model(name):
    """The constructor takes ``settings``, and no setting by name (with a default of its own)."""
    family = FAMILIES.get(name)
    runtime = family.load_runtime()
    assert issubclass(runtime, MissionRuntime) and runtime.family == name
    taken = set(inspect.signature(runtime).parameters)
    assert "settings" in taken and not taken & set(family.settings.model_fields)


@pytest.mark.parametrize("name", FAMILIES.names())
def test_a_runtime_built_without_settings_plays_with_the_models_defaults(name):
    """Defaults live in the settings model only: a runtime given None holds the model's."""
    family = FAMILIES.get(name)
    backend = EmbeddedBackend(body=family.body, sensors=())
    try:
        runtime = family.load_runtime()(backend)
        assert runtime.settings == family.settings()
    finally:
        backend.close()


@pytest.mark.parametrize("name", FAMILIES.names())
def test_a_runtime_keeps_the_settings_instance_it_is_given(name):
    """Settings are parsed once: the runtime holds the run's instance, not a copy re-parsed."""
    family = FAMILIES.get(name)
    settings = family.parse_settings({})
    backend = EmbeddedBackend(body=family.body, sensors=())
    try:
        assert family.load_runtime()(backend, settings=settings).settings is settings
    finally:
        backend.close()


@pytest.mark.parametrize("name", FAMILIES.names())
def test_each_env_leaves_the_defaults_of_its_setting_keywords_to_the_model(name):
    """A gym env's setting keywords default to None: the model fills them in, once."""
    family = FAMILIES.get(name)
    module, _, attr = family.env.partition(":")
    parameters = inspect.signature(getattr(importlib.import_module(module), attr)).parameters
    named = set(family.settings.model_fields) & set(parameters)
    assert named and all(parameters[field].default is None for field in named)


def test_a_setting_an_env_is_given_is_checked_by_the_model_naming_the_keyword():
    """RescueEnv(triggers="natve") is refused naming the keyword and what is allowed."""
    from sortie.missions.rescue.env import RescueEnv

    with pytest.raises(ParameterError, match=r"rescue env's keyword triggers='natve'.*'native'"):
        RescueEnv(suite="rescue-smoke-v2", triggers="natve")
