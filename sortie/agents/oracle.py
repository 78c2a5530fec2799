"""``oracle``: the privileged expert, for every family that names its own.

It reads the privileged state through the ``OracleView`` the runner attaches, and plays each
episode with its family's expert (``sortie.agents.baselines.ORACLES``): rescue walks shortest
paths (``RescueOracle``), aerial flies to the goal in primitives (``AerialOracle``), household
plans the task's shortest keypath (``HouseholdOracle``). Its trajectories are the reference
paths for HS and nDTW.
"""

from __future__ import annotations

from sortie.agents.baselines import ORACLES, OracleOptions, Play, PlayedFamilies
from sortie.backends.base import OracleView
from sortie.core.actions import Action
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, MissionObservation, Sensor


class OracleAgent:
    """Reads the privileged state: rescue's shortest paths, aerial's and household's plans.

    Each family's plan is its own expert, named in ``sortie.agents.baselines.ORACLES``.
    """

    name = "oracle"
    families = PlayedFamilies(ORACLES)
    sensors: frozenset[Sensor] = frozenset()

    def __init__(
        self,
        max_turn: float = 30.0,
        max_speed: float = 1.5,
        lookahead: float = 0.8,
        reach: float = 1.4,
        stuck_steps: int = 15,
    ) -> None:
        """Configure the walking controller (the rescue expert's).

        Args:
            max_turn: largest turn per step, degrees.
            max_speed: cruising speed, m/s.
            lookahead: distance ahead on the path the controller steers to, metres.
            reach: how close to the casualty or stretcher it grabs or drops, metres (inside
                the missions' 1.5 m gate).
            stuck_steps: steps without progress before it replans.
        """
        self.options = OracleOptions(max_turn, max_speed, lookahead, reach, stuck_steps)
        self._oracle: OracleView | None = None
        self._expert: Play | None = None

    def attach(self, oracle: OracleView) -> None:
        """Receive the privileged view."""
        self._oracle = oracle

    def reset(self, brief: Brief, seed: int) -> None:
        """Start the episode with its family's expert."""
        if self._oracle is None:
            raise ConfigError("oracle agent: no OracleView attached; the runner must attach one")
        self._expert = ORACLES.get(brief.family)(self._oracle, brief, self.options)

    def act(self, observation: MissionObservation) -> Action:
        """Return the family's expert's next action."""
        if self._expert is None:
            raise ConfigError("oracle agent: act before reset; reset it with the episode's brief")
        return self._expert.act(observation)
