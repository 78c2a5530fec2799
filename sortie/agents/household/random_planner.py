"""A seeded random household planner: the floor of the household tables.

Each round it picks an offered action, an offered skill and, as the target, a thing the robot
has seen so far (for ``put``, a seen place too), all uniformly; ``end`` is one action among
six, so an episode lasts about six rounds.
"""

from __future__ import annotations

import numpy as np

from sortie.agents.baselines import RandomOptions
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation
from sortie.missions.household.observation import HouseholdObservation
from sortie.missions.household.records import Verb
from sortie.missions.household.vocabulary import Subtask


class RandomPlanner:
    """Names random subtasks among the offered actions and skills and the things seen."""

    def __init__(self, brief: Brief, seed: int, options: RandomOptions | None = None) -> None:
        """Start a planner for one episode, seeded (the random agent's options add nothing)."""
        self.actions = brief.actions or tuple(v.value for v in Verb)
        self.skills = tuple(name for name, _ in brief.skills) or ("",)
        self.rng = np.random.default_rng(seed)
        self.seen: set[str] = set()

    def act(self, observation: MissionObservation) -> Action:
        """Return a random subtask."""
        if isinstance(observation, HouseholdObservation):
            for names in observation.detections:
                self.seen.update(names)
        action = str(self.rng.choice(self.actions))
        skill = str(self.rng.choice(self.skills))
        seen = sorted(self.seen) or [""]
        target = str(self.rng.choice(seen))
        place = str(self.rng.choice(seen)) if action == Verb.PUT else None
        return Subtask(action, target if action != Verb.END else "", skill, place)
