"""The gymnasium ids of sortie's envs, registered on ``import sortie``.

Registration is cheap: it names each env's module and class, which load only when
``gymnasium.make`` builds one. (Gymnasium 1.x has no plugin entry point that would find
them without an import; ``gymnasium.make("sortie:sortie/Rescue-v1")`` imports sortie itself.)
"""

from __future__ import annotations

import gymnasium as gym

ENV_IDS = {
    "sortie/Rescue-v1": "sortie.missions.rescue.env:RescueEnv",
    "sortie/Aerial-v1": "sortie.missions.aerial.env:AerialEnv",
    "sortie/Household-v1": "sortie.missions.household.env:HouseholdEnv",
}
"""Gymnasium id -> entry point of each family's env."""


def register_envs() -> None:
    """Register every id of ``ENV_IDS`` with gymnasium (a second call changes nothing)."""
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=entry_point)
