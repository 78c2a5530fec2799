"""Ray casting against a scene through Embree: the one place that talks to the ray engine.

Static objects go into one Embree scene built once. Dynamic objects (doors, carried things)
go into a second, small one, rebuilt only when the scene's state changes; each cast queries
both and keeps the nearer hit. Per-triangle tables (object id, colour, normal, texture
coordinates) are indexed by the hit triangle; their last row is the "no hit" row, so a miss
(index -1) reads it without a branch.

Two engines give the same hits: Embree packets through ``sortie.sim.packets`` (16 rays per
call, both scenes in one pass) when the extension is built, else embreex one ray at a time.
Either way Embree only finds the triangle: each hit is then measured and settled the same way
on every CPU (``sortie.sim.exact``), and a ray that met an edge is cast again, nudged. With
packets all of that happens in the one call to the extension (``_packets.c`` does what
``settle``, ``_retry`` and ``_remeasure`` do here, operation for operation), so a cast of a
dozen rays, such as a camera frame's unsure pixels, costs little more than Embree's own work.

What depends on the objects alone (the atlas, the static table and Embree scene, and the
dynamic part of the objects' built state) is a ``StaticPart``, which casters over copies of one
scene (``Scene.fresh_copy``) share; each caster keeps its own dynamic part once its scene's
state leaves the built one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from embreex import rtcore_scene
from embreex.mesh_construction import TriangleMesh
from numpy.typing import NDArray

from sortie.core.errors import ConfigError
from sortie.sim import packets
from sortie.sim.camera import turn_rows
from sortie.sim.compiled import PACKETS_SWITCH
from sortie.sim.exact import NUDGES, REMEASURE_TOLERANCE, Faces, exact_hits, settle
from sortie.sim.mesh import Mesh
from sortie.sim.packets import PacketScene
from sortie.sim.scene import Scene, SceneObject

MISS = np.float32(np.inf)
NUDGE_TABLE = np.array(NUDGES, np.float32)
"""``NUDGES`` as one (K, 3) float32 array, for the packet extension."""


@dataclass(frozen=True, slots=True)
class Hits:
    """Where rays hit: distance (in units of the ray direction's length), triangle, barycentrics.

    ``t`` is inf and ``triangle`` -1 for rays that hit nothing.
    """

    t: NDArray[np.float32]
    triangle: NDArray[np.int32]
    u: NDArray[np.float32]
    v: NDArray[np.float32]

    def replaced(self, rows: NDArray[np.intp], other: Hits) -> Hits:
        """Return a copy whose ``rows`` hold ``other``'s hits (one per row, in order)."""
        t, tri = self.t.copy(), self.triangle.copy()
        u, v = self.u.copy(), self.v.copy()
        t[rows], tri[rows], u[rows], v[rows] = other.t, other.triangle, other.u, other.v
        return Hits(t, tri, u, v)

    def subset(self, mask: NDArray[np.bool_]) -> Hits:
        """Return the hits of the rays selected by ``mask``."""
        return Hits(self.t[mask], self.triangle[mask], self.u[mask], self.v[mask])


class TextureAtlas:
    """All textures of a scene stacked into one image, so a lookup is one fancy index."""

    def __init__(self, meshes: list[Mesh]) -> None:
        textures: dict[int, np.ndarray] = {}
        for mesh in meshes:
            if mesh.texture is not None:
                textures.setdefault(id(mesh.texture), mesh.texture)
        width = max((t.shape[1] for t in textures.values()), default=1)
        self.offsets: dict[int, tuple[int, int, int]] = {}
        y = 0
        for key, tex in textures.items():
            self.offsets[key] = (y, *tex.shape[:2])
            y += tex.shape[0]
        if not textures:
            self.image = np.zeros((1, 1, 3), np.uint8)
            return
        # One zeroed image filled in place: a scene has dozens of textures, and padding each
        # (np.pad) then stacking them cost a millisecond a world. The same pixels.
        dtype = np.result_type(*textures.values())
        self.image = np.zeros((y, width, 3), dtype)
        for key, tex in textures.items():
            top, h, w = self.offsets[key]
            self.image[top : top + h, :w] = tex[..., :3]

    def pixel_uvs(self, mesh: Mesh) -> NDArray[np.float32]:
        """Return the mesh's UVs in atlas pixel coordinates (column, row), (F, 3, 2)."""
        assert mesh.uvs is not None and mesh.texture is not None
        y0, h, w = self.offsets[id(mesh.texture)]
        scale = np.array([w - 1, h - 1], np.float32)
        return mesh.uvs * scale + np.array([0, y0], np.float32)


@dataclass(frozen=True, slots=True)
class TriangleTable:
    """Per-triangle data of a set of meshes, each array with one extra "no hit" row."""

    corners: NDArray[np.float32]  # (T, 3, 3), without the extra row
    object_id: NDArray[np.int32]  # (T+1,)
    color: NDArray[np.float32]  # (T+1, 3) in 0..1
    normal: NDArray[np.float32]  # (T+1, 3) unit
    textured: NDArray[np.bool_]  # (T+1,)
    uv: NDArray[np.float32]  # (T+1, 3, 2) atlas pixel coordinates
    faces: Faces  # (T,) what deciding a hit exactly needs (sortie.sim.exact)

    @classmethod
    def build(cls, parts: list[tuple[int, Mesh]], atlas: TextureAtlas) -> TriangleTable:
        """Tabulate ``(object id, mesh)`` pairs."""
        if not parts:
            return cls.empty()
        counts = [m.triangle_count for _, m in parts]
        corners = _corners(parts, counts)
        ids = np.repeat(np.array([i for i, _ in parts], np.int32), counts)
        colors = np.concatenate([m.colors for _, m in parts]).astype(np.float32) / 255.0
        textured = np.repeat([m.texture is not None for _, m in parts], counts)
        uv = np.zeros((len(corners), 3, 2), np.float32)
        for start, (_, m) in zip(np.cumsum([0, *counts[:-1]]).tolist(), parts, strict=True):
            if m.texture is not None:
                uv[start : start + m.triangle_count] = atlas.pixel_uvs(m)
        cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        normal = cross / np.maximum(np.linalg.norm(cross, axis=1, keepdims=True), 1e-12)
        return cls(
            corners,
            np.append(ids, 0).astype(np.int32),
            np.vstack([colors, np.zeros((1, 3))]).astype(np.float32),
            np.vstack([normal, np.zeros((1, 3))]).astype(np.float32),
            np.append(textured, False),
            np.concatenate([uv, np.zeros((1, 3, 2), np.float32)]),
            Faces.of(corners),
        )

    @classmethod
    def empty(cls) -> TriangleTable:
        """Return a table with no triangles (just the "no hit" row), shared and read-only.

        Shared: a scene whose moving objects are all out of it (a casualty being carried)
        asks for one at every change of state, and making one costs as much as a small table.
        """
        return _EMPTY_TABLE

    def __len__(self) -> int:
        return int(self.corners.shape[0])

    def concat(self, other: TriangleTable) -> TriangleTable:
        """Return this table followed by ``other``, keeping one "no hit" row at the end."""
        return TriangleTable(
            np.concatenate([self.corners, other.corners]),
            np.concatenate([self.object_id[:-1], other.object_id]),
            np.concatenate([self.color[:-1], other.color]),
            np.concatenate([self.normal[:-1], other.normal]),
            np.concatenate([self.textured[:-1], other.textured]),
            np.concatenate([self.uv[:-1], other.uv]),
            self.faces.followed_by(other.faces),
        )


def _corners(parts: list[tuple[int, Mesh]], counts: list[int]) -> NDArray[np.float32]:
    """Return the corners of every triangle of the meshes, in order: one gather for them all."""
    vertices = np.concatenate([m.vertices for _, m in parts]).astype(np.float32, copy=False)
    shifts = np.cumsum([0, *(len(m.vertices) for _, m in parts[:-1])])
    faces = np.concatenate([m.faces for _, m in parts]) + np.repeat(shifts, counts)[:, None]
    return vertices[faces]


def _read_only_empty() -> TriangleTable:
    table = TriangleTable(
        np.zeros((0, 3, 3), np.float32),
        np.zeros(1, np.int32),
        np.zeros((1, 3), np.float32),
        np.zeros((1, 3), np.float32),
        np.zeros(1, bool),
        np.zeros((1, 3, 2), np.float32),
        Faces.of(np.zeros((0, 3, 3), np.float32)),
    )
    arrays = (table.corners, table.object_id, table.color, table.normal, table.textured, table.uv)
    for array in arrays:
        array.setflags(write=False)
    return table


_EMPTY_TABLE = _read_only_empty()


def _embree_scene(corners: NDArray[np.float32]) -> rtcore_scene.EmbreeScene | None:
    if len(corners) == 0:
        return None
    scene = rtcore_scene.EmbreeScene()
    TriangleMesh(scene, np.ascontiguousarray(corners, dtype=np.float32))
    return scene


def _packet_scene(corners: NDArray[np.float32]) -> PacketScene | None:
    return PacketScene(corners) if len(corners) else None


@dataclass(frozen=True, slots=True)
class Rays:
    """A batch of float32 rays for embreex, each bounded by ``limit`` (inf: unbounded)."""

    origins: NDArray[np.float32]
    directions: NDArray[np.float32]
    limit: NDArray[np.float32]

    @classmethod
    def bounded(
        cls, origins: NDArray, directions: NDArray, limit: NDArray[np.float32] | None
    ) -> Rays:
        """Return the rays, unbounded where ``limit`` is None."""
        if limit is None:
            limit = np.full(len(directions), np.inf, np.float32)
        return cls(origins, directions, limit)

    def subset(self, rows: NDArray[np.intp]) -> Rays:
        """Return the rays at ``rows``."""
        return Rays(
            np.ascontiguousarray(self.origins[rows]),
            np.ascontiguousarray(self.directions[rows]),
            self.limit[rows],
        )

    def hits(
        self,
        embree: rtcore_scene.EmbreeScene,
        corners: NDArray[np.float32],
        offset: int,
        search: NDArray[np.float32] | None = None,
    ) -> tuple[Hits, NDArray[np.float64]]:
        """Return the hits in ``embree`` (triangles numbered from ``offset``), measured exactly.

        Embree searches a little past ``search`` (default: each ray's limit), so a hit right at
        the limit is found on every CPU; its exact distance (``exact_hits``) then decides.
        Also returns that distance in float64 (inf: no hit).
        """
        bound = self.limit if search is None else search
        tfar = np.where(np.isinf(bound), bound, grown(bound)).astype(np.float32)
        result = embree.run(self.origins, self.directions, dists=tfar, output=1)
        local = result["primID"].astype(np.int64)
        t, u, v = exact_hits(corners[offset:], self.origins, self.directions, local)
        found = (local >= 0) & (t <= self.limit)
        return found_hits(found, local + offset, t, u, v), np.where(found, t, np.inf)


def found_hits(
    found: NDArray[np.bool_], triangle: NDArray[np.int64], t: NDArray, u: NDArray, v: NDArray
) -> Hits:
    """Return float32 hits where ``found``, "no hit" (inf, -1, 0, 0) elsewhere."""
    return Hits(
        np.where(found, t, np.inf).astype(np.float32),
        np.where(found, triangle, -1).astype(np.int32),
        np.where(found, u, 0.0).astype(np.float32),
        np.where(found, v, 0.0).astype(np.float32),
    )


def grown(limit: NDArray[np.float32]) -> NDArray[np.float32]:
    """Return how far Embree searches for a ray bounded by ``limit`` (a little further)."""
    bound = limit + np.float32(1e-4) * np.abs(limit) + np.float32(1e-5)  # float32 throughout
    return bound.astype(np.float32, copy=False)


@dataclass(frozen=True, slots=True)
class DynamicPart:
    """What a caster derives from the dynamic objects where they are now.

    Attributes:
        table: the static table followed by the dynamic triangles (the static one when none).
        embree: the dynamic triangles' embreex scene (None: none, or packets are used).
        packet_scene: the dynamic triangles' packet scene (None: none, or embreex is used).
        decider: the packets' handle on settling hits against ``table`` (None with embreex).
        boxes: the dynamic meshes' boxes, (K, 2, 3).
    """

    table: TriangleTable
    embree: rtcore_scene.EmbreeScene | None
    packet_scene: PacketScene | None
    decider: object | None
    boxes: NDArray[np.float32]


class StaticPart:
    """What a ray caster derives from a scene's objects alone: shared by casters of its copies.

    Read-only once made (Embree scenes and the packets' deciders are safe to trace from several
    threads), but for the dynamic part of the built state, which is made on first use under a
    lock and then kept: every caster whose scene is in the built state (``Scene.pristine``)
    uses that one, so copies of a world share all their tables until one of them moves a door
    or carries something.
    """

    def __init__(self, scene: Scene, use_packets: bool | None = None) -> None:
        """Tabulate ``scene``'s static objects; ``use_packets`` None means "when available"."""
        self.objects: tuple[SceneObject, ...] = scene.objects
        self.packets = packets.available() if use_packets is None else use_packets
        if self.packets and not packets.available():
            raise ConfigError(
                "RayCaster: Embree packets asked for, but sortie.sim._packets is not built or "
                f"is switched off ({PACKETS_SWITCH}=0); allowed here: use_packets=False or None"
            )
        ids = {o.name: i + 1 for i, o in enumerate(scene.objects)}
        all_parts = [p for o in scene.objects for p in o.parts]
        self.atlas = TextureAtlas(all_parts)
        static = [(ids[o.name], p) for o in scene.objects if not o.is_dynamic for p in o.parts]
        self.table = TriangleTable.build(static, self.atlas)
        self.embree: rtcore_scene.EmbreeScene | None = None
        self.packet_scene: PacketScene | None = None
        if self.packets:
            self.packet_scene = _packet_scene(self.table.corners)
        else:
            self.embree = _embree_scene(self.table.corners)
        self.dynamic_objects = tuple((ids[o.name], o) for o in scene.objects if o.is_dynamic)
        self._built: DynamicPart | None = None
        self._lock = threading.Lock()

    def dynamic_part(self, scene: Scene) -> DynamicPart:
        """Return the dynamic part of ``scene`` now: the shared one in the built state."""
        if not scene.pristine:
            return self._make(scene)
        with self._lock:
            if self._built is None:
                self._built = self._make(scene)
            return self._built

    def _make(self, scene: Scene) -> DynamicPart:
        parts = [(i, p) for i, o in self.dynamic_objects for p in scene.current_parts(o)]
        dynamic = TriangleTable.build(parts, self.atlas)
        table = self.table.concat(dynamic) if len(dynamic) else self.table
        if not self.packets:
            return DynamicPart(
                table, _embree_scene(dynamic.corners), None, None, _part_boxes(parts)
            )
        decider = packets.new_decider(table.corners, table.faces)
        return DynamicPart(table, None, _packet_scene(dynamic.corners), decider, _part_boxes(parts))


class RayCaster:
    """Casts batches of rays into a scene, keeping its dynamic part in step with the scene."""

    def __init__(
        self, scene: Scene, use_packets: bool | None = None, static: StaticPart | None = None
    ) -> None:
        """Prepare to cast into ``scene``.

        Args:
            scene: the scene; the caster follows its state.
            use_packets: whether to trace Embree packets; None means "when available" (or as
                ``static`` was made).
            static: the static part of a scene with the same objects (a ``Scene.fresh_copy``
                of it), to share instead of making one.
        """
        if static is None:
            static = StaticPart(scene, use_packets)
        elif static.objects is not scene.objects:
            raise ConfigError(
                f"RayCaster: the static part given was made for other objects than those of "
                f"{scene.origin or 'the scene'}; allowed: one made from this scene or a copy of it"
            )
        elif use_packets is not None and use_packets != static.packets:
            raise ConfigError(
                f"RayCaster: use_packets={use_packets}, but the static part given was made with "
                f"use_packets={static.packets}; allowed here: None or {static.packets}"
            )
        self.scene = scene
        self.shared = static
        self.packets = static.packets
        self.atlas = static.atlas
        self.static = static.table
        self._static_embree = static.embree
        self._static_packets = static.packet_scene
        self._version = -1
        self._dynamic_embree: rtcore_scene.EmbreeScene | None = None
        self._dynamic_packets: PacketScene | None = None
        self.dynamic_boxes = np.zeros((0, 2, 3), np.float32)
        self.table = self.static
        self._decider: object | None = None
        self._state: tuple[object, ...] | None = None
        self.sync()

    def sync(self) -> None:
        """Take the dynamic part of the scene's state if it changed since the last cast.

        A change that moves no drawn mesh (a hidden, carried body following its carrier) keeps
        the part: remaking it would tabulate the same triangles (every door) again each step.
        """
        if self._version == self.scene.version:
            return
        state = self.scene.dynamic_state()
        if state != self._state:
            part = self.shared.dynamic_part(self.scene)
            self.table, self._decider, self.dynamic_boxes = part.table, part.decider, part.boxes
            self._dynamic_embree, self._dynamic_packets = part.embree, part.packet_scene
            self._state = state
        self._version = self.scene.version

    def cast(
        self,
        origins: NDArray,
        directions: NDArray,
        tmax: NDArray | float | None = None,
        dynamic_rows: NDArray[np.intp] | None = None,
        width: int = 0,
    ) -> Hits:
        """Cast rays; ``t`` is in units of each direction's length, capped at ``tmax``.

        ``dynamic_rows`` limits the rays tested against dynamic geometry to those rows (the
        renderer passes the pixels where a dynamic object can appear); None tests them all.
        ``width`` > 0 says the rays are the rows of an image that wide (packets trace it in
        tiles; the hits are the same either way). One origin row serves every direction.
        """
        self.sync()
        origins = np.ascontiguousarray(origins, dtype=np.float32).reshape(-1, 3)
        directions = np.ascontiguousarray(directions, dtype=np.float32)
        limit = None
        if tmax is not None:
            # A copy: Embree needs a writable buffer, and broadcast_to gives a read-only view.
            limit = np.array(np.broadcast_to(tmax, (len(directions),)), np.float32)
        if self.packets:
            return self._cast_packets(origins, directions, limit, dynamic_rows, width)
        hits, unsure = self._trace(origins, directions, limit, dynamic_rows)
        self._retry(hits, unsure, origins, directions, limit)
        return hits

    def cast_marked(
        self,
        origin: tuple[float, float, float],
        rays: NDArray[np.float32],
        marked: NDArray[np.bool_],
        hits: Hits,
        turn: tuple[np.float32, np.float32] | None = None,
    ) -> int:
        """Cast the ``marked`` rows' rays from ``origin``, writing their hits into ``hits``.

        The hits ``cast`` gives those rays (a camera frame's unsure pixels), found in one call
        to the packet extension. ``rays`` are (N, 3) directions, or with ``turn`` (a yaw's
        float32 cosine and sine, ``camera.yaw_turn``) rows x, y, z at zero yaw, (3, N), turned
        as ``camera.world_rays`` turns them. Returns how many rays were cast.
        """
        self.sync()
        eye = np.array([origin], np.float32)
        if self.packets:
            arrays = (hits.t, hits.triangle, hits.u, hits.v)
            fixed, moving = self._static_packets, self._dynamic_packets
            return packets.cast_pixels(
                fixed,
                moving,
                eye,
                rays,
                turn,
                marked,
                arrays,
                self._decider,
                NUDGE_TABLE,
                REMEASURE_TOLERANCE,
            )
        rows = np.flatnonzero(marked)
        if rows.size:
            ways = rays[rows] if turn is None else turn_rows(rays[:, rows], turn)
            cast = self.cast(eye, np.ascontiguousarray(ways))
            hits.t[rows], hits.triangle[rows] = cast.t, cast.triangle
            hits.u[rows], hits.v[rows] = cast.u, cast.v
        return int(rows.size)

    def cast_prepared(
        self,
        origins: NDArray[np.float32],
        directions: NDArray[np.float32],
        tmax: NDArray,
        out: packets.HitArrays | None = None,
    ) -> Hits:
        """Cast bounded rays given as C-contiguous float32 arrays (bodies' probes, every step).

        The same hits as ``cast``: with packets, one call with no conversions, copies or box
        tests (Embree culls the small dynamic scene itself), written into ``out`` if given
        (the hits are then only good until the next cast into it); with embreex, ``cast``.
        """
        if not self.packets:
            return self.cast(origins, directions, tmax)
        self.sync()
        return self._cast_packets(origins, directions, tmax, None, 0, out)

    def _trace(
        self,
        origins: NDArray[np.float32],
        directions: NDArray[np.float32],
        limit: NDArray[np.float32] | None,
        dynamic_rows: NDArray[np.intp] | None,
    ) -> tuple[Hits, NDArray[np.bool_]]:
        """Cast through embreex, each hit settled (``exact.settle``).

        Also returns which rays are ambiguous (met an edge), to be cast again nudged.
        """
        if len(origins) != len(directions):
            origins = np.array(np.broadcast_to(origins, directions.shape))
        rays = Rays.bounded(origins, directions, limit)
        if self._static_embree is None:
            hits, exact_t = _no_hits(len(origins)), np.full(len(origins), np.inf)
        else:
            hits, exact_t = rays.hits(self._static_embree, self.table.corners, 0)
        if self._dynamic_embree is not None and (dynamic_rows is None or len(dynamic_rows)):
            if dynamic_rows is not None or self._may_reach_dynamic(origins, directions, limit):
                hits = self._cast_dynamic(hits, exact_t, rays, dynamic_rows)
        table = self.table
        unsure = settle(
            table.faces, table.corners, origins, directions, (hits.t, hits.triangle, hits.u, hits.v)
        )
        return hits, unsure

    def _retry(
        self,
        hits: Hits,
        unsure: NDArray[np.bool_],
        origins: NDArray[np.float32],
        directions: NDArray[np.float32],
        limit: NDArray[np.float32] | None,
    ) -> None:
        """Cast the ``unsure`` rays again from nudged origins; write their hits in place.

        Which of two triangles meeting at an edge Embree reports depends on the CPU, so such a
        ray is decided by a nudged copy that meets no edge (``exact.settle``, ``NUDGES``). Every
        nudged ray is tested against the dynamic scene too, whatever ``dynamic_rows`` said.
        With packets the extension does this itself (``retry`` in ``_packets.c``), the same way.
        """
        rows = np.flatnonzero(unsure)
        if not rows.size:
            return
        one_origin = len(origins) != len(directions)
        starts = np.repeat(origins[:1], len(rows), axis=0) if one_origin else origins[rows]
        for nudge in NUDGES:
            ways = np.ascontiguousarray(directions[rows])
            sub_limit = None if limit is None else np.ascontiguousarray(limit[rows])
            again, again_unsure = self._trace(
                np.ascontiguousarray(starts + nudge), ways, sub_limit, None
            )
            self._remeasure(hits, rows, again, nudge, starts, ways, sub_limit)
            rows, starts = rows[again_unsure], starts[again_unsure]
            if not rows.size:
                return

    def _remeasure(
        self,
        hits: Hits,
        rows: NDArray[np.intp],
        nudged: Hits,
        nudge: NDArray[np.float32],
        origins: NDArray[np.float32],
        directions: NDArray[np.float32],
        limit: NDArray[np.float32] | None,
    ) -> None:
        """Write the hits of the un-nudged rays at ``rows``: the triangles the nudged ones found.

        The distance is the un-nudged ray's own, on the found triangle's plane, when that lies
        ahead of the ray and within ``REMEASURE_TOLERANCE`` of where the nudged ray hit (a plane
        nearly along the ray, such as a cone's side seen from below its rim, can meet the ray
        far off, even behind it); else the nudged hit point's distance along the ray.
        """
        triangle = nudged.triangle.astype(np.int64)
        t, u, v = exact_hits(self.table.corners, origins, directions, triangle)
        d = directions.astype(np.float64)
        shift = (nudge.astype(np.float64) * d).sum(axis=1) / (d * d).sum(axis=1)
        seen = np.maximum(nudged.t.astype(np.float64) + shift, 0.0)  # the nudged point, on the ray
        with np.errstate(invalid="ignore"):  # inf - inf where the nudged ray met nothing
            own = (t >= 0) & (np.abs(t - seen) <= REMEASURE_TOLERANCE)
        t = np.where(own, t, seen)
        u, v = np.where(own, u, nudged.u), np.where(own, v, nudged.v)
        found = (triangle >= 0) & (t <= (np.inf if limit is None else limit))
        again = found_hits(found, triangle, t, u, v)
        hits.t[rows], hits.triangle[rows] = again.t, again.triangle
        hits.u[rows], hits.v[rows] = again.u, again.v

    def _cast_packets(
        self,
        origins: NDArray[np.float32],
        directions: NDArray[np.float32],
        limit: NDArray[np.float32] | None,
        dynamic_rows: NDArray[np.intp] | None,
        width: int,
        out: packets.HitArrays | None = None,
    ) -> Hits:
        """Cast through Embree packets, static and dynamic scene in one pass, hits final.

        The extension settles each hit and casts the rays that met an edge again, nudged, in
        the same call.
        """
        moving, mask = self._dynamic_packets, None
        if moving is not None and dynamic_rows is not None:
            # A mask even when no row is listed: the nudged rays still meet the dynamic scene.
            mask = np.zeros(len(directions), np.uint8)
            mask[dynamic_rows] = 1
        unsure = np.empty(len(directions), np.uint8)
        t, triangle, u, v = packets.trace(
            self._static_packets,
            moving,
            origins,
            directions,
            limit,
            mask,
            width,
            out,
            decider=self._decider,
            unsure=unsure,
            nudges=NUDGE_TABLE,
            tolerance=REMEASURE_TOLERANCE,
        )
        return Hits(t, triangle, u, v)

    def _may_reach_dynamic(
        self, origins: NDArray, directions: NDArray, limit: NDArray | None
    ) -> bool:
        """Return False when bounded rays all stay clear of every dynamic object's box.

        Bodies cast short, bounded batches far from most doors; skipping the second Embree
        call for them roughly halves a step's ray-casting cost in worlds with doors.
        """
        if limit is None or not np.isfinite(limit).all():
            return True
        ends = origins + directions * limit[:, None]
        low = np.minimum(origins, ends).min(axis=0)
        high = np.maximum(origins, ends).max(axis=0)
        boxes = self.dynamic_boxes
        return bool(((boxes[:, 0] <= high) & (boxes[:, 1] >= low)).all(axis=1).any())

    def _cast_dynamic(
        self, hits: Hits, exact_t: NDArray[np.float64], rays: Rays, rows: NDArray[np.intp] | None
    ) -> Hits:
        """Cast (some) rays against the dynamic geometry and keep the exactly nearer hits."""
        if rows is None:
            rows = np.arange(len(rays.origins))
        sub = rays.subset(rows)
        nearest = np.where(np.isfinite(hits.t[rows]), exact_t[rows], sub.limit)
        extra, extra_t = sub.hits(
            self._dynamic_embree, self.table.corners, len(self.static), nearest.astype(np.float32)
        )
        nearer = np.isfinite(extra.t) & (extra_t < exact_t[rows])
        return hits.replaced(rows[nearer], extra.subset(nearer))

    def object_ids(self, hits: Hits) -> NDArray[np.int32]:
        """Return the instance id hit by each ray (0 for none)."""
        return np.take(self.table.object_id, hits.triangle)


def _part_boxes(parts: list[tuple[int, Mesh]]) -> NDArray[np.float32]:
    """Return the axis-aligned boxes of meshes, (K, 2, 3) as (min corner, max corner)."""
    if not parts:
        return np.zeros((0, 2, 3), np.float32)
    return np.array([m.bounds() for _, m in parts], np.float32)


def _no_hits(n: int) -> Hits:
    return Hits(
        np.full(n, MISS, np.float32),
        np.full(n, -1, np.int32),
        np.zeros(n, np.float32),
        np.zeros(n, np.float32),
    )
