"""``gym-policy``: the name a run gives a policy that played through a gymnasium env.

A policy trained with an RL library acts on the gymnasium env's observations, batched over
the copies of a vector env; ``sortie.run.walk_records.record_walk`` plays it there and writes
sortie records as a run of this agent, so the store holds which policy played (``policy``)
and what it saw (``sensors``). The agent itself does not act: ``sortie run --agent
gym-policy`` stops at the first episode with a line saying how such a run is made.
"""

from __future__ import annotations

from sortie.core.actions import Action
from sortie.core.errors import ConfigError, ParameterError
from sortie.core.observation import Brief, MissionObservation, Sensor

HOW = (
    "agent 'gym-policy' names a policy that played through a gymnasium env: record it with "
    "sortie.run.walk_records.record_walk (docs/gym.md, Recording a walk)"
)


class GymPolicyAgent:
    """A gymnasium policy's run: what it is called and the sensors its env gave it."""

    name = "gym-policy"  # no ``families``: an env of any family
    sees = "what its gymnasium env showed it (-a sensors)"
    """What ``sortie agents`` says it sees: its sensors are the env's, given per run."""

    def __init__(self, policy: str = "", sensors: str = "rgb") -> None:
        """Name the policy and its sensors (comma-separated, e.g. ``depth,rgb``).

        Raises:
            ParameterError: no policy name, or a sensor sortie does not have.
        """
        if not policy:
            raise ParameterError(f"-a policy=NAME is required: {HOW}")
        names = [s.strip() for s in sensors.split(",") if s.strip()]
        allowed = {s.value for s in Sensor}
        unknown = [s for s in names if s not in allowed]
        if unknown:
            raise ParameterError(
                f"-a sensors={sensors!r}: unknown {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(allowed))}"
            )
        self.policy = policy
        self.sensors: frozenset[Sensor] = frozenset(Sensor(s) for s in names)

    def reset(self, brief: Brief, seed: int) -> None:
        """Refuse: the policy acts inside a gymnasium env, not here.

        Raises:
            ConfigError: always, saying how a gym policy's run is made.
        """
        raise ConfigError(HOW)

    def act(self, observation: MissionObservation) -> Action:
        """Refuse (see ``reset``).

        Raises:
            ConfigError: always.
        """
        raise ConfigError(HOW)
