"""The gymnasium face of a rescue mission: ``RescueEnv``.

The env wraps the mission runtime (the same one the runner uses) and translates between
gymnasium's spaces and sortie's records. Observations hold the requested images, the clue,
the reference image, whether the agent carries the casualty and the time left; never a
position. The reward is 1 each time a stage is completed (4 in a successful episode).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sortie.backends import BACKENDS
from sortie.core.actions import Action, Interact, Interaction, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import MissionObservation, Sensor
from sortie.missions.rescue.mission import RescueMission
from sortie.sim.camera import CameraSpec

PITCHES = (None, 0.0, 30.0, -30.0)
"""Pitch choices of the action space: keep, level, up 30, down 30."""
INTERACTIONS = (None, Interaction.GRAB, Interaction.DROP, Interaction.OPEN_DOOR)
CLUE_LENGTH = 2000


class RescueEnv(gym.Env[dict[str, Any], dict[str, Any]]):
    """RescueBench episodes on the embedded simulator, as a gymnasium environment."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 5}

    def __init__(self, episodes: Sequence[EpisodeSpec], camera: CameraSpec | None = None,
                 sensors: Sequence[str] = ("rgb", "depth", "semantic"), clock: str = "sim",
                 triggers: str = "assisted", render_mode: str | None = None) -> None:
        """Create the env over ``episodes`` (``reset`` may also pass one in its options)."""
        if not episodes:
            raise ConfigError("RescueEnv needs at least one episode")
        self.episodes = list(episodes)
        self.camera = camera or CameraSpec()
        # Through the registry: missions name backends, they never import one.
        self.backend = BACKENDS.get("embedded")(camera=self.camera, sensors=sensors)
        self.mission = RescueMission(self.backend, clock=clock, triggers=triggers)
        self.render_mode = render_mode
        self.sensors = self.backend.sensors
        self.observation_space = self._observation_space()
        self.action_space = spaces.Dict({
            "turn": spaces.Box(-30.0, 30.0, (), np.float32),
            "speed": spaces.Box(-1.5, 1.5, (), np.float32),
            "pitch": spaces.Discrete(len(PITCHES)),
            "interact": spaces.Discrete(len(INTERACTIONS)),
        })  # fmt: skip

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: ``options["episode"]``, else one drawn from the env's list."""
        super().reset(seed=seed)
        episode = (options or {}).get("episode")
        if episode is None:
            episode = self.episodes[int(self.np_random.integers(len(self.episodes)))]
        if not isinstance(episode, EpisodeSpec):
            raise ConfigError(f"options['episode'] must be an EpisodeSpec, got "
                              f"{type(episode).__name__}")  # fmt: skip
        episode_seed = int(self.np_random.integers(2**31 - 1))
        observation = self.mission.reset(episode, episode_seed)
        self._done_stages = 0
        return self._to_gym(observation), {"episode_id": episode.episode_id}

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool, bool,
                                                    dict[str, Any]]:
        """Apply one action; reward 1 per stage completed in this step."""
        observation, record = self.mission.step(_to_action(action))
        done_now = sum(status == "done" for status in record.stages.values())
        reward, self._done_stages = float(done_now - self._done_stages), done_now
        terminated = self.mission.done and self.mission.failure is None
        truncated = self.mission.done and not terminated
        info = {"stages": record.stages, "events": [e.kind for e in record.events],
                "failure_reason": self.mission.failure}  # fmt: skip
        return self._to_gym(observation), reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
        """Return what the agent's camera sees as an RGB array."""
        if self.render_mode != "rgb_array":
            return None
        pose = self.backend.pose()
        return self.backend.render_view(pose.x, pose.y, pose.z + 1.6, pose.yaw, 0.0)

    def close(self) -> None:
        """Release the simulator."""
        self.backend.close()

    def _observation_space(self) -> spaces.Dict:
        h, w = self.camera.height, self.camera.width
        images: dict[str, spaces.Space[Any]] = {
            "rgb": spaces.Box(0, 255, (h, w, 3), np.uint8),
            "depth": spaces.Box(0.0, np.inf, (h, w), np.float32),
            "semantic": spaces.Box(0, np.iinfo(np.int32).max, (h, w), np.int32),
        }
        chosen = {k: v for k, v in images.items() if Sensor(k) in self.sensors}
        return spaces.Dict({
            **chosen,
            "reference": spaces.Box(0, 255, (h, w, 3), np.uint8),
            "clue": spaces.Text(CLUE_LENGTH, min_length=0, charset=string.printable),
            "carrying": spaces.Discrete(2),
            "time_left": spaces.Box(0.0, np.inf, (), np.float32),
        })  # fmt: skip

    def _to_gym(self, observation: MissionObservation) -> dict[str, Any]:
        brief = self.mission.brief
        assert brief is not None
        frames = observation.frames
        out: dict[str, Any] = {k: getattr(frames, k) for k in ("rgb", "depth", "semantic")
                               if Sensor(k) in self.sensors}  # fmt: skip
        blank = np.zeros((self.camera.height, self.camera.width, 3), np.uint8)
        out["reference"] = brief.images.get("reference", blank).copy()  # a new array per call
        out["clue"] = "".join(c for c in brief.clue if c in string.printable)[:CLUE_LENGTH]
        out["carrying"] = int(observation.carrying)
        out["time_left"] = np.float32(observation.time_left)
        return out


def _to_action(action: dict[str, Any]) -> Action:
    """Turn a gymnasium action into sortie's: an interaction if one is chosen, else a Move."""
    interaction = INTERACTIONS[int(action.get("interact", 0))]
    if interaction is not None:
        return Interact(interaction)
    return Move(float(action["turn"]), float(action["speed"]),
                PITCHES[int(action.get("pitch", 0))])  # fmt: skip
