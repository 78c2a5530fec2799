"""The scene graph: named objects with meshes, a semantic class, attributes and dynamic state.

Static objects never move. Dynamic objects (doors, gates, containers, things that can be
carried) keep their built geometry and a current transform; the renderer and the ray caster
rebuild only the dynamic part when one of them changes (``Scene.version`` counts changes).
Copies made by ``Scene.fresh_copy`` share the objects and keep their own state, so several
episodes can run in one built world at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ConfigError
from sortie.sim.mesh import Mesh
from sortie.sim.semantics import class_id

AttributeValue = str | float | int | bool
Route = tuple[tuple[float, float], ...]
"""A patrol route: ground points ``(x, y)`` in metres, flown in order."""


class Dynamics(StrEnum):
    """How an object may change during an episode."""

    STATIC = "static"
    OPENABLE = "openable"  # doors, gates, containers: open or closed
    PORTABLE = "portable"  # can be picked up and carried


@dataclass(frozen=True, slots=True, eq=False)
class SceneObject:
    """One named thing in the world.

    Attributes:
        name: unique name in the scene, e.g. ``person_3``.
        semantic: semantic class name (see ``sortie.sim.semantics``).
        parts: meshes in world coordinates, as built (closed, not held).
        attributes: what clues and reports may mention: colours, clothing, text, kind.
        dynamics: whether it can open or be carried.
        open_transform: 4x4 transform from the closed to the open geometry (openables).
        starts_open: the state an openable starts in.
    """

    name: str
    semantic: str
    parts: tuple[Mesh, ...]
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    dynamics: Dynamics = Dynamics.STATIC
    open_transform: NDArray[np.float64] | None = None
    starts_open: bool = False
    _bounds: tuple[NDArray[np.float32], NDArray[np.float32]] | None = field(
        default=None, init=False, repr=False
    )

    @property
    def is_dynamic(self) -> bool:
        """Return whether the object can move."""
        return self.dynamics is not Dynamics.STATIC

    def bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Return the (min, max) corners of its built geometry (read-only arrays, kept)."""
        if self._bounds is None:
            lows, highs = zip(*(p.bounds() for p in self.parts), strict=True)
            low, high = np.min(lows, axis=0), np.max(highs, axis=0)
            low.flags.writeable = high.flags.writeable = False
            object.__setattr__(self, "_bounds", (low, high))
        assert self._bounds is not None
        return self._bounds

    def center(self) -> NDArray[np.float32]:
        """Return the centre of its built bounding box."""
        low, high = self.bounds()
        return ((low + high) / 2).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Lighting:
    """Sun and sky of a world; colours are linear RGB in 0..1."""

    sun_direction: tuple[float, float, float] = (0.4, 0.3, 0.87)
    sun: float = 0.75
    ambient: float = 0.35
    sky_top: tuple[float, float, float] = (0.35, 0.55, 0.9)
    sky_horizon: tuple[float, float, float] = (0.8, 0.87, 0.95)
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)


LIGHTING_PRESETS: dict[str, Lighting] = {
    "day": Lighting(),
    "overcast": Lighting((0.2, 0.1, 0.97), 0.35, 0.6, (0.6, 0.63, 0.68), (0.8, 0.8, 0.82)),
    "dusk": Lighting(
        (-0.8, 0.3, 0.25), 0.6, 0.3, (0.25, 0.25, 0.5), (0.95, 0.6, 0.4), (1.0, 0.85, 0.7)
    ),
    "night": Lighting(
        (0.3, 0.2, 0.93), 0.15, 0.25, (0.02, 0.03, 0.08), (0.08, 0.1, 0.18), (0.7, 0.75, 1.0)
    ),
}


class Scene:
    """A built world: its objects, extent, lighting and the dynamic objects' current state."""

    def __init__(
        self,
        objects: Iterable[SceneObject],
        bounds: tuple[float, float, float, float],
        lighting: Lighting = Lighting(),
        topdown_cut: float | None = None,
        origin: str = "",
        routes: Mapping[str, Route] | None = None,
    ) -> None:
        """Create a scene.

        Args:
            objects: the scene's objects; names must be unique.
            bounds: walkable extent ``(xmin, ymin, xmax, ymax)`` in metres.
            lighting: sun and sky.
            topdown_cut: height above which the top-down map ignores geometry (roofs,
                ceilings); None shows everything.
            origin: how it was built, e.g. ``suburb(seed=3)``.
            routes: named patrol routes (along roads, fences, perimeters); most ground worlds
                have none.
        """
        self.objects: tuple[SceneObject, ...] = tuple(objects)
        self.bounds = bounds
        self.lighting = lighting
        self.topdown_cut = topdown_cut
        self.origin = origin
        self.routes: dict[str, Route] = {
            name: tuple((float(x), float(y)) for x, y in points)
            for name, points in (routes or {}).items()
        }
        self._index = {o.name: i for i, o in enumerate(self.objects)}
        if len(self._index) != len(self.objects):
            names = [o.name for o in self.objects]
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise ConfigError(f"{origin or 'scene'}: duplicate object names: {', '.join(dupes)}")
        self.class_ids = np.array([0] + [class_id(o.semantic) for o in self.objects], np.int32)
        self.class_ids.flags.writeable = False  # shared by the scene's copies
        self.version = 0
        self._open = {
            o.name: o.starts_open for o in self.objects if o.dynamics is Dynamics.OPENABLE
        }
        self._transforms: dict[str, NDArray[np.float64]] = {}
        self._hidden: set[str] = set()
        self._changed: dict[str, int] = {}  # the version of each object's last change
        self._reset = 0  # the version of the last reset, which changed every dynamic object
        self.pristine = True
        """Whether every dynamic object is surely in its built state (False: maybe not)."""

    def fresh_copy(self) -> Scene:
        """Return a scene with the same objects (shared, not copied), in the built state.

        The copy's state is its own: opening a door or moving an object in one leaves the
        other as it was. Objects, extent, lighting, routes and class ids are shared and never
        changed.
        """
        copy = object.__new__(Scene)
        copy.__dict__.update(self.__dict__)
        copy.version = 0
        copy._open = {n: self[n].starts_open for n in self._open}
        copy._transforms, copy._hidden, copy.pristine = {}, set(), True
        copy._changed, copy._reset = {}, 0
        return copy

    def __getitem__(self, name: str) -> SceneObject:
        return self.objects[self.id_of(name) - 1]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def id_of(self, name: str) -> int:
        """Return the instance id (1-based; 0 means nothing) of object ``name``."""
        try:
            return self._index[name] + 1
        except KeyError:
            raise ConfigError(f"{self.origin or 'scene'}: no object named {name!r}") from None

    def of_class(self, semantic: str) -> list[SceneObject]:
        """Return the objects of one semantic class, in scene order."""
        return [o for o in self.objects if o.semantic == semantic]

    def is_open(self, name: str) -> bool:
        """Return whether openable object ``name`` is open."""
        if name not in self._open:
            raise ConfigError(f"{self.origin or 'scene'}: {name!r} is not openable")
        return self._open[name]

    def set_open(self, name: str, is_open: bool) -> None:
        """Open or close openable object ``name``."""
        if self.is_open(name) != is_open:
            self._open[name] = is_open
            self._change(name)

    def set_transform(self, name: str, matrix: NDArray[np.float64] | None) -> None:
        """Move dynamic object ``name`` by ``matrix`` from where it was built (None: back)."""
        if not self[name].is_dynamic:
            raise ConfigError(f"{self.origin or 'scene'}: {name!r} is static and cannot move")
        if matrix is None:
            self._transforms.pop(name, None)
        else:
            self._transforms[name] = np.asarray(matrix, dtype=np.float64)
        self._change(name)

    def set_hidden(self, name: str, hidden: bool) -> None:
        """Hide or show dynamic object ``name`` (a carried body is not drawn)."""
        if hidden != (name in self._hidden):
            self._hidden.symmetric_difference_update({name})
            self._change(name)

    def _change(self, name: str) -> None:
        """Count a change of object ``name``'s state."""
        self.version += 1
        self._changed[name] = self.version
        self.pristine = False

    def changed_at(self, name: str) -> int:
        """Return the ``version`` at which object ``name``'s state last changed (0: never).

        What ``current_parts`` gives for an object depends on its own state only, so what is
        derived from its meshes holds while this stays the same, whatever else moves.
        """
        return max(self._changed.get(name, 0), self._reset)

    def current_parts(self, obj: SceneObject) -> tuple[Mesh, ...]:
        """Return an object's meshes where they are now (empty when hidden)."""
        if obj.name in self._hidden:
            return ()
        parts = obj.parts
        if self._open.get(obj.name) and obj.open_transform is not None:
            parts = tuple(p.transformed(obj.open_transform) for p in parts)
        if obj.name in self._transforms:
            parts = tuple(p.transformed(self._transforms[obj.name]) for p in parts)
        return parts

    def dynamic_state(self) -> tuple[object, ...]:
        """Return what decides where the dynamic objects' meshes are now (``current_parts``).

        Two states that compare equal give the same meshes, bit for bit: a hidden object's
        move changes nothing drawn (a carried body follows its carrier every step).
        """
        hidden = self._hidden
        opened = tuple(
            sorted(n for n, is_open in self._open.items() if is_open and n not in hidden)
        )
        moved = tuple(
            (n, m.tobytes()) for n, m in sorted(self._transforms.items()) if n not in hidden
        )
        return tuple(sorted(hidden)), opened, moved

    def reset_state(self) -> None:
        """Put every dynamic object back in its built state."""
        self._open = {n: self[n].starts_open for n in self._open}
        self._transforms.clear()
        self._hidden.clear()
        self.version += 1
        self._changed.clear()
        self._reset = self.version
        self.pristine = True

    def digest(self) -> str:
        """Return a SHA-256 of the built geometry, names, classes and attributes."""
        h = hashlib.sha256()
        for obj in self.objects:
            meta = [obj.name, obj.semantic, obj.dynamics.value, obj.starts_open, obj.attributes]
            h.update(json.dumps(meta, sort_keys=True).encode())
            for part in obj.parts:
                for array in (part.vertices, part.faces, part.colors, part.uvs, part.texture):
                    if array is not None:
                        h.update(np.ascontiguousarray(array).tobytes())
            if obj.open_transform is not None:
                h.update(obj.open_transform.tobytes())
        h.update(json.dumps([self.bounds, self.topdown_cut]).encode())
        if self.routes:  # only worlds with routes hash them: older digests stay as they were
            h.update(json.dumps(sorted(self.routes.items())).encode())
        return h.hexdigest()
