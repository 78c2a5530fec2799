"""Where a rescue episode's objects go: the stretcher and ambulance, the start, the casualty.

Sampling runs on the navigation graph of the bare world (``Site``). Placed objects keep a
ring of free floor around them (``CLEARANCE``), so a way always leads round them and the
graph of the finished world differs only near them; the finished world's own graph then
gives the episode's stored distances (see ``validate``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from sortie.generation.rejected import Rejected
from sortie.sim.navigation import NavGraph
from sortie.sim.scene import Scene
from sortie.sim.semantics import SEMANTIC_CLASSES, class_id

OUTDOOR = ("road", "ground", "sidewalk", "grass")
"""Surfaces an ambulance can stand on; a world without them (a room) gets only a stretcher."""
LYING_ON = ("ground", "floor", "road", "sidewalk", "grass", "platform")
"""Surfaces a casualty may lie on (not stairs or ramps: a body would slide)."""
AMBULANCE = (5.6, 2.1)
"""Length and width in metres (``sortie.sim.assets.vehicles.ambulance_meshes``)."""
STRETCHER = (2.0, 0.65)
"""Length and width in metres (``sortie.sim.assets.props.add_stretcher``)."""
BEHIND_AMBULANCE = 2.8 + 1.2 + STRETCHER[0] / 2
"""From the ambulance's centre back to the stretcher's: 1.2 m free behind its rear doors."""
CLEARANCE = 1.0
"""Free floor kept around placed objects: a walker (radius 0.3) can always pass round."""
START_DISTANCE = (2.0, 6.0)
"""Horizontal distance from the start to the stretcher, metres (docs/rescue.md, Rules: the task)."""
BODY_LENGTH = 1.9
"""Floor a lying casualty needs along its yaw, metres (a 1.75 m body with its arms)."""
LAYERS = 0.45
"""Largest 3D gap from a point to a node for the point to count as walkable floor."""


@dataclass(frozen=True, slots=True)
class Footprint:
    """A rectangle on the floor at height ``z``, centred at (x, y), ``length`` along ``yaw``."""

    x: float
    y: float
    yaw: float
    length: float
    width: float
    z: float = 0.0

    def contains(self, points: NDArray[np.float64], margin: float = 0.0) -> NDArray[np.bool_]:
        """Return which (N, 2+) points lie within the rectangle grown by ``margin``."""
        c, s = math.cos(math.radians(self.yaw)), math.sin(math.radians(self.yaw))
        dx, dy = points[:, 0] - self.x, points[:, 1] - self.y
        along, across = dx * c + dy * s, -dx * s + dy * c
        return (np.abs(along) <= self.length / 2 + margin) & (
            np.abs(across) <= self.width / 2 + margin
        )

    def lattice(self, margin: float, step: float = 0.25) -> NDArray[np.float64]:
        """Return (M, 2) points every ``step`` metres over the rectangle grown by ``margin``."""
        along = np.arange(-self.length / 2 - margin, self.length / 2 + margin + 1e-9, step)
        across = np.arange(-self.width / 2 - margin, self.width / 2 + margin + 1e-9, step)
        a, b = (g.ravel() for g in np.meshgrid(along, across))
        c, s = math.cos(math.radians(self.yaw)), math.sin(math.radians(self.yaw))
        return np.column_stack([self.x + a * c - b * s, self.y + a * s + b * c])


class Site:
    """A built world and its navigation graph, with the look-ups sampling needs."""

    def __init__(self, scene: Scene, graph: NavGraph) -> None:
        """Index ``graph``'s nodes of ``scene`` for sampling."""
        self.scene, self.graph = scene, graph
        self.positions = graph.positions
        self.tree = cKDTree(graph.positions)
        self.main = graph.components() == graph.main_component()
        self.taken: list[Footprint] = []

    def on(self, classes: Iterable[str]) -> NDArray[np.bool_]:
        """Return which nodes of the main component stand on one of ``classes``."""
        return self.main & np.isin(self.graph.semantic, [class_id(c) for c in classes])

    def free(self, points: NDArray[np.float64], z: float) -> bool:
        """Return whether every (M, 2) point at height ``z`` is walkable main-component floor."""
        xyz = np.column_stack([points, np.full(len(points), z)])
        gaps, nodes = self.tree.query(xyz, distance_upper_bound=LAYERS)
        found = np.isfinite(gaps)
        return bool(found.all() and self.main[nodes[found]].all())

    def open_floor(self, margin: float) -> NDArray[np.bool_]:
        """Return which nodes lie at least ``margin`` from every taken footprint."""
        clear = np.ones(self.graph.node_count, bool)
        for footprint in self.taken:
            clear &= ~footprint.contains(self.positions, margin)
        return clear

    def height(self, x: float, y: float, near: float) -> float:
        """Return the height of the floor at (x, y) nearest to height ``near``."""
        _, node = self.tree.query((x, y, near))
        return float(self.positions[int(node), 2])

    def surface(self, node: int) -> str:
        """Return the semantic class the node stands on."""
        return SEMANTIC_CLASSES[int(self.graph.semantic[node])]

    def horizontal(self, point: Iterable[float]) -> NDArray[np.float64]:
        """Return every node's horizontal distance to ``point``."""
        x, y, *_ = point
        return np.hypot(self.positions[:, 0] - x, self.positions[:, 1] - y)


def choose(rng: np.random.Generator, mask: NDArray[np.bool_]) -> int | None:
    """Return a node drawn uniformly from ``mask``, or None if it is empty."""
    nodes = np.flatnonzero(mask)
    return int(nodes[rng.integers(len(nodes))]) if nodes.size else None


def place_stretcher_site(
    site: Site, rng: np.random.Generator, tries: int = 40
) -> tuple[Footprint, Footprint | None]:
    """Return where the stretcher goes and, outdoors, the ambulance it stands behind.

    Outdoors the ambulance prefers roads; the stretcher stands behind its rear doors.
    Indoors (no outdoor surface) the stretcher stands alone. Both keep ``CLEARANCE`` free.
    """
    roads, outdoor = site.on(("road",)), site.on(OUTDOOR)
    pool = roads if roads.any() else outdoor
    outdoors = bool(pool.any())
    for _ in range(tries):
        node = choose(rng, pool if outdoors else site.on(LYING_ON))
        if node is None:
            break
        x, y, z = site.graph.node_position(node)
        yaw = float(rng.integers(4) * 90)
        stretcher, ambulance = (
            _pair(x, y, z, yaw) if outdoors else (Footprint(x, y, yaw, *STRETCHER, z), None)
        )
        if site.free(_cover(stretcher, ambulance), z):
            site.taken += [f for f in (stretcher, ambulance) if f is not None]
            return stretcher, ambulance
    raise Rejected("no open floor for the stretcher and ambulance")


def _pair(x: float, y: float, z: float, yaw: float) -> tuple[Footprint, Footprint]:
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    stretcher = Footprint(x - BEHIND_AMBULANCE * c, y - BEHIND_AMBULANCE * s, yaw, *STRETCHER, z)
    return stretcher, Footprint(x, y, yaw, *AMBULANCE, z)


def _cover(*footprints: Footprint | None) -> NDArray[np.float64]:
    return np.vstack([f.lattice(CLEARANCE) for f in footprints if f is not None])


def pick_start(
    site: Site, rng: np.random.Generator, stretcher: Footprint, ambulance: Footprint | None
) -> int:
    """Return a start node near the stretcher (and within 7 m of the ambulance)."""
    near = site.horizontal((stretcher.x, stretcher.y))
    mask = site.main & (near >= START_DISTANCE[0]) & (near <= START_DISTANCE[1])
    mask &= (np.abs(site.positions[:, 2] - stretcher.z) < 0.5) & site.open_floor(0.6)
    if ambulance is not None:
        mask &= site.horizontal((ambulance.x, ambulance.y)) <= 7.0
    node = choose(rng, mask)
    if node is None:
        raise Rejected("no start within reach of the stretcher")
    return node


def pick_casualty(
    site: Site,
    rng: np.random.Generator,
    start: int,
    distance: tuple[float, float],
    min_height_change: float,
) -> int:
    """Return a node at walking distance ``distance`` from ``start`` on open, flat floor.

    The grid distance of a path is up to 8 % longer than the straightened one the episode
    stores, so the draw aims a little high; ``validate`` checks the stored value.
    """
    mask = site.on(LYING_ON) & site.open_floor(1.0)
    if min_height_change > 0:
        rise = np.abs(site.positions[:, 2] - site.positions[start, 2])
        mask &= rise >= min_height_change
    lo, hi = distance
    node = site.graph.random_node(rng, source=start, distance=(lo * 1.03, hi * 1.04), mask=mask)
    if node is None:
        what = f" and {min_height_change:g} m above or below it" if min_height_change else ""
        raise Rejected(f"no walkable spot {lo:g}-{hi:g} m from the start{what}")
    return node


def lying_yaw(site: Site, rng: np.random.Generator, node: int) -> float:
    """Return a yaw along which a lying body has free floor at ``node``, or reject."""
    x, y, z = site.graph.node_position(node)
    first = float(rng.integers(8) * 45)
    for turn in range(0, 360, 45):
        yaw = (first + turn) % 360
        body = Footprint(x, y, yaw, BODY_LENGTH, 0.0).lattice(0.15, step=0.15)
        if site.free(body, z):
            return yaw
    raise Rejected("no free floor for a lying body")
