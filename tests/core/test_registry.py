import pytest

from sortie.core.errors import MissingExtraError, UnknownNameError
from sortie.core.registry import Registry


def _registry() -> Registry[str]:
    registry: Registry[str] = Registry("agent")
    for name in ("oracle", "explorer", "random"):
        registry.add(name, name.upper())
    return registry


def test_register_decorator_returns_its_target():
    """The decorator registers the function and leaves it unchanged."""
    registry: Registry[object] = Registry("metric")

    @registry.register("spl")
    def spl() -> float:
        return 1.0

    assert registry.get("spl") is spl and spl() == 1.0


def test_miss_suggests_the_closest_name_and_lists_all():
    """A misspelt name reads 'Did you mean ...? Available: ...'."""
    with pytest.raises(UnknownNameError) as info:
        _registry().get("oracel")
    assert str(info.value) == (
        "Unknown agent 'oracel'. Did you mean 'oracle'? Available: explorer, oracle, random"
    )


def test_lazy_entry_with_missing_module_names_the_extra():
    """A lazy entry whose module is not installed says which extra to install."""
    registry: Registry[object] = Registry("backend")
    registry.add("airsim", "sortie_no_such_module_xyz:Backend", extra="airsim")
    with pytest.raises(MissingExtraError, match=r"pip install sortie\[airsim\]"):
        registry.get("airsim")


def test_lazy_entry_is_imported_on_first_use():
    """A lazy 'module:attr' entry resolves to the attribute."""
    registry: Registry[object] = Registry("function")
    registry.add("dumps", "json:dumps")
    import json

    assert registry.get("dumps") is json.dumps


def test_duplicate_registration_is_refused():
    """Registering the same name twice raises."""
    with pytest.raises(ValueError, match="already registered"):
        _registry().add("oracle", "again")


def test_override_stands_in_for_an_entry_and_restores_it():
    """Inside ``override`` the double answers; afterwards the original (or nothing) is back."""
    registry: Registry[int] = Registry("thing")
    registry.add("a", 1)
    with registry.override("a", 2), registry.override("b", 3):
        assert (registry.get("a"), registry.get("b")) == (2, 3)
    assert registry.get("a") == 1 and "b" not in registry
