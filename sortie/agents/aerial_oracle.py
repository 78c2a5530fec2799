"""The privileged aerial expert: flies to the goal pose in primitives, reports the truth.

It reads the mission's goal, answer, task action and patrol route through the OracleView.
Each step it moves along whichever body axis (forward/back, left/right, up/down) has the
largest remaining offset to the next waypoint, by at most d_max, so it never spends steps
turning on the way; at the goal it turns to the goal's heading, carries out the task action
and says done with the expected answer as its report. A patrol's waypoints are the route's
points, so the route is flown leg by leg facing along it. When a move is blocked it climbs.
"""

from __future__ import annotations

import math

from sortie.agents.baselines import OracleOptions
from sortie.backends.base import OracleView
from sortie.core.actions import Action, FlightPrimitive, Fly
from sortie.core.observation import Brief, EventKind, MissionObservation
from sortie.core.pose import Pose, wrap_degrees
from sortie.missions.aerial.spec import AerialData, MissionType
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind

Point = tuple[float, float, float]
REACHED = 0.5
"""A waypoint counts as reached within this distance, metres."""
HEADING_TOLERANCE = 2.0
"""Degrees within which the final heading is left alone."""


class AerialOracle:
    """One episode's plan for the aerial expert."""

    def __init__(
        self, view: OracleView, brief: Brief | None = None, options: OracleOptions | None = None
    ) -> None:
        """Read the mission and lay out the waypoints (the brief gives d_max, options nothing)."""
        mission = AerialData.model_validate(view.mission())
        self.view = view
        self.goal = mission.goal
        # The brief's d_max is the one the mission clamps to (a run's -F max_move replaces the
        # episode's).
        move = brief.limits.max_move if brief is not None else None
        self.max_move, self.max_turn = move or mission.max_move, mission.max_turn
        self.answer: str | None = mission.answer
        self.task: str | None = mission.task_action
        self.patrol = MissionType.PATROL in mission.types
        route: list[Point] = [(p[0], p[1], p[2]) for p in mission.patrol]
        self.waypoints: list[Point] = [*route[1:]] if self.patrol else [self.goal.position()]
        self.task_done = False

    def act(self, observation: MissionObservation) -> Action:
        """Return the next primitive, the task action, or done with the report."""
        pose = self.view.pose()
        while self.waypoints and math.dist(pose.position(), self.waypoints[0]) <= REACHED:
            self.waypoints.pop(0)
        if self.waypoints:
            blocked = any(e.kind is EventKind.CONTACT for e in observation.events)
            return Fly(FlightPrimitive.UP, self.max_move) if blocked else self._toward(pose)
        turn = wrap_degrees(self.goal.yaw - pose.yaw)
        if not self.patrol and abs(turn) > HEADING_TOLERANCE:
            primitive = FlightPrimitive.TURN_LEFT if turn > 0 else FlightPrimitive.TURN_RIGHT
            return Fly(primitive, min(abs(turn), self.max_turn))
        if self.task and not self.task_done:
            self.task_done = True
            # Landing ends the flight, so the answer goes with the task action too.
            return TaskAction(TaskActionKind(self.task), report=self.answer)
        return TaskAction(TaskActionKind.DONE, report=self.answer)

    def _toward(self, pose: Pose) -> Action:
        """Move along the body axis with the largest offset to the next waypoint."""
        target = self.waypoints[0]
        dx, dy, dz = (t - p for t, p in zip(target, pose.position(), strict=True))
        if self.patrol and math.hypot(dx, dy) > REACHED:
            turn = wrap_degrees(math.degrees(math.atan2(dy, dx)) - pose.yaw)
            if abs(turn) > HEADING_TOLERANCE:  # a patrol faces along its route
                primitive = FlightPrimitive.TURN_LEFT if turn > 0 else FlightPrimitive.TURN_RIGHT
                return Fly(primitive, min(abs(turn), self.max_turn))
        yaw = math.radians(pose.yaw)
        forward = dx * math.cos(yaw) + dy * math.sin(yaw)
        left = -dx * math.sin(yaw) + dy * math.cos(yaw)
        axes = {
            (FlightPrimitive.FORWARD, FlightPrimitive.BACKWARD): forward,
            (FlightPrimitive.LEFT, FlightPrimitive.RIGHT): left,
            (FlightPrimitive.UP, FlightPrimitive.DOWN): dz,
        }
        (positive, negative), offset = max(axes.items(), key=lambda kv: abs(kv[1]))
        return Fly(positive if offset > 0 else negative, min(abs(offset), self.max_move))
