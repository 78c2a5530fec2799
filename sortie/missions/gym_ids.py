"""The gymnasium ids of sortie's envs, registered on ``import sortie``.

One id a family, ``sortie/<Name>-v1``; registering loads nothing: ``gymnasium.make`` calls
``make_env``, which reads the family's descriptor and builds its env (``Family.env``).
(Gymnasium 1.x has no plugin entry point that would find them without an import;
``gymnasium.make("sortie:sortie/Rescue-v1")`` imports sortie itself.)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sortie.core.errors import ConfigError
from sortie.core.registry import load_path
from sortie.missions.registry import FAMILIES


def env_id(family: str) -> str:
    """Return the gymnasium id of ``family``'s env, e.g. ``sortie/Rescue-v1``."""
    return f"sortie/{family.capitalize()}-v1"


def env_ids() -> dict[str, str]:
    """Return gymnasium id -> family of every registered family."""
    return {env_id(name): name for name in FAMILIES.in_order()}


def register_envs() -> None:
    """Register every family's env id with gymnasium (a second call changes nothing)."""
    for name, family in env_ids().items():
        if name not in gym.registry:
            gym.register(name, entry_point=f"{__name__}:make_env", kwargs={"family": family})


def make_env(family: str, **kwargs: Any) -> gym.Env[Any, Any]:
    """Build ``family``'s env with ``kwargs`` (what ``gymnasium.make`` calls).

    Raises:
        ConfigError: the family has no gymnasium env.
    """
    entry = FAMILIES.get(family).env
    if entry is None:
        raise ConfigError(f"the {family} family has no gymnasium env")
    env: gym.Env[Any, Any] = load_path(entry)(**kwargs)
    return env
