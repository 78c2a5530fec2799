"""The mission families by name, and the check of an episode against its family.

One line a family: its descriptor (``missions/<name>/family.py``), imported when first asked.
A package outside sortie adds a family with an entry point in group ``sortie.families``
(``name = "module:FAMILY"``, docs/families.md); sortie declares its own there too, so that a
record's words are found by the core layer alone (``sortie.core.vocabulary``).
"""

from __future__ import annotations

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.registry import Registry
from sortie.core.vocabulary import ENTRY_POINTS, WORDS
from sortie.missions.family import Family

FAMILIES: Registry[Family] = Registry("mission family")
FAMILIES.add("rescue", "sortie.missions.rescue.family:RESCUE")
FAMILIES.add("aerial", "sortie.missions.aerial.family:AERIAL")
FAMILIES.add("household", "sortie.missions.household.family:HOUSEHOLD")
FAMILIES.add_entry_points(ENTRY_POINTS)


def _load_all() -> None:
    """Import every family's descriptor, so that each declares its words.

    A family that fails to import is left out here; asking for it by name says why.
    """
    for name in FAMILIES.names():
        try:
            FAMILIES.get(name)
        except Exception:  # noqa: BLE001, S112  (one broken family must not hide the others)
            continue


def _load_one(name: str) -> bool:
    """Import family ``name``'s descriptor, if it is a family; return whether it is one."""
    if name not in FAMILIES.names():
        return False
    FAMILIES.get(name)
    return True


WORDS.add_finder(_load_all)  # families known without an entry point (an uninstalled checkout)
WORDS.add_family_finder(_load_one)


def check_episode(spec: EpisodeSpec) -> None:
    """Raise ConfigError unless ``spec``'s family exists and its mission data suits it."""
    if spec.family not in FAMILIES:
        known = FAMILIES.miss_message(spec.family)
        raise ConfigError(f"episode {spec.episode_id}: family: {known}")
    try:
        FAMILIES.get(spec.family).check(spec)
    except ConfigError:
        other = _fitting_family(spec)
        if other is None:
            raise
        raise ConfigError(
            f"episode {spec.episode_id}: family is {spec.family!r}, but its "
            f"mission data is a {other} mission's; fix the family label"
        ) from None


def _fitting_family(spec: EpisodeSpec) -> str | None:
    """Return another family whose check ``spec``'s mission data passes, if there is one."""
    for name in FAMILIES.names():
        if name == spec.family:
            continue
        try:
            FAMILIES.get(name).check(spec.model_copy(update={"family": name}))
        except ConfigError:
            continue
        return name
    return None
