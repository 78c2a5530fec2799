"""The gymnasium face of a rescue mission: ``RescueEnv`` (id ``sortie/Rescue-v1``).

Observations hold the requested images, the clue, the goal images (the casualty's reference,
the stretcher and the ambulance; the reference only with ``goal_images="rescuebench"``),
whether the agent carries the casualty and the time left; a position only with the ``pose``
sensor. Actions turn,
walk, set the camera pitch or try an interaction. The reward is 1 each time a stage is
completed (4 in a successful episode). What every family's env shares lives in
``sortie.missions.gym_base``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from sortie.backends.catalog import DEFAULT_BACKEND
from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.observation import MissionObservation
from sortie.core.records_io import Suite
from sortie.core.run_config import PoseSettings
from sortie.core.step_lines import StepDraft
from sortie.missions.gym_base import MissionEnv, env_settings, pick, printable, text_space
from sortie.missions.rescue.goals import goal_names
from sortie.missions.rescue.mission import RescueMission
from sortie.missions.rescue.settings import RescueSettings
from sortie.missions.rescue.spec import rescue_data
from sortie.sim.camera import CameraSpec

PITCHES = (None, 0.0, 30.0, -30.0)
"""Pitch choices of the action space: keep, level, up 30, down 30."""
INTERACTIONS = (None, Interaction.GRAB, Interaction.DROP, Interaction.OPEN_DOOR)
CLUE_LENGTH = 2000


class RescueEnv(MissionEnv[RescueMission]):
    """RescueBench episodes on the embedded simulator, as a gymnasium environment."""

    family = "rescue"
    max_depth = 200.0
    eye_height = 1.6  # the walker's eyes, where its camera sits

    def __init__(
        self,
        episodes: Sequence[EpisodeSpec] | None = None,
        camera: CameraSpec | Mapping[str, Any] | str | None = None,
        sensors: Sequence[str] = ("rgb", "depth", "semantic"),
        clock: str = "sim",
        triggers: str | None = None,
        goal_images: str | None = None,
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
        ``triggers`` and ``goal_images`` are the rescue settings (``RescueSettings``; None:
        their defaults, assisted and every-stage).

        ``reset`` may also pass an episode in its options. ``max_depth`` clips depth images
        (metres, default 200).

        ``camera`` may be a preset or ``WxH[@HFOV][/PITCH]``; ``pose`` says how the pose
        sensor reads when ``sensors`` holds ``pose`` (``MissionEnv``).
        """
        settings = env_settings(
            RescueSettings, self.family, triggers=triggers, goal_images=goal_images
        )
        self.goals = goal_names(settings.goal_images)
        super().__init__(
            episodes,
            suite,
            lambda backend: RescueMission(backend, clock=clock, settings=settings),
            "walker",
            camera or CameraSpec(),
            sensors,
            max_depth,
            render_mode,
            backend=backend,
            backend_args=backend_args,
            pose=pose,
        )

    def _budget(self, episode: EpisodeSpec) -> float:
        return rescue_data(episode).budget_s

    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        h, w = self.camera.height, self.camera.width
        return {
            **{name: spaces.Box(0, 255, (h, w, 3), np.uint8) for name in self.goals},
            "clue": text_space(CLUE_LENGTH),
            "carrying": spaces.Discrete(2),
        }

    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        brief = self.mission.brief
        assert brief is not None
        blank = np.zeros((self.camera.height, self.camera.width, 3), np.uint8)
        return {
            # A new array per call; a goal the episode has not (a room's ambulance) is black.
            **{name: brief.images.get(name, blank).copy() for name in self.goals},
            "clue": printable(brief.clue, CLUE_LENGTH),
            "carrying": int(observation.carrying),
        }

    def _action_space(self) -> spaces.Dict:
        return spaces.Dict(
            {
                "turn": spaces.Box(-30.0, 30.0, (), np.float32),
                "speed": spaces.Box(-1.5, 1.5, (), np.float32),
                "pitch": spaces.Discrete(len(PITCHES)),
                "interact": spaces.Discrete(len(INTERACTIONS)),
            }
        )

    def _to_action(self, action: dict[str, Any]) -> Action:
        """Return an interaction if one is chosen, else a Move."""
        interaction = pick(INTERACTIONS, action, "interact")
        if interaction is not None:
            return Interact(interaction)
        return Move(float(action["turn"]), float(action["speed"]), pick(PITCHES, action, "pitch"))

    def _reward(self, before: Mapping[str, str], draft: StepDraft) -> float:
        """Return 1 per stage that was completed in this step."""
        return float(
            sum(
                status == "done" and before.get(name) != "done"
                for name, status in draft.stages.items()
            )
        )

    def _ran_out(self) -> bool:
        # A rescue fails only when its budget is spent (drop_out_of_range is judged then too).
        return self.mission.failure is not None
