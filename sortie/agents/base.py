"""The Agent protocol and the agent registry.

An agent is told the brief once per episode and then maps observations to actions. It sees
only what ``MissionObservation`` holds (its images, whether it carries something, its
events); privileged agents (the oracle) are handed an ``OracleView`` explicitly.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sortie.backends.base import OracleView
from sortie.core.actions import Action
from sortie.core.errors import MissingExtraError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.records import ModelCallRecord
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


@runtime_checkable
class SupportsPreflight(Protocol):
    """An agent that can check, before a run, that what it relies on (a model server) is there.

    The runner calls ``preflight`` once, on one agent, before any episode, so a server that is
    down or a misspelt model stops the run at once instead of failing every episode.
    """

    def preflight(self) -> None:
        """Return if the agent can run; else raise ``sortie.core.errors.ConfigError``.

        The message says what is wrong and where (the server's address, the model name and
        the models served).
        """
        ...


@runtime_checkable
class SupportsPinnedArgs(Protocol):
    """An agent whose arguments name a file that may change (a trained checkpoint).

    A run adds ``pinned_args`` to the agent's arguments it stores, so every record says which
    file played (by its digest), a worker refuses a file that changed since the run began,
    and resuming with a retrained file at the same path is refused as another run.
    """

    def pinned_args(self) -> dict[str, Any]:
        """Return the arguments that pin what the given ones point to (``checkpoint_sha256``)."""
        ...


@runtime_checkable
class SupportsClose(Protocol):
    """An agent that holds connections or files: a model client, an agent server's link.

    A run makes a fresh agent for every episode and closes it when the episode is over,
    however it ended (``close_agent``), as it does the agents it makes only to learn the
    sensors (a probe) and to preflight.
    """

    def close(self) -> None:
        """Release what the agent holds; closing again does nothing."""
        ...


def close_agent(agent: object) -> None:
    """Close ``agent`` if it holds anything (``SupportsClose``).

    A ``close`` that raises is a warning naming the agent, not an error: the episode it ends
    has its result already, and an error raised here would replace that result (or the
    episode's own error) and stop the run.
    """
    if not isinstance(agent, SupportsClose):
        return
    try:
        agent.close()
    except Exception as error:  # noqa: BLE001 - see above; the warning says what it was
        name = getattr(agent, "name", type(agent).__name__)
        warnings.warn(f"agent {name!r}: close() raised {error!r}", RuntimeWarning, stacklevel=2)


@dataclass(frozen=True, slots=True)
class StepOutput:
    """What an agent tells the record about its last ``act``: its words and its model calls."""

    text: str | None = None
    """Reasoning or raw model text, stored verbatim (reports escape it)."""
    calls: tuple[ModelCallRecord, ...] = field(default=())
    decision_seconds: float | None = None
    """Decision time to charge on the latency clock instead of the measured one (a replay
    charges the latency recorded when the answer was first made)."""


@runtime_checkable
class SupportsStepOutput(Protocol):
    """An agent that reports what it said and which models it called for its last action."""

    def step_output(self) -> StepOutput:
        """Return the output of the last ``act`` call."""
        ...


def agent_families(factory: object) -> frozenset[str] | None:
    """Return the mission families an agent class plays, or None if it does not say.

    An agent declares them as a class attribute, e.g. ``families = frozenset({"rescue"})``;
    a run refuses suites of a family its agent does not play.
    """
    families = getattr(factory, "families", None)
    return frozenset(families) if families is not None else None


AGENTS: Registry[type] = Registry("agent")
AGENTS.add("oracle", "sortie.agents.oracle:OracleAgent")
AGENTS.add("random", "sortie.agents.random_agent:RandomAgent")
AGENTS.add("explorer", "sortie.agents.explorer:ExplorerAgent")
AGENTS.add("explorer-nomem", "sortie.agents.explorer:NoMemoryExplorer")
AGENTS.add("mllm-rescue", "sortie.agents.mllm:MllmRescueAgent")
AGENTS.add("mllm-aerial", "sortie.agents.mllm:MllmAerialAgent")
AGENTS.add("homiebot", "sortie.agents.mllm:HomieBotAgent")
AGENTS.add("heuristic", "sortie.agents.heuristic:HeuristicAgent")
AGENTS.add("navigator", "sortie.agents.navigator:NavigatorAgent", extra="train")
AGENTS.add("gym-policy", "sortie.agents.gym_policy:GymPolicyAgent")


def agent_table() -> list[dict[str, Any]]:
    """Return one row per registered agent: what it is, its families, what it sees, arguments.

    What it sees is its default sensors (images) and whether it reads the privileged state
    (an oracle view); its arguments are ``-a name=default``.
    """
    rows = []
    for name in AGENTS.in_order():
        try:
            factory = AGENTS.get(name)
        except MissingExtraError as missing:
            rows.append(
                {"agent": name, "what": str(missing), "families": [], "sees": "", "arguments": []}
            )
            continue
        families = agent_families(factory)
        rows.append(
            {
                "agent": name,
                "what": _summary(factory.__doc__ or ""),
                "families": sorted(families) if families is not None else ["any"],
                "sees": _sees(factory),
                "arguments": _arguments(factory),
            }
        )
    return rows


def _summary(doc: str) -> str:
    """Return a docstring's first paragraph on one line, without reST's double backticks."""
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "")


def _sees(factory: type) -> str:
    sensors = getattr(factory, "sensors", None)
    images = sorted(s.value for s in sensors) if isinstance(sensors, frozenset) else []
    parts = [", ".join(images) if images else "no images"]
    if hasattr(factory, "attach"):  # SupportsOracle: runtime_checkable needs an instance
        parts.append("the privileged state (oracle view)")
    if not isinstance(sensors, frozenset):
        parts = [getattr(factory, "sees", "what the served agent or person asks for")]
    return "; ".join(parts)


def _fixed(shown: str, fixed: dict[str, Any]) -> str:
    """Return an argument as listed, or as the agent fixes it (``memory=False (fixed)``)."""
    name = shown.partition("=")[0]
    return f"{name}={fixed[name]} (fixed)" if name in fixed else shown


def _arguments(factory: type) -> list[str]:
    shown = []
    # The constructor as the class defines or inherits it, read off the class itself.
    init = next(vars(c)["__init__"] for c in factory.__mro__ if "__init__" in vars(c))
    parameters = list(inspect.signature(init).parameters.values())[1:]
    if [p.kind for p in parameters] == [inspect.Parameter.VAR_KEYWORD]:  # forwards them all
        fixed = getattr(factory, "fixed_arguments", {})
        return [_fixed(shown, fixed) for shown in _arguments(factory.__mro__[1])]
    for parameter in parameters:
        if parameter.kind is parameter.VAR_KEYWORD:
            shown.append("and the model client's settings (docs/models.md)")
        elif parameter.kind is not parameter.VAR_POSITIONAL:
            default = "" if parameter.default is parameter.empty else f"={parameter.default}"
            shown.append(f"{parameter.name}{default}")
    return shown
