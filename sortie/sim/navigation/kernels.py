"""The compiled loops of the navigation graph (``_grid.c``), when they are built.

``surfaces.crowded`` and ``clearance.near_hits`` ask, for every surface, whether anything lies
in the walker's body: numpy answers by gathering each neighbour's hits into arrays the size of
the whole grid, pass after pass, and by pairing points in k-d trees; the extension loops over
the neighbours of one surface at a time. ``clearance.probe`` has it make the 24 probe rays of
each surface and read their hits without intermediate arrays; ``links.link_neighbours`` has it
find the linked pairs and make the matrix of their edges; ``smoothing.Corridor.clear_each`` has
it test the straight stretches of string pulling. It rounds and compares as the numpy forms
do, so graphs and routes are the same either way (``tests/sim/test_navigation_kernels.py``).
Without a C compiler at install, or with ``SORTIE_GRID=0`` in the environment, numpy does it.

The extension also searches the graph for shortest paths (``search``): Dijkstra, popping nodes
in the order scipy 1.17's ``dijkstra`` pops them (nearest first, then the larger index), so the
distances and predecessors are scipy's; a search for one target stops when it reaches it,
which scipy cannot. It labels the graph's connected components in scipy's order too
(``components``). Without the extension, scipy does both (imported only then).
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from sortie.sim.compiled import optional_module

if TYPE_CHECKING:
    from sortie.sim.navigation.edges import Edges

ENV_SWITCH = "SORTIE_GRID"
"""Set to 0 to build graphs with numpy alone (for comparisons, or if the extension misbehaves)."""


@cache
def extension() -> ModuleType | None:
    """Return the compiled loops, or None when they are switched off or not built."""
    return optional_module("sortie.sim.navigation._grid", ENV_SWITCH)


def components(edges: Edges) -> NDArray[np.int32]:
    """Return each node's connected component, numbered as scipy numbers them.

    ``scipy.sparse.csgraph.connected_components(directed=False)`` numbers components in the
    order of their lowest node, as the extension does; without it, scipy labels them.
    """
    module = extension()
    if module is None:
        from scipy.sparse.csgraph import connected_components  # 0.13 s to import

        return connected_components(edges.scipy(), directed=False)[1]
    labels = np.empty(edges.node_count, np.int32)
    module.components(edges.indptr, edges.indices, labels)
    return labels
