"""``random``: a seeded agent that acts at random (the floor of every table).

It plays each episode with its family's random play (``sortie.agents.baselines.RANDOMS``). On
foot (rescue, ``RandomWalk``) it turns and walks at random; in the air (aerial,
``RandomFlight``) it picks uniformly among the eight flight primitives and ``done``, with
magnitudes uniform up to the limits it is told (the mission clamps them to its own). Saying
done one step in nine ends a 20-step flight after 8.2 steps on average, an efficiency of
1 − 8.2/20 ≈ 59 %, near MissionBench's random baseline (65 %). A household planner names
random subtasks (``sortie.agents.household.random_planner``).
"""

from __future__ import annotations

import numpy as np

from sortie.agents.baselines import RANDOMS, Play, PlayedFamilies, RandomOptions
from sortie.core.actions import Action, FlightPrimitive, Fly, Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind


class RandomAgent:
    """Acts at random, seeded: turns and speeds, flight primitives, or subtasks on seen things."""

    name = "random"
    families = PlayedFamilies(RANDOMS)
    sensors: frozenset[Sensor] = frozenset()

    def __init__(
        self,
        max_turn: float = 30.0,
        max_speed: float = 1.5,
        interact_every: int = 20,
        max_move: float = 10.0,
    ) -> None:
        """Configure the ranges of the random controls (``max_move``: flight, metres)."""
        self.options = RandomOptions(max_turn, max_speed, interact_every, float(max_move))
        self._play: Play | None = None

    def reset(self, brief: Brief, seed: int) -> None:
        """Start the episode's random play of its family, seeded."""
        self._play = RANDOMS.get(brief.family)(brief, seed, self.options)

    def act(self, observation: MissionObservation) -> Action:
        """Return the play's next random action."""
        if self._play is None:
            raise ConfigError("random agent: act before reset; reset it with the episode's brief")
        return self._play.act(observation)


class RandomWalk:
    """Walks at random: a random Move, or once in a while a random interaction."""

    def __init__(self, brief: Brief, seed: int, options: RandomOptions) -> None:
        """Seed the walk; ``options`` bound its turns and speeds."""
        self.options = options
        self._rng = np.random.default_rng(seed)

    def act(self, observation: MissionObservation) -> Action:
        """Return a random Move, or one time in ``interact_every`` a random interaction."""
        every = self.options.interact_every
        if every and self._rng.integers(every) == 0:
            return Interact(Interaction(self._rng.choice([i.value for i in Interaction])))
        turn = float(self._rng.uniform(-self.options.max_turn, self.options.max_turn))
        speed = float(self._rng.uniform(-self.options.max_speed, self.options.max_speed))
        return Move(turn, speed)


class RandomFlight:
    """Flies at random: a flight primitive of random size, or ``done``, all uniformly."""

    def __init__(self, brief: Brief, seed: int, options: RandomOptions) -> None:
        """Seed the flight; ``options`` bound its turns and moves."""
        self.options = options
        self._rng = np.random.default_rng(seed)

    def act(self, observation: MissionObservation) -> Action:
        """Return a random primitive or ``done``."""
        choice = int(self._rng.integers(len(_PRIMITIVES) + len(_TASKS)))
        if choice >= len(_PRIMITIVES):
            return TaskAction(_TASKS[choice - len(_PRIMITIVES)])
        primitive = _PRIMITIVES[choice]
        limit = self.options.max_turn if primitive in _TURNS else self.options.max_move
        return Fly(primitive, float(self._rng.uniform(0.0, limit)))


_PRIMITIVES = tuple(FlightPrimitive)
_TASKS = (TaskActionKind.DONE,)
_TURNS = (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT)
