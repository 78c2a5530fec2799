"""``explorer``: a classical baseline that sees only its sensors.

Each step it dead-reckons its pose from the Move it sent (``odometry``), folds the depth image
into a 2.5D occupancy map (``occupancy``), and looks for the casualty, the stretcher, the
ambulance and doors in the semantic image through the brief's label map (``sightings``,
``memory``). It explores the nearest frontier until it has seen a lying person wearing the
clue's colours, walks there on the map (scipy's Dijkstra) and picks them up; then, with memory,
it plans back to where it saw the stretcher (else the ambulance, else where it started).
Without memory it forgets the map and every remembered place at the pick-up and explores
again until it sees the stretcher or the ambulance.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from sortie.agents.explorer.memory import Landmark, Memory
from sortie.agents.explorer.occupancy import ElevationMap, Window
from sortie.agents.explorer.odometry import Odometry
from sortie.agents.explorer.perception import Kind, back_project, clue_colours, kind_table
from sortie.agents.explorer.planner import distances_from, frontiers, trace
from sortie.agents.explorer.sightings import Sighting, find_objects
from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, EventKind, MissionObservation, Sensor

Point = tuple[float, float]


class ExplorerAgent:
    """Frontier exploration on a depth-built map, semantic recognition, a map to return by."""

    name = "explorer"
    families = frozenset({"rescue"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB, Sensor.DEPTH, Sensor.SEMANTIC})

    def __init__(
        self,
        memory: bool = True,
        cell: float = 0.25,
        max_speed: float = 1.5,
        max_turn: float = 30.0,
        hfov: float = 90.0,
        eye: float = 1.6,
        reach: float = 1.3,
        replan_every: int = 8,
    ) -> None:
        """Configure the explorer.

        Args:
            memory: keep the map and the stretcher's place for the way back; False forgets
                both at the pick-up and searches for the stretcher again.
            cell: side of a map cell, metres.
            max_speed: walking speed, m/s.
            max_turn: largest turn per step, degrees.
            hfov: the camera's horizontal field of view, degrees, when the brief does not say
                (a brief's camera, e.g. a run's ``--camera``, is the one used).
            eye: the camera's height above the feet, metres.
            reach: distance to the casualty or stretcher at which it grabs or drops, metres
                (inside the missions' 1.5 m gate, measured to the visible surface's middle).
            replan_every: steps between plans when nothing forces one sooner.
        """
        self.memory, self.cell, self.max_speed, self.max_turn = memory, cell, max_speed, max_turn
        self.hfov, self.eye, self.reach, self.replan_every = hfov, eye, reach, replan_every
        self.default_hfov = hfov
        self.map = ElevationMap(cell)
        self.pose = Odometry()
        self.recall = Memory()
        self._kinds = kind_table({})
        self._rng = np.random.default_rng(0)
        self._setup(Brief("rescue", "", ""), 0)

    def _setup(self, brief: Brief, seed: int) -> None:
        self._brief, self._rng = brief, np.random.default_rng(seed)
        self.hfov = self._camera_hfov(brief)
        self._kinds, self._wanted = kind_table(brief.semantic_classes), clue_colours(brief.clue)
        self._last: Action | None = None
        self._carrying, self._scan = False, 12
        self._path: list[Point] = []
        self._plan_step, self._step = -(10**9), 0
        self._trail: deque[Point] = deque(maxlen=25)
        self._banned: list[Point] = []
        self._escape, self._interacted, self._turn_sign = 0, -(10**9), 1.0

    def _camera_hfov(self, brief: Brief) -> float:
        """Return the field of view its depth is read with: the brief's camera's, if it says.

        Raises:
            ConfigError: the camera is pitched: the map is built from a level camera's depth.
        """
        camera = brief.camera
        if camera is None:
            return self.default_hfov
        if abs(camera.pitch) > 1e-6:
            raise ConfigError(
                f"agent {self.name!r}: it maps depth seen by a level camera; this run's camera "
                f"is pitched {camera.pitch:g}° (--camera WxH@HFOV/0 keeps it level)"
            )
        return camera.hfov

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: an empty map, the start as origin, a look around first."""
        self.map.clear()
        self.pose, self.recall = Odometry(), Memory()
        self._setup(brief, seed)

    def act(self, observation: MissionObservation) -> Action:
        """Update pose, map and memory from the observation, then choose the next action."""
        self._step += 1
        self._update_pose(observation)
        sightings = self._perceive(observation)
        if observation.carrying and not self._carrying and not self.memory:
            self._forget()
        self._carrying = observation.carrying
        action = self._interaction(observation, sightings) or self._motion(sightings)
        self._last = action
        return action

    # --- state ------------------------------------------------------------------------
    def _update_pose(self, observation: MissionObservation) -> None:
        """Dead-reckon the last Move; a contact means it was stopped (see ``odometry``)."""
        last = self._last
        if isinstance(last, Move):
            touched = any(e.kind is EventKind.CONTACT for e in observation.events)
            kept = _stride_kept(observation.frames.depth) if touched else 1.0
            self.pose.advance(last.turn, last.speed * kept, self._brief.control_period, False)
            if touched:
                self._on_contact(last.speed)
        ground = self.map.ground(self.pose.x, self.pose.y)
        if ground is not None and abs(ground - self.pose.z) < 0.6:
            self.pose.z = ground
        self.map.visit(self.pose.x, self.pose.y)
        if isinstance(last, Move) and abs(last.speed) > 0.1:
            self._trail.append((self.pose.x, self.pose.y))  # only walking steps can be stuck

    def _on_contact(self, speed: float) -> None:
        """Mark what stopped the body on the map and plan again around it."""
        rad = math.radians(self.pose.yaw)
        ahead = 0.45 if speed >= 0 else -0.45
        self.map.block(self.pose.x + ahead * math.cos(rad), self.pose.y + ahead * math.sin(rad))
        self._path = []

    def _perceive(self, observation: MissionObservation) -> list[Sighting]:
        frames = observation.frames
        if frames.depth is None or frames.semantic is None:
            return []
        points = back_project(
            frames.depth, frames.semantic, self._kinds, self.pose, self.eye, self.hfov, stride=2
        )
        self.map.add(points, self.pose.z)
        sightings = find_objects(
            frames.depth,
            frames.semantic,
            frames.rgb,
            self._kinds,
            self.pose,
            self.eye,
            self.hfov,
            self._wanted,
        )
        self.recall.note(sightings, self._step)
        return sightings

    def _forget(self) -> None:
        """Without memory: drop the map, the places seen and the frame they were kept in."""
        self.map.clear()
        self.recall.forget_places()
        self.pose = Odometry(z=self.pose.z)
        self._path, self._banned, self._scan = [], [], 12
        self._trail.clear()

    # --- interactions -----------------------------------------------------------------
    def _interaction(
        self, observation: MissionObservation, sightings: list[Sighting]
    ) -> Interact | None:
        """Grab, drop or open a door when close enough (needed under native triggers)."""
        if self._step - self._interacted < 6:
            return None
        target = self.recall.goal(observation.carrying)
        kind = Interaction.DROP if observation.carrying else Interaction.GRAB
        if (
            isinstance(target, Landmark)
            and self.pose.distance_to(target.x, target.y) <= (self.reach)
            and (observation.carrying or target is self.recall.casualty)
        ):
            self._interacted = self._step
            return Interact(kind)
        if any(
            s.kind is Kind.DOOR and s.nearest <= 1.4 and abs(s.bearing) <= 30 for s in sightings
        ):
            self._interacted = self._step
            return Interact(Interaction.OPEN_DOOR)
        return None

    # --- motion -----------------------------------------------------------------------
    def _motion(self, sightings: list[Sighting]) -> Move:
        if self._scan > 0:
            self._scan -= 1
            return Move(self.max_turn, 0.0)
        if self._escape > 0:
            return self._escape_move()
        if self._stuck():
            return self._start_escape()
        target = self.recall.goal(self._carrying)
        if target is not None:
            point = (target.x, target.y) if isinstance(target, Landmark) else target
            if self.pose.distance_to(*point) < 2.5 and isinstance(target, Landmark):
                return self._steer(point, slow=True)
            if self.pose.distance_to(*point) < 1.0:
                self._arrived_home()
                return Move(self.max_turn, 0.0)
        if not self._path or self._step - self._plan_step >= self.replan_every:
            self._replan(target)
        if not self._path:
            return self._no_plan()
        return self._follow()

    def _arrived_home(self) -> None:
        """At the start with no stretcher in sight: look around, then explore from here."""
        self.recall.home = None
        self._scan = 12

    def _no_plan(self) -> Move:
        """Nothing to go to: turn to look, now and then walk a little at random."""
        if self._rng.random() < 0.2:
            return self._start_escape()
        return Move(self.max_turn, 0.0)

    def _stuck(self) -> bool:
        """Return whether the last walking steps went nowhere (blocked, or to and fro)."""
        if len(self._trail) < self._trail.maxlen:  # type: ignore[operator]
            return False
        (x0, y0), (x1, y1) = self._trail[0], self._trail[-1]
        return math.hypot(x1 - x0, y1 - y0) < 0.5

    def _start_escape(self) -> Move:
        """Give up the current goal, back off and turn a random way for a few steps."""
        if self._path:
            self._banned.append(self._path[-1])
        self._path, self._escape = [], 4
        self._trail.clear()
        self._turn_sign = 1.0 if self._rng.random() < 0.5 else -1.0
        return self._escape_move()

    def _escape_move(self) -> Move:
        self._escape -= 1
        if self._escape >= 2:
            return Move(self._turn_sign * self.max_turn, -0.5)
        return Move(self._turn_sign * self.max_turn, 0.5)

    def _steer(self, point: Point, slow: bool = False) -> Move:
        """Turn toward ``point`` and walk when facing it (slowly near an object)."""
        bearing = self.pose.bearing_to(*point)
        turn = max(-self.max_turn, min(self.max_turn, bearing))
        if abs(bearing - turn) > 15:
            return Move(turn, 0.0)
        distance = self.pose.distance_to(*point)
        speed = min(self.max_speed, distance / self._brief.control_period)
        return Move(turn, min(speed, 0.6) if slow else speed)

    def _follow(self) -> Move:
        """Pure pursuit: steer to the first waypoint at least 0.75 m away."""
        while len(self._path) > 1 and self.pose.distance_to(*self._path[0]) < 0.75:
            self._path.pop(0)
        if len(self._path) == 1 and self.pose.distance_to(*self._path[0]) < 0.4:
            self._path = []
            return Move(0.0, 0.0)
        return self._steer(self._path[0])

    # --- planning ---------------------------------------------------------------------
    def _replan(self, target: Landmark | Point | None) -> None:
        """Plan to the target if there is one, else to the best frontier."""
        self._plan_step = self._step
        here = self.map.index(self.pose.x, self.pose.y)
        goal_cell = None
        if target is not None:
            point = (target.x, target.y) if isinstance(target, Landmark) else target
            goal_cell = self.map.index(*point)
        win = self.map.window(margin=12, around=goal_cell)
        cost, walkable, known = self._costs(win, here, optimistic=target is not None)
        start = (here[0] - win[0].start, here[1] - win[1].start)
        dist, pred = distances_from(cost, start)
        goals = (
            self._near(win, point, 1.0) & walkable
            if target is not None
            else frontiers(walkable, known)
        )
        self._path = self._best_path(win, dist, pred, goals, target is None)

    def _costs(
        self, win: Window, here: tuple[int, int], optimistic: bool
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_]]:
        """Return per-cell costs (inf: impassable), walkable and known cells of a window."""
        walkable, known = self.map.walkable(win), self.map.known(win)
        roomy = self.map.walkable(win, clearance=2)
        cost = np.where(walkable, np.where(roomy, 1.0, 2.5), np.inf)
        if optimistic:
            cost = np.where(~known, 2.0, cost)
        r, c = here[0] - win[0].start, here[1] - win[1].start
        cost[max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2] = np.minimum(
            cost[max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2], 2.5
        )
        return cost, walkable | (optimistic & ~known), known

    def _near(self, win: Window, point: Point, radius: float) -> NDArray[np.bool_]:
        """Return the window's cells whose centres lie within ``radius`` of ``point``."""
        rows = np.arange(win[0].start, win[0].stop)
        cols = np.arange(win[1].start, win[1].stop)
        half = self.map.size // 2
        ys = (rows - half + 0.5) * self.cell - point[1]
        xs = (cols - half + 0.5) * self.cell - point[0]
        return (ys[:, None] ** 2 + xs[None, :] ** 2) <= radius**2

    def _best_path(
        self,
        win: Window,
        dist: NDArray[np.float64],
        pred: NDArray[np.int32],
        goals: NDArray[np.bool_],
        exploring: bool,
    ) -> list[Point]:
        """Return the waypoints to the cheapest reachable goal cell (frontiers: scored)."""
        score = np.where(goals & np.isfinite(dist), dist * self.cell, np.inf)
        if exploring:
            score = score + self._frontier_penalty(win)
        if not np.isfinite(score).any():
            return []
        goal = np.unravel_index(int(np.argmin(score)), score.shape)
        cells = trace(pred, (int(goal[0]), int(goal[1])), dist.shape[1])
        return [self.map.centre(r + win[0].start, c + win[1].start) for r, c in cells[1:]]

    def _frontier_penalty(self, win: Window) -> NDArray[np.float64]:
        """Penalise frontiers behind the body, right under it, or given up on."""
        rows = np.arange(win[0].start, win[0].stop)
        cols = np.arange(win[1].start, win[1].stop)
        half = self.map.size // 2
        ys = (rows - half + 0.5)[:, None] * self.cell - self.pose.y
        xs = (cols - half + 0.5)[None, :] * self.cell - self.pose.x
        # numpy's arctan2 comes from CPU-specific kernels that differ in the last bits; a
        # micro-degree grid makes the frontier scores, and so the argmin, the same everywhere.
        bearing = np.round(np.degrees(np.arctan2(ys, xs)), 6) - self.pose.yaw
        bearing = np.abs((bearing + 180) % 360 - 180)
        penalty = 1.5 * bearing / 90.0 + np.where(np.hypot(xs, ys) < 1.0, np.inf, 0.0)
        for bx, by in self._banned:
            penalty = penalty + np.where(
                np.hypot(xs + self.pose.x - bx, ys + self.pose.y - by) < 1.5, np.inf, 0.0
            )
        return penalty


def _stride_kept(depth: NDArray[np.float32] | None) -> float:
    """Guess the share of a stride that a contact left: none head-on, some when sliding.

    The walker slides along what it touches, so a glancing contact keeps much of the move;
    a surface filling the middle of the view within 0.6 m means it walked into it head-on.
    """
    if depth is None:
        return 0.0
    rows, cols = depth.shape
    middle = depth[rows // 4 : rows // 2, cols // 2 - cols // 16 : cols // 2 + cols // 16]
    return 0.0 if float(np.min(middle)) < 0.6 else 0.6


class NoMemoryExplorer(ExplorerAgent):
    """The explorer that forgets its map and places at the pick-up (``explorer-nomem``)."""

    name = "explorer-nomem"
    fixed_arguments: ClassVar[dict[str, Any]] = {"memory": False}
    """Arguments this agent sets whatever it is given (``sortie agents`` shows them so)."""

    def __init__(self, **kwargs: Any) -> None:
        """Configure like ``ExplorerAgent`` with ``memory`` off."""
        kwargs.pop("memory", None)
        super().__init__(**self.fixed_arguments, **kwargs)
