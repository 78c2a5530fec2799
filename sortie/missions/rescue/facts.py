"""What a rescue episode's footer records about how it ended (``sortie.core.facts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sortie.core.facts import Facts, Point, read_facts
from sortie.missions.clock import Clock

if TYPE_CHECKING:
    from sortie.core.trajectory import Trajectory


class RescueFacts(Facts):
    """What a rescue episode's footer records about how it ended."""

    picked_up: bool = False
    """The casualty was picked up at some point (S2 done)."""
    dropped_in_zone: bool = False
    """The casualty was put down within the hand-off radius of the stretcher (S4 done)."""
    final_to_casualty: float | None = None
    """Horizontal distance (m) from the agent's final position to ``casualty_point``."""
    final_to_stretcher: float | None = None
    """Horizontal distance (m) from the agent's final position to ``stretcher_point``."""
    casualty_point: Point | None = None
    """Where the casualty was at the end, ``[x, y, z]`` (its base point): the point that
    ``final_to_casualty`` and the ``rescuebench-code`` scores measure to. None in records
    written before it was recorded."""
    stretcher_point: Point | None = None
    """The stretcher's base point ``[x, y, z]``, the point ``final_to_stretcher`` measures to.
    None in records written before it was recorded."""
    triggers: str | None = None
    """The trigger mode of the run: ``assisted`` or ``native``."""
    clock: Clock | None = None
    """The clock the budget was counted on: ``sim`` or ``latency``."""


def rescue_facts(trajectory: Trajectory) -> RescueFacts:
    """Return the facts of a rescue record (checked to be one)."""
    return read_facts(trajectory, RescueFacts, "rescue")
