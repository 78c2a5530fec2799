"""Camera frames by rasterisation: the same hits as casting every pixel's ray, found faster.

All of a camera's rays start at the eye, so ``sortie/sim/_raster.c`` walks each triangle over
the pixels it may cover and keeps the nearest per pixel, measured with the ray caster's own
exact formula (``sortie.sim.exact``). A pixel whose answer is clear gets the very hit its ray
would: the same triangle, and the same bits of distance and barycentrics. A pixel it cannot
be sure of (a hit near a triangle's outline, two surfaces at one depth, a triangle seen
edge-on, a face the caster counts as in one plane with another that lies farther than a tie,
``apart``) is cast through the ray caster, whose rules decide it the same way on every CPU. So
frames are those of the ray caster, pixel for pixel; tests hold the two to that.

The extension also writes a frame's id and RGB images in one pass (``output``), the same
bits as ``sortie.sim.render``'s numpy shading. With ``SORTIE_RASTER=0`` in the environment, or
without the compiled extension, every pixel is cast and shaded in numpy.

On a CPU with AVX2 the extension's pixel loops run four pixels an instruction, and its
triangles' first steps four triangles, each lane doing the one-at-a-time path's IEEE operations
in its order, so both give the same bits (``simd``; ``SORTIE_RASTER_SIMD=0`` keeps to one at a
time).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cache, partial
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.sim.camera import CameraSpec, camera_rotation, pitched_rays, yaw_turn
from sortie.sim.chunks import Chunks, in_order, near_one_another
from sortie.sim.compiled import optional_module
from sortie.sim.exact import Faces
from sortie.sim.raycast import Hits, RayCaster, TriangleTable

ENV_SWITCH = "SORTIE_RASTER"
"""Set to 0 to cast every camera pixel (for comparisons, or if the extension misbehaves)."""
SIMD_SWITCH = "SORTIE_RASTER_SIMD"
"""Set to 0 to run the extension's pixel loops one pixel at a time (the same frames)."""
ROUNDING = 1e-9
"""A share added to ``apart``'s distances (and as many metres): room for their rounding."""


@cache
def extension() -> ModuleType | None:
    """Return the compiled rasteriser, or None when it is switched off or not built."""
    return optional_module("sortie.sim._raster", ENV_SWITCH)


def available() -> bool:
    """Return whether camera frames are rasterised in this process."""
    return extension() is not None


def simd(on: bool | None = None) -> bool:
    """Return whether the extension's pixel loops run four pixels at a time (AVX2).

    ``on`` switches that for this process first (on only where the CPU has AVX2), so that
    tests can compare both paths; without the extension, False.
    """
    module = extension()
    if module is None:
        return False
    return bool(module.simd() if on is None else module.simd(on))


def work() -> dict[str, int]:
    """Return what this process's last rasterised frame did, counted by the extension.

    Chunks in view (or near the eye), chunks skipped whole as hidden behind what was drawn,
    triangles set up in the chunks drawn, and triangles whose pixels were tested. Frames do not
    depend on these (only the work does); benchmarks report them, tests hold the culling to them.
    """
    module = extension()
    assert module is not None, "the rasteriser's extension is not built (check available())"
    return dict(module.work())


def frame_hits(
    caster: RayCaster,
    spec: CameraSpec,
    eye: tuple[float, float, float],
    yaw: float,
    pitch: float,
    dirs: NDArray[np.float32] | None = None,
) -> tuple[Hits, int]:
    """Return the hits of the camera's rays ``dirs`` from ``eye``, and how many were cast.

    ``dirs`` are ``world_rays(spec, yaw, pitch)``; None turns only the rays needed, to the
    same bits. The caster must be in step with its scene.
    """
    hits, unsure = drawn(caster, spec, eye, yaw, pitch, dirs)
    if dirs is None:
        return hits, caster.cast_marked(eye, pitched_rays(spec, pitch), unsure, hits, yaw_turn(yaw))
    return hits, caster.cast_marked(eye, np.ascontiguousarray(dirs, np.float32), unsure, hits)


def drawn(
    caster: RayCaster,
    spec: CameraSpec,
    eye: tuple[float, float, float],
    yaw: float,
    pitch: float,
    dirs: NDArray[np.float32] | None = None,
) -> tuple[Hits, NDArray[np.bool_]]:
    """Return what the rasteriser alone finds, and which pixels it leaves to be cast.

    The hits of the pixels it leaves are placeholders (no hit); ``frame_hits`` casts them.
    With ``dirs`` None the extension turns the camera's pitched rays by ``yaw`` itself.
    """
    module = extension()
    assert module is not None, "the rasteriser's extension is not built (check available())"
    n = spec.width * spec.height
    if dirs is None:  # the pitched rows x, y, z, and the yaw's turn
        rays, turn = pitched_rays(spec, pitch), tuple(float(x) for x in yaw_turn(yaw))
    else:
        rays, turn = np.ascontiguousarray(dirs, np.float32), ()
    t, u, v = (np.empty(n, np.float32) for _ in range(3))
    triangle, unsure = np.empty(n, np.int32), np.empty(n, np.uint8)
    table = caster.table
    derived = kept(table, caster.static)
    module.frame(
        np.ascontiguousarray(table.corners, np.float32),
        np.ascontiguousarray(table.faces.reach, np.float64),
        derived.apart,
        derived.chunks.members,
        derived.chunks.bounds,
        np.ascontiguousarray(camera_rotation(yaw, pitch), np.float64),
        np.array(eye, np.float32),
        rays,
        spec.focal,
        spec.width,
        spec.height,
        t,
        triangle,
        u,
        v,
        unsure,
        *turn,
    )
    return Hits(t, triangle, u, v), unsure.view(bool)


def output(
    hits: Hits,
    table: TriangleTable,
    image: NDArray[np.uint8],
    colors: NDArray[np.uint8],
    shade: NDArray[np.float32],
    sky: NDArray[np.uint8] | None,
    ids: NDArray[np.int32] | None,
    rgb: NDArray[np.uint8] | None,
) -> None:
    """Write each pixel's instance id into ``ids`` and colour into ``rgb`` (None: not asked).

    ``colors`` and ``shade`` are the table's lit face colours and light factors, ``image`` its
    texture atlas, ``sky`` each pixel's sky colour (needed only with ``rgb``). The result is
    ``sortie.sim.render``'s numpy shading, bit for bit.
    """
    module = extension()
    assert module is not None, "the rasteriser's extension is not built (check available())"
    module.output(
        np.ascontiguousarray(hits.triangle, np.int32),
        np.ascontiguousarray(hits.u, np.float32),
        np.ascontiguousarray(hits.v, np.float32),
        np.ascontiguousarray(table.object_id, np.int32),
        np.ascontiguousarray(colors, np.uint8),
        np.ascontiguousarray(shade, np.float32),
        np.ascontiguousarray(table.textured, np.bool_),
        np.ascontiguousarray(table.uv, np.float32),
        np.ascontiguousarray(image),
        image.shape[1],
        image.shape[0],
        b"" if sky is None else np.ascontiguousarray(sky, np.uint8),
        ids,
        rgb,
    )


@dataclass(frozen=True, slots=True)
class Kept:
    """What the extension needs of a table besides its own arrays (``chunks``, ``apart``)."""

    chunks: Chunks
    apart: NDArray[np.float64]


_KEPT: dict[int, tuple[weakref.ref[NDArray[np.float32]], Kept]] = {}
"""Each table's Kept by the id of its corners, for as long as those corners live."""


def chunks(table: TriangleTable) -> Chunks:
    """Return the chunks the extension draws ``table``'s triangles in (``sortie.sim.chunks``)."""
    return kept(table).chunks


def apart(table: TriangleTable) -> NDArray[np.float64]:
    """Return how far each triangle's coincident partners reach off its plane, metres, (T,).

    Partners (``exact.Faces``) are faces in one plane at ``exact.PLANE_DECIMALS``: up to 0.1
    mm apart, and more where their normals differ. A ray meeting one of them inside meets
    the other, if at all, at most this far from it over the cosine; where that passes the tie
    margin, the extension leaves the pixel to the ray caster, whose coincident-face rule may
    give it to the farther face. 0 for a triangle without partners.
    """
    return kept(table).apart


def kept(table: TriangleTable, static: TriangleTable | None = None) -> Kept:
    """Return ``table``'s Kept, made once while its corners live.

    A scene's table changes only when a dynamic object moves, and the copies of a vector env
    each hold their own (a bound on how many were kept had 16 copies recompute theirs every
    frame). ``static`` is a table that ``table`` begins with, whose triangles have no partner
    after it (a caster's static table, which its tables begin with: ``RayCaster.static``): its
    Kept is made once, and a new table computes only its own rows after it, the same values.
    """
    corners = table.corners
    held = _KEPT.get(id(corners))
    if held is not None and held[0]() is corners:
        return held[1]
    result = _made(table, static)
    key = id(corners)
    _KEPT[key] = (weakref.ref(corners, partial(_forget, key)), result)
    return result


def _forget(key: int, ref: weakref.ref[NDArray[np.float32]]) -> None:
    """Drop the Kept of corners that are gone (unless their id holds newer ones)."""
    held = _KEPT.get(key)
    if held is not None and held[0] is ref:
        del _KEPT[key]


def _made(table: TriangleTable, static: TriangleTable | None) -> Kept:
    """Return ``table``'s Kept, from ``static``'s and its own rows after them where it can.

    A table without a static prefix has its chunks grouped by place; one with it, the static
    table's chunks and its own rows' in their order (``sortie.sim.chunks``).
    """
    corners, faces = table.corners, table.faces
    if static is None or static is table or len(static) > len(corners):
        return Kept(near_one_another(corners), _apart_all(corners, faces))
    first = len(static)  # 0 too: a scene of dynamic objects alone keeps its rows in order
    base = kept(static)
    after = _apart(corners, faces, first)  # None: a row after the prefix partners one in it
    apart = _apart_all(corners, faces) if after is None else np.concatenate([base.apart, after])
    return Kept(base.chunks.joined(in_order(corners, first)), apart)


def _apart_all(corners: NDArray[np.float32], faces: Faces) -> NDArray[np.float64]:
    """Return ``apart`` of every triangle of ``corners`` (T, 3, 3), partners ``faces``'."""
    result = _apart(corners, faces, 0)
    assert result is not None  # no row lies before the first
    return result


def _apart(corners: NDArray[np.float32], faces: Faces, first: int) -> NDArray[np.float64] | None:
    """Return ``apart`` of the triangles ``corners[first:]`` (T, 3, 3), partners ``faces``'.

    None when one of them partners a triangle before ``first`` (then rows before it would
    differ from their own table's). A pair in ``same`` is listed once (by its higher index),
    so it counts both ways; ``opposite`` lists each pair both ways already.
    """
    count, same, opposite = len(corners), faces.same, faces.opposite
    rows = np.arange(first, count)
    owner = np.concatenate(
        [np.repeat(rows, same.counts(rows)), np.repeat(rows, opposite.counts(rows))]
    )
    other = np.concatenate(
        [same.index[same.start[first] :], opposite.index[opposite.start[first] :]]
    )
    if first and other.size and other.min() < first:
        return None
    owner, other, listed = owner - first, other - first, len(same.index) - same.start[first]
    normal, own = faces.normal[first:], corners[first:]
    offset = np.sum(normal * own[:, 0].astype(np.float64), axis=1)
    result = np.zeros(count - first)
    for plane, points in ((owner, other), (other[:listed], owner[:listed])):
        np.maximum.at(result, plane, _off_plane(normal, offset, own, plane, points))
    return np.where(result > 0, result * (1 + ROUNDING) + ROUNDING, 0.0)


def _off_plane(
    normal: NDArray[np.float64],
    offset: NDArray[np.float64],
    corners: NDArray[np.float32],
    plane: NDArray[np.int64],
    points: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Return how far the farthest corner of each ``points`` triangle lies off ``plane``'s.

    ``offset`` is each plane's ``normal . corner``; the rows of nine coordinates are gathered
    whole, as float32 (a gather of (P, 3, 3) float64 rows cost twice as much).
    """
    rows = corners.reshape(-1, 9)[points].astype(np.float64)
    n, level = normal[plane], offset[plane]
    farthest = np.zeros(len(plane))
    for k in range(3):
        x, y, z = rows[:, 3 * k], rows[:, 3 * k + 1], rows[:, 3 * k + 2]
        farthest = np.maximum(farthest, np.abs(x * n[:, 0] + y * n[:, 1] + z * n[:, 2] - level))
    return farthest
