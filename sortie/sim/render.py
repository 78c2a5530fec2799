"""The ray-cast renderer: one primary ray per pixel gives depth, instance ids and RGB.

Depth and ids are exact (they come straight from the hit). RGB shades each hit with its face
colour or texture texel, a sun (Lambert) plus ambient term and a little distance haze; rays
that hit nothing show a sky gradient. Only the sensors asked for are computed.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from numpy.typing import NDArray

from sortie.core.observation import Frames, Sensor
from sortie.sim.camera import CameraSpec, world_rays
from sortie.sim.raycast import Hits, RayCaster
from sortie.sim.scene import Lighting, Scene

ALL_SENSORS = frozenset(Sensor)


class Renderer:
    """Renders a scene from camera poses; keep one per scene."""

    def __init__(self, scene: Scene, caster: RayCaster | None = None) -> None:
        self.scene = scene
        self.caster = caster or RayCaster(scene)
        self._origins: dict[int, NDArray[np.float32]] = {}
        light = scene.lighting
        sun = np.asarray(light.sun_direction, np.float32)
        self._sun = sun / np.linalg.norm(sun)
        self._light = light

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
        dirs = world_rays(spec, yaw, pitch)
        hits = self.caster.cast(self._origin_buffer(len(dirs), eye), dirs)
        shape = (spec.height, spec.width)
        depth = hits.t.reshape(shape) if Sensor.DEPTH in sensors else None
        semantic = None
        if Sensor.SEMANTIC in sensors:
            semantic = self.caster.object_ids(hits).reshape(shape)
        rgb = self._shade(hits, dirs).reshape(*shape, 3) if Sensor.RGB in sensors else None
        return Frames(rgb=rgb, depth=depth, semantic=semantic)

    def _origin_buffer(self, n: int, eye: tuple[float, float, float]) -> NDArray[np.float32]:
        buffer = self._origins.get(n)
        if buffer is None:
            buffer = self._origins[n] = np.empty((n, 3), np.float32)
        buffer[:] = eye
        return buffer

    def _shade(self, hits: Hits, dirs: NDArray[np.float32]) -> NDArray[np.uint8]:
        table, light = self.caster.table, self._light
        tri = hits.triangle
        base = table.color[tri]
        textured = np.flatnonzero(table.textured[tri])
        if len(textured):
            base[textured] = self._texels(hits, textured)
        normal = table.normal[tri]
        # Two-sided faces: light the side the camera sees.
        toward_sun = normal @ self._sun
        facing_camera = np.einsum("ij,ij->i", normal, dirs) < 0
        lambert = np.maximum(np.where(facing_camera, toward_sun, -toward_sun), 0.0)
        shade = light.ambient + light.sun * lambert
        color = base * shade[:, None] * np.asarray(light.tint, np.float32)
        color = self._haze(color, hits.t, dirs, light)
        return (np.clip(color, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)

    def _texels(self, hits: Hits, rows: NDArray[np.intp]) -> NDArray[np.float32]:
        uv = self.caster.table.uv[hits.triangle[rows]]
        u, v = hits.u[rows, None], hits.v[rows, None]
        point = (1.0 - u - v) * uv[:, 0] + u * uv[:, 1] + v * uv[:, 2]
        image = self.caster.atlas.image
        col = np.clip(point[:, 0] + 0.5, 0, image.shape[1] - 1).astype(np.intp)
        row = np.clip(point[:, 1] + 0.5, 0, image.shape[0] - 1).astype(np.intp)
        return image[row, col].astype(np.float32) / 255.0

    @staticmethod
    def _haze(color: NDArray, t: NDArray, dirs: NDArray, light: Lighting) -> NDArray:
        up = dirs[:, 2] / np.linalg.norm(dirs, axis=1)
        blend = np.clip(up * 2.5, 0.0, 1.0)[:, None]
        sky = (1 - blend) * np.asarray(light.sky_horizon) + blend * np.asarray(light.sky_top)
        distance = np.where(np.isfinite(t), t, 1e6)
        fog = (1.0 - np.exp(-distance / 400.0))[:, None]
        return (color * (1 - fog) + sky * fog).astype(np.float32)
