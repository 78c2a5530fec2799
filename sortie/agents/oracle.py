"""``oracle``: the privileged expert: shortest paths and a path-following controller.

(Aerial episodes are flown by ``AerialOracle``, household tasks planned by ``HouseholdOracle``;
this module walks rescue missions.)

It plans through the navigation graph (as if doors were open: it opens them) to the target
of the active stage, follows the waypoints with a pure-pursuit controller within the action
limits, and issues the interactions itself, so it completes episodes under ``native``
triggers too. Its trajectories are the reference paths for HS and nDTW.
"""

from __future__ import annotations

import math

from sortie.agents.aerial_oracle import AerialOracle
from sortie.agents.household.oracle import HouseholdOracle
from sortie.backends.base import OracleView
from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, EventKind, MissionObservation, Sensor
from sortie.core.pose import Pose

Point = tuple[float, float, float]
RECOVERY_STEPS = 4
"""Steps spent backing away from an obstacle the path ran into."""


class OracleAgent:
    """Reads the privileged state: rescue's shortest paths, aerial's and household's plans.

    The aerial and household plans are ``AerialOracle`` and ``HouseholdOracle``.
    """

    name = "oracle"
    families = frozenset({"rescue", "aerial", "household"})  # see AerialOracle, HouseholdOracle
    sensors: frozenset[Sensor] = frozenset()

    def __init__(
        self,
        max_turn: float = 30.0,
        max_speed: float = 1.5,
        lookahead: float = 0.8,
        reach: float = 1.4,
        stuck_steps: int = 15,
    ) -> None:
        """Configure the controller.

        Args:
            max_turn: largest turn per step, degrees.
            max_speed: cruising speed, m/s.
            lookahead: distance ahead on the path the controller steers to, metres.
            reach: how close to the casualty or stretcher it grabs or drops, metres (inside
                the missions' 1.5 m gate).
            stuck_steps: steps without progress before it replans.
        """
        self.max_turn, self.max_speed = max_turn, max_speed
        self.lookahead, self.reach, self.stuck_steps = lookahead, reach, stuck_steps
        self._oracle: OracleView | None = None
        self._path: list[Point] = []
        self._goal: str | None = None

    def attach(self, oracle: OracleView) -> None:
        """Receive the privileged view."""
        self._oracle = oracle

    def reset(self, brief: Brief, seed: int) -> None:
        """Forget the last episode's plan."""
        if self._oracle is None:
            raise ConfigError("oracle agent: no OracleView attached; the runner must attach one")
        self._path, self._goal, self._since_progress, self._best = [], None, 0, math.inf
        self._recovery, self._recoveries, self._smooth = 0, 0, True
        # An aerial episode is flown by the aerial expert; the rest of this class walks.
        self._expert: AerialOracle | HouseholdOracle | None = None
        if brief.family == "aerial":
            self._expert = AerialOracle(self._oracle)
        elif brief.family == "household":
            self._expert = HouseholdOracle(self._oracle, brief)

    def act(self, observation: MissionObservation) -> Action:
        """Steer along the current plan; grab, drop or open doors when there."""
        oracle = self._oracle
        assert oracle is not None
        if self._expert is not None:
            return self._expert.act(observation)
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
        oracle = self._oracle
        assert oracle is not None
        target = oracle.position_of(self._target_name(goal))
        path = oracle.shortest_path(pose.position(), target, through_doors=True, smooth=smooth)
        # The last point is the target object itself, which may be solid (the stretcher):
        # aim at the walkable point next to it; interactions reach 1.4 m anyway.
        self._path = path[:-1] if len(path) > 2 else path
        self._goal, self._since_progress, self._best = goal, 0, math.inf

    def _recover(self) -> Move:
        """Back away turning, then replan once the recovery steps are spent."""
        oracle = self._oracle
        assert oracle is not None and self._goal is not None
        self._recovery -= 1
        if self._recovery == 0:
            self._plan(oracle.pose(), self._goal, smooth=self._smooth)
        side = 1.0 if (self._recoveries // RECOVERY_STEPS) % 2 == 0 else -1.0
        self._recoveries += 1
        return Move(side * self.max_turn / 2, -0.75)

    def _target_name(self, role: str) -> str:
        oracle = self._oracle
        assert oracle is not None
        targets = oracle.targets()
        if role not in targets:
            raise ConfigError(f"oracle agent: the episode names no {role!r} among its targets")
        return targets[role]

    def _distance(self, name: str) -> float:
        oracle = self._oracle
        assert oracle is not None
        x, y, _ = oracle.position_of(name)
        pose = oracle.pose()
        return math.hypot(x - pose.x, y - pose.y)

    def _closed_door_ahead(self) -> bool:
        oracle = self._oracle
        assert oracle is not None
        pose = oracle.pose()
        for door, is_open in oracle.door_states().items():
            x, y, _ = oracle.position_of(door)
            near = math.hypot(x - pose.x, y - pose.y) <= 1.4
            if not is_open and near and abs(pose.bearing_to(x, y)) <= 30:
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
