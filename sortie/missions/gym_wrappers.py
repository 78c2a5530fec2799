"""Wrappers that give sortie's gymnasium envs the spaces RL libraries take.

The envs' own spaces say what a mission is: texts (the clue, the instruction, a household
target), dict actions mixing numbers and choices, a scalar ``time_left``. Libraries such as
Stable-Baselines3 take dicts of ``Box``/``Discrete``/``MultiDiscrete`` observations and one
``Box``, ``Discrete`` or ``MultiDiscrete`` action. Two wrappers bridge the gap, in the manner
of Gymnasium's ``FilterObservation`` and ``FlattenObservation`` and of habitat-lab's
``HabGymWrapper`` (which keeps chosen observation keys and flattens a dict of actions):

- ``NumericObservation``: texts dropped (or encoded as byte codes), ``time_left`` of shape
  ``(1,)``, a household stack of four views split into one image entry per view, depth as an
  8-bit image of one channel (0..255 over ``max_depth``, as CNN policies take images); every
  other entry (RGB and goal images, ``semantic``, ``pose``, ``carrying``, rounds) as given.
- ``NumericAction``: the dict action becomes a ``MultiDiscrete``, one choice per entry in the
  action space's key order: a ``Discrete`` as is, a scalar ``Box`` from a few values, a text
  from the words the env offers (``MissionEnv.text_choices``), else empty.

``rl_ready`` applies both. The walk of a suite for evaluation lives in
``sortie.missions.gym_walk``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sortie.core.errors import ConfigError

TEXT_MODES = ("drop", "codes")
"""What ``NumericObservation`` does with a text: drop it, or give its characters' codes."""
IMAGE_DIMENSIONS = {"rgb": 3, "depth": 2, "semantic": 2}
"""Dimensions of one image of each sensor; one more means a stack of views."""


class NumericObservation(gym.ObservationWrapper[dict[str, Any], Any, Any]):
    """An env's dict observation with numeric entries only (see the module's docstring)."""

    def __init__(self, env: gym.Env[Any, Any], text: str = "drop") -> None:
        """Wrap ``env``; ``text`` is ``drop`` or ``codes`` (ASCII codes, 0 past the end).

        Raises:
            ConfigError: ``text`` is neither, or the env's observation space is not a Dict.
        """
        super().__init__(env)
        if text not in TEXT_MODES:
            raise ConfigError(f"NumericObservation: text {text!r}; allowed: {TEXT_MODES}")
        source = env.observation_space
        if not isinstance(source, spaces.Dict):
            raise ConfigError(f"NumericObservation: needs a Dict observation space, got {source}")
        self.text = text
        self.source = source
        entries: dict[str, spaces.Space[Any]] = {}
        for key, space in source.items():
            entries.update(_numeric_spaces(key, space, text))
        self.observation_space = spaces.Dict(entries)

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        """Return ``observation`` with the entries of this wrapper's space."""
        out: dict[str, Any] = {}
        for key, value in observation.items():
            out.update(_numeric_values(key, self.source[key], value, self.text))
        return out


def _numeric_spaces(key: str, space: spaces.Space[Any], text: str) -> dict[str, spaces.Space[Any]]:
    """Return the numeric entries that stand for entry ``key`` of ``space``."""
    if isinstance(space, spaces.Text):
        if text == "drop":
            return {}
        return {key: spaces.Box(0, 127, (space.max_length,), np.uint8)}
    if isinstance(space, spaces.Box) and space.shape == ():
        low, high = space.low.reshape(1), space.high.reshape(1)
        return {key: spaces.Box(low, high, (1,), space.dtype)}
    if _is_view_stack(key, space):
        assert isinstance(space, spaces.Box)
        one = spaces.Box(space.low[0], space.high[0], space.shape[1:], space.dtype)
        return {f"{key}_{i}": _image_space(key, one) for i in range(space.shape[0])}
    return {key: _image_space(key, space)}


def _numeric_values(key: str, space: spaces.Space[Any], value: Any, text: str) -> dict[str, Any]:
    """Return the values of the entries ``_numeric_spaces`` gives for ``key``."""
    if isinstance(space, spaces.Text):
        if text == "drop":
            return {}
        codes = np.zeros(space.max_length, np.uint8)
        raw = np.frombuffer(value.encode("ascii", "replace"), np.uint8)[: space.max_length]
        codes[: len(raw)] = raw
        return {key: codes}
    if isinstance(space, spaces.Box) and space.shape == ():
        return {key: np.asarray(value, space.dtype).reshape(1)}
    if _is_view_stack(key, space) or key == "depth":
        assert isinstance(space, spaces.Box)
        images = dict(enumerate(value)) if _is_view_stack(key, space) else {None: value}
        high = float(space.high.max())
        return {_name(key, i): _image_value(key, high, v) for i, v in images.items()}
    return {key: value}


def _name(key: str, view: int | None) -> str:
    """Return the entry name of one view of ``key`` (``rgb_0``), or ``key`` for no stack."""
    return key if view is None else f"{key}_{view}"


def _image_space(key: str, space: spaces.Space[Any]) -> spaces.Space[Any]:
    """Return the space of one image entry: depth as an 8-bit image, the others as given."""
    if key != "depth" or not isinstance(space, spaces.Box):
        return space
    return spaces.Box(0, 255, (*space.shape, 1), np.uint8)


def _image_value(key: str, high: float, value: Any) -> Any:
    """Return one image entry's value: depth (metres up to ``high``) scaled to 0..255."""
    if key != "depth":
        return value
    return np.rint(np.asarray(value) * (255.0 / high)).astype(np.uint8)[..., np.newaxis]


def _is_view_stack(key: str, space: spaces.Space[Any]) -> bool:
    """Return whether entry ``key`` is a stack of one sensor's views (household's four)."""
    dimensions = IMAGE_DIMENSIONS.get(key)
    if dimensions is None or not isinstance(space, spaces.Box):
        return False
    return len(space.shape) == dimensions + 1


class NumericAction(gym.ActionWrapper[Any, np.ndarray, dict[str, Any]]):
    """An env's dict action as a ``MultiDiscrete``, one choice per entry (module docstring)."""

    def __init__(
        self,
        env: gym.Env[Any, Any],
        bins: int = 5,
        values: Mapping[str, Sequence[float]] | None = None,
        texts: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Wrap ``env``.

        Args:
            env: a sortie env (or a wrapper of one) with a Dict action space.
            bins: how many evenly spaced values, bounds included, stand for a scalar ``Box``.
            values: a scalar ``Box`` entry's own values instead (within its bounds).
            texts: a text entry's words instead of the env's ``text_choices()``.

        Raises:
            ConfigError: an entry this wrapper cannot turn into choices, or a bad value.
        """
        super().__init__(env)
        source = env.action_space
        if not isinstance(source, spaces.Dict):
            raise ConfigError(f"NumericAction: needs a Dict action space, got {source}")
        if bins < 1:
            raise ConfigError(f"NumericAction: bins is {bins}; allowed: 1 or more")
        offered = texts if texts is not None else _text_choices(env)
        self.choices: dict[str, tuple[Any, ...]] = {
            key: _choices(key, space, bins, (values or {}).get(key), offered.get(key))
            for key, space in source.items()
        }
        self.action_space = spaces.MultiDiscrete([len(c) for c in self.choices.values()])

    def action(self, action: np.ndarray) -> dict[str, Any]:
        """Return the env's dict action that the choices ``action`` stand for."""
        indices = np.asarray(action).reshape(-1)
        if indices.shape != (len(self.choices),):
            raise ConfigError(
                f"NumericAction: action {action!r} has {indices.size} choices; "
                f"allowed: one per entry of {list(self.choices)}"
            )
        return {
            key: options[int(i)]
            for (key, options), i in zip(self.choices.items(), indices, strict=True)
        }


def _text_choices(env: gym.Env[Any, Any]) -> Mapping[str, Sequence[str]]:
    """Return the env's words for its text action entries (none if it offers none)."""
    offer = getattr(env.unwrapped, "text_choices", None)
    return offer() if offer is not None else {}


def _choices(
    key: str,
    space: spaces.Space[Any],
    bins: int,
    values: Sequence[float] | None,
    words: Sequence[str] | None,
) -> tuple[Any, ...]:
    """Return the values that the choices of action entry ``key`` stand for."""
    if isinstance(space, spaces.Discrete):
        return tuple(range(int(space.start), int(space.start + space.n)))
    if isinstance(space, spaces.Text):
        return tuple(words) if words else ("",)
    if isinstance(space, spaces.Box) and space.shape == ():
        low, high = float(space.low), float(space.high)
        chosen = list(values) if values is not None else np.linspace(low, high, bins).tolist()
        outside = [v for v in chosen if not low <= v <= high]
        if not chosen or outside:
            raise ConfigError(
                f"NumericAction: values for {key!r} are {chosen}; allowed: one or more "
                f"numbers within [{low:g}, {high:g}]"
            )
        return tuple(np.asarray(v, space.dtype) for v in chosen)
    raise ConfigError(
        f"NumericAction: action entry {key!r} is {space}; allowed: Discrete, a scalar Box, Text"
    )


def rl_ready(
    env: gym.Env[Any, Any],
    *,
    text: str = "drop",
    bins: int = 5,
    values: Mapping[str, Sequence[float]] | None = None,
    texts: Mapping[str, Sequence[str]] | None = None,
) -> gym.Env[dict[str, Any], np.ndarray]:
    """Return ``env`` with numeric observations and a ``MultiDiscrete`` action (both above)."""
    return NumericAction(NumericObservation(env, text), bins, values, texts)
