"""The rescue oracle's play: shortest paths through the navigation graph, pure pursuit.

It plans through the navigation graph (as if doors were open: it opens them) to the target
of the active stage, follows the waypoints with a pure-pursuit controller within the action
limits, and issues the interactions itself, so it completes episodes under ``native``
triggers too. Its trajectories are the reference paths for HS and nDTW.
"""

from __future__ import annotations

import math

from sortie.agents.baselines import OracleOptions
from sortie.backends.base import OracleView
from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, EventKind, MissionObservation
from sortie.core.pose import Pose

Point = tuple[float, float, float]
RECOVERY_STEPS = 4
"""Steps spent backing away from an obstacle the path ran into."""


class RescueOracle:
    """Walks a rescue episode: to the casualty, grabs, back to the stretcher, drops."""

    def __init__(self, view: OracleView, brief: Brief, options: OracleOptions) -> None:
        """Start the episode's plan with the oracle agent's controller settings."""
        self.view = view
        self.max_turn, self.max_speed = options.max_turn, options.max_speed
        self.lookahead, self.reach = options.lookahead, options.reach
        self.stuck_steps = options.stuck_steps
        self._path: list[Point] = []
        self._goal: str | None = None
        self._since_progress, self._best = 0, math.inf
        self._recovery, self._recoveries, self._smooth = 0, 0, True

    def act(self, observation: MissionObservation) -> Action:
        """Steer along the current plan; grab, drop or open doors when there."""
        oracle = self.view
        goal = "stretcher" if observation.carrying else "casualty"
        interaction = self._interaction(observation, goal)
        if interaction is not None:
            return interaction
        pose = oracle.pose()
        if self._recovery:
            return self._recover()
        if goal != self._goal:
            self._plan(pose, goal, smooth=True)
        elif self._stuck(pose):
            # Pushing into an obstacle corner: back off, then follow cell centres, which
            # keep the most clearance, instead of the straightened path.
            self._recovery, self._smooth = RECOVERY_STEPS, False
            return self._recover()
        return self._steer(pose)

    # --- planning ---------------------------------------------------------------------
    def _plan(self, pose: Pose, goal: str, smooth: bool) -> None:
        oracle = self.view
        target = oracle.position_of(self._target_name(goal))
        path = oracle.shortest_path(pose.position(), target, through_doors=True, smooth=smooth)
        # The last point is the target object itself, which may be solid (the stretcher):
        # aim at the walkable point next to it; interactions reach 1.4 m anyway.
        self._path = path[:-1] if len(path) > 2 else path
        self._goal, self._since_progress, self._best = goal, 0, math.inf

    def _recover(self) -> Move:
        """Back away turning, then replan once the recovery steps are spent."""
        oracle = self.view
        assert self._goal is not None
        self._recovery -= 1
        if self._recovery == 0:
            self._plan(oracle.pose(), self._goal, smooth=self._smooth)
        side = 1.0 if (self._recoveries // RECOVERY_STEPS) % 2 == 0 else -1.0
        self._recoveries += 1
        return Move(side * self.max_turn / 2, -0.75)

    def _target_name(self, role: str) -> str:
        oracle = self.view
        targets = oracle.targets()
        if role not in targets:
            raise ConfigError(f"oracle agent: the episode names no {role!r} among its targets")
        return targets[role]

    def _distance(self, name: str) -> float:
        oracle = self.view
        x, y, _ = oracle.position_of(name)
        pose = oracle.pose()
        return math.hypot(x - pose.x, y - pose.y)

    def _closed_door_ahead(self) -> bool:
        oracle = self.view
        pose = oracle.pose()
        for door, is_open in oracle.door_states().items():
            if is_open:
                continue
            x, y, _ = oracle.position_of(door)
            if math.hypot(x - pose.x, y - pose.y) <= 1.4 and abs(pose.bearing_to(x, y)) <= 30:
                return True
        return False

    def _stuck(self, pose: Pose) -> bool:
        remaining = self._remaining(pose)
        if remaining < self._best - 0.05:
            self._best, self._since_progress = remaining, 0
            return False
        self._since_progress += 1
        return self._since_progress >= self.stuck_steps

    def _remaining(self, pose: Pose) -> float:
        if not self._path:
            return math.inf
        x, y, _ = self._path[-1]
        return math.hypot(x - pose.x, y - pose.y)

    # --- control ----------------------------------------------------------------------
    def _steer(self, pose: Pose) -> Move:
        """Pure pursuit: turn toward the point ``lookahead`` ahead on the path, then walk."""
        self._drop_passed(pose)
        if not self._path:
            return Move(self.max_turn, 0.0)  # no plan: look around, the next step replans
        x, y, _ = self._carrot(pose)
        bearing = pose.bearing_to(x, y)
        turn = max(-self.max_turn, min(self.max_turn, bearing))
        remaining = bearing - turn
        distance = math.hypot(x - pose.x, y - pose.y)
        speed = self.max_speed if abs(remaining) < 20 else 0.0
        return Move(turn, min(speed, max(distance / 0.2, 0.0)))

    def _drop_passed(self, pose: Pose) -> None:
        while len(self._path) > 1:
            x, y, _ = self._path[0]
            # Along a cell-centre path (after a recovery) look only a cell ahead: cutting
            # its corners is what ran the body into the obstacle.
            lookahead = self.lookahead if self._smooth else 0.3
            if math.hypot(x - pose.x, y - pose.y) > lookahead:
                break
            self._path.pop(0)

    def _carrot(self, pose: Pose) -> Point:
        return self._path[0]

    def _interaction(self, observation: MissionObservation, goal: str) -> Interact | None:
        """Ask for the interaction the situation calls for (needed under native triggers)."""
        failed = any(e.kind is EventKind.INTERACTION_FAILED for e in observation.events)
        if failed:
            return None
        near = self._distance(self._target_name(goal))
        if near <= self.reach:
            return Interact(Interaction.GRAB if goal == "casualty" else Interaction.DROP)
        if self._closed_door_ahead():
            return Interact(Interaction.OPEN_DOOR)
        return None
