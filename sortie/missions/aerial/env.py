"""The gymnasium face of an aerial mission: ``AerialEnv`` (id ``sortie/Aerial-v1``).

A multirotor with MissionBench's camera (256² pixels, 90° across, pitched 45° down) flies one
instruction. Observations hold the requested images, the instruction and the time left
(seconds; one step is one second, so it is also the steps left); a position only with the
``pose`` sensor. An action
is one of the eight flight primitives or four task actions (``land``, ``drop_payload``,
``collect_sample``, ``done``), a magnitude (metres, or degrees for turns; the mission clamps
it to the episode's d_max and 30° and says so with a ``clamped`` event) and a report (the
mission keeps the last non-empty one; it is what reporting missions are judged on).

The reward is sparse: 1 on the step the mission ends in success, else 0. Stage progress is
not rewarded, because an aerial mission can succeed without its stages (a report read from
afar) and fail after them (the wrong report at the goal). ``terminated`` means the agent said
done or landed (or succeeded on its last step); ``truncated`` means the steps ran out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from sortie.backends.catalog import DEFAULT_BACKEND
from sortie.core.actions import Action, FlightPrimitive, Fly
from sortie.core.episode import EpisodeSpec
from sortie.core.observation import MissionObservation
from sortie.core.records_io import Suite
from sortie.core.run_config import PoseSettings
from sortie.core.step_lines import StepDraft
from sortie.missions.aerial import spec
from sortie.missions.aerial.mission import AerialMission
from sortie.missions.aerial.settings import AerialSettings
from sortie.missions.aerial.spec import aerial_data
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.missions.gym_base import MissionEnv, env_settings, pick, printable, text_space
from sortie.sim.camera import CameraSpec

CAMERA = CameraSpec(**spec.CAMERA)
"""MissionBench's camera, as the runner gives aerial agents (``spec.CAMERA``)."""
ACTIONS: tuple[FlightPrimitive | TaskActionKind, ...] = (*FlightPrimitive, *TaskActionKind)
"""The discrete choices, in order: the eight primitives, then the four task actions."""
MAX_MAGNITUDE = 100.0
"""Largest magnitude the action space allows; the mission clamps to the episode's limits."""
INSTRUCTION_LENGTH = 1000
REPORT_LENGTH = 200


class AerialEnv(MissionEnv[AerialMission]):
    """MissionBench-style aerial missions on the embedded simulator, as a gymnasium env."""

    family = "aerial"
    max_depth = 1000.0  # wider than any flight world's diagonal, so only misses are clipped

    def __init__(
        self,
        episodes: Sequence[EpisodeSpec] | None = None,
        camera: CameraSpec | Mapping[str, Any] | str | None = None,
        sensors: Sequence[str] = ("rgb", "depth", "semantic"),
        clock: str = "sim",
        judge: str | None = None,
        render_mode: str | None = None,
        *,
        suite: str | Suite | None = None,
        max_depth: float | None = None,
        backend: str = DEFAULT_BACKEND,
        backend_args: Mapping[str, Any] | None = None,
        pose: PoseSettings | Mapping[str, Any] | None = None,
    ) -> None:
        """Create the env over ``episodes`` or a ``suite`` (a packaged name or a file).

        ``backend`` names the simulator (see ``sortie backends``), ``backend_args`` its arguments.

        ``judge`` names the report judge (``exact``, ``embedding``, ``llm``; None: the
        ``AerialSettings`` default, exact); ``max_depth`` clips depth images (metres, default
        1000). ``reset`` may pass an episode in its options.

        ``camera`` may be a preset or ``WxH[@HFOV][/PITCH]``; ``pose`` says how the pose
        sensor reads when ``sensors`` holds ``pose`` (``MissionEnv``).
        """
        settings = env_settings(AerialSettings, self.family, judge=judge)
        super().__init__(
            episodes,
            suite,
            lambda backend: AerialMission(backend, clock=clock, settings=settings),
            "multirotor",
            camera or CAMERA,
            sensors,
            max_depth,
            render_mode,
            backend=backend,
            backend_args=backend_args,
            pose=pose,
        )

    def _budget(self, episode: EpisodeSpec) -> float:
        return aerial_data(episode).step_budget * self.mission.control_period

    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {"instruction": text_space(INSTRUCTION_LENGTH)}

    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        brief = self.mission.brief
        assert brief is not None
        return {"instruction": printable(brief.text, INSTRUCTION_LENGTH)}

    def _action_space(self) -> spaces.Dict:
        return spaces.Dict(
            {
                "action": spaces.Discrete(len(ACTIONS)),
                "magnitude": spaces.Box(0.0, MAX_MAGNITUDE, (), np.float32),
                "report": text_space(REPORT_LENGTH),
            }
        )

    def _to_action(self, action: dict[str, Any]) -> Action:
        """Return a Fly for a primitive, else a TaskAction; an empty report is none."""
        kind = pick(ACTIONS, action, "action")
        report = str(action.get("report", "")) or None
        if isinstance(kind, FlightPrimitive):
            return Fly(kind, float(action.get("magnitude", 0.0)), report)
        return TaskAction(kind, report)

    def _reward(self, before: Mapping[str, str], draft: StepDraft) -> float:
        """Return 1 when this step ended the mission in success, else 0."""
        return float(self.mission.done and self.mission.outcome == "success")

    def _ran_out(self) -> bool:
        return self.mission.ended_by is None and self.mission.outcome != "success"
