import subprocess
import sys
import warnings

import gymnasium

from sortie.missions.gym_ids import env_ids, register_envs


def test_ids_are_registered_on_import_without_loading_the_envs():
    """After `import sortie` every id is registered and no env module is imported yet."""
    code = (
        "import sys, gymnasium, sortie; "
        "print(sorted(k for k in gymnasium.registry if k.startswith('sortie/')), "
        "any(m.startswith('sortie.') and m.endswith('.env') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ("['sortie/Aerial-v1', 'sortie/Household-v1', 'sortie/Rescue-v1'] False")


def test_registering_again_changes_nothing():
    """A second register_envs call neither warns nor replaces the registered specs."""
    before = {env_id: gymnasium.registry[env_id] for env_id in env_ids()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_envs()
    assert all(gymnasium.registry[env_id] is spec for env_id, spec in before.items())
