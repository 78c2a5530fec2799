"""Embree packet tracing: the compiled ``sortie.sim._packets`` when it is built and agrees.

embreex intersects one ray per Embree call. ``_packets`` (a small C extension built at install,
``sortie/sim/_packets.c``) opens the Embree library that embreex ships, builds the same robust
triangle scenes, and traces 4 x 4 pixel tiles for images (16 rays in one call where Embree
runs that natively, with AVX-512; two 8-ray calls otherwise), the static and the dynamic
scene in one pass. The ray caster uses it when ``available()``; otherwise, or with
``SORTIE_PACKETS=0`` in the environment, it keeps to embreex. Before the first use, a small
scene is traced both ways: any difference in a hit disables the packets for the process, so a
mismatched library can cost speed but never change a result.
"""

from __future__ import annotations

import ctypes.util
import os
import warnings
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ConfigError
from sortie.sim.compiled import PACKETS_SWITCH, optional_module
from sortie.sim.exact import REMEASURE_TOLERANCE, Faces, exact_hits

HitArrays = tuple[NDArray[np.float32], NDArray[np.int32], NDArray[np.float32], NDArray[np.float32]]
"""A trace's hits: distance (inf: none), triangle (-1: none), and the barycentrics u, v."""
ENV_ISA = "SORTIE_EMBREE_ISA"
"""Embree's kernels to use (sse4.2, avx, avx2, avx512); unset: the best the CPU has."""
ISAS = ("sse4.2", "avx", "avx2", "avx512")


def device_config() -> str:
    """Return the Embree device configuration: one thread, and the ISA asked for, if any.

    One thread: each sortie process is one of several sharing the machine's cores.
    """
    isa = os.environ.get(ENV_ISA, "")
    if not isa:
        return "threads=1"
    if isa not in ISAS:
        raise ConfigError(f"{ENV_ISA}: unknown Embree ISA {isa!r}; allowed: {', '.join(ISAS)}")
    return f"threads=1,isa={isa}"


def library_path() -> str | None:
    """Return the Embree 4 library to open, or None if there is none.

    The one the embreex wheel ships comes first; else the system's (e.g. Debian's).
    """
    import embreex

    folder = Path(embreex.__file__).resolve().parent.parent / "embreex.libs"
    found = sorted(folder.glob("libembree4*.so*"))
    if found:
        return str(found[0])
    return ctypes.util.find_library("embree4")


@cache
def extension() -> ModuleType | None:
    """Return the loaded extension, or None when it is switched off, missing or disagrees."""
    module = optional_module("sortie.sim._packets", PACKETS_SWITCH)
    if module is None:
        return None
    path = library_path()
    if path is None:
        return None
    try:
        module.load(path, device_config())
    except OSError as error:
        warnings.warn(f"Embree packets off: {error}", RuntimeWarning, stacklevel=2)
        return None
    if not _agrees(module):
        warnings.warn(
            f"Embree packets off: {path} traced a test scene differently from embreex",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return module


def available() -> bool:
    """Return whether casts go through Embree packets in this process."""
    return extension() is not None


class PacketScene:
    """One committed Embree scene of triangles, owned by the extension."""

    def __init__(self, corners: NDArray[np.float32]) -> None:
        module = extension()
        assert module is not None, "PacketScene needs the extension (check available())"
        self.handle = module.new_scene(np.ascontiguousarray(corners, np.float32))
        self.triangles = len(corners)


def trace(
    fixed: PacketScene | None,
    moving: PacketScene | None,
    origins: NDArray[np.float32],
    directions: NDArray[np.float32],
    tmax: NDArray[np.float32] | None = None,
    dynamic_rows: NDArray[np.uint8] | None = None,
    width: int = 0,
    out: HitArrays | None = None,
    decider: object | None = None,
    unsure: NDArray[np.uint8] | None = None,
    nudges: NDArray[np.float32] | None = None,
    tolerance: float = REMEASURE_TOLERANCE,
) -> HitArrays:
    """Trace rays against a static and a dynamic scene; return ``t, triangle, u, v``.

    ``t`` is inf and ``triangle`` -1 where nothing is hit; dynamic triangles are numbered after
    the static ones. ``dynamic_rows`` (0/1 per ray) limits which rays meet the dynamic scene;
    ``width`` > 0 says the rays are rows of an image that wide (traced in 4 x 4 tiles).
    Inputs must be C-contiguous float32: ``directions`` (N, 3), ``origins`` (N, 3) or (1, 3)
    (one origin for every ray, such as a camera's eye). ``out`` receives the hits instead of
    new arrays (a body's probe reads them at once and casts again). With a ``decider``
    (``new_decider``) each hit is settled as ``sortie.sim.exact.settle`` does, and ``unsure``
    (uint8, one per ray) marks the rays to cast again, nudged. With ``nudges`` too (float32
    (K, 3), ``sortie.sim.exact.NUDGES``) the extension casts those again itself, as
    ``RayCaster._retry`` does for embreex, and the hits returned are final; ``tolerance``
    (metres) is how far the re-measured hit may lie from the nudged one (``_remeasure``'s).
    """
    module = extension()
    assert module is not None, "trace needs the extension (check available())"
    n = len(directions)
    t, tri, u, v = out if out is not None else hit_arrays(n)
    offset = fixed.triangles if fixed is not None else 0
    module.trace(
        None if fixed is None else fixed.handle,
        None if moving is None else moving.handle,
        offset,
        origins,
        directions,
        tmax,
        dynamic_rows,
        width,
        t,
        tri,
        u,
        v,
        decider,
        unsure,
        nudges,
        tolerance,
    )
    return t, tri, u, v


def cast_pixels(
    fixed: PacketScene | None,
    moving: PacketScene | None,
    origin: NDArray[np.float32],
    rays: NDArray[np.float32],
    turn: tuple[np.float32, np.float32] | None,
    marked: NDArray[np.bool_],
    hits: HitArrays,
    decider: object,
    nudges: NDArray[np.float32],
    tolerance: float = REMEASURE_TOLERANCE,
) -> int:
    """Cast the ``marked`` rays of a camera frame from ``origin``; write their hits into ``hits``.

    The hits are ``trace``'s with the decider, the nudges and the tolerance (settled, the unsure
    ones cast again), one call for the whole batch. ``rays`` are the frame's directions (N, 3),
    or with ``turn`` (the yaw's float32 cosine and sine, ``camera.yaw_turn``) its rows x, y, z
    at zero yaw (3, N), turned as ``camera.world_rays`` turns them. Returns how many rays were
    cast.
    """
    module = extension()
    assert module is not None, "cast_pixels needs the extension (check available())"
    c, s = (0.0, 0.0) if turn is None else (float(turn[0]), float(turn[1]))
    return int(
        module.cast_pixels(
            None if fixed is None else fixed.handle,
            None if moving is None else moving.handle,
            fixed.triangles if fixed is not None else 0,
            origin,
            rays,
            turn is not None,
            c,
            s,
            marked.view(np.uint8),
            *hits,
            decider,
            nudges,
            tolerance,
        )
    )


def new_decider(corners: NDArray[np.float32], faces: Faces) -> object:
    """Return the extension's handle on what settling hits needs (it keeps the arrays alive)."""
    module = extension()
    assert module is not None, "new_decider needs the extension (check available())"
    return module.new_decider(
        np.ascontiguousarray(corners, np.float32),
        faces.normal,
        faces.reach,
        faces.low,
        faces.high,
        faces.same.start,
        faces.same.index,
        faces.opposite.start,
        faces.opposite.index,
    )


def hit_arrays(n: int) -> HitArrays:
    """Return empty ``t, triangle, u, v`` arrays for ``n`` rays."""
    return (
        np.empty(n, np.float32),
        np.empty(n, np.int32),
        np.empty(n, np.float32),
        np.empty(n, np.float32),
    )


_KEPT: list[object] = []
"""The self-test's embreex scene, kept for the life of the process (see ``_agrees``)."""


def _agrees(module: ModuleType) -> bool:
    """Return whether the extension and embreex hit a small test scene identically."""
    from embreex import rtcore_scene
    from embreex.mesh_construction import TriangleMesh

    rng = np.random.default_rng(0)
    corners = rng.uniform(-1, 1, (64, 3, 3)).astype(np.float32)
    origins = rng.uniform(-3, 3, (256, 3)).astype(np.float32)
    directions = (rng.uniform(-1, 1, (256, 3)) - origins / 3).astype(np.float32)
    reference = rtcore_scene.EmbreeScene()
    # Kept alive: releasing embreex's default device (all threads) beside the extension's
    # one-thread device left a oneTBB worker spinning on sched_yield for the rest of the
    # process (a core lost while a run waits on a model server; measured, bench_llm.py).
    _KEPT.append(reference)
    TriangleMesh(reference, corners)
    found = reference.run(origins, directions, output=1)["primID"].astype(np.int64)
    exact_t, exact_u, exact_v = exact_hits(corners, origins, directions, found)
    hit = found >= 0
    handle = module.new_scene(corners)
    n = len(origins)
    t, tri = np.empty(n, np.float32), np.empty(n, np.int32)
    u, v = np.empty(n, np.float32), np.empty(n, np.float32)
    module.trace(handle, None, 0, origins, directions, None, None, 16, t, tri, u, v)
    return bool(
        hit.any()
        and np.array_equal(tri, np.where(hit, found, -1))
        and np.array_equal(t, np.where(hit, exact_t, np.inf).astype(np.float32))
        and np.array_equal(u, np.where(hit, exact_u, 0.0).astype(np.float32))
        and np.array_equal(v, np.where(hit, exact_v, 0.0).astype(np.float32))
    )
