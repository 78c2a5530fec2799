"""``random``: a seeded agent that turns and walks at random (the floor of every table)."""

from __future__ import annotations

import numpy as np

from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.observation import Brief, MissionObservation, Sensor


class RandomAgent:
    """Picks turn and speed uniformly, and now and then a random interaction."""

    name = "random"
    sensors: frozenset[Sensor] = frozenset()

    def __init__(self, max_turn: float = 30.0, max_speed: float = 1.5,
                 interact_every: int = 20) -> None:
        """Configure the ranges of the random controls."""
        self.max_turn, self.max_speed, self.interact_every = max_turn, max_speed, interact_every
        self._rng = np.random.default_rng(0)

    def reset(self, brief: Brief, seed: int) -> None:
        """Reseed for the episode."""
        self._rng = np.random.default_rng(seed)

    def act(self, observation: MissionObservation) -> Action:
        """Return a random Move, or once in a while a random interaction."""
        if self.interact_every and self._rng.integers(self.interact_every) == 0:
            return Interact(Interaction(self._rng.choice([i.value for i in Interaction])))
        turn = float(self._rng.uniform(-self.max_turn, self.max_turn))
        return Move(turn, float(self._rng.uniform(-self.max_speed, self.max_speed)))
