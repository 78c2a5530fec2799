"""How the beacon family is played at random and shown in reports: its entry points name these."""

from __future__ import annotations

import numpy as np

from sortie.agents.baselines import RandomOptions
from sortie.core.actions import Action, Move
from sortie.core.observation import Brief, MissionObservation
from sortie.report.descriptor import FamilyReport, Score
from sortie_beacon.words import Ping


class RandomPing:
    """The ``random`` agent's play of a beacon episode: a random turn and speed, a ping in five."""

    def __init__(self, brief: Brief, seed: int, options: RandomOptions) -> None:
        """Draw from a generator seeded with ``seed`` within the agent's ranges."""
        self.rng, self.options = np.random.default_rng(seed), options

    def act(self, observation: MissionObservation) -> Action:
        """Ping one step in five, else move at random."""
        if self.rng.random() < 0.2:
            return Ping()
        turn = self.rng.uniform(-self.options.max_turn, self.options.max_turn)
        return Move(float(turn), float(self.rng.uniform(0.0, self.options.max_speed)))


REPORT = FamilyReport(
    headline=("sr", "pings"),
    run_scores=(Score("SR", "sr", 0), Score("pings", "pings", 0)),
    episode_scores=(Score("SR", "sr", 0), Score("pings", "pings", 0)),
    stage_names={"S1": "ping the beacon"},
)
"""The beacon family's report descriptor."""
