"""The gymnasium face of a household mission: ``HouseholdEnv`` (id ``sortie/Household-v1``).

One step is one planner round. The action names a subtask: a verb (an index into ``VERBS``),
a target, a place (empty for none) and a skill (an index into ``env.skills``, the skills the
env's setting offers). The executor checks and runs it as it does for every planner.

Observations hold each requested image of the four views stacked in ``VIEW_NAMES`` order
(front, left, back, right) under the sensor's name, so ``rgb`` is (4, H, W, 3); then the
task, the inventory, the history of rounds (one line each, see ``history_line``), the
executor's last feedback and error code, the rounds taken and the rounds left; never a
position, and never the detector's names.

The reward is sparse: 1 on the round the planner says ``end`` with the task carried out
(success), else 0. Rounds that do a keypath's step are not rewarded: a planner could earn
them and still fail the task by ending it too early or never. ``terminated`` means the
planner said ``end``; ``truncated`` means the rounds ran out first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from sortie.backends.catalog import DEFAULT_BACKEND
from sortie.core.actions import Action
from sortie.core.episode import EpisodeSpec
from sortie.core.observation import MissionObservation, Sensor, image_sensors
from sortie.core.records_io import Suite
from sortie.core.run_config import PoseSettings
from sortie.core.step_lines import StepDraft
from sortie.missions.gym_base import (
    MissionEnv,
    env_settings,
    pick,
    printable,
    text_space,
)
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import TEXT, RoundRecord, RoundStatus, Verb
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.skills import offered
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import Subtask
from sortie.sim.camera import CameraSpec

CAMERA = CameraSpec(pitch=-20.0)
"""The head camera the runner gives household planners: 128², 90° across, 20° down."""
VERBS: tuple[Verb, ...] = tuple(Verb)
"""The ``action`` choices, in order: go_to, pick, put, open, close, end."""
TASK_LENGTH = 4000
LINE_LENGTH = 300
"""Longest history line; longer planner words are cut."""
HISTORY_LENGTH = 100 * (LINE_LENGTH + 1)
"""Room for one line per round of the largest budget (``MAX_ROUNDS``), none ever dropped."""


def history_line(record: RoundRecord) -> str:
    """Return one round as a history line: ``(k) action, target[, place] [skill] (status)``.

    The planner's words are given as written (whitespace made single spaces); the status is
    ``success``, ``failure CODE`` or, for ``end``, ``end``.
    """
    words = [record.action, record.target] + ([record.place] if record.place else [])
    status = record.status.value
    if record.status is RoundStatus.FAILURE and record.code is not None:
        status = f"failure {record.code.value}"
    skill = f" [{record.skill}]" if record.skill else ""
    line = f"({record.round}) {', '.join(w for w in words if w)}{skill} ({status})"
    return printable(" ".join(line.split()), LINE_LENGTH)


class HouseholdEnv(MissionEnv[HouseholdMission]):
    """Household tasks (EMMOE-style) on the embedded simulator, as a gymnasium environment."""

    family = "household"
    max_depth = 50.0  # wider than any house, so only misses are clipped
    eye_height = 1.1  # the manipulator's head, where its camera sits

    def __init__(
        self,
        episodes: Sequence[EpisodeSpec] | None = None,
        camera: CameraSpec | Mapping[str, Any] | str | None = None,
        sensors: Sequence[str] = ("rgb",),
        clock: str = "sim",
        setting: str | None = None,
        skills: str | None = None,
        render_mode: str | None = None,
        *,
        suite: str | Suite | None = None,
        max_depth: float | None = None,
        backend: str = DEFAULT_BACKEND,
        backend_args: Mapping[str, Any] | None = None,
        pose: PoseSettings | Mapping[str, Any] | None = None,
    ) -> None:
        """Create the env over ``episodes`` or a ``suite`` (a packaged name or a file).

        ``setting`` is ``privileged`` or ``sensor-only`` (what the skills may know; it decides
        the skills offered), ``skills`` the skills' success model (``default`` or
        ``perfect``); None takes the ``HouseholdSettings`` default. ``max_depth`` clips depth
        images (metres, default 50). ``backend`` names the simulator, ``backend_args`` its
        arguments. ``reset`` may pass an episode in its options.

        ``camera`` may be a preset or ``WxH[@HFOV][/PITCH]``; ``pose`` says how the pose
        sensor reads when ``sensors`` holds ``pose`` (``MissionEnv``).
        """
        settings = env_settings(HouseholdSettings, self.family, setting=setting, skills=skills)
        super().__init__(
            episodes,
            suite,
            lambda backend: HouseholdMission(backend, clock=clock, settings=settings),
            "manipulator",
            camera or CAMERA,
            sensors,
            max_depth,
            render_mode,
            backend=backend,
            backend_args=backend_args,
            pose=pose,
        )

    @property
    def skills(self) -> tuple[str, ...]:
        """Return the names of the skills the ``skill`` index chooses from, in order."""
        return tuple(s.name for s in offered(self.mission.setting))

    def _budget(self, episode: EpisodeSpec) -> float:
        return household_task(episode).max_rounds * self.mission.control_period

    def _rounds(self) -> int:
        """Return the largest round budget of the env's episodes."""
        return max(household_task(e).max_rounds for e in self.episodes)

    def _observation_space(self) -> spaces.Dict:
        """Return the four views' images, then the family's entries (no ``time_left``)."""
        h, w, n = self.camera.height, self.camera.width, len(VIEW_NAMES)
        images: dict[str, spaces.Space[Any]] = {
            "rgb": spaces.Box(0, 255, (n, h, w, 3), np.uint8),
            "depth": spaces.Box(0.0, self.max_depth, (n, h, w), np.float32),
            "semantic": spaces.Box(0, np.iinfo(np.int32).max, (n, h, w), np.int32),
        }
        chosen = {k: v for k, v in images.items() if Sensor(k) in self.sensors}
        return spaces.Dict({**chosen, **self._pose_space(), **self._own_spaces()})

    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        rounds = self._rounds()
        return {
            "task": text_space(TASK_LENGTH),
            "inventory": text_space(TEXT),
            "history": text_space(HISTORY_LENGTH),
            "feedback": text_space(TEXT),
            "code": text_space(2),
            "round": spaces.Discrete(rounds + 1),
            "rounds_left": spaces.Discrete(rounds + 1),
        }

    def _to_gym(self, observation: MissionObservation) -> dict[str, Any]:
        """Return the stacked views' images and the family's entries."""
        assert isinstance(observation, HouseholdObservation)
        out: dict[str, Any] = {}
        for sensor in image_sensors(self.sensors):
            out[sensor] = np.stack([getattr(v, sensor) for v in observation.views])
        if "depth" in out:
            out["depth"] = np.minimum(out["depth"], np.float32(self.max_depth))
        self._rgb = out["rgb"][0] if "rgb" in out else None  # render shows the front view
        return {**out, **self._pose_entry(observation), **self._own_observation(observation)}

    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        assert isinstance(observation, HouseholdObservation)
        return {
            "task": printable(observation.task, TASK_LENGTH),
            "inventory": printable(", ".join(observation.inventory), TEXT),
            "history": "\n".join(history_line(r) for r in observation.history),
            "feedback": printable(observation.feedback, TEXT),
            "code": observation.code or "",
            "round": observation.round,
            "rounds_left": observation.rounds_left,
        }

    def _action_space(self) -> spaces.Dict:
        return spaces.Dict(
            {
                "action": spaces.Discrete(len(VERBS)),
                "target": text_space(TEXT),
                "place": text_space(TEXT),
                "skill": spaces.Discrete(len(self.skills)),
            }
        )

    def text_choices(self) -> dict[str, tuple[str, ...]]:
        """Return the object names of the env's tasks as ``target`` and ``place`` choices."""
        names = sorted({name for e in self.episodes for name in household_task(e).objects})
        return {"target": tuple(names), "place": ("", *names)}

    def _to_action(self, action: dict[str, Any]) -> Action:
        """Return the Subtask; an empty place is none."""
        verb = pick(VERBS, action, "action")
        skill = pick(self.skills, action, "skill")
        place = str(action.get("place", "")) or None
        return Subtask(verb.value, str(action.get("target", "")), skill, place)

    def _reward(self, before: Mapping[str, str], draft: StepDraft) -> float:
        """Return 1 when this round ended the task in success, else 0."""
        return float(self.mission.done and self.mission.outcome == "success")

    def _ran_out(self) -> bool:
        return not self.mission.ended
