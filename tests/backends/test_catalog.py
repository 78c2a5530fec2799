import ast
from pathlib import Path

import pytest

import sortie
from sortie.backends import BACKENDS
from sortie.backends.catalog import (
    Capabilities,
    Needs,
    backend_table,
    build_backend,
    check_backend,
    refusal,
    resolve_args,
    resolve_backend,
)
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError, ParameterError


class Tuned(EmbeddedBackend):
    """An embedded backend with arguments of its own, standing in for a remote one."""

    def __init__(self, body="walker", camera=None, sensors=(), port: int = 9000, fast=False):
        super().__init__(body=body, camera=camera, sensors=sensors)
        self.port, self.fast = port, fast


class WalkOnly(EmbeddedBackend):
    """An embedded backend declaring walking with only RGB and no interactions."""

    capabilities = Capabilities(frozenset({"walker"}), False, frozenset({"rgb"}), "any")


def _needs(body="walker", interaction=True, sensors=(), worlds=("flexible_room",)):
    return Needs("rescue", body, interaction, frozenset(sensors), frozenset(worlds))


def test_text_arguments_take_the_type_of_their_default():
    """-b port=9001 reaches the backend as the integer 9001, fast=true as True."""
    with BACKENDS.override("tuned", Tuned):
        assert resolve_args("tuned", {"port": "9001", "fast": "true"}) == {
            "port": 9001,
            "fast": True,
        }


def test_an_unknown_argument_is_refused_with_a_near_name():
    """-b prot=1 names the backend, suggests 'port' and lists the arguments."""
    with BACKENDS.override("tuned", Tuned):
        with pytest.raises(ParameterError, match=r"no argument 'prot'\. Did you mean 'port'\?"):
            resolve_args("tuned", {"prot": "1"})


def test_a_value_of_the_wrong_type_is_refused():
    """-b port=abc says the value is not an integer."""
    with BACKENDS.override("tuned", Tuned):
        with pytest.raises(ParameterError, match=r"port='abc' is not an integer"):
            resolve_args("tuned", {"port": "abc"})


def test_a_non_finite_number_is_refused():
    """-b control_period=nan is refused: a float argument must be finite."""
    with pytest.raises(ParameterError, match=r"control_period='nan' is not a finite number"):
        resolve_args("embedded", {"control_period": "nan"})


def test_the_harness_arguments_cannot_be_set_with_b():
    """-b body=multirotor is refused: the mission family sets the body."""
    with pytest.raises(ParameterError, match="-b body is set by the mission family"):
        resolve_args("embedded", {"body": "multirotor"})


def test_resolve_backend_refuses_needs_it_cannot_meet_after_checking_its_arguments():
    """A walker-only backend with good arguments is refused for flight, naming the body."""
    with BACKENDS.override("walk-only", WalkOnly):
        with pytest.raises(ConfigError, match="cannot run this suite: .*multirotor"):
            resolve_backend("walk-only", {"control_period": "0.1"}, _needs(body="multirotor"))


def test_resolve_backend_returns_the_converted_arguments_for_needs_it_meets():
    """The embedded backend runs a rescue walker and hands back -b control_period as a float."""
    assert resolve_backend("embedded", {"control_period": "0.1"}, _needs()) == {
        "control_period": 0.1
    }


def test_build_backend_hands_over_the_converted_arguments():
    """The built backend got the port from -b and the body from the harness."""
    with BACKENDS.override("tuned", Tuned):
        backend = build_backend("tuned", {"port": "7"}, body="multirotor", sensors=())
    assert (backend.port, backend.body_kind) == (7, "multirotor")


def test_flight_on_a_walking_backend_is_refused_with_the_reason():
    """An aerial need on a walker-only backend says flight is what is missing."""
    with BACKENDS.override("walk", WalkOnly):
        reason = refusal("walk", _needs(body="multirotor", interaction=False))
    assert reason is not None and "need flight" in reason


def test_rescue_on_a_backend_without_interactions_is_refused():
    """A rescue need on a backend without interactions names carrying and doors."""
    with BACKENDS.override("walk", WalkOnly):
        with pytest.raises(ConfigError, match=r"need interactions \(carry, drop, doors\)"):
            check_backend("walk", _needs())


def test_images_the_backend_does_not_render_are_refused():
    """An agent needing depth on an RGB-only backend is told which images are missing."""
    with BACKENDS.override("walk", WalkOnly):
        reason = refusal("walk", _needs(interaction=False, sensors=("rgb", "depth")))
    assert reason == "the agent needs depth images; it renders rgb"


def test_the_embedded_backend_refuses_a_real_simulator_map():
    """An imported unreal.Forglar_Map world is refused as an external simulator's map."""
    reason = refusal("embedded", _needs(worlds=("unreal.Forglar_Map",)))
    assert reason is not None and "'unreal.Forglar_Map' is a map of an external simulator" in reason


def test_the_embedded_backend_accepts_its_own_worlds():
    """A rescue need on a packaged world passes the embedded backend's check."""
    assert refusal("embedded", _needs(sensors=("rgb", "depth", "semantic"))) is None


def test_the_table_lists_each_backend_with_flight_and_interaction():
    """The embedded row says it flies and interacts and takes control_period."""
    rows = {row["backend"]: row for row in backend_table()}
    embedded = rows["embedded"]
    assert (embedded["flight"], embedded["interaction"]) == ("yes", "yes")
    assert "control_period=0.2" in embedded["arguments (-b)"]


def test_no_module_outside_backends_imports_a_concrete_backend():
    """Only sortie/backends imports sortie.backends.<concrete module>."""
    root = Path(sortie.__file__).parent
    concrete = {f"sortie.backends.{m}" for m in ("embedded", "unrealcv", "airsim")}
    found = []
    for path in root.rglob("*.py"):
        if path.is_relative_to(root / "backends") or path.is_relative_to(root / "testing"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in concrete:
                found.append(f"{path.relative_to(root)}: {node.module}")
    assert found == []


class NeedsAClient(EmbeddedBackend):
    """An embedded backend that says it talks through a package that is not installed."""

    extra = "unreal"
    client_module = "no_such_client_package_for_sortie"


def test_a_backend_whose_client_package_is_missing_is_refused_once_before_the_run():
    """The refusal names the package and the pip extra, instead of an error per episode."""
    with BACKENDS.override("needy", NeedsAClient):
        with pytest.raises(ConfigError, match=r"cannot run this suite: its client package "):
            check_backend("needy", _needs())
        assert "pip install 'sortie[unreal]'" in (refusal("needy", _needs()) or "")
    installed = refusal("unrealcv", _needs(sensors=("rgb",), worlds=("unreal.FlexibleRoom",)))
    assert installed is None  # make test installs the unreal extra
