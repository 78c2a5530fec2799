"""Bodies that move through a scene: a walker and a multirotor, kinematic and deterministic.

Both hold a pose, check every move against the scene with batches of rays, and report what
they touched; missions count the contacts as collisions.
"""

from sortie.sim.bodies.multirotor import FlyResult, Multirotor
from sortie.sim.bodies.walker import Walker, WalkResult

__all__ = ["FlyResult", "Multirotor", "WalkResult", "Walker"]
