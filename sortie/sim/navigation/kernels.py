"""The compiled loops of a graph build (``_grid.c``), when they are built.

``surfaces.crowded`` and ``clearance.near_hits`` ask, for every surface, whether anything lies
in the walker's body: numpy answers by gathering each neighbour's hits into arrays the size of
the whole grid, pass after pass, and by pairing points in k-d trees; the extension loops over
the neighbours of one surface at a time. ``clearance.probe`` has it make the 24 probe rays of
each surface and read their hits without intermediate arrays, and ``links.link_neighbours``
has it find the linked pairs. It rounds and compares as the
numpy forms do, so graphs are the same either way (``tests/sim/test_navigation_kernels.py``).
Without a C compiler at install, or with ``SORTIE_GRID=0`` in the environment, numpy does it.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

from sortie.sim.compiled import optional_module

ENV_SWITCH = "SORTIE_GRID"
"""Set to 0 to build graphs with numpy alone (for comparisons, or if the extension misbehaves)."""


@cache
def extension() -> ModuleType | None:
    """Return the compiled loops, or None when they are switched off or not built."""
    return optional_module("sortie.sim.navigation._grid", ENV_SWITCH)
