"""The pose sensor: the body's position and heading as an agent that asks for them reads them.

The mission gives it, not the renderer: a backend reports the true pose to the harness
(records, metrics, oracles) and this turns it into the reading the run's ``PoseSettings``
describe: in the episode's frame or the start's, exact or with declared Gaussian noise.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import ValidationError

from sortie.core.errors import ParameterError
from sortie.core.observation import Sensor
from sortie.core.pose import Pose, wrap_degrees
from sortie.core.run_config import PoseSettings


def pose_settings_for(
    who: str, sensors: Iterable[str], given: PoseSettings | Mapping[str, Any] | None
) -> PoseSettings | None:
    """Return how the pose sensor reads for ``who`` seeing ``sensors`` (None: it does not).

    ``given`` None reads exact, in the world frame.

    Raises:
        ParameterError: settings given for sensors without ``pose`` (they would do nothing),
            or settings the model refuses.
    """
    seen = list(sensors)
    if Sensor.POSE not in seen:
        if given is not None:
            raise ParameterError(
                f"{who}: pose settings given, but its sensors ({', '.join(seen) or 'none'}) "
                "lack pose; the pose goes only to agents that read it"
            )
        return None
    if given is None or isinstance(given, PoseSettings):
        return given or PoseSettings()
    try:
        return PoseSettings(**given)
    except ValidationError as error:
        raise ParameterError(f"{who}: pose {dict(given)!r}: {error.errors()[0]['msg']}") from None


class PoseSensor:
    """Reads one episode's poses, in the settings' frame and with their noise."""

    def __init__(self, settings: PoseSettings, start: Pose, seed: int) -> None:
        """Read poses relative to ``start`` (frame ``start``); noise drawn from ``seed``."""
        self.settings = settings
        self.start = start
        # Its own stream, apart from the episode's world and agent: reading the pose never
        # changes what else the seed decides.
        digest = hashlib.sha256(f"pose-sensor/{seed}".encode()).digest()
        self._rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))

    def read(self, pose: Pose) -> Pose:
        """Return the reading of the body's true ``pose``."""
        seen = self._framed(pose)
        s = self.settings
        if s.position_noise == 0.0 and s.heading_noise == 0.0:
            return seen
        dx, dy, dz = (float(v) for v in self._rng.normal(0.0, s.position_noise, 3))
        dyaw = float(self._rng.normal(0.0, s.heading_noise))
        return Pose(seen.x + dx, seen.y + dy, seen.z + dz, wrap_degrees(seen.yaw + dyaw))

    def _framed(self, pose: Pose) -> Pose:
        """Return ``pose`` in the settings' frame."""
        if self.settings.frame == "world":
            return pose
        start = self.start
        c, s = math.cos(math.radians(start.yaw)), math.sin(math.radians(start.yaw))
        dx, dy = pose.x - start.x, pose.y - start.y
        return Pose(
            c * dx + s * dy,
            -s * dx + c * dy,
            pose.z - start.z,
            wrap_degrees(pose.yaw - start.yaw),
        )
