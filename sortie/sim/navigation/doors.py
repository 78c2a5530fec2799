"""Doors and gates for navigation.

The graph is built with every openable held open; then each one's closed geometry marks the
surfaces it would block.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from sortie.sim.navigation.clearance import near_hits, probe
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Dynamics, Scene, SceneObject
from sortie.sim.shapes import WalkerShape


def openables(scene: Scene) -> list[SceneObject]:
    """Return the scene's doors, gates and other openable objects, in scene order."""
    return [o for o in scene.objects if o.dynamics is Dynamics.OPENABLE]


def walkable_scene(scene: Scene) -> Scene:
    """Return the geometry the walker plans around: static objects and openables held open.

    Portable objects (a casualty, a carried box) are left out: they move during an episode
    and the graph must not depend on where they lie.
    """
    kept = []
    for obj in scene.objects:
        if obj.dynamics is Dynamics.PORTABLE:
            continue
        parts = obj.parts
        if obj.dynamics is Dynamics.OPENABLE and obj.open_transform is not None:
            parts = tuple(p.transformed(obj.open_transform) for p in parts)
        kept.append(SceneObject(obj.name, obj.semantic, parts))
    return Scene(kept, scene.bounds, origin=f"walkable part of {scene.origin or 'scene'}")


def door_blocks(
    scene: Scene, positions: NDArray[np.float64], cell: float, shape: WalkerShape
) -> tuple[tuple[str, ...], tuple[NDArray[np.int64], ...]]:
    """Return each openable's name and the nodes its closed geometry blocks."""
    names, blocks = [], []
    for obj in openables(scene):
        names.append(obj.name)
        blocks.append(_blocked_by(scene, obj, positions, cell, shape))
    return tuple(names), tuple(blocks)


def _blocked_by(
    scene: Scene, obj: SceneObject, positions: NDArray[np.float64], cell: float, shape: WalkerShape
) -> NDArray[np.int64]:
    low, high = obj.bounds()
    margin = shape.radius + 2 * cell
    near = np.flatnonzero(
        np.all(positions[:, :2] >= low[:2] - margin, axis=1)
        & np.all(positions[:, :2] <= high[:2] + margin, axis=1)
        & (positions[:, 2] >= low[2] - shape.height - margin)
        & (positions[:, 2] <= high[2] + margin)
    )
    if not near.size:
        return near.astype(np.int64)
    closed = Scene([SceneObject(obj.name, obj.semantic, obj.parts)], scene.bounds)
    probes = probe(RayCaster(closed), positions[near], cell, shape)
    return near[near_hits(positions[near], probes.points, shape)].astype(np.int64)
