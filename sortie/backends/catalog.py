"""Backends by name: what each can do, its arguments, and the one place one is built.

Every module outside ``sortie.backends`` chooses a backend by its registered name and
``-b key=value`` arguments, through the functions here; none imports a concrete backend. A
backend class declares its ``capabilities`` (bodies, interactions, images, which worlds it
can load); a run is checked against them before its first episode.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from sortie.core.errors import ConfigError, ParameterError
from sortie.core.registry import check_arguments

DEFAULT_BACKEND = "embedded"
"""The backend a run, a gymnasium env or generation uses when none is named."""
HARNESS_ARGS = ("body", "camera", "sensors")
"""Constructor arguments the harness sets (from the mission family and the agent), never ``-b``."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do, as ``sortie backends`` lists it and runs are checked against."""

    bodies: frozenset[str]
    """Bodies it can drive: ``walker`` (walking missions), ``multirotor`` (flight)."""
    interaction: bool
    """Whether it carries out grabs, drops and doors (``SupportsInteraction``)."""
    sensors: frozenset[str]
    """Images it renders: ``rgb``, ``depth``, ``semantic``."""
    worlds: str
    """Which worlds it loads, in words (e.g. ``embedded world builders``, ``unreal.<Map>``)."""
    cameras: bool = False
    """Whether it renders with any camera a run asks for (``--camera``); False: the
    simulator's own camera, set where the simulator is configured."""

    def summary(self) -> dict[str, str]:
        """Return the capabilities as short texts, for a table."""
        flight = "yes" if "multirotor" in self.bodies else "no"
        return {
            "bodies": ", ".join(sorted(self.bodies)),
            "flight": flight,
            "interaction": "yes" if self.interaction else "no",
            "sensors": ", ".join(sorted(self.sensors)),
            "cameras": "any" if self.cameras else "the simulator's",
            "worlds": self.worlds,
        }


@dataclass(frozen=True, slots=True)
class Needs:
    """What a run asks of its backend: the family's body, interactions, the agent's images."""

    family: str
    body: str
    interaction: bool
    sensors: frozenset[str]
    worlds: frozenset[str]
    """The world builder names of the run's episodes."""
    camera: Mapping[str, Any] | None = None
    """The camera the run asks for (``--camera``); None: the family's own."""


def backend_class(name: str) -> type:
    """Return the class registered as backend ``name`` (raising on a miss, with near names)."""
    from sortie.backends import BACKENDS

    return BACKENDS.get(name)


def capabilities_of(name: str) -> Capabilities:
    """Return the capabilities backend ``name`` declares."""
    caps = getattr(backend_class(name), "capabilities", None)
    if not isinstance(caps, Capabilities):
        raise ConfigError(f"backend {name!r} declares no capabilities (a Capabilities attribute)")
    return caps


def backend_parameters(name: str) -> list[inspect.Parameter]:
    """Return the constructor arguments a user may set with ``-b`` (not the harness's)."""
    signature = inspect.signature(backend_class(name))
    return [
        p
        for p in signature.parameters.values()
        if p.name not in HARNESS_ARGS and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def describe_parameter(parameter: inspect.Parameter) -> str:
    """Return ``name=default`` (or ``name`` when it has none), for listings."""
    if parameter.default is parameter.empty:
        return f"{parameter.name} (required)"
    return f"{parameter.name}={parameter.default!r}"


def resolve_args(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``args`` against backend ``name``'s arguments; convert text to the default's type.

    Raises:
        ParameterError: an argument the backend does not take (with a near name and the ones
            it takes), one the harness sets, or a value not of the default's type.
    """
    for key in args:
        if key in HARNESS_ARGS:
            raise ParameterError(
                f"backend {name!r}: -b {key} is set by the mission family and the agent, "
                "not on the command line"
            )
    check_arguments(
        f"backend {name!r}", backend_class(name), args, flag="-b", reserved=HARNESS_ARGS
    )
    parameters = {p.name: p for p in backend_parameters(name)}
    return {
        key: _convert(name, parameters[key], value) if key in parameters else value
        for key, value in args.items()
    }


def _convert(backend: str, parameter: inspect.Parameter, value: Any) -> Any:
    """Return ``value`` as the type of the parameter's default (text from the command line)."""
    default = parameter.default
    if not isinstance(value, str) or default is parameter.empty or default is None:
        return value
    kind = type(default)
    try:
        if kind is bool:
            return {"true": True, "1": True, "false": False, "0": False}[value.lower()]
        if kind not in (int, float):
            return value
        number = kind(value)
        if not math.isfinite(number):
            raise ValueError(value)
        return number
    except (KeyError, ValueError):
        allowed = {bool: "true or false", int: "an integer", float: "a finite number"}[kind]
        raise ParameterError(
            f"backend {backend!r}: -b {parameter.name}={value!r} is not {allowed}"
        ) from None


def refusal(name: str, needs: Needs) -> str | None:
    """Return why backend ``name`` cannot run what ``needs`` describes, or None if it can."""
    missing_client = _missing_client(name)
    if missing_client:
        return missing_client
    caps = capabilities_of(name)
    if needs.body not in caps.bodies:
        what = _BODY_NAMES.get(needs.body, f"a {needs.body} body")
        return f"{needs.family} missions need {what}; it drives only {', '.join(caps.bodies)}"
    if needs.interaction and not caps.interaction:
        return f"{needs.family} missions need interactions (carry, drop, doors); it has none"
    missing = needs.sensors - caps.sensors
    if missing:
        renders = ", ".join(sorted(caps.sensors)) or "none"
        return f"the agent needs {', '.join(sorted(missing))} images; it renders {renders}"
    if needs.camera is not None and not caps.cameras:
        return (
            f"the run asks for its own camera ({camera_text(needs.camera)}); it renders with "
            "the simulator's camera, which is set in the simulator (see docs/simulators.md)"
        )
    world_problem = getattr(backend_class(name), "world_problem", None)
    for world in sorted(needs.worlds):
        problem = world_problem(world) if world_problem else None
        if problem:
            return problem
    return None


def camera_text(camera: Mapping[str, Any]) -> str:
    """Return a camera as ``WxH@HFOV/PITCH`` (what ``--camera`` reads back)."""
    return f"{camera['width']}x{camera['height']}@{camera['hfov']:g}/{camera['pitch']:g}"


def _missing_client(name: str) -> str | None:
    """Return why backend ``name``'s client package is not there, or None when it is."""
    module = getattr(backend_class(name), "client_module", None)
    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return f"its client package {module!r} is not installed: {_install_hint(name)}"


def check_backend(name: str, needs: Needs) -> None:
    """Raise ConfigError (before any episode) if backend ``name`` cannot run ``needs``."""
    reason = refusal(name, needs)
    if reason:
        raise ConfigError(f"backend {name!r} cannot run this suite: {reason}")


def resolve_backend(name: str, args: Mapping[str, Any], needs: Needs) -> dict[str, Any]:
    """Return backend ``name``'s arguments checked and converted, once it can run ``needs``.

    What a run asks of its backend, in one call: ``resolve_args`` then ``check_backend``.

    Raises:
        ParameterError: see ``resolve_args``.
        ConfigError: see ``check_backend``.
    """
    resolved = resolve_args(name, args)
    check_backend(name, needs)
    return resolved


def build_backend(
    name: str,
    args: Mapping[str, Any],
    *,
    body: str,
    sensors: Collection[str],
    camera: Any = None,
) -> Any:
    """Build backend ``name`` with the harness's body, sensors and camera and the user's args."""
    harness: dict[str, Any] = {"body": body, "sensors": list(sensors)}
    if camera is not None:
        harness["camera"] = camera
    return backend_class(name)(**harness, **resolve_args(name, args))


def build_from_ref(ref: Any) -> Any:
    """Build the backend a ``PluginRef`` names: its own arguments and the harness's ones."""
    own = {k: v for k, v in ref.args.items() if k not in HARNESS_ARGS}
    harness = {k: ref.args[k] for k in HARNESS_ARGS if k in ref.args}
    return build_backend(ref.name, own, **harness)


def backend_table() -> list[dict[str, str]]:
    """Return one row per registered backend: name, capabilities, arguments, extra."""
    from sortie.backends import BACKENDS

    rows = []
    for name in BACKENDS.names():
        arguments = "\n".join(describe_parameter(p) for p in backend_parameters(name))
        rows.append(
            {"backend": name}
            | capabilities_of(name).summary()
            | {"arguments (-b)": arguments or "none", "install": _install_hint(name)}
        )
    return rows


def _install_hint(name: str) -> str:
    """Return the pip extra backend ``name`` needs, or ``built in``."""
    extra = getattr(backend_class(name), "extra", None)
    return f"pip install 'sortie[{extra}]'" if extra else "built in"


_BODY_NAMES = {
    "walker": "a walker body",
    "multirotor": "flight (a multirotor body)",
    "manipulator": "a mobile manipulator body",
}
