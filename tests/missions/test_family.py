"""The family descriptors: settings checked with near names, and each part fits the others."""

import inspect

import pytest

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
def test_each_family_runtime_takes_exactly_its_settings(name):
    """Settings and constructor agree: an extra setting would fail every episode."""
    family = FAMILIES.get(name)
    runtime = family.load_runtime()
    assert issubclass(runtime, MissionRuntime) and runtime.family == name
    taken = set(inspect.signature(runtime).parameters) - {"backend", "clock", "control_period"}
    assert taken - {"rules"} == set(family.settings.model_fields)
