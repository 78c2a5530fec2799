"""World builders: validated parameters, one seeded generator, a kit for naming objects."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from sortie.core.errors import ParameterError, UnknownNameError, did_you_mean
from sortie.core.registry import Registry
from sortie.sim.kit import WorldKit
from sortie.sim.scene import LIGHTING_PRESETS, Scene

ParamValue = float | int | str


@dataclass(frozen=True, slots=True)
class Param:
    """One builder parameter: a number within ``[low, high]`` or one of ``choices``."""

    name: str
    default: ParamValue
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: object, where: str) -> ParamValue:
        """Return ``value`` converted to this parameter's type, or raise saying what is allowed."""
        if self.choices:
            if value not in self.choices:
                raise ParameterError(
                    f"{where}: {self.name}={value!r} is not one of {', '.join(self.choices)}"
                )
            return str(value)
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ParameterError(f"{where}: {self.name}={value!r} is not a number") from None
        assert self.low is not None and self.high is not None
        if not self.low <= number <= self.high:
            raise ParameterError(
                f"{where}: {self.name}={value!r} is outside the allowed range "
                f"{self.low:g}..{self.high:g}"
            )
        return int(number) if isinstance(self.default, int) else number

    def describe(self) -> str:
        """Return the allowed values and default as one short string."""
        allowed = "|".join(self.choices) if self.choices else f"{self.low:g}..{self.high:g}"
        return f"{allowed} (default {self.default})"


LIGHTING = Param("lighting", "day", "sun and sky preset", choices=tuple(LIGHTING_PRESETS))
CLUTTER = Param("clutter", 0.5, "density of props and obstacles", 0.0, 1.0)

BuildFunction = Callable[["WorldKit", np.random.Generator, Mapping[str, ParamValue]], Scene]


@dataclass(frozen=True, slots=True)
class WorldBuilder:
    """A registered builder: its name, parameters, what it makes and the function."""

    name: str
    summary: str
    params: tuple[Param, ...]
    build: BuildFunction

    def resolve(self, params: Mapping[str, object] | None) -> dict[str, ParamValue]:
        """Fill defaults and validate ``params``, naming unknown keys with suggestions."""
        known = {p.name: p for p in self.params}
        where = f"world {self.name!r}"
        for key in params or {}:
            if key not in known:
                hint = did_you_mean(key, known)
                raise UnknownNameError(
                    f"{where}: unknown parameter {key!r}.{hint} Available: {', '.join(known)}"
                )
        given = dict(params or {})
        return {n: p.check(given.get(n, p.default), where) for n, p in known.items()}


WORLDS: Registry[WorldBuilder] = Registry("world builder")


def world(
    name: str, summary: str, params: tuple[Param, ...]
) -> Callable[[BuildFunction], BuildFunction]:
    """Register the decorated function as world builder ``name``."""

    def decorate(function: BuildFunction) -> BuildFunction:
        WORLDS.add(name, WorldBuilder(name, summary, params, function))
        return function

    return decorate


def build_world(name: str, seed: int, params: Mapping[str, object] | None = None) -> Scene:
    """Build world ``name`` from ``seed`` and ``params``; same inputs, same scene, bit for bit."""
    builder = WORLDS.get(name)
    if not isinstance(seed, int) or seed < 0:
        raise ParameterError(f"world {name!r}: seed must be a non-negative integer, got {seed!r}")
    resolved = builder.resolve(params)
    kit = WorldKit(origin=f"{name}(seed={seed})")
    scene = builder.build(kit, np.random.default_rng(seed), resolved)
    return scene
