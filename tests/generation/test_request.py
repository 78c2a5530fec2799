import inspect

import pytest

from sortie.missions.registry import FAMILIES


@pytest.mark.parametrize("name", ["rescue", "aerial", "household"])
def test_each_family_names_a_generator_beside_its_own_generation_code(name):
    """A shipped family's generator lives in its family's generation module, not a gatherer."""
    generator = FAMILIES.get(name).load_generator()
    assert generator.__module__.startswith(f"sortie.generation.{name}")
    assert list(inspect.signature(generator).parameters) == ["request", "echo"]
