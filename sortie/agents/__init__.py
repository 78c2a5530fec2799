"""Agents: the oracle, random, classical and model-driven policies, behind one protocol."""

from sortie.agents.base import AGENTS, Agent, SupportsOracle, agent_families

__all__ = ["AGENTS", "Agent", "SupportsOracle", "agent_families"]

AGENTS.add("remote", "sortie.remote.client:RemoteAgent")
AGENTS.add("human", "sortie.remote.human:HumanAgent")
AGENTS.add("emmoe-planner", "sortie.remote.emmoe_link:EmmoePlanner")
AGENTS.add_entry_points("sortie.agents")  # agents of installed packages (docs/plugins.md)
