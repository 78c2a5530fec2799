"""The Agent protocol and the agent registry.

An agent is told the brief once per episode and then maps observations to actions. It sees
only what ``MissionObservation`` holds (its images, whether it carries something, its
events); privileged agents (the oracle) are handed an ``OracleView`` explicitly.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from sortie.backends.base import OracleView
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.registry import Registry


@runtime_checkable
class Agent(Protocol):
    """A policy: reset with a brief, then one action per observation."""

    name: str
    sensors: frozenset[Sensor]
    """The images the agent needs; the backend renders only these."""

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode."""
        ...

    def act(self, observation: MissionObservation) -> Action:
        """Return the next action."""
        ...


@runtime_checkable
class SupportsOracle(Protocol):
    """An agent that is allowed privileged knowledge of the world."""

    def attach(self, oracle: OracleView) -> None:
        """Receive the privileged view for the coming episode."""
        ...


AGENTS: Registry[type] = Registry("agent")
AGENTS.add("oracle", "sortie.agents.oracle:OracleAgent")
AGENTS.add("random", "sortie.agents.random_agent:RandomAgent")
AGENTS.add("explorer", "sortie.agents.explorer:ExplorerAgent")
AGENTS.add("explorer-nomem", "sortie.agents.explorer:NoMemoryExplorer")
