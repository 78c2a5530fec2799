"""The reference image of a rescue episode, rendered again from its spec for the mission panel.

The record holds the view the clue's picture was taken from (``mission.reference_view``), not
the picture; rendering it from the world and the episode's placements gives the same image the
agent was shown. Scenes are kept per world and placements, as episodes share them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from sortie.core.episode import EpisodeSpec
from sortie.core.observation import Sensor
from sortie.sim.camera import CameraSpec
from sortie.sim.placements import with_placements
from sortie.sim.render import Renderer
from sortie.sim.worlds import build_world


class ReferenceViews:
    """Renders rescue reference images, building each scene once."""

    def __init__(self) -> None:
        """Start with no scene built."""
        self._renderers: dict[str, Renderer] = {}

    def write(
        self, spec: EpisodeSpec, view: Sequence[float], backend_args: dict[str, Any], path: Path
    ) -> bool:
        """Render ``spec``'s world from camera pose ``view`` (x, y, z, yaw, pitch) into ``path``.

        Returns False when the render gave no image.
        """
        camera = backend_args.get("camera") or {}
        spec_camera = CameraSpec(**camera) if isinstance(camera, dict) else CameraSpec()
        frames = self._renderer(spec).render(
            spec_camera, (view[0], view[1], view[2]), view[3], view[4], {Sensor.RGB}
        )
        if frames.rgb is None:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(frames.rgb).save(path, compress_level=1)
        return True

    def _renderer(self, spec: EpisodeSpec) -> Renderer:
        key = spec.world.model_dump_json() + "".join(p.model_dump_json() for p in spec.placements)
        if key not in self._renderers:
            world = spec.world
            scene = with_placements(
                build_world(world.builder, world.seed, world.params), spec.placements, world.seed
            )
            self._renderers[key] = Renderer(scene)
        return self._renderers[key]
