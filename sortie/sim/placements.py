"""Objects an episode adds to a built world: the casualty, the stretcher, the ambulance."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sortie.core.episode import Placement
from sortie.core.errors import ConfigError
from sortie.core.registry import Registry
from sortie.sim.assets.people import Outfit, add_person, random_outfit
from sortie.sim.assets.props import add_stretcher
from sortie.sim.assets.vehicles import add_ambulance
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import pose_matrix
from sortie.sim.scene import Scene, SceneObject

PlaceFunction = Callable[[WorldKit, np.random.Generator, Placement], SceneObject]
PLACEABLE: Registry[PlaceFunction] = Registry("placeable asset")
OUTFIT_FIELDS = ("top", "top_color", "bottom", "bottom_color", "hair")


@PLACEABLE.register("person")
def _person(kit: WorldKit, rng: np.random.Generator, placement: Placement) -> SceneObject:
    outfit = random_outfit(rng)
    given = {k: v for k, v in placement.attributes.items() if k in OUTFIT_FIELDS}
    outfit = Outfit(**{**{f: getattr(outfit, f) for f in OUTFIT_FIELDS}, **given}, skin=outfit.skin)
    p = placement.pose
    posture = placement.attributes.get("posture", "lying")
    return add_person(kit, rng, (p.x, p.y, 0.0), p.yaw, posture, outfit, placement.name)


@PLACEABLE.register("stretcher")
def _stretcher(kit: WorldKit, rng: np.random.Generator, placement: Placement) -> SceneObject:
    p = placement.pose
    obj = add_stretcher(kit, (p.x, p.y), p.yaw, placement.attributes.get("color", "orange"))
    return _renamed(kit, obj, placement.name)


@PLACEABLE.register("ambulance")
def _ambulance(kit: WorldKit, rng: np.random.Generator, placement: Placement) -> SceneObject:
    p = placement.pose
    obj = add_ambulance(kit, rng, (p.x, p.y), p.yaw, placement.attributes.get("plate"))
    return _renamed(kit, obj, placement.name)


def with_placements(scene: Scene, placements: Sequence[Placement], seed: int) -> Scene:
    """Return ``scene`` with the placements added (each lifted to its pose's height)."""
    if not placements:
        return scene
    kit = WorldKit(origin=scene.origin)
    rng = np.random.default_rng(seed)
    for placement in placements:
        if placement.name in scene:
            raise ConfigError(
                f"placement {placement.name!r}: the world already has an object of that name"
            )
        obj = PLACEABLE.get(placement.asset)(kit, rng, placement)
        _lift(kit, obj, placement.pose.z)
    return Scene(
        [*scene.objects, *kit.objects],
        scene.bounds,
        scene.lighting,
        scene.topdown_cut,
        scene.origin,
        scene.routes,
    )


def _renamed(kit: WorldKit, obj: SceneObject, name: str) -> SceneObject:
    renamed = SceneObject(
        name,
        obj.semantic,
        obj.parts,
        obj.attributes,
        obj.dynamics,
        obj.open_transform,
        obj.starts_open,
    )
    kit.objects[kit.objects.index(obj)] = renamed
    return renamed


def _lift(kit: WorldKit, obj: SceneObject, z: float) -> None:
    """Raise an object built on z = 0 to stand at height ``z``."""
    if z == 0.0:
        return
    index = next(i for i, o in enumerate(kit.objects) if o.name == obj.name)
    moved = tuple(part.transformed(pose_matrix((0.0, 0.0, z))) for part in obj.parts)
    kit.objects[index] = SceneObject(
        obj.name,
        obj.semantic,
        moved,
        obj.attributes,
        obj.dynamics,
        obj.open_transform,
        obj.starts_open,
    )
