"""The ``unrealcv`` backend: RescueBench's Unreal Engine worlds through the UnrealCV protocol.

Install with ``pip install 'sortie[unreal]'``. The backend connects to a running UE binary
with the UnrealCV plug-in (``host``, ``port``), or starts one (``binary``, or the
``SORTIE_UNREAL_BINARY`` environment variable) and waits for it. Worlds are ``unreal.<Map>``
(the binary's map; see ``sortie import rescuebench``). Reset places the agent, the casualty,
the stretcher and the ambulance with ``vset /object/...``; a step sends the walker's turn and
speed for the control period (``vbp <agent> set_move``) and reads its pose back; images come
from ``vget /camera/<id>/lit|depth|object_mask``; carrying, dropping, doors and collisions go
through the character's blueprint calls RescueBench uses. Units and frames are converted by
``sortie.backends.frames`` only.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import time
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.backends.base import StepOutcome
from sortie.backends.catalog import Capabilities
from sortie.backends.frames import UNREAL_CM_PER_M, to_unreal, unreal_point, unreal_pose
from sortie.backends.frames import unreal_turn as _turn
from sortie.backends.queries import PositionQueries
from sortie.core.actions import Fly, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import BackendError, ConfigError, MissingExtraError
from sortie.core.observation import CameraInfo, Event, EventKind, Frames, Observation, Sensor
from sortie.core.pose import Pose

BINARY_VARIABLE = "SORTIE_UNREAL_BINARY"
"""Environment variable naming the UE binary to start when none is running."""
WORLD_PREFIX = "unreal."
_COLOR = re.compile(r"R=(\d+),G=(\d+),B=(\d+)")


def refused_message(host: str, port: int, error: object) -> str:
    """Say that UnrealCV at ``host:port`` did not answer, and the usual causes."""
    return (
        f"unrealcv backend: cannot connect to UnrealCV at {host}:{port} ({error}). Usual "
        "causes: the UE binary is not running (start it, or pass -b binary=PATH or set "
        f"{BINARY_VARIABLE}); another port is set in unrealcv.ini beside the binary, or another "
        "program holds this one; UE refuses to run as root; Vulkan has no EGL ICD for "
        "offscreen rendering (install the GPU's Vulkan driver)"
    )


class UnrealCVBackend(PositionQueries):
    """Runs rescue episodes in an Unreal Engine binary with the UnrealCV plug-in."""

    name = "unrealcv"
    extra = "unreal"
    client_module = "unrealcv"
    """The package the extra installs; checked before a run (``catalog.refusal``)."""
    capabilities = Capabilities(
        bodies=frozenset({"walker"}),
        interaction=True,
        sensors=frozenset({"rgb", "depth", "semantic"}),
        worlds="unreal.<Map> (sortie import rescuebench)",
    )

    def __init__(
        self,
        body: str = "walker",
        camera: Any = None,
        sensors: Collection[str | Sensor] = ("rgb", "depth", "semantic"),
        host: str = "127.0.0.1",
        port: int = 9000,
        binary: str = "",
        agent: str = "player",
        camera_id: int = 1,
        control_period: float = 0.2,
        visible_pixels: int = 10,
        start_timeout: float = 60.0,
    ) -> None:
        """Configure the connection; nothing is contacted until the first reset.

        Args:
            body: must be ``walker`` (UnrealCV drives RescueBench's character, not a drone).
            camera: the camera the images come from (width, height, hfov, pitch), for briefs.
            sensors: images fetched every step.
            host: where UnrealCV listens.
            port: its port (``unrealcv.ini`` beside the binary sets it).
            binary: UE binary to start if nothing answers (default: ``SORTIE_UNREAL_BINARY``).
            agent: the player character's object name in the map.
            camera_id: the UnrealCV camera of the character's eyes.
            control_period: seconds one Move lasts.
            visible_pixels: mask pixels an object must cover to count as visible.
            start_timeout: seconds to wait for a started binary to answer.
        """
        if body != "walker":
            raise ConfigError(f"unrealcv backend: body {body!r}: only 'walker' is supported")
        self.sensors = frozenset(Sensor(s) for s in sensors)
        self.camera = dict(camera) if isinstance(camera, Mapping) else camera
        self.host, self.port, self.agent, self.camera_id = host, int(port), agent, camera_id
        self.binary = binary or os.environ.get(BINARY_VARIABLE, "")
        self.control_period, self.visible_pixels = control_period, visible_pixels
        self.start_timeout = start_timeout
        self._client: Any = None
        self._process: subprocess.Popen[bytes] | None = None
        self.episode: EpisodeSpec | None = None
        self._held: str | None = None
        self._collided = False
        self._colors: dict[tuple[int, int, int], int] = {}

    @staticmethod
    def world_problem(builder: str) -> str | None:
        """Return why this backend cannot load world ``builder``, or None if it can."""
        if builder.startswith(WORLD_PREFIX) and len(builder) > len(WORLD_PREFIX):
            return None
        return (
            f"world {builder!r} is not an Unreal map; the unrealcv backend loads "
            f"{WORLD_PREFIX}<Map> worlds (sortie import rescuebench)"
        )

    # --- connection ----------------------------------------------------------------------
    def _connect(self) -> Any:
        """Return the connected client, starting the binary first if one is configured."""
        if self._client is not None:
            return self._client
        try:
            import unrealcv
        except ImportError as error:
            raise MissingExtraError(
                f"backend 'unrealcv' needs: pip install 'sortie[unreal]' ({error})"
            ) from None
        client = unrealcv.Client((self.host, self.port))
        if not client.connect(timeout=2) and self.binary:
            client = self._start_and_connect(unrealcv)
        if not client.isconnected():
            raise BackendError(refused_message(self.host, self.port, "connection refused"))
        self._client = client
        return client

    def _start_and_connect(self, unrealcv: Any) -> Any:
        """Start the configured binary and connect once it listens (or time out)."""
        self._process = subprocess.Popen([self.binary], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline and self._process.poll() is None:
            client = unrealcv.Client((self.host, self.port))
            if client.connect(timeout=2):
                return client
            time.sleep(1.0)
        raise BackendError(
            refused_message(self.host, self.port, f"started {self.binary}, it never answered")
        )

    def request(self, command: str) -> Any:
        """Send one UnrealCV command and return its answer; an error answer raises."""
        answer = self._connect().request(command)
        if answer is None or (isinstance(answer, str) and answer.lower().startswith("error")):
            raise BackendError(f"unrealcv backend: {command!r} answered {answer!r}")
        return answer

    # --- episode lifecycle ---------------------------------------------------------------
    def reset(self, spec: EpisodeSpec, seed: int) -> Observation:
        """Place the agent, the casualty, the stretcher and the ambulance; observe."""
        problem = self.world_problem(spec.world.builder)
        if problem:
            raise ConfigError(problem)
        if self._held:
            self.request(f"vbp {self.agent} drop_body")
        self.episode, self._held, self._collided = spec, None, False
        for placement in spec.placements:
            self._place(placement.name, placement.pose)
        self._place(self.agent, spec.start)
        self._colors = self._color_table()
        return self._observe(())

    def step(self, action: Move | Fly) -> StepOutcome:
        """Send the turn and speed for one control period; read the pose and collisions."""
        if not isinstance(action, Move):
            raise ConfigError("unrealcv backend: the walker takes Move actions, not Fly")
        started = time.perf_counter()
        before = self.pose()
        # Sent as the mission allows them (sortie's rescue rules: 30 degrees, 1.5 m/s); the
        # character's blueprint applies its own limits (RescueBench's agents use 100 cm/s).
        turn, speed = _turn(action.turn), action.speed * UNREAL_CM_PER_M
        self.request(f"vbp {self.agent} set_move {turn:g} {speed:g}")
        self._collided = _truthy(self.request(f"vbp {self.agent} get_hit"))
        events = (Event(EventKind.CONTACT, "hit"),) if self._collided else ()
        backend_seconds = time.perf_counter() - started
        observation = self._observe(events)
        moved = before.horizontal_distance(observation.pose)
        render = time.perf_counter() - started - backend_seconds
        return StepOutcome(observation, moved, backend_seconds, render)

    def close(self) -> None:
        """Disconnect, and stop the binary if this backend started it."""
        if self._client is not None:
            self._client.disconnect()
            self._client = None
        if self._process is not None:
            self._process.terminate()
            self._process = None

    # --- queries -------------------------------------------------------------------------
    def pose(self) -> Pose:
        """Return the agent's pose, read from the simulator."""
        x, y, z = self._numbers(f"vget /object/{self.agent}/location", 3)
        _, yaw, _ = self._numbers(f"vget /object/{self.agent}/rotation", 3)
        return unreal_pose(x, y, z, yaw)

    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return object ``name``'s location (the casualty's is the agent's while carried)."""
        if name not in self._object_names():
            raise ConfigError(f"unrealcv backend: no object {name!r} in the map")
        x, y, z = self._numbers(f"vget /object/{name}/location", 3)
        return unreal_point(x, y, z)

    def visible(self, name: str) -> bool:
        """Return whether object ``name`` covers enough pixels of the object mask."""
        color = self._color_of(name)
        mask = self._image("object_mask")
        return int(np.all(mask == color, axis=2).sum()) >= self.visible_pixels

    def doors(self) -> list[str]:
        """Return no doors: the map's doors open through the character, not by name."""
        return []

    def holding(self) -> str | None:
        """Return the carried casualty's name, if the character says it carries one."""
        return self._held

    def collided(self) -> bool:
        """Return whether the last step hit anything (``get_hit``)."""
        return self._collided

    def door_state(self, name: str) -> bool:
        """Doors are not tracked by name on this backend."""
        raise ConfigError(f"unrealcv backend: no door {name!r} (doors are not named here)")

    def camera_info(self) -> CameraInfo:
        """Return the camera the images come from, as configured."""
        fields = self.camera or {"width": 640, "height": 480, "hfov": 90.0, "pitch": 0.0}
        return CameraInfo(**{k: fields[k] for k in ("width", "height", "hfov", "pitch")})

    # --- interactions --------------------------------------------------------------------
    def pick_up(self, name: str) -> Event:
        """Ask the character to carry the body in front of it; check it says it does."""
        self.request(f"vbp {self.agent} carry_body")
        if not _truthy(self.request(f"vbp {self.agent} is_carrying")):
            return Event(EventKind.INTERACTION_FAILED, name, "the character carries nothing")
        self._held = name
        return Event(EventKind.PICKED_UP, name)

    def put_down(self) -> Event:
        """Ask the character to drop what it carries."""
        held, self._held = self._held, None
        self.request(f"vbp {self.agent} drop_body")
        return Event(EventKind.DROPPED, held)

    def set_door(self, name: str, is_open: bool) -> Event:
        """Ask the character to open (or close) the door in front of it."""
        self.request(f"vbp {self.agent} set_open_door {1 if is_open else 0}")
        return Event(EventKind.DOOR_OPENED if is_open else EventKind.DOOR_CLOSED, name)

    # --- helpers -------------------------------------------------------------------------
    def _place(self, name: str, pose: Pose) -> None:
        x, y, z, yaw = to_unreal(pose)
        self.request(f"vset /object/{name}/location {x:.3f} {y:.3f} {z:.3f}")
        self.request(f"vset /object/{name}/rotation 0 {yaw:.3f} 0")

    def _observe(self, events: tuple[Event, ...]) -> Observation:
        frames = Frames(
            rgb=self._image("lit") if Sensor.RGB in self.sensors else None,
            depth=self._depth() if Sensor.DEPTH in self.sensors else None,
            semantic=self._semantic() if Sensor.SEMANTIC in self.sensors else None,
        )
        return Observation(frames, self.pose(), events, self._held)

    def _image(self, kind: str) -> NDArray[np.uint8]:
        from PIL import Image

        data = self.request(f"vget /camera/{self.camera_id}/{kind} png")
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.uint8)

    def _depth(self) -> NDArray[np.float32]:
        data = self.request(f"vget /camera/{self.camera_id}/depth npy")
        return (np.load(io.BytesIO(data)) / UNREAL_CM_PER_M).astype(np.float32)

    def _semantic(self) -> NDArray[np.int32]:
        """Return the object mask as instance ids (1 + the object's index; 0 elsewhere)."""
        mask = self._image("object_mask").astype(np.int32)
        packed = (mask[..., 0] << 16) | (mask[..., 1] << 8) | mask[..., 2]
        ids = np.zeros(packed.shape, np.int32)
        for (r, g, b), index in self._colors.items():
            ids[packed == ((r << 16) | (g << 8) | b)] = index
        return ids

    def _object_names(self) -> list[str]:
        return str(self.request("vget /objects")).split()

    def _color_table(self) -> dict[tuple[int, int, int], int]:
        names = sorted(set(self._object_names()) - {self.agent})
        return {self._color_of(n): i + 1 for i, n in enumerate(names)}

    def _color_of(self, name: str) -> tuple[int, int, int]:
        if name not in self._object_names():
            raise ConfigError(f"unrealcv backend: no object {name!r} in the map")
        found = _COLOR.search(str(self.request(f"vget /object/{name}/color")))
        if not found:
            raise BackendError(f"unrealcv backend: no colour for {name!r}")
        r, g, b = (int(v) for v in found.groups())
        return (r, g, b)

    def _numbers(self, command: str, count: int) -> list[float]:
        answer = str(self.request(command)).split()
        try:
            numbers = [float(v) for v in answer]
        except ValueError:
            numbers = []
        if len(numbers) != count:
            raise BackendError(f"unrealcv backend: {command!r} answered {' '.join(answer)!r}")
        return numbers


def _truthy(answer: Any) -> bool:
    """Read a blueprint call's yes/no answer: JSON ``{"...": true}``, ``1`` or ``true``."""
    text = answer.decode() if isinstance(answer, bytes) else str(answer)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text.strip()
    if isinstance(value, dict):
        value = next(iter(value.values()), False)
    return str(value).strip().lower() in ("1", "true", "yes")
