"""The renderer: one primary ray per pixel gives depth, instance ids and RGB.

Which triangle each pixel's ray meets first comes from the rasteriser (``sortie.sim.raster``),
which gives the ray caster's own hits, pixel for pixel, faster; without its extension every
ray is cast. Depth and ids are exact (they come straight from the hit). RGB shades each hit
with its face colour or texture texel under a sun (Lambert) plus ambient light; rays that hit
nothing show a sky gradient. Only the sensors asked for are computed.

With the extension built, ids and RGB are written in C in one pass (``raster.output``) and
only the unsure pixels' rays are made here; ``shade`` and ``RayCaster.object_ids`` are the
numpy reference (``compiled_output=False``, or ``SORTIE_RASTER=0``), the same bits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ConfigError
from sortie.core.observation import Frames, Sensor
from sortie.sim import raster
from sortie.sim.camera import CameraSpec, dynamic_pixels, pitched_rays, world_rays
from sortie.sim.linear import product
from sortie.sim.raycast import Hits, RayCaster
from sortie.sim.scene import Scene

ALL_SENSORS = frozenset(Sensor)
SKIES_KEPT_BYTES = 16 * 2**20
"""Bytes of camera skies (one per size, field of view, pitch and sky colours) a process keeps:
about 340 at 128x128 (48 KB each), 18 at 640x480; the goal images of the 213 rescue episodes
come back to 158."""


class Renderer:
    """Renders a scene from camera poses; keep one per scene."""

    def __init__(
        self,
        scene: Scene,
        caster: RayCaster | None = None,
        rasterise: bool | None = None,
        compiled_output: bool | None = None,
    ) -> None:
        """Prepare to render ``scene``.

        ``rasterise`` None means "when the extension is built"; False casts every pixel's ray
        (the same frames, for comparisons). ``compiled_output`` likewise: None writes the ids
        and RGB in the extension when it is built, False in numpy (the reference, same bits).
        """
        self.scene = scene
        self.caster = caster or RayCaster(scene)
        self.rasterise = raster.available() if rasterise is None else rasterise
        self.compiled_output = raster.available() if compiled_output is None else compiled_output
        for what, name, asked in (
            ("rasterising", "rasterise", self.rasterise),
            ("the compiled output stage", "compiled_output", compiled_output),
        ):
            if asked and not raster.available():
                raise ConfigError(
                    f"Renderer: {what} asked for, but sortie.sim._raster is not built or is "
                    f"switched off ({raster.ENV_SWITCH}=0); allowed here: {name}=False or None"
                )
        self._origins: dict[int, NDArray[np.float32]] = {}
        light = scene.lighting
        sun = np.asarray(light.sun_direction, np.float32)
        self._sun = sun / np.linalg.norm(sun)
        self._light = light
        self._lit: _LitColors | None = None
        self._palette_cache: _Palette | None = None
        self._lit_table: object = None

    def render(
        self,
        spec: CameraSpec,
        eye: tuple[float, float, float],
        yaw: float,
        pitch: float | None = None,
        sensors: Collection[Sensor] = ALL_SENSORS,
    ) -> Frames:
        """Render the images in ``sensors`` from ``eye`` looking along ``yaw`` and ``pitch``."""
        if not sensors:
            return Frames()
        pitch = spec.pitch if pitch is None else pitch
        self.caster.sync()
        if self.rasterise and self.compiled_output:
            # Only the pixels cast need their ray here; the extension turns the rest itself.
            hits, _ = raster.frame_hits(self.caster, spec, eye, yaw, pitch)
            return self._output(hits, spec, pitch, sensors)
        dirs = world_rays(spec, yaw, pitch)
        if self.rasterise:
            hits, _ = raster.frame_hits(self.caster, spec, eye, yaw, pitch, dirs)
        elif self.caster.packets:
            # Embree's own culling of the small dynamic scene is cheaper than finding the
            # pixels it may cover, and the hits are the same.
            hits = self.caster.cast(np.array([eye], np.float32), dirs, width=spec.width)
        else:
            rows = dynamic_pixels(spec, eye, yaw, pitch, self.caster.dynamic_boxes)
            hits = self.caster.cast(self._origin_buffer(len(dirs), eye), dirs, dynamic_rows=rows)
        if self.compiled_output:
            return self._output(hits, spec, pitch, sensors)
        return self._numpy_output(hits, spec, pitch, dirs, sensors)

    def _numpy_output(
        self,
        hits: Hits,
        spec: CameraSpec,
        pitch: float,
        dirs: NDArray[np.float32],
        sensors: Collection[Sensor],
    ) -> Frames:
        """Return the frames of ``hits`` made in numpy: the reference of ``_output``."""
        shape = (spec.height, spec.width)
        depth = hits.t.reshape(shape) if Sensor.DEPTH in sensors else None
        semantic = None
        if Sensor.SEMANTIC in sensors:
            semantic = self.caster.object_ids(hits).reshape(shape)
        rgb = None
        if Sensor.RGB in sensors:
            rgb = self.shade(hits, dirs, self._camera_sky(spec, pitch)).reshape(*shape, 3)
        return Frames(rgb=rgb, depth=depth, semantic=semantic)

    def _output(
        self,
        hits: Hits,
        spec: CameraSpec,
        pitch: float,
        sensors: Collection[Sensor],
    ) -> Frames:
        """Return the frames of ``hits``, ids and RGB written by the extension in one pass.

        Depth is the hits' own distances.
        """
        shape, n = (spec.height, spec.width), len(hits.t)
        ids = np.empty(n, np.int32) if Sensor.SEMANTIC in sensors else None
        rgb = np.empty((n, 3), np.uint8) if Sensor.RGB in sensors else None
        if ids is not None or rgb is not None:
            sky = self._camera_sky(spec, pitch) if rgb is not None else None
            lit = self._lit_colors()
            raster.output(
                hits,
                self.caster.table,
                self.caster.atlas.image,
                lit.color,
                lit.shade,
                sky,
                ids,
                rgb,
            )
        return Frames(
            rgb=None if rgb is None else rgb.reshape(*shape, 3),
            depth=hits.t.reshape(shape) if Sensor.DEPTH in sensors else None,
            semantic=None if ids is None else ids.reshape(shape),
        )

    def _origin_buffer(self, n: int, eye: tuple[float, float, float]) -> NDArray[np.float32]:
        buffer = self._origins.get(n)
        if buffer is None:
            buffer = self._origins[n] = np.empty((n, 3), np.float32)
        buffer[:] = eye
        return buffer

    def shade(
        self, hits: Hits, dirs: NDArray[np.float32], sky: NDArray[np.uint8] | None = None
    ) -> NDArray[np.uint8]:
        """Return the RGB colour of each ray's hit (or of the sky where it hit nothing).

        ``sky``: each ray's sky colour, if known (a camera's, ``_camera_sky``); else made here.
        """
        if sky is None:
            sky = sky_colors(dirs, self._light.sky_horizon, self._light.sky_top)
        palette, sky_rows = self._palette(sky)
        tri = hits.triangle
        rgb = np.take(palette, np.where(tri >= 0, tri, sky_rows), axis=0)
        textured = np.flatnonzero(np.take(self.caster.table.textured, tri))
        if len(textured):
            shade = self._lit_colors().shade[tri[textured], None]
            rgb[textured] = np.clip(self._texels(hits, textured) * shade, 0, 255)
        return rgb

    def _palette(self, sky: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], NDArray[np.int32]]:
        """Return every lit face colour followed by every pixel's sky colour, and sky rows.

        One gather from this table colours a whole frame, sky included; it is rebuilt only
        when the faces (dynamic geometry) or the camera's sky change.
        """
        lit = self._lit_colors()
        cache = self._palette_cache
        if cache is None or cache.lit is not lit or cache.sky is not sky:
            rows = np.arange(len(sky), dtype=np.int32) + len(lit.color)
            cache = self._palette_cache = _Palette(lit, sky, np.concatenate([lit.color, sky]), rows)
        return cache.colors, cache.sky_rows

    def _lit_colors(self) -> _LitColors:
        """Return per-triangle shaded colours, recomputed when the dynamic geometry changes.

        Sun and ambient light are fixed for a scene, so shading is a per-face constant:
        computing it per face instead of per pixel makes RGB almost as cheap as ids.
        Faces are lit on their outward side (meshes are closed; labels face their reader).
        """
        table = self.caster.table
        if self._lit is None or self._lit_table is not table:
            light = self._light
            lambert = np.maximum(product(table.normal, self._sun), 0.0)
            shade = (light.ambient + light.sun * lambert)[:, None] * np.asarray(light.tint)
            color = np.clip(table.color * shade * 255.0 + 0.5, 0, 255).astype(np.uint8)
            self._lit = _LitColors(color, shade.mean(axis=1).astype(np.float32))
            self._lit_table = table
        return self._lit

    def _camera_sky(self, spec: CameraSpec, pitch: float) -> NDArray[np.uint8]:
        """Return the sky colour of each of the camera's pixels, kept per camera and pitch.

        A ray's elevation does not change with yaw, so the sky is made from the rays at zero
        yaw. (Made from the frame's turned rays, whose float32 lengths can differ in the last
        bit, a few sky pixels took the yaw of the frame that first drew the pitch: a frame then
        depended on the frames before it.) Kept per process (``_KEPT_SKIES``): every goal image
        has a pitch of its own, and renderers of other worlds under the same sky ask again.
        """
        light = self._light
        return _KEPT_SKIES.get(spec, pitch, light.sky_horizon, light.sky_top)

    def _texels(self, hits: Hits, rows: NDArray[np.intp]) -> NDArray[np.float32]:
        uv = self.caster.table.uv[hits.triangle[rows]]
        u, v = hits.u[rows, None], hits.v[rows, None]
        point = (1.0 - u - v) * uv[:, 0] + u * uv[:, 1] + v * uv[:, 2]
        image = self.caster.atlas.image
        col = np.clip(point[:, 0] + 0.5, 0, image.shape[1] - 1).astype(np.intp)
        row = np.clip(point[:, 1] + 0.5, 0, image.shape[0] - 1).astype(np.intp)
        return image[row, col].astype(np.float32)


def sky_colors(
    dirs: NDArray[np.float32], horizon: Sequence[float], top: Sequence[float]
) -> NDArray[np.uint8]:
    """Return the sky colour of every ray (N, 3): a gradient from ``horizon`` to ``top``."""
    up = dirs[:, 2] / np.linalg.norm(dirs, axis=1)
    blend = np.clip(up * 2.5, 0.0, 1.0)[:, None]
    sky = (1 - blend) * np.asarray(horizon) + blend * np.asarray(top)
    return (sky * 255.0 + 0.5).astype(np.uint8)


class _KeptSkies:
    """Camera skies kept per process, the least recently used dropped beyond a byte budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._skies: OrderedDict[tuple[object, ...], NDArray[np.uint8]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(
        self, spec: CameraSpec, pitch: float, horizon: Sequence[float], top: Sequence[float]
    ) -> NDArray[np.uint8]:
        """Return the sky colour of each of ``spec``'s pixels at ``pitch`` (read-only)."""
        key = (spec.width, spec.height, spec.hfov, pitch, tuple(horizon), tuple(top))
        with self._lock:
            sky = self._skies.get(key)
            if sky is not None:
                self._skies.move_to_end(key)
                return sky
        sky = sky_colors(pitched_rays(spec, pitch).T, horizon, top)
        sky.setflags(write=False)
        with self._lock:
            if key not in self._skies:  # another thread may have made it meanwhile
                self._bytes += sky.nbytes
            self._skies[key] = sky
            while len(self._skies) > 1 and self._bytes > self.budget:
                self._bytes -= self._skies.popitem(last=False)[1].nbytes
        return sky


_KEPT_SKIES = _KeptSkies(SKIES_KEPT_BYTES)


@dataclass(frozen=True, slots=True)
class _LitColors:
    color: NDArray[np.uint8]  # (T+1, 3) shaded face colour
    shade: NDArray[np.float32]  # (T+1,) light factor, for textured faces


@dataclass(frozen=True, slots=True)
class _Palette:
    lit: _LitColors  # the face colours it was built from
    sky: NDArray[np.uint8]  # the sky it was built from
    colors: NDArray[np.uint8]  # face colours, then one sky colour per pixel
    sky_rows: NDArray[np.int32]  # row of each pixel's sky colour
