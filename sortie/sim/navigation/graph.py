"""The navigation graph: walkable cells on every floor, linked where a walker can step.

Built once per scene from ray casts (see ``surfaces`` and ``clearance``), with every door
open; each door remembers the nodes its closed panel blocks, and queries take the set of
closed doors. Shortest paths are scipy's Dijkstra (``scipy.sparse.csgraph``), or the compiled
search that finds the same paths and stops at its target (``kernels``). Privileged: used by episode
generation, the oracle and the SPL metric, never shown to ordinary agents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ConfigError, did_you_mean
from sortie.sim.navigation import cache, kernels
from sortie.sim.navigation.clearance import near_hits, probe
from sortie.sim.navigation.doors import door_blocks, walkable_scene
from sortie.sim.navigation.edges import Edges
from sortie.sim.navigation.links import column_slots, link_neighbours
from sortie.sim.navigation.smoothing import Corridor, straighten
from sortie.sim.navigation.surfaces import Grid, crowded, peel_columns, standing_surfaces
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Scene
from sortie.sim.semantics import class_id
from sortie.sim.shapes import WALKER, WalkerShape

Point = tuple[float, float, float]
NO_DOORS: frozenset[str] = frozenset()
WALKING_CLASSES = (
    "ground",
    "floor",
    "road",
    "sidewalk",
    "grass",
    "stairs",
    "ramp",
    "platform",
    "landing_pad",
)
"""Semantic classes meant to be walked on; the main component is the largest on these (a
room's roof may hold more nodes than its cluttered floor)."""
TABLES_KEPT = 64
"""Derived tables (per closed-door set: usable nodes, edges) kept before the oldest goes."""
ROWS_KEPT = 32
"""Distance rows kept per graph (each two arrays of N): per (source node, closed doors)."""


@dataclass(frozen=True, slots=True)
class Route:
    """A shortest route between two points.

    Attributes:
        waypoints: points to walk through in order, from the start to the goal.
        length: length of the polyline through ``waypoints`` in metres (3D).
        nodes: the graph nodes of the underlying grid path.
        doors: the doors whose closed panel would block this route, in scene order.
    """

    waypoints: tuple[Point, ...]
    length: float
    nodes: tuple[int, ...]
    doors: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class NavGraph:
    """Walkable nodes of a scene, one per standing surface per grid column, and their links.

    Attributes:
        grid: the columns the nodes stand in.
        shape: the walker planned for.
        positions: (N, 3) node positions on the walking surface, sorted by column, then top down.
        columns: (N,) grid column of each node.
        semantic: (N,) semantic class id of the object each node stands on.
        adjacency: the symmetric edges and their lengths in metres, every door open.
        doors: names of the openable objects.
        door_nodes: for each door, the nodes its closed geometry blocks.
    """

    grid: Grid
    shape: WalkerShape
    positions: NDArray[np.float64]
    columns: NDArray[np.int64]
    semantic: NDArray[np.int32]
    adjacency: Edges
    doors: tuple[str, ...]
    door_nodes: tuple[NDArray[np.int64], ...]
    _tables: dict[Any, Any] = field(default_factory=dict, repr=False)
    _rows: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, scene: Scene, shape: WalkerShape = WALKER, cell: float = 0.25) -> NavGraph:
        """Return the graph of ``scene`` for ``shape`` on a grid of ``cell`` metres.

        A graph built before for the same geometry, shape, cell and code comes from the
        cache (see ``cache``): from this process, or from disk without casting a ray.
        """
        if not cell > 0:
            raise ConfigError(f"navigation: cell must be a positive size in metres, got {cell!r}")
        key = cache.graph_key(scene, shape, cell)
        known = cache.remembered(key)
        if isinstance(known, NavGraph):
            return known
        grid = Grid.over(scene.bounds, cell)
        parts = cache.load(key)
        if parts is None:
            parts = _find_parts(scene, grid, shape)
            cache.store(key, parts)
        graph = cls.assemble(grid, shape, parts)
        cache.remember(key, graph)
        return graph

    @classmethod
    def assemble(cls, grid: Grid, shape: WalkerShape, parts: cache.GraphParts) -> NavGraph:
        """Return the graph whose nodes and blocked moves are ``parts`` (its edges linked)."""
        positions = np.column_stack([grid.centres(parts.columns), parts.z])
        adjacency = link_neighbours(grid, parts.columns, positions, parts.blocked_moves, shape)
        return cls(
            grid,
            shape,
            positions,
            parts.columns,
            parts.semantic,
            adjacency,
            parts.doors,
            parts.door_nodes,
        )

    @property
    def node_count(self) -> int:
        """Return the number of nodes."""
        return len(self.positions)

    def node_position(self, node: int) -> Point:
        """Return where node ``node`` stands (on the walking surface)."""
        x, y, z = self.positions[node]
        return (float(x), float(y), float(z))

    def closed_doors(self, scene: Scene) -> frozenset[str]:
        """Return the doors of this graph that are closed in ``scene`` now."""
        return frozenset(name for name in self.doors if not scene.is_open(name))

    def usable(self, closed: Iterable[str] = NO_DOORS) -> NDArray[np.bool_]:
        """Return which nodes are not blocked by the ``closed`` doors."""
        closed = self._check_doors(closed)
        return self._remember(("usable", closed), lambda: self._unblocked(closed))

    def nearest_node(
        self, point: Iterable[float], tolerance: float = 1.0, closed: Iterable[str] = NO_DOORS
    ) -> int | None:
        """Return the usable node nearest to ``point`` (feet height) within ``tolerance`` m."""
        xyz = np.asarray(tuple(point), np.float64)
        candidates = self._within(xyz, tolerance)
        if candidates.size:
            candidates = candidates[self.usable(closed)[candidates]]
        if not candidates.size:
            return None
        gaps = np.linalg.norm(self.positions[candidates] - xyz, axis=1)
        return int(candidates[np.argmin(gaps)])

    def distances_from(self, node: int, closed: Iterable[str] = NO_DOORS) -> NDArray[np.float64]:
        """Return the graph distance from ``node`` to every node (inf where unreachable)."""
        return self._search(node, self._check_doors(closed))[0]

    def route(
        self,
        start: Iterable[float],
        goal: Iterable[float],
        closed: Iterable[str] = NO_DOORS,
        smooth: bool = True,
    ) -> Route | None:
        """Return the shortest route between two points, or None if they are not linked.

        The route starts at ``start`` and ends at ``goal``; both snap to their nearest
        nodes (see ``nearest_node``). ``smooth`` pulls the grid path straight.
        """
        closed = self._check_doors(closed)
        a, b = np.asarray(tuple(start), float), np.asarray(tuple(goal), float)
        source, target = self.nearest_node(a, closed=closed), self.nearest_node(b, closed=closed)
        if source is None or target is None:
            return None
        nodes = self._nodes_between(source, target, closed)
        if nodes is None:
            return None
        points = np.vstack([a, self.positions[nodes], b])
        if smooth:
            points = straighten(points, self._corridor(closed).clear_each)
        return _make_route(points, nodes, self._doors_at(nodes))

    def shortest_path(
        self,
        start: Iterable[float],
        goal: Iterable[float],
        closed: Iterable[str] = NO_DOORS,
        smooth: bool = True,
    ) -> list[Point]:
        """Return the waypoints of the shortest route, or an empty list if there is none."""
        found = self.route(start, goal, closed, smooth)
        return list(found.waypoints) if found else []

    def geodesic_distance(
        self, start: Iterable[float], goal: Iterable[float], closed: Iterable[str] = NO_DOORS
    ) -> float:
        """Return the length of the shortest route, smoothed, in metres; inf if none.

        The route is the shortest on the 8-connected grid, then straightened: where two ways
        differ by less than the grid's bias (up to 8 % on long diagonals) the grid may pick
        the one that is slightly longer once straightened.
        """
        found = self.route(start, goal, closed)
        return found.length if found else float("inf")

    def reachable(
        self, start: Iterable[float], goal: Iterable[float], closed: Iterable[str] = NO_DOORS
    ) -> bool:
        """Return whether a walker can get from ``start`` to ``goal``."""
        return self.route(start, goal, closed, smooth=False) is not None

    def doors_on_every_shortest_path(
        self, start: Iterable[float], goal: Iterable[float]
    ) -> tuple[str, ...]:
        """Return the doors that every shortest route passes (closing one makes it longer)."""
        found = self.route(start, goal, smooth=False)
        if found is None:
            return ()
        source, target = found.nodes[0], found.nodes[-1]
        base = self.distances_from(source)[target]
        return tuple(
            door
            for door in found.doors
            if self.distances_from(source, {door})[target] > base + 1e-6
        )

    def components(self) -> NDArray[np.int32]:
        """Return a component label per node (doors open); labels number components by size."""
        return self._remember("components", self._label_components)

    def main_component(self) -> int:
        """Return the label of the component with the most nodes on walking classes."""
        walking = np.isin(self.semantic, [class_id(name) for name in WALKING_CLASSES])
        labels = self.components()
        if not labels.size:
            return 0
        counts = np.bincount(labels[walking], minlength=int(labels.max()) + 1)
        return int(np.argmax(counts)) if counts.any() else 0

    def random_node(
        self,
        rng: np.random.Generator,
        source: int | None = None,
        distance: tuple[float, float] = (0.0, float("inf")),
        closed: Iterable[str] = NO_DOORS,
        mask: NDArray[np.bool_] | None = None,
    ) -> int | None:
        """Return a uniformly drawn node, or None if none qualifies.

        Without ``source`` it is drawn from the main component (see ``main_component``);
        with one, from the nodes whose graph distance to it lies within ``distance``.
        ``mask`` narrows the choice.
        """
        pool = self.usable(closed).copy()
        if source is None:
            pool &= self.components() == self.main_component()
        else:
            dist = self.distances_from(source, closed)
            pool &= (dist >= distance[0]) & (dist <= distance[1])
        if mask is not None:
            pool &= mask
        choices = np.flatnonzero(pool)
        return int(choices[rng.integers(len(choices))]) if choices.size else None

    def levels(self, min_nodes: int = 50) -> tuple[float, ...]:
        """Return the heights (to the centimetre) shared by at least ``min_nodes`` nodes."""
        heights, counts = np.unique(np.round(self.positions[:, 2], 2), return_counts=True)
        return tuple(float(h) for h in heights[counts >= min_nodes])

    def to_image(self, below: float = float("inf")) -> NDArray[np.uint8]:
        """Return a top-down debug image, one pixel per column, +y up.

        Nodes no higher than ``below`` (leave out roofs) are green, brighter when higher
        (the highest in a column shows); door-blocked nodes are orange; the rest is black.
        """
        image = np.zeros((self.grid.size, 3), np.uint8)
        shown = np.flatnonzero(self.positions[:, 2] <= below)
        z = self.positions[shown, 2]
        if z.size:
            shade = 80 + 175 * (z - z.min()) / max(float(np.ptp(z)), 1e-9)
            order = np.argsort(z, kind="stable")  # the highest node is written last
            image[self.columns[shown[order]], 1] = shade[order].astype(np.uint8)
        for nodes in self.door_nodes:
            image[self.columns[nodes]] = (255, 140, 0)
        return image.reshape(self.grid.ny, self.grid.nx, 3)[::-1]

    # -- internals -------------------------------------------------------------------------

    def _check_doors(self, closed: Iterable[str]) -> frozenset[str]:
        closed = frozenset(closed)
        unknown = sorted(closed - set(self.doors))
        if unknown:
            hint = did_you_mean(unknown[0], self.doors)
            raise ConfigError(
                f"navigation: unknown door {unknown[0]!r}.{hint} "
                f"Doors: {', '.join(self.doors) or 'none'}"
            )
        return closed

    def _remember(self, key: Any, make: Callable[[], Any], rows: bool = False) -> Any:
        store, limit = (self._rows, ROWS_KEPT) if rows else (self._tables, TABLES_KEPT)
        if key not in store:
            if len(store) >= limit:
                store.pop(next(iter(store)))  # the oldest: dicts keep insertion order
            store[key] = make()
        return store[key]

    def _within(self, xyz: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Return the nodes within ``radius`` of ``xyz``, in order.

        The nodes of the columns around the point are measured as scipy's ``cKDTree`` measures
        in ``query_ball_point`` (the squares of the x, y and z gaps summed in that order, at
        most the radius squared), which this replaced: a tree per graph cost more to build
        than all an episode's queries.
        """
        if not 0 <= radius < math.inf:  # as the tree: none for a negative or NaN, all for inf
            return np.arange(self.node_count) if radius == math.inf else np.zeros(0, np.int64)
        grid = self.grid
        reach = int(np.ceil(radius / grid.cell)) + 1
        i, j = (int(v) for v in grid.cell_index(xyz[:2]))
        ci = np.arange(max(i - reach, 0), min(i + reach + 2, grid.nx))
        cj = np.arange(max(j - reach, 0), min(j + reach + 2, grid.ny))
        columns = (cj[:, None] * grid.nx + ci[None, :]).ravel()
        nodes = self._slots()[columns].ravel()
        nodes = np.sort(nodes[nodes >= 0])
        gap = self.positions[nodes] - xyz
        squared = gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] + gap[:, 2] * gap[:, 2]
        return nodes[squared <= radius * radius]

    def _slots(self) -> NDArray[np.int64]:
        return self._remember("slots", lambda: column_slots(self.grid, self.columns))

    def _unblocked(self, closed: frozenset[str]) -> NDArray[np.bool_]:
        usable = np.ones(self.node_count, bool)
        for name, nodes in zip(self.doors, self.door_nodes, strict=True):
            if name in closed:
                usable[nodes] = False
        return usable

    def _closed_adjacency(self, closed: frozenset[str]) -> Edges:
        if not closed:
            return self.adjacency
        return self.adjacency.among(self.usable(closed))

    def _search(
        self, node: int, closed: frozenset[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
        """Return the distances and predecessors of every node from ``node`` (kept)."""
        return self._remember((node, closed), lambda: self._dijkstra(node, closed), rows=True)

    def _nodes_between(self, source: int, target: int, closed: frozenset[str]) -> list[int] | None:
        """Return the nodes of the shortest path from ``source`` to ``target``, or None.

        A search for one target stops when it reaches it (with the extension), and its
        partial rows are not kept; a full row kept from before is used as it is.
        """
        known = self._rows.get((source, closed))
        dist, predecessors = known or self._dijkstra(source, closed, target)
        if not np.isfinite(dist[target]):
            return None
        return _walk_back(predecessors, source, target)

    def _dijkstra(
        self, source: int, closed: frozenset[str], target: int = -1
    ) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
        """Search from ``source``: every node, or until ``target`` (-1: none) is reached.

        The extension pops nodes in scipy's order, so both give the same paths (see
        ``kernels``); only the nodes it reached have their distance and predecessor.
        """
        graph = self._remember(("adjacency", closed), lambda: self._closed_adjacency(closed))
        module = kernels.extension()
        if module is None:
            from scipy.sparse.csgraph import dijkstra  # here: csgraph takes 0.13 s to import

            matrix = graph.scipy()
            return dijkstra(matrix, directed=True, indices=source, return_predecessors=True)
        dist, predecessors = np.empty(self.node_count), np.empty(self.node_count, np.int32)
        module.search(graph.indptr, graph.indices, graph.data, source, target, dist, predecessors)
        return dist, predecessors

    def _corridor(self, closed: frozenset[str]) -> Corridor:
        heights = self._remember("heights", lambda: np.ascontiguousarray(self.positions[:, 2]))
        return Corridor(self.grid, self._slots(), heights, self.usable(closed), self.shape.step)

    def _doors_at(self, nodes: list[int]) -> tuple[str, ...]:
        on_path = np.zeros(self.node_count, bool)
        on_path[nodes] = True
        return tuple(
            name
            for name, blocked in zip(self.doors, self.door_nodes, strict=True)
            if on_path[blocked].any()
        )

    def _label_components(self) -> NDArray[np.int32]:
        labels = kernels.components(self.adjacency)
        sizes = np.bincount(labels)
        rank = np.empty_like(sizes)
        rank[np.argsort(-sizes, kind="stable")] = np.arange(len(sizes))
        return rank[labels].astype(np.int32)


def _find_parts(scene: Scene, grid: Grid, shape: WalkerShape) -> cache.GraphParts:
    """Cast the rays of a graph build: surfaces, room for the body, blocked moves, doors."""
    caster = RayCaster(walkable_scene(scene))
    hits = peel_columns(caster, grid, shape)
    columns, z, semantic = standing_surfaces(hits, shape)
    positions = np.column_stack([grid.centres(columns), z])
    probes = probe(caster, positions, grid.cell, shape)
    clear = ~crowded(hits, grid, columns, z, shape)
    clear &= ~near_hits(positions, probes.points, shape)
    keep = np.flatnonzero(clear)
    doors, door_nodes = door_blocks(scene, positions[keep], grid.cell, shape)
    return cache.GraphParts(
        z[keep], columns[keep], semantic[keep], probes.blocked_moves[keep], doors, door_nodes
    )


def _walk_back(predecessors: NDArray[np.int32], source: int, target: int) -> list[int]:
    nodes = [target]
    while nodes[-1] != source:
        nodes.append(int(predecessors[nodes[-1]]))
    return nodes[::-1]


def _make_route(points: NDArray[np.float64], nodes: list[int], doors: tuple[str, ...]) -> Route:
    steps = np.diff(points, axis=0)
    keep = np.concatenate([[True], np.linalg.norm(steps, axis=1) > 1e-9])
    points = points[keep]  # a start or goal exactly on its node would repeat it
    length = float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())
    waypoints = tuple((float(x), float(y), float(z)) for x, y, z in points)
    return Route(waypoints, length, tuple(nodes), doors)
