"""Loading an optional compiled module: absent when the build had no C compiler, or switched off."""

from __future__ import annotations

import os
from importlib import import_module
from types import ModuleType

PACKETS_SWITCH = "SORTIE_PACKETS"
"""Set to 0 to keep every cast on embreex and the coincident-face pairs in numpy (for
comparisons, or if ``sortie.sim._packets`` misbehaves); read by ``packets`` and ``exact``."""


def optional_module(name: str, switch: str) -> ModuleType | None:
    """Return the compiled module ``name``, or None when it is not built or ``switch`` is 0.

    ``switch`` names an environment variable; 0 keeps the numpy (or ray-cast) form, for
    comparisons or if the module misbehaves.
    """
    if os.environ.get(switch, "1") == "0":
        return None
    try:
        return import_module(name)
    except ImportError:
        return None
