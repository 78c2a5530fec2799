"""Each family's own play behind the ``oracle`` and ``random`` agents, found by family name.

``oracle`` and ``random`` are one agent each for every family (records name them so); what
they do in an episode is the family's: each family names, by one registry line below, the
class that plays one of its episodes. The agents ask these registries at ``reset`` and never
name a family. A new family adds its lines here (a plug-in calls ``ORACLES.add``); a family
with none is not played by that agent (it is left out of the agent's ``families``).

An oracle play is made with ``(view, brief, options)``: the privileged view, the episode's
brief and the oracle agent's arguments. A random play with ``(brief, seed, options)``: it
draws only from a generator seeded with ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sortie.backends.base import OracleView
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation
from sortie.core.registry import Registry


class Play(Protocol):
    """One episode's play: an action for each observation."""

    def act(self, observation: MissionObservation) -> Action:
        """Return the next action."""
        ...


@dataclass(frozen=True, slots=True)
class OracleOptions:
    """The ``oracle`` agent's arguments (``-a``), for the plays that use them (walking)."""

    max_turn: float = 30.0
    max_speed: float = 1.5
    lookahead: float = 0.8
    reach: float = 1.4
    stuck_steps: int = 15


@dataclass(frozen=True, slots=True)
class RandomOptions:
    """The ``random`` agent's arguments (``-a``): the ranges of its random controls."""

    max_turn: float = 30.0
    max_speed: float = 1.5
    interact_every: int = 20
    max_move: float = 10.0


ORACLES: Registry[Callable[[OracleView, Brief, OracleOptions], Play]] = Registry("oracle play")
"""Per family, the privileged expert the ``oracle`` agent plays its episodes with."""
ORACLES.add("rescue", "sortie.agents.rescue_oracle:RescueOracle")
ORACLES.add("aerial", "sortie.agents.aerial_oracle:AerialOracle")
ORACLES.add("household", "sortie.agents.household.oracle:HouseholdOracle")
ORACLES.add_entry_points("sortie.oracles")  # of installed packages' families (docs/plugins.md)

RANDOMS: Registry[Callable[[Brief, int, RandomOptions], Play]] = Registry("random play")
"""Per family, the seeded random play of the ``random`` agent."""
RANDOMS.add("rescue", "sortie.agents.random_agent:RandomWalk")
RANDOMS.add("aerial", "sortie.agents.random_agent:RandomFlight")
RANDOMS.add("household", "sortie.agents.household.random_planner:RandomPlanner")
RANDOMS.add_entry_points("sortie.randoms")  # of installed packages' families (docs/plugins.md)


class PlayedFamilies:
    """A class attribute that reads the families a play registry holds, when it is read.

    So ``families`` of the ``oracle`` and ``random`` agents follows the registry, plug-ins
    included, instead of a list written in the agent.
    """

    def __init__(self, plays: Registry[Any]) -> None:
        self.plays = plays

    def __get__(self, instance: object, owner: type | None = None) -> frozenset[str]:
        return frozenset(self.plays.names())
