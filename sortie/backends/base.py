"""The Backend protocol: what missions may ask of any simulator, embedded or remote.

A backend builds the world of an episode, moves the agent's body, renders what the agent's
sensors see and answers named queries. It holds no mission rules: when a grab "counts" or
a door may open is the mission's business; the backend only carries it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from sortie.core.actions import Fly, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.observation import CameraInfo, Event, Frames, Observation
from sortie.core.pose import Pose


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one step did: the new observation and wall-clock seconds spent, by part."""

    observation: Observation
    moved: float = 0.0
    backend_seconds: float = 0.0
    render_seconds: float = 0.0

    @property
    def events(self) -> tuple[Event, ...]:
        """Return the step's events."""
        return self.observation.events


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a privileged view may read about one scene object."""

    name: str
    semantic: str
    position: tuple[float, float, float]
    attributes: dict[str, str | float | int | bool] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """A simulator the missions can drive."""

    name: str

    def reset(self, spec: EpisodeSpec, seed: int) -> Observation:
        """Build (or reuse) the episode's world, place the body at the start, observe."""
        ...

    def step(self, action: Move | Fly) -> StepOutcome:
        """Apply one motion action and observe."""
        ...

    def pose(self) -> Pose:
        """Return the body's pose (z: feet for a walker, centre for a multirotor)."""
        ...

    def distance_to(self, name: str) -> float:
        """Return the horizontal distance from the body to object ``name``."""
        ...

    def distance_between(self, a: str, b: str) -> float:
        """Return the horizontal distance between objects ``a`` and ``b``."""
        ...

    def height_difference(self, name: str) -> float:
        """Return object ``name``'s base height minus the body's height."""
        ...

    def bearing_to(self, name: str) -> float:
        """Return the angle from the body's heading to object ``name``, degrees in [-180, 180)."""
        ...

    def visible(self, name: str) -> bool:
        """Return whether object ``name`` shows in the body's current camera view."""
        ...

    def doors(self) -> list[str]:
        """Return the names of the doors and gates of the world."""
        ...

    def holding(self) -> str | None:
        """Return the name of the object the body carries, if any."""
        ...

    def collided(self) -> bool:
        """Return whether the last step touched anything."""
        ...

    def door_state(self, name: str) -> bool:
        """Return whether door or gate ``name`` is open."""
        ...

    def close(self) -> None:
        """Release the simulator; calling it twice is harmless."""
        ...


@runtime_checkable
class SupportsInteraction(Protocol):
    """A backend that can carry out grabs, drops and doors when a mission decides so."""

    def pick_up(self, name: str) -> Event:
        """Take object ``name`` into the body's hands."""
        ...

    def put_down(self) -> Event:
        """Put the held object on the ground in front of the body."""
        ...

    def set_door(self, name: str, is_open: bool) -> Event:
        """Open or close door or gate ``name``."""
        ...


@runtime_checkable
class SupportsManipulation(Protocol):
    """A backend with a mobile manipulator: the household executor's motions and views.

    The executor decides (its checks, its skills' success); the backend only carries out.
    """

    def move_base(self, pose: Pose) -> Pose:
        """Put the base at ``pose`` (the end of a planned motion); return where it stands."""
        ...

    def look_around(self, headings: tuple[float, ...]) -> tuple[Frames, ...]:
        """Render the head camera's sensors at each heading (degrees from the base's, left +)."""
        ...

    def shown_around(self, headings: tuple[float, ...]) -> tuple[frozenset[str], ...]:
        """Return, per heading, the names of the objects the head camera's view shows.

        What a perfect detector would report: the mission learns from it what the robot has
        seen (sensor-only skills act on nothing else).
        """
        ...

    def put_on(self, name: str, furniture: str) -> Event:
        """Put held object ``name`` on (or, for a container, inside) ``furniture``."""
        ...


@runtime_checkable
class SupportsViewRender(Protocol):
    """A backend that can render a picture from any camera pose (for reference images)."""

    def render_view(
        self, x: float, y: float, z: float, yaw: float, pitch: float
    ) -> NDArray[np.uint8]:
        """Return an RGB image seen from eye position (x, y, z) along yaw and pitch."""
        ...


@runtime_checkable
class SupportsCameraInfo(Protocol):
    """A backend that says what its body's camera is (size, field of view, pitch)."""

    def camera_info(self) -> CameraInfo:
        """Return the camera the agent's images come from."""
        ...


@runtime_checkable
class SupportsSemanticClasses(Protocol):
    """A backend whose semantic images come with a label map (instance id -> class)."""

    def semantic_classes(self) -> dict[int, str]:
        """Return the class name of every instance id in the current world."""
        ...


@runtime_checkable
class OracleView(Protocol):
    """Privileged knowledge, for oracles, episode generation and metrics only."""

    def pose(self) -> Pose:
        """Return the agent's body pose."""
        ...

    def objects(self) -> list[ObjectInfo]:
        """Return every object with its current position and attributes."""
        ...

    def targets(self) -> dict[str, str]:
        """Return the episode's roles and the objects that play them (``casualty``, ...)."""
        ...

    def mission(self) -> dict[str, Any]:
        """Return the episode's mission data: goal poses, expected answers, reference routes."""
        ...

    def door_states(self) -> dict[str, bool]:
        """Return whether each door and gate is open."""
        ...

    def open_states(self) -> dict[str, bool]:
        """Return whether each thing that opens (doors, gates, container doors) is open."""
        ...

    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return the current base position of object ``name``."""
        ...

    def geodesic_distance(
        self, start: tuple[float, float, float], goal: tuple[float, float, float]
    ) -> float:
        """Return the walkable path length between two points (inf if unreachable)."""
        ...

    def shortest_path(
        self,
        start: tuple[float, float, float],
        goal: tuple[float, float, float],
        through_doors: bool = False,
        smooth: bool = True,
    ) -> list[tuple[float, float, float]]:
        """Return waypoints of a shortest walkable path (empty if unreachable).

        ``through_doors`` plans as if every door were open (an agent that can open them);
        ``smooth`` pulls the path straight (else it runs through cell centres, with the most
        clearance).
        """
        ...


@runtime_checkable
class SupportsOracleView(Protocol):
    """A backend that can hand out privileged knowledge."""

    def oracle_view(self) -> OracleView:
        """Return the privileged view of the current world."""
        ...
