"""Serving a registered sortie agent (``sortie agent-server --agent NAME``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sortie.agents.base import (
    AGENTS,
    Agent,
    SupportsOracle,
    SupportsStepOutput,
    agent_families,
    close_agent,
)
from sortie.core.errors import ConfigError, ParameterError
from sortie.missions.registry import FAMILIES
from sortie.remote.convert import action_to_wire, brief_from_wire, observation_from_wire
from sortie.remote.wire import (
    ActResponse,
    BriefMessage,
    Hello,
    ModelCall,
    ObservationMessage,
    WireError,
)


class AgentSession:
    """One episode of a sortie agent behind the wire."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def close(self) -> None:
        """Close the agent, if it holds anything (a model client): its episode is over."""
        close_agent(self.agent)

    def act(self, observation: ObservationMessage) -> ActResponse:
        """Return the agent's action (and its words and model calls, if it reports them)."""
        action = self.agent.act(observation_from_wire(observation))
        if not isinstance(self.agent, SupportsStepOutput):
            return ActResponse(action=action_to_wire(action))
        output = self.agent.step_output()
        calls = [ModelCall(**call.model_dump()) for call in output.calls]
        return ActResponse(action=action_to_wire(action), text=output.text, calls=calls)


class AgentEndpoint:
    """A registered agent, built afresh with the same arguments for every episode."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        """Look the agent up and build one to learn its sensors.

        Raises:
            ConfigError: an unknown agent, bad arguments, or an oracle (it needs the world).
        """
        from sortie.run.jobs import check_agent_args

        self.name, self.args = name, dict(args)
        self.factory = AGENTS.get(name)
        check_agent_args(name, self.factory, self.args)
        probe = self._make()
        try:
            if isinstance(probe, SupportsOracle):
                privileged = f"agent {name!r} is privileged (it reads the world)"
                raise ConfigError(f"{privileged}: not servable")
            self.sensors = sorted(str(s) for s in probe.sensors)
        finally:
            close_agent(probe)
        declared = agent_families(self.factory)
        self.families = sorted(declared if declared is not None else FAMILIES.names())

    def hello(self) -> Hello:
        """Return the agent's name, families and sensors."""
        return Hello(agent=self.name, families=self.families, sensors=self.sensors)  # type: ignore[arg-type]

    def start(self, seed: int, brief: BriefMessage) -> AgentSession:
        """Build and reset an agent for a new episode (refusing a family it does not play)."""
        if self.families is not None and brief.family not in self.families:
            plays = ", ".join(self.families)
            raise WireError(422, "family", f"agent {self.name} plays {plays}, not {brief.family}")
        agent = self._make()
        try:
            agent.reset(brief_from_wire(brief), seed)
        except BaseException:
            close_agent(agent)  # no session will hold it
            raise
        return AgentSession(agent)

    def _make(self) -> Agent:
        try:
            agent: Agent = self.factory(**self.args)
        except TypeError as error:
            raise ParameterError(f"agent {self.name!r}: {error}") from None
        return agent
