"""Navigation: a multi-level walkable graph of a scene, with doors that can close.

``NavGraph.build(scene)`` finds every walkable surface (floors above floors, stairs, ramps),
keeps those with room for the walker's body, links neighbours a step apart, and answers
shortest-route queries with any set of doors closed. Privileged: for episode generation, the
oracle agent and metrics, never for ordinary agents.
"""

from sortie.sim.navigation.graph import NavGraph, Route
from sortie.sim.navigation.surfaces import Grid

__all__ = ["Grid", "NavGraph", "Route"]
