"""The ``airsim`` backend: MissionBench's Cosys-AirSim environments through AirSim's RPC API.

Install with ``pip install 'sortie[airsim]'``. The backend connects to a running Cosys-AirSim
environment (``host``, ``port`` 41451) and flies its multirotor. Worlds are ``airsim.<Env>``
(see ``sortie import missionbench``). A flight primitive is a pose move with collision checks
(``simSetVehiclePose`` without ignoring collisions, the default) or a velocity move
(``-b moves=velocity``: ``moveToPositionAsync`` at ``speed`` m/s, and ``rotateToYawAsync``).
Images come from ``simGetImages`` (Scene, DepthPlanar), collisions from
``simGetCollisionInfo``, object positions from ``simGetObjectPose``. NED ↔ sortie's frame is
converted by ``sortie.backends.frames`` only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.backends.base import StepOutcome
from sortie.backends.catalog import Capabilities
from sortie.backends.frames import ned_point, ned_pose, quaternion_yaw, to_ned, yaw_quaternion
from sortie.backends.queries import PositionQueries
from sortie.core.actions import FlightPrimitive, Fly, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import BackendError, ConfigError, MissingExtraError
from sortie.core.observation import CameraInfo, Event, EventKind, Frames, Observation, Sensor
from sortie.core.pose import Pose, wrap_degrees

WORLD_PREFIX = "airsim."
MOVES = ("pose", "velocity")
_AXES = {
    FlightPrimitive.FORWARD: (1.0, 0.0, 0.0),
    FlightPrimitive.BACKWARD: (-1.0, 0.0, 0.0),
    FlightPrimitive.LEFT: (0.0, 1.0, 0.0),
    FlightPrimitive.RIGHT: (0.0, -1.0, 0.0),
    FlightPrimitive.UP: (0.0, 0.0, 1.0),
    FlightPrimitive.DOWN: (0.0, 0.0, -1.0),
}
"""Body axes of the translation primitives (x forward, y left, z up)."""
SCENE, DEPTH_PLANAR = 0, 1
"""AirSim's ImageType numbers of the images used."""


def refused_message(host: str, port: int, error: object) -> str:
    """Say that AirSim at ``host:port`` did not answer, and the usual causes."""
    return (
        f"airsim backend: cannot connect to AirSim at {host}:{port} ({error}). Usual causes: "
        "the environment binary is not running or still loading; settings.json sets another "
        "ApiServerPort; a firewall blocks the port; the binary runs on another machine (-b host=)"
    )


def target_pose(pose: Pose, action: Fly) -> Pose:
    """Return where ``action`` would take a body at ``pose`` if nothing were in the way."""
    if action.primitive in (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT):
        turn = (
            action.magnitude if action.primitive is FlightPrimitive.TURN_LEFT else -action.magnitude
        )
        return Pose(pose.x, pose.y, pose.z, wrap_degrees(pose.yaw + turn))
    ax, ay, az = _AXES[action.primitive]
    cos, sin = math.cos(math.radians(pose.yaw)), math.sin(math.radians(pose.yaw))
    d = action.magnitude
    return Pose(
        pose.x + d * (ax * cos - ay * sin),
        pose.y + d * (ax * sin + ay * cos),
        pose.z + d * az,
        pose.yaw,
    )


class AirSimBackend(PositionQueries):
    """Flies aerial missions in a Cosys-AirSim environment."""

    name = "airsim"
    extra = "airsim"
    client_module = "cosysairsim"
    """The package the extra installs; checked before a run (``catalog.refusal``)."""
    capabilities = Capabilities(
        bodies=frozenset({"multirotor"}),
        interaction=False,
        sensors=frozenset({"rgb", "depth"}),
        worlds="airsim.<Env> (sortie import missionbench)",
    )

    def __init__(
        self,
        body: str = "multirotor",
        camera: Any = None,
        sensors: Collection[str | Sensor] = ("rgb", "depth"),
        host: str = "127.0.0.1",
        port: int = 41451,
        vehicle: str = "",
        camera_name: str = "0",
        moves: str = "pose",
        speed: float = 5.0,
        timeout: float = 30.0,
    ) -> None:
        """Configure the connection; nothing is contacted until the first reset.

        Args:
            body: must be ``multirotor``.
            camera: the camera the images come from (width, height, hfov, pitch), for briefs.
            sensors: images fetched every step (``rgb``, ``depth``).
            host: where AirSim's RPC server listens.
            port: its port (``ApiServerPort`` in settings.json, 41451 by default).
            vehicle: the vehicle's name ("" for the only one).
            camera_name: the AirSim camera of the images.
            moves: ``pose`` (teleport with collision checks) or ``velocity`` (fly there).
            speed: metres per second of velocity moves.
            timeout: seconds an RPC call may take.
        """
        if body != "multirotor":
            raise ConfigError(f"airsim backend: body {body!r}: only 'multirotor' is supported")
        if moves not in MOVES:
            raise ConfigError(f"airsim backend: moves {moves!r} is not one of {MOVES}")
        unknown = {str(s) for s in sensors} - set(self.capabilities.sensors)
        if unknown:
            raise ConfigError(f"airsim backend: no {', '.join(sorted(unknown))} images")
        self.sensors = frozenset(Sensor(s) for s in sensors)
        self.camera = dict(camera) if isinstance(camera, Mapping) else camera
        self.host, self.port, self.vehicle, self.camera_name = host, int(port), vehicle, camera_name
        self.moves, self.speed, self.timeout = moves, speed, timeout
        self._client: Any = None
        self._airsim: Any = None
        self._collided = False
        self._last_hit = 0.0

    @staticmethod
    def world_problem(builder: str) -> str | None:
        """Return why this backend cannot load world ``builder``, or None if it can."""
        if builder.startswith(WORLD_PREFIX) and len(builder) > len(WORLD_PREFIX):
            return None
        return (
            f"world {builder!r} is not an AirSim environment; the airsim backend loads "
            f"{WORLD_PREFIX}<Env> worlds (sortie import missionbench)"
        )

    def _connect(self) -> Any:
        if self._client is not None:
            return self._client
        try:
            import cosysairsim
        except ImportError as error:
            raise MissingExtraError(
                f"backend 'airsim' needs: pip install 'sortie[airsim]' ({error})"
            ) from None
        client = cosysairsim.MultirotorClient(self.host, self.port, timeout_value=self.timeout)
        try:
            client.ping()
        except Exception as error:  # msgpackrpc raises its own transport errors
            raise BackendError(refused_message(self.host, self.port, error)) from None
        client.enableApiControl(True, self.vehicle)
        client.armDisarm(True, self.vehicle)
        self._client, self._airsim = client, cosysairsim
        return client

    def _pose_message(self, pose: Pose) -> Any:
        north, east, down, yaw = to_ned(pose)
        airsim = self._airsim
        w, x, y, z = yaw_quaternion(yaw)
        return airsim.Pose(airsim.Vector3r(north, east, down), airsim.Quaternionr(x, y, z, w))

    # --- episode lifecycle ---------------------------------------------------------------
    def reset(self, spec: EpisodeSpec, seed: int) -> Observation:
        """Put the multirotor at the start (ignoring collisions) and observe."""
        problem = self.world_problem(spec.world.builder)
        if problem:
            raise ConfigError(problem)
        client = self._connect()
        client.simSetVehiclePose(self._pose_message(spec.start), True, self.vehicle)
        self._last_hit = client.simGetCollisionInfo(self.vehicle).time_stamp
        self._collided = False
        return self._observe(())

    def step(self, action: Move | Fly) -> StepOutcome:
        """Fly one primitive as a pose or velocity move; read the pose and collisions."""
        if not isinstance(action, Fly):
            raise ConfigError("airsim backend: the multirotor takes Fly actions, not Move")
        started = time.perf_counter()
        before = self.pose()
        goal = target_pose(before, action)
        client = self._connect()
        if self.moves == "pose":
            client.simSetVehiclePose(self._pose_message(goal), False, self.vehicle)
        else:
            north, east, down, yaw = to_ned(goal)
            client.moveToPositionAsync(
                north, east, down, self.speed, vehicle_name=self.vehicle
            ).join()
            client.rotateToYawAsync(yaw, vehicle_name=self.vehicle).join()
        hit = client.simGetCollisionInfo(self.vehicle)
        self._collided = bool(hit.has_collided) and hit.time_stamp != self._last_hit
        self._last_hit = hit.time_stamp
        events = (Event(EventKind.CONTACT, hit.object_name or None),) if self._collided else ()
        backend_seconds = time.perf_counter() - started
        observation = self._observe(events)
        moved = math.dist(before.position(), observation.pose.position())
        return StepOutcome(observation, moved, backend_seconds, time.perf_counter() - started)

    def close(self) -> None:
        """Hand control back; calling it twice is harmless."""
        if self._client is not None:
            try:
                self._client.enableApiControl(False, self.vehicle)
            except Exception:  # the simulator may already be gone; closing must not fail
                pass
            self._client = None

    # --- queries -------------------------------------------------------------------------
    def pose(self) -> Pose:
        """Return the multirotor's pose (z: its centre's height)."""
        pose = self._connect().simGetVehiclePose(self.vehicle)
        p, q = pose.position, pose.orientation
        yaw = quaternion_yaw(q.w_val, q.x_val, q.y_val, q.z_val)
        return ned_pose(p.x_val, p.y_val, p.z_val, yaw)

    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return object ``name``'s position (``simGetObjectPose``; NaN means no such object)."""
        p = self._connect().simGetObjectPose(name).position
        if any(math.isnan(v) for v in (p.x_val, p.y_val, p.z_val)):
            raise ConfigError(f"airsim backend: no object {name!r} in the environment")
        return ned_point(p.x_val, p.y_val, p.z_val)

    def visible(self, name: str) -> bool:
        """Return whether ``name`` lies inside the camera's field of view (no occlusion test)."""
        x, y, z = self.position_of(name)
        pose, info = self.pose(), self.camera_info()
        bearing = pose.bearing_to(x, y)
        vertical_fov = info.hfov * info.height / info.width
        elevation = math.degrees(math.atan2(z - pose.z, math.hypot(x - pose.x, y - pose.y)))
        return abs(bearing) <= info.hfov / 2 and abs(elevation - info.pitch) <= vertical_fov / 2

    def doors(self) -> list[str]:
        """Return no doors (flights open none)."""
        return []

    def holding(self) -> str | None:
        """Return None: the multirotor carries nothing sortie tracks."""
        return None

    def collided(self) -> bool:
        """Return whether the last step collided (a new ``simGetCollisionInfo`` time stamp)."""
        return self._collided

    def door_state(self, name: str) -> bool:
        """There are no doors on this backend."""
        raise ConfigError(f"airsim backend: no door {name!r}")

    def camera_info(self) -> CameraInfo:
        """Return the camera the images come from, as configured."""
        fields = self.camera or {"width": 256, "height": 256, "hfov": 90.0, "pitch": -45.0}
        return CameraInfo(**{k: fields[k] for k in ("width", "height", "hfov", "pitch")})

    # --- images --------------------------------------------------------------------------
    def _observe(self, events: tuple[Event, ...]) -> Observation:
        wanted = [(s, t) for s, t in ((Sensor.RGB, SCENE), (Sensor.DEPTH, DEPTH_PLANAR))]
        wanted = [(s, t) for s, t in wanted if s in self.sensors]
        images: dict[Sensor, Any] = {}
        if wanted:
            requests = [
                self._airsim.ImageRequest(self.camera_name, t, t == DEPTH_PLANAR, False)
                for _, t in wanted
            ]
            responses = self._connect().simGetImages(requests, self.vehicle)
            images = {s: _image(r) for (s, _), r in zip(wanted, responses, strict=True)}
        frames = Frames(rgb=images.get(Sensor.RGB), depth=images.get(Sensor.DEPTH))
        return Observation(frames, self.pose(), events, None)


def _image(response: Any) -> NDArray[Any]:
    """Return an uncompressed response as RGB uint8 (from AirSim's BGR) or float32 depth."""
    h, w = int(response.height), int(response.width)
    if response.pixels_as_float:
        return np.asarray(response.image_data_float, np.float32).reshape(h, w)
    bgr = np.frombuffer(response.image_data_uint8, np.uint8).reshape(h, w, 3)
    return np.ascontiguousarray(bgr[..., ::-1])
