"""The embedded backend: sortie's own CPU simulator behind the Backend protocol."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from sortie.backends.base import ObjectInfo, StepOutcome
from sortie.backends.catalog import Capabilities
from sortie.backends.queries import PositionQueries
from sortie.core.actions import Fly, Move
from sortie.core.episode import EpisodeSpec, Placement, WorldSpec
from sortie.core.errors import ConfigError, InvalidPoseError, InvalidStartError, SimulationError
from sortie.core.observation import (
    IMAGE_SENSORS,
    CameraInfo,
    Event,
    EventKind,
    Frames,
    Observation,
    Sensor,
)
from sortie.core.pose import Pose
from sortie.sim.bodies import Multirotor, Walker
from sortie.sim.camera import BODY_PITCH, CameraSpec
from sortie.sim.household import HouseLayout, house_layout, item_radius, place_spots
from sortie.sim.mesh import pose_matrix
from sortie.sim.navigation import NavGraph
from sortie.sim.raycast import RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene
from sortie.sim.shapes import MANIPULATOR, PLANNING, WALKER
from sortie.sim.shared_worlds import SHARED_WORLDS, SharedWorld

BODIES = ("walker", "multirotor", "manipulator")
GRIPPER = (0.45, 0.75)
"""Where a manipulator holds what it picked: metres ahead of the base and above the floor."""


@dataclass
class _World:
    """A backend's own run of a shared world: its scene state and the machinery over it.

    Kept while the backend's episodes stay in the same world and placements.
    """

    spec: tuple[WorldSpec, list[Placement]]
    shared: SharedWorld
    scene: Scene
    caster: RayCaster
    renderer: Renderer
    _bases: dict[str, tuple[int, tuple[float, float, float]]] = field(
        default_factory=dict, repr=False
    )
    _nav: NavGraph | None = field(default=None, repr=False)
    _layout: HouseLayout | None = field(default=None, repr=False)
    _doors: tuple[str, ...] | None = field(default=None, repr=False)
    names: dict[int, str] | None = field(default=None, repr=False)
    """Instance id -> object name, made on first use."""

    @classmethod
    def build(cls, spec: WorldSpec, placements: list[Placement]) -> _World:
        """Return a run of the shared world (built if not kept) with a state of its own."""
        shared = SHARED_WORLDS.get(spec, placements)
        scene = shared.scene.fresh_copy()
        caster = RayCaster(scene, static=shared.static)
        return cls((spec, placements), shared, scene, caster, Renderer(scene, caster))

    @property
    def layout(self) -> HouseLayout:
        """Return the household structure of the world (household worlds only), read once."""
        if self._layout is None:
            self._layout = house_layout(self.scene)
        return self._layout

    @property
    def nav(self) -> NavGraph:
        """Return the navigation graph, built on first use (only oracles pay for it)."""
        if self._nav is None:
            self._nav = NavGraph.build(self.scene, PLANNING)
        return self._nav

    @property
    def doors(self) -> tuple[str, ...]:
        """Return the names of the world's doors and gates, found once (missions ask each step)."""
        if self._doors is None:
            self._doors = tuple(
                o.name
                for o in self.scene.objects
                if o.semantic in ("door", "gate") and o.dynamics is Dynamics.OPENABLE
            )
        return self._doors

    def base_of(self, name: str) -> tuple[float, float, float]:
        """Return the base centre (x, y, lowest z) of object ``name`` where it is now.

        Kept per object state (static objects never move, a door only when it turns), because
        oracles and missions ask for the same objects every step and a box over many vertices
        is not free.
        """
        known = self._bases.get(name)
        if known is not None and (known[0] < 0 or known[0] == self.scene.changed_at(name)):
            return known[1]
        obj = self.scene[name]
        parts = self.scene.current_parts(obj)
        low = np.min([p.bounds()[0] for p in parts], axis=0)
        high = np.max([p.bounds()[1] for p in parts], axis=0)
        base = (float(low[0] + high[0]) / 2, float(low[1] + high[1]) / 2, float(low[2]))
        known = self._bases[name] = (self.scene.changed_at(name) if obj.is_dynamic else -1, base)
        return known[1]


class EmbeddedBackend(PositionQueries):
    """Runs episodes in the embedded simulator with a walker or a multirotor body."""

    name = "embedded"
    capabilities = Capabilities(
        bodies=frozenset(BODIES),
        interaction=True,
        sensors=frozenset({"rgb", "depth", "semantic"}),
        worlds="embedded world builders (sortie worlds)",
        cameras=True,
    )

    @staticmethod
    def world_problem(builder: str) -> str | None:
        """Return why this backend cannot build world ``builder``, or None if it can."""
        from sortie.sim.worlds import WORLDS

        if builder in WORLDS:
            return None
        if "." in builder:  # e.g. unreal.Forglar_Map: a map of a real simulator
            return (
                f"world {builder!r} is a map of an external simulator, not an embedded "
                f"world; run it on that simulator's backend (see `sortie backends`)"
            )
        return f"world {builder!r}: {WORLDS.miss_message(builder)}"

    def __init__(
        self,
        body: str = "walker",
        camera: CameraSpec | Mapping[str, Any] | None = None,
        sensors: Collection[str | Sensor] = ("rgb", "depth", "semantic"),
        control_period: float = 0.2,
        visible_pixels: int = 10,
    ) -> None:
        """Configure the body, its camera and which images each step renders.

        Args:
            body: ``walker`` (ground missions), ``multirotor`` (aerial missions) or
                ``manipulator`` (household missions: a walker's base with a head and a gripper).
            camera: image size, field of view and default pitch of the body's camera (a
                CameraSpec, or its fields as a dict, as stored in records).
            sensors: images rendered every step; empty for agents that need no images.
            control_period: seconds one Move action lasts.
            visible_pixels: pixels an object must cover to count as visible.
        """
        if body not in BODIES:
            raise ConfigError(f"embedded backend: body {body!r} is not one of {BODIES}")
        self.body_kind = body
        if isinstance(camera, Mapping):
            camera = CameraSpec(**camera)
        self.camera = camera or CameraSpec(pitch=BODY_PITCH[body])
        self.sensors = frozenset(_sensor(s) for s in sensors)
        self.control_period = control_period
        self.visible_pixels = visible_pixels
        self._world: _World | None = None
        self.episode: EpisodeSpec | None = None
        self._body: Walker | Multirotor | None = None
        self._pitch = self.camera.pitch
        self._held: str | None = None
        self._collided = False
        self._visible_cache: tuple[int, np.ndarray] | None = None
        self._steps = 0

    # --- episode lifecycle -------------------------------------------------------------
    def reset(self, spec: EpisodeSpec, seed: int) -> Observation:
        """Build or reuse the world, put every object back, place the body, observe."""
        if self._world is None or self._world.spec != (spec.world, spec.placements):
            self._world = _World.build(spec.world, spec.placements)
        world = self._world
        world.scene.reset_state()
        self.episode = spec
        if self.body_kind == "multirotor":
            self._body = Multirotor(world.caster)
        else:
            shape = MANIPULATOR if self.body_kind == "manipulator" else WALKER
            self._body = Walker(world.caster, shape)
        try:
            self._body.place(spec.start)
        except InvalidPoseError as error:  # the episode's own start: bad input, not a crash
            raise InvalidStartError(f"episode {spec.episode_id}: start: {error}") from None
        self._pitch, self._held, self._collided, self._steps = self.camera.pitch, None, False, 0
        self._visible_cache = None
        return self._observe(())

    def step(self, action: Move | Fly) -> StepOutcome:
        """Apply one Move (walker) or Fly (multirotor) and observe."""
        start = time.perf_counter()
        moved, events = self._apply(action)
        self._collided = any(e.kind is EventKind.CONTACT for e in events)
        self._steps += 1
        self._carry_held()
        physics = time.perf_counter() - start
        observation = self._observe(events)
        render = time.perf_counter() - start - physics
        return StepOutcome(observation, moved, physics, render)

    def close(self) -> None:
        """Drop the world; the backend can be reset again afterwards."""
        self._world, self._body = None, None

    # --- queries -----------------------------------------------------------------------
    def pose(self) -> Pose:
        """Return the body's pose."""
        return self._require_body().pose

    def doors(self) -> list[str]:
        """Return the names of the world's doors and gates."""
        return list(self._require_world().doors)

    def camera_info(self) -> CameraInfo:
        """Return the body's camera as agents are told of it."""
        c = self.camera
        return CameraInfo(width=c.width, height=c.height, hfov=c.hfov, pitch=c.pitch)

    def semantic_classes(self) -> dict[int, str]:
        """Return the class name of every instance id (the semantic sensor's label map)."""
        scene = self._require_world().scene
        return {scene.id_of(o.name): o.semantic for o in scene.objects}

    def instance_id(self, name: str) -> int:
        """Return the id object ``name`` has in semantic images (raises on an unknown name)."""
        return self._require_world().scene.id_of(name)

    def render_view(self, x: float, y: float, z: float, yaw: float, pitch: float) -> np.ndarray:
        """Return an RGB image from eye (x, y, z) along yaw and pitch, with this camera."""
        frames = self._require_world().renderer.render(
            self.camera, (x, y, z), yaw, pitch, {Sensor.RGB}
        )
        assert frames.rgb is not None
        return frames.rgb

    def visible(self, name: str) -> bool:
        """Return whether ``name`` covers at least ``visible_pixels`` pixels of the view."""
        scene = self._require_world().scene
        object_id = scene.id_of(name)
        if self._visible_cache is None or self._visible_cache[0] != self._steps:
            frames = self._render({Sensor.SEMANTIC})
            assert frames.semantic is not None
            self._visible_cache = (self._steps, frames.semantic)
        return int(np.count_nonzero(self._visible_cache[1] == object_id)) >= self.visible_pixels

    def holding(self) -> str | None:
        """Return the name of the carried object, if any."""
        return self._held

    def collided(self) -> bool:
        """Return whether the last step touched anything."""
        return self._collided

    def door_state(self, name: str) -> bool:
        """Return whether door or gate ``name`` is open."""
        return self._require_world().scene.is_open(name)

    # --- interactions (the mission decides when) ---------------------------------------
    def pick_up(self, name: str) -> Event:
        """Take portable object ``name``: it travels with the body.

        A walker carries it out of sight (a casualty on the back); a manipulator holds it in
        its gripper, in front of the base, where the head camera sees it.
        """
        scene = self._require_world().scene
        if scene[name].dynamics is not Dynamics.PORTABLE:
            raise SimulationError(f"embedded backend: {name!r} cannot be picked up")
        if self._held is not None:
            raise SimulationError(f"embedded backend: already holding {self._held!r}")
        self._held = name
        scene.set_hidden(name, self.body_kind != "manipulator")
        self._carry_held()
        return Event(EventKind.PICKED_UP, name)

    def put_down(self) -> Event:
        """Lay the held object on the ground 0.8 m in front of the body."""
        if self._held is None:
            raise SimulationError("embedded backend: put_down() with nothing held")
        name, self._held = self._held, None
        pose = self.pose()
        dx, dy = pose.heading()
        self._place_object(name, (pose.x + 0.8 * dx, pose.y + 0.8 * dy, pose.z))
        self._require_world().scene.set_hidden(name, False)
        return Event(EventKind.DROPPED, name)

    def set_door(self, name: str, is_open: bool) -> Event:
        """Open or close door or gate ``name``."""
        self._require_world().scene.set_open(name, is_open)
        return Event(EventKind.DOOR_OPENED if is_open else EventKind.DOOR_CLOSED, name)

    # --- a mobile manipulator (household missions) ------------------------------------------
    def move_base(self, pose: Pose) -> Pose:
        """Put the base at ``pose`` if it can stand there (else it stays); return where it is."""
        body = self._require_body()
        if not isinstance(body, Walker):
            raise ConfigError(f"embedded backend: a {self.body_kind} has no base to move")
        scene, held = self._require_world().scene, self._held
        if held is not None:  # the gripper's load moves with the base: it blocks nothing
            scene.set_hidden(held, True)
        try:
            body.place(pose)
        except InvalidPoseError:
            pass  # the motion's end is blocked: the base stops where it was
        finally:
            if held is not None:
                scene.set_hidden(held, self.body_kind != "manipulator")
        self._steps += 1
        self._carry_held()
        return body.pose

    def look_around(self, headings: tuple[float, ...]) -> tuple[Frames, ...]:
        """Render the head camera's sensors at each heading from the base's."""
        return tuple(self._head_view(self.camera, h, self.sensors) for h in headings)

    def shown_around(self, headings: tuple[float, ...]) -> tuple[frozenset[str], ...]:
        """Return, per heading, the names of the objects covering ``visible_pixels`` of the view.

        Unless the body's camera renders semantic images anyway, they are rendered for this
        at a quarter of its pixels (half the width and height, the same field of view), with
        the pixel count scaled alike: what a detector finds is the same, at a quarter the cost.
        """
        camera, pixels = self.camera, self.visible_pixels
        if Sensor.SEMANTIC not in self.sensors:
            camera = replace(
                camera, width=max(8, camera.width // 2), height=max(8, camera.height // 2)
            )
            pixels = max(1, pixels // 4)
        names = self.instance_names()
        shown = []
        for heading in headings:
            semantic = self._head_view(camera, heading, {Sensor.SEMANTIC}).semantic
            assert semantic is not None
            ids, counts = np.unique(semantic, return_counts=True)
            shown.append(
                frozenset(
                    names[int(i)] for i, c in zip(ids, counts, strict=True) if i and c >= pixels
                )
            )
        return tuple(shown)

    def _head_view(self, camera: CameraSpec, heading: float, sensors: Collection[Sensor]) -> Frames:
        pose = self.pose()
        eye = (pose.x, pose.y, pose.z + self._eye_height())
        renderer = self._require_world().renderer
        return renderer.render(camera, eye, pose.yaw + heading, self._pitch, sensors)

    def put_on(self, name: str, furniture: str) -> Event:
        """Put held object ``name`` at a free spot on (a container: inside) ``furniture``."""
        if self._held != name:
            raise SimulationError(
                f"embedded backend: put_on({name!r}) while holding {self._held!r}"
            )
        world = self._require_world()
        scene, layout = world.scene, world.layout
        spots = place_spots(scene, layout, furniture, 1, item_radius(scene, name))
        if not spots:  # the surface is full: it goes in the middle, among the others
            x0, y0, x1, y1 = layout.piece(furniture).surface
            spots = (((x0 + x1) / 2, (y0 + y1) / 2, layout.piece(furniture).surface_z),)
        self._held = None
        self._place_object(name, spots[0])
        scene.set_hidden(name, False)
        return Event(EventKind.DROPPED, name, furniture)

    def instance_names(self) -> dict[int, str]:
        """Return the scene object name of every instance id of the semantic images."""
        world = self._require_world()
        if world.names is None:
            world.names = {world.scene.id_of(o.name): o.name for o in world.scene.objects}
        return world.names

    def oracle_view(self) -> EmbeddedOracleView:
        """Return privileged knowledge of the current world."""
        return EmbeddedOracleView(self)

    # --- internals ---------------------------------------------------------------------
    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return the base centre (x, y, lowest z) of object ``name`` where it is now."""
        world = self._require_world()
        if name == self._held:
            pose = self.pose()
            return (pose.x, pose.y, pose.z)
        return world.base_of(name)

    def _apply(self, action: Move | Fly) -> tuple[float, tuple[Event, ...]]:
        body = self._require_body()
        if isinstance(action, Move) and isinstance(body, Walker):
            if action.pitch is not None:
                self._pitch = float(action.pitch)
            walked = body.step(action.turn, action.speed, self.control_period)
            distance, contacts = walked.distance, walked.contacts
        elif isinstance(action, Fly) and isinstance(body, Multirotor):
            flown = body.fly(action.primitive, action.magnitude)
            distance, contacts = flown.distance, (flown.contact,) if flown.contact else ()
        else:
            raise ConfigError(
                f"embedded backend: a {self.body_kind} cannot take {type(action).__name__}; "
                f"allowed: {'Move' if self.body_kind == 'walker' else 'Fly'}"
            )
        return distance, tuple(Event(EventKind.CONTACT, name) for name in contacts)

    def _observe(self, events: tuple[Event, ...]) -> Observation:
        frames = self._render(self.sensors)
        return Observation(frames, self.pose(), events, self._held)

    def _render(self, sensors: Collection[Sensor]) -> Frames:
        if not sensors:
            return Frames()
        pose = self.pose()
        eye = (pose.x, pose.y, pose.z + self._eye_height())
        return self._require_world().renderer.render(
            self.camera, eye, pose.yaw, self._pitch, sensors
        )

    def _carry_held(self) -> None:
        if self._held is None:
            return
        pose = self.pose()
        if self.body_kind == "manipulator":
            ahead, up = GRIPPER
            dx, dy = pose.heading()
            self._place_object(self._held, (pose.x + ahead * dx, pose.y + ahead * dy, pose.z + up))
        else:
            self._place_object(self._held, (pose.x, pose.y, pose.z))

    def _eye_height(self) -> float:
        body = self._require_body()
        return body.shape.eye if isinstance(body, Walker) else 0.0

    def _place_object(self, name: str, base: tuple[float, float, float]) -> None:
        """Move object ``name`` so that its base centre sits at ``base``."""
        scene = self._require_world().scene
        low, high = scene[name].bounds()
        built = ((low[0] + high[0]) / 2, (low[1] + high[1]) / 2, low[2])
        offset = tuple(float(b - c) for b, c in zip(base, built, strict=True))
        scene.set_transform(name, pose_matrix(offset))  # type: ignore[arg-type]

    def _require_world(self) -> _World:
        if self._world is None:
            raise SimulationError("embedded backend: call reset() before using the world")
        return self._world

    def _require_body(self) -> Walker | Multirotor:
        if self._body is None:
            raise SimulationError("embedded backend: call reset() before stepping")
        return self._body


class EmbeddedOracleView:
    """Privileged knowledge of the embedded world: object positions and the navigation graph."""

    def __init__(self, backend: EmbeddedBackend) -> None:
        self._backend = backend

    @property
    def _world(self) -> _World:
        return self._backend._require_world()  # noqa: SLF001 - the view belongs to its backend

    def pose(self) -> Pose:
        """Return the agent's body pose."""
        return self._backend.pose()

    def objects(self) -> list[ObjectInfo]:
        """Return every object with its current base position and attributes."""
        return [
            ObjectInfo(o.name, o.semantic, self.position_of(o.name), dict(o.attributes))
            for o in self._world.scene.objects
        ]

    def position_of(self, name: str) -> tuple[float, float, float]:
        """Return the current base position of object ``name``."""
        return self._backend.position_of(name)

    def targets(self) -> dict[str, str]:
        """Return the episode's roles and the objects that play them."""
        episode = self._backend.episode
        return dict(episode.targets) if episode else {}

    def mission(self) -> dict[str, Any]:
        """Return the episode's mission data (a copy)."""
        episode = self._backend.episode
        return dict(episode.mission) if episode else {}

    def door_states(self) -> dict[str, bool]:
        """Return whether each door and gate is open."""
        return {name: self._backend.door_state(name) for name in self._backend.doors()}

    def open_states(self) -> dict[str, bool]:
        """Return whether each thing that opens (doors, gates, container doors) is open."""
        scene = self._world.scene
        return {
            o.name: scene.is_open(o.name) for o in scene.objects if o.dynamics is Dynamics.OPENABLE
        }

    def geodesic_distance(
        self, start: tuple[float, float, float], goal: tuple[float, float, float]
    ) -> float:
        """Return the walkable path length between two points with doors as they are now."""
        return self._world.nav.geodesic_distance(start, goal, closed=self._closed_doors())

    def shortest_path(
        self,
        start: tuple[float, float, float],
        goal: tuple[float, float, float],
        through_doors: bool = False,
        smooth: bool = True,
    ) -> list[tuple[float, float, float]]:
        """Return waypoints of a shortest walkable path with doors as they are now.

        ``through_doors`` plans as if every door were open; ``smooth`` straightens the path.
        """
        closed = frozenset() if through_doors else self._closed_doors()
        return self._world.nav.shortest_path(start, goal, closed=closed, smooth=smooth)

    def nav_graph(self) -> NavGraph:
        """Return the navigation graph itself, for generators and metrics."""
        return self._world.nav

    def _closed_doors(self) -> frozenset[str]:
        return self._world.nav.closed_doors(self._world.scene)


def _sensor(value: str | Sensor) -> Sensor:
    if value not in IMAGE_SENSORS:
        allowed = ", ".join(sorted(IMAGE_SENSORS))
        raise ConfigError(f"embedded backend: unknown sensor {value!r}; allowed: {allowed}")
    return Sensor(value)
