"""What the gymnasium envs of every mission family share.

A family's env (``RescueEnv``, ``AerialEnv``) drives that family's mission runtime, the same
one the runner uses, on the embedded simulator. This base owns what does not depend on the
family: which episodes the env draws from (a packaged suite's, a suite file's or a list)
and which one a reset starts (a seed picks episode ``seed % n``, so a vector env's copies
differ), the backend, the image spaces, the time left, reset and step, render and close.
A family adds its own observation entries, its action space and how an action becomes
sortie's, and its reward. Every observation space is bounded: depth is clipped to
``max_depth`` metres, the time left lies within the largest budget of the env's episodes,
texts have a maximum length.
The ids they are registered under are in ``sortie.missions.gym_ids``.
"""

from __future__ import annotations

import math
import string
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sortie.backends.base import Backend
from sortie.backends.catalog import DEFAULT_BACKEND, build_backend, check_backend
from sortie.core.actions import Action
from sortie.core.episode import MAX_COORDINATE, EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import MissionObservation, Sensor, image_sensors
from sortie.core.records import StepRecord
from sortie.core.records_io import Suite
from sortie.core.run_config import PoseSettings
from sortie.core.step_lines import StepDraft
from sortie.missions.family import FamilySettings, parse_settings
from sortie.missions.loading import load_suite
from sortie.missions.pose_sensor import pose_settings_for
from sortie.missions.registry import FAMILIES
from sortie.missions.runtime import MissionRuntime
from sortie.sim.camera import CameraSpec

TEXT_CHARSET = string.printable
"""Characters a text observation or action may hold (others are dropped from observations)."""
_TEXT_CHARACTERS = frozenset(TEXT_CHARSET)
R = TypeVar("R", bound=MissionRuntime)
S = TypeVar("S", bound=FamilySettings)


def printable(text: str, max_length: int) -> str:
    """Return ``text`` without the characters a text space refuses, cut to ``max_length``."""
    if _TEXT_CHARACTERS.issuperset(text):  # the usual text, asked every step: one C call
        return text[:max_length]
    return "".join(c for c in text if c in TEXT_CHARSET)[:max_length]


def env_settings(model: type[S], family: str, **keywords: Any) -> S:
    """Return ``family``'s settings ``model`` built once from an env's keywords.

    A keyword left at None takes the model's default (the env's signature writes none).

    Raises:
        ParameterError: a value the model refuses, naming the keyword and what is allowed.
    """
    given = {name: value for name, value in keywords.items() if value is not None}
    return parse_settings(model, given, family, f"the {family} env's keyword")


def pick(choices: Sequence[Any], action: Mapping[str, Any], key: str, default: int = 0) -> Any:
    """Return ``choices[action[key]]``, or raise naming the key, the value and the range."""
    value = action.get(key, default)
    index = int(value)
    if not 0 <= index < len(choices):
        raise ConfigError(f"action[{key!r}] is {value!r}; allowed: 0..{len(choices) - 1}")
    return choices[index]


def text_space(max_length: int) -> spaces.Text:
    """Return a text space of up to ``max_length`` printable characters (empty allowed)."""
    return spaces.Text(max_length, min_length=0, charset=TEXT_CHARSET)


class MissionEnv(gym.Env[dict[str, Any], dict[str, Any]], ABC, Generic[R]):
    """A mission family's episodes on the embedded simulator, as a gymnasium environment.

    Subclasses set ``family`` and ``max_depth``, pass the runtime to build, and provide the
    hooks below. ``terminated`` means the episode ended by itself (success, or the agent
    ended it); ``truncated`` means its budget ran out first.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 5}
    family = ""
    max_depth = 200.0
    """Default clip of depth images, metres (a miss reads as this)."""
    eye_height = 0.0
    """Height of the camera above the body's pose, metres (for ``render`` without RGB)."""

    def __init__(
        self,
        episodes: Sequence[EpisodeSpec] | None,
        suite: str | Suite | None,
        runtime: Callable[[Backend], R],
        body: str,
        camera: CameraSpec | Mapping[str, Any] | str,
        sensors: Sequence[str],
        max_depth: float | None,
        render_mode: str | None,
        *,
        backend: str = DEFAULT_BACKEND,
        backend_args: Mapping[str, Any] | None = None,
        pose: PoseSettings | Mapping[str, Any] | None = None,
    ) -> None:
        """Pick the episodes, build the backend (by its name) and runtime, then the spaces.

        ``camera`` may name a preset or read ``WxH[@HFOV][/PITCH]`` (what it does not give
        keeps the family's); ``pose`` says how the pose sensor reads when ``sensors`` holds
        ``pose`` (None: exact, in the world frame).
        """
        self.render_mode = _render_mode(type(self).__name__, render_mode, self.metadata)
        self.episodes = _episodes(self.family, episodes, suite)
        self.camera = self._camera(camera)
        self.max_depth = float(max_depth if max_depth is not None else self.max_depth)
        if not 0 < self.max_depth < math.inf:
            raise ConfigError(
                f"{type(self).__name__}: max_depth {max_depth} is not a finite number of metres > 0"
            )
        # Through the registry: missions name backends, they never import one.
        worlds = {e.world.builder for e in self.episodes}
        check_backend(backend, FAMILIES.get(self.family).needs(sensors, worlds))
        images = image_sensors(sensors)
        self.backend = build_backend(
            backend, backend_args or {}, body=body, sensors=images, camera=self.camera
        )
        self.mission: R = runtime(self.backend)
        self.mission.pose_settings = pose_settings_for(type(self).__name__, sensors, pose)
        self.sensors = self.backend.sensors | ({Sensor.POSE} if Sensor.POSE in sensors else set())
        self.budget = max(self._budget(e) for e in self.episodes)
        self.observation_space = self._observation_space()
        self.action_space = self._action_space()
        self._rgb: np.ndarray | None = None
        self._draft: StepDraft | None = None

    # --- what a family provides -------------------------------------------------------
    @abstractmethod
    def _budget(self, episode: EpisodeSpec) -> float:
        """Return the mission clock budget of ``episode``, seconds."""

    @abstractmethod
    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        """Return the family's observation entries besides images and time left."""

    @abstractmethod
    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        """Return the values of the entries of ``_own_spaces`` (new objects every call)."""

    @abstractmethod
    def _action_space(self) -> spaces.Dict:
        """Return the family's action space."""

    @abstractmethod
    def _to_action(self, action: dict[str, Any]) -> Action:
        """Turn a gymnasium action into sortie's."""

    @abstractmethod
    def _reward(self, before: Mapping[str, str], draft: StepDraft) -> float:
        """Return the step's reward from the stage statuses before it and its record's draft.

        The draft holds the step's values as the runtime made them (``stages``, ``events``...,
        checked); ``draft.record()`` builds the record's model, at a cost.
        """

    @abstractmethod
    def _ran_out(self) -> bool:
        """Return whether the episode (which has ended) ended because its budget ran out."""

    # --- the gymnasium API ------------------------------------------------------------
    @property
    def last_record(self) -> StepRecord | None:
        """Return the mission's record of the last step (what a sortie record's step line holds).

        Built on first asking, from the values the step was checked with: a step builds none.
        None before the first step of an episode.
        """
        return None if self._draft is None else self._draft.record()

    @property
    def last_line(self) -> str | None:
        """Return the last step's line as a sortie record holds it (``last_record``'s JSON).

        Written once, when the step was checked, without building the record. None before
        the first step of an episode.
        """
        return None if self._draft is None else self._draft.line().decode()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: ``options["episode"]``, else one of the env's list.

        A reset given a seed starts episode ``seed % n`` of the env's ``n`` episodes, so the
        copies of a vector env, seeded ``s, s+1, ...``, start different episodes; a reset
        without one draws an episode with the env's random generator. The episode's own seed
        is drawn from the env's generator too, unless ``options["episode_seed"]`` gives it
        (a recorded walk gives each episode the seed ``sortie run`` would).
        """
        super().reset(seed=seed)
        episode = (options or {}).get("episode")
        if episode is None:
            episode = self._pick(seed)
        self._check_episode(episode)
        episode_seed = int(self.np_random.integers(2**31 - 1))
        episode_seed = int((options or {}).get("episode_seed", episode_seed))
        self._draft = None
        observation = self.mission.reset(episode, episode_seed)
        self._stages = self.mission.tracker.statuses()
        return self._to_gym(observation), {"episode_id": episode.episode_id}

    def step(
        self, action: dict[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Apply one action; return the observation, reward, terminated, truncated, info."""
        observation, draft = self.mission.advance(self._to_action(action))
        # Its values checked as its record's model would, as the episode loop does: writing
        # the line refuses what the model refuses (a NaN the backend reported raises here).
        draft.line()
        self._draft = draft
        stages = draft.stages
        reward, self._stages = self._reward(self._stages, draft), dict(stages)
        truncated = self.mission.done and self._ran_out()
        terminated = self.mission.done and not truncated
        outcome = self.mission.outcome
        info = {
            "stages": stages,
            "events": [e.kind for e in draft.events],
            "outcome": outcome.value if outcome else None,
            "failure_reason": self.mission.failure,
        }
        return self._to_gym(observation), reward, terminated, truncated, info

    def _pick(self, seed: int | None) -> EpisodeSpec:
        """Return episode ``seed % n`` for a seeded reset, else one drawn at random."""
        # Drawn in both cases, so the episode's own seed (the next draw) stays what it was.
        drawn = int(self.np_random.integers(len(self.episodes)))
        return self.episodes[seed % len(self.episodes) if seed is not None else drawn]

    def text_choices(self) -> dict[str, tuple[str, ...]]:
        """Return, per text action entry, the words a discrete choice may pick (none here).

        ``sortie.missions.gym_wrappers.NumericAction`` offers these in place of free text; an
        entry not named here is sent empty.
        """
        return {}

    def render(self) -> np.ndarray | None:
        """Return the agent's last RGB image (or, without that sensor, a view from its pose)."""
        if self.render_mode != "rgb_array":
            return None
        if self._rgb is not None:
            return self._rgb.copy()
        pose = self.backend.pose()
        return self.backend.render_view(
            pose.x, pose.y, pose.z + self.eye_height, pose.yaw, self.camera.pitch
        )

    def close(self) -> None:
        """Release the simulator."""
        self.backend.close()

    # --- shared parts ---------------------------------------------------------------------
    def _camera(self, camera: CameraSpec | Mapping[str, Any] | str) -> CameraSpec:
        """Return the env's camera: as given, or a preset or text over the family's."""
        if isinstance(camera, CameraSpec):
            return camera
        # Text or fields alike: what is not given keeps the family's camera.
        where = f"{type(self).__name__}: camera"
        return CameraSpec(**FAMILIES.get(self.family).own_camera(camera, where))

    def _pose_space(self) -> dict[str, spaces.Space[Any]]:
        """Return the pose entry's space (``x, y, z, yaw``), for an env that reads the pose."""
        if Sensor.POSE not in self.sensors:
            return {}
        bound = np.array([MAX_COORDINATE] * 3 + [180.0], np.float32)
        return {"pose": spaces.Box(-bound, bound, (4,), np.float32)}

    def _pose_entry(self, observation: MissionObservation) -> dict[str, Any]:
        """Return the pose entry's value, for an env that reads the pose.

        Only then: a mission may tell any agent its pose (an aerial ``show_pose`` episode),
        but an entry its space does not declare would break the space's contract.
        """
        if Sensor.POSE not in self.sensors or observation.pose is None:
            return {}
        return {"pose": np.array(observation.pose.as_list(), np.float32)}

    def _observation_space(self) -> spaces.Dict:
        h, w = self.camera.height, self.camera.width
        images: dict[str, spaces.Space[Any]] = {
            "rgb": spaces.Box(0, 255, (h, w, 3), np.uint8),
            "depth": spaces.Box(0.0, self.max_depth, (h, w), np.float32),
            "semantic": spaces.Box(0, np.iinfo(np.int32).max, (h, w), np.int32),
        }
        chosen = {k: v for k, v in images.items() if Sensor(k) in self.sensors}
        time_left = spaces.Box(0.0, self.budget, (), np.float32)
        own = self._own_spaces()
        return spaces.Dict({**chosen, **self._pose_space(), **own, "time_left": time_left})

    def _to_gym(self, observation: MissionObservation) -> dict[str, Any]:
        frames = observation.frames
        out: dict[str, Any] = {k: getattr(frames, k) for k in image_sensors(self.sensors)}
        if "depth" in out:
            out["depth"] = np.minimum(out["depth"], np.float32(self.max_depth))
        self._rgb = out.get("rgb")
        out.update(self._pose_entry(observation))
        out.update(self._own_observation(observation))
        out["time_left"] = np.array(observation.time_left, np.float32)  # 0-d, as Box expects
        return out

    def _check_episode(self, episode: object) -> None:
        if not isinstance(episode, EpisodeSpec):
            raise ConfigError(
                f"options['episode'] must be an EpisodeSpec, got {type(episode).__name__}"
            )
        if episode.family == self.family and self._budget(episode) > self.budget:
            raise ConfigError(
                f"episode {episode.episode_id}: budget {self._budget(episode):g} "
                f"s exceeds the {self.budget:g} s this env's time_left space "
                f"allows; create the env with that episode"
            )


def _render_mode(env: str, mode: str | None, metadata: Mapping[str, Any]) -> str | None:
    """Return ``mode`` if the env renders that way, or raise naming the modes it has."""
    allowed = metadata["render_modes"]
    if mode is not None and mode not in allowed:
        raise ConfigError(
            f"{env}: render_mode {mode!r} is not supported; allowed: None, "
            f"{', '.join(map(repr, allowed))} (render() then returns the image to show)"
        )
    return mode


def _episodes(
    family: str, episodes: Sequence[EpisodeSpec] | None, suite: str | Suite | None
) -> list[EpisodeSpec]:
    """Return the env's episodes: the list, or the suite's (a packaged name or a file)."""
    if episodes is not None and suite is None:
        chosen = list(episodes)
    elif episodes is None and suite is not None:
        chosen = (suite if isinstance(suite, Suite) else load_suite(suite)).episodes
    else:
        raise ConfigError(
            f"the {family} env needs exactly one of episodes or suite (a "
            f"packaged suite name, e.g. '{family}-smoke-v1', or a file)"
        )
    if not chosen:
        raise ConfigError(f"the {family} env needs at least one episode")
    others = sorted({e.family for e in chosen} - {family})
    if others:
        raise ConfigError(
            f"the {family} env runs {family} episodes only; got {', '.join(others)} episodes"
        )
    return list(chosen)
