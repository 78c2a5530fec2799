"""``random``: a seeded agent that acts at random (the floor of every table).

On foot it turns and walks at random; in the air it picks uniformly among the eight flight
primitives and ``done``, with magnitudes uniform up to the limits it is told (the mission
clamps them to its own). Saying done one step in nine ends a 20-step flight after 8.2 steps
on average, an efficiency of 1 − 8.2/20 ≈ 59 %, near MissionBench's random baseline (65 %).
A household planner names random subtasks (``sortie.agents.household.random_planner``).
"""

from __future__ import annotations

import numpy as np

from sortie.agents.household.random_planner import RandomPlanner
from sortie.core.actions import Action, FlightPrimitive, Fly, Interact, Interaction, Move
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind


class RandomAgent:
    """Acts at random, seeded: turns and speeds, flight primitives, or subtasks on seen things."""

    name = "random"
    families = frozenset({"rescue", "aerial", "household"})
    sensors: frozenset[Sensor] = frozenset()

    def __init__(
        self,
        max_turn: float = 30.0,
        max_speed: float = 1.5,
        interact_every: int = 20,
        max_move: float = 10.0,
    ) -> None:
        """Configure the ranges of the random controls (``max_move``: flight, metres)."""
        self.max_turn, self.max_speed, self.interact_every = max_turn, max_speed, interact_every
        self.max_move = float(max_move)
        self._rng = np.random.default_rng(0)
        self._flying = False
        self._planner: RandomPlanner | None = None

    def reset(self, brief: Brief, seed: int) -> None:
        """Reseed for the episode."""
        self._rng = np.random.default_rng(seed)
        self._flying = brief.family == "aerial"
        self._planner = RandomPlanner(brief, seed) if brief.family == "household" else None

    def act(self, observation: MissionObservation) -> Action:
        """Return a random Move, or once in a while a random interaction (or a flight action)."""
        if self._planner is not None:
            return self._planner.act(observation)
        if self._flying:
            return self._fly()
        if self.interact_every and self._rng.integers(self.interact_every) == 0:
            return Interact(Interaction(self._rng.choice([i.value for i in Interaction])))
        turn = float(self._rng.uniform(-self.max_turn, self.max_turn))
        return Move(turn, float(self._rng.uniform(-self.max_speed, self.max_speed)))

    def _fly(self) -> Action:
        choice = int(self._rng.integers(len(_PRIMITIVES) + len(_TASKS)))
        if choice >= len(_PRIMITIVES):
            return TaskAction(_TASKS[choice - len(_PRIMITIVES)])
        primitive = _PRIMITIVES[choice]
        limit = self.max_turn if primitive in _TURNS else self.max_move
        return Fly(primitive, float(self._rng.uniform(0.0, limit)))


_PRIMITIVES = tuple(FlightPrimitive)
_TASKS = (TaskActionKind.DONE,)
_TURNS = (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT)
