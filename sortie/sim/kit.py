"""The kit a world builder fills: objects with unique names, then a finished Scene."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from sortie.sim.mesh import Mesh
from sortie.sim.scene import (
    LIGHTING_PRESETS,
    AttributeValue,
    Dynamics,
    Route,
    Scene,
    SceneObject,
)


@dataclass
class WorldKit:
    """Collects a builder's objects, giving each a unique name (``car_0``, ``car_1``, ...)."""

    origin: str
    objects: list[SceneObject] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)

    def add(
        self,
        semantic: str,
        parts: Mesh | list[Mesh] | tuple[Mesh, ...],
        name: str | None = None,
        dynamics: Dynamics = Dynamics.STATIC,
        open_transform: np.ndarray | None = None,
        **attributes: AttributeValue,
    ) -> SceneObject:
        """Add an object and return it; ``name`` defaults to ``<semantic>_<n>``."""
        if name is None:
            n = self._counts.get(semantic, 0)
            self._counts[semantic] = n + 1
            name = f"{semantic}_{n}"
        meshes = (parts,) if isinstance(parts, Mesh) else tuple(parts)
        obj = SceneObject(name, semantic, meshes, dict(attributes), dynamics, open_transform)
        self.objects.append(obj)
        return obj

    def scene(
        self,
        bounds: tuple[float, float, float, float],
        lighting: str = "day",
        topdown_cut: float | None = None,
        routes: Mapping[str, Route] | None = None,
    ) -> Scene:
        """Return the finished scene (``routes``: named patrol routes, if the world has any)."""
        return Scene(
            self.objects, bounds, LIGHTING_PRESETS[lighting], topdown_cut, self.origin, routes
        )
