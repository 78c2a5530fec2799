"""``ScriptedBackend``: a test double of a simulator, for testing missions without one.

It is not a simulator: the body is a point on a flat plane with no walls, objects are fixed
points, and every frame is a blank image of the configured size. What it does is explicit
and scriptable, which is what mission and metric tests need.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from sortie.backends.base import StepOutcome
from sortie.backends.queries import PositionQueries
from sortie.core.actions import FlightPrimitive, Fly, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import Event, EventKind, Frames, Observation
from sortie.core.pose import Pose

Position = tuple[float, float, float]
StepScript = Callable[[Pose, Move | Fly], tuple[Pose, tuple[Event, ...]]]


def glide(pose: Pose, action: Move | Fly, dt: float = 0.2) -> tuple[Pose, tuple[Event, ...]]:
    """Move a point body with no obstacles: the default script."""
    if isinstance(action, Move):
        yaw = pose.yaw + action.turn
        dx, dy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
        step = action.speed * dt
        return Pose(pose.x + dx * step, pose.y + dy * step, pose.z, yaw), ()
    offsets = {
        FlightPrimitive.FORWARD: (1, 0, 0),
        FlightPrimitive.BACKWARD: (-1, 0, 0),
        FlightPrimitive.LEFT: (0, 1, 0),
        FlightPrimitive.RIGHT: (0, -1, 0),
        FlightPrimitive.UP: (0, 0, 1),
        FlightPrimitive.DOWN: (0, 0, -1),
    }
    if action.primitive in offsets:
        fwd, left, up = offsets[action.primitive]
        c, s = math.cos(math.radians(pose.yaw)), math.sin(math.radians(pose.yaw))
        m = action.magnitude
        return Pose(
            pose.x + m * (fwd * c - left * s),
            pose.y + m * (fwd * s + left * c),
            pose.z + m * up,
            pose.yaw,
        ), ()
    sign = 1.0 if action.primitive is FlightPrimitive.TURN_LEFT else -1.0
    return Pose(pose.x, pose.y, pose.z, pose.yaw + sign * action.magnitude), ()


class ScriptedBackend(PositionQueries):
    """A Backend double whose motion is a plain function and whose world is named points."""

    name = "scripted"

    def __init__(
        self,
        objects: Mapping[str, Position],
        script: StepScript = glide,
        frame_size: tuple[int, int] = (16, 16),
        visible_range: float = 7.5,
    ) -> None:
        """Create the double.

        Args:
            objects: object names and their base positions.
            script: maps (pose, action) to (new pose, events); default: glide freely.
            frame_size: (height, width) of the blank frames.
            visible_range: objects within this horizontal distance count as visible.
        """
        self.objects = dict(objects)
        self._start_objects = dict(objects)
        self.script = script
        self.frame_size = frame_size
        self.visible_range = visible_range
        self.door_open: dict[str, bool] = {}
        self._pose: Pose | None = None
        self._held: str | None = None
        self._collided = False

    def reset(self, spec: EpisodeSpec, seed: int) -> Observation:
        """Place the body at the episode's start; put every object back."""
        self._pose, self._held, self._collided = spec.start, None, False
        self.objects = dict(self._start_objects)
        return self._observe(())

    def pick_up(self, name: str) -> Event:
        """Hold object ``name``."""
        self.position_of(name)
        self._held = name
        return Event(EventKind.PICKED_UP, name)

    def put_down(self) -> Event:
        """Put the held object where the body stands."""
        if self._held is None:
            raise ConfigError("scripted backend: put_down() with nothing held")
        name, self._held = self._held, None
        self.objects[name] = self.pose().position()
        return Event(EventKind.DROPPED, name)

    def set_door(self, name: str, is_open: bool) -> Event:
        """Open or close door ``name``."""
        self.position_of(name)
        self.door_open[name] = is_open
        return Event(EventKind.DOOR_OPENED if is_open else EventKind.DOOR_CLOSED, name)

    def step(self, action: Move | Fly) -> StepOutcome:
        """Run the script for one action."""
        before = self.pose()
        self._pose, events = self.script(before, action)
        self._collided = any(e.kind is EventKind.CONTACT for e in events)
        return StepOutcome(self._observe(events), before.distance(self._pose))

    def pose(self) -> Pose:
        """Return the body's pose."""
        if self._pose is None:
            raise ConfigError("scripted backend: call reset() first")
        return self._pose

    def doors(self) -> list[str]:
        """Return the objects whose name starts with ``door`` or ``gate``."""
        return [n for n in self.objects if n.startswith(("door", "gate"))]

    def visible(self, name: str) -> bool:
        """Return whether ``name`` is within ``visible_range``."""
        return self.distance_to(name) <= self.visible_range

    def holding(self) -> str | None:
        """Return the held object, if any."""
        return self._held

    def collided(self) -> bool:
        """Return whether the last step reported a contact."""
        return self._collided

    def door_state(self, name: str) -> bool:
        """Return whether door ``name`` is open (doors default to closed)."""
        self.position_of(name)
        return self.door_open.get(name, False)

    def close(self) -> None:
        """Nothing to release."""

    def position_of(self, name: str) -> Position:
        """Return object ``name``'s position (the body's while it is held)."""
        if name == self._held:
            pose = self.pose()
            return (pose.x, pose.y, pose.z)
        try:
            return self.objects[name]
        except KeyError:
            raise ConfigError(f"scripted backend: no object named {name!r}") from None

    def _observe(self, events: tuple[Event, ...]) -> Observation:
        h, w = self.frame_size
        frames = Frames(
            np.zeros((h, w, 3), np.uint8),
            np.full((h, w), np.inf, np.float32),
            np.zeros((h, w), np.int32),
        )
        return Observation(frames, self.pose(), events, self._held)
