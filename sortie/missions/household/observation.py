"""What a household planner perceives after each round: four views and the executor's answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.core.observation import Frames, MissionObservation

VIEW_NAMES = ("front", "left", "back", "right")
"""The four egocentric views of a household robot, in the order they are given."""


@dataclass(frozen=True, slots=True)
class HouseholdObservation(MissionObservation):
    """What a household planner perceives after each round (``frames`` is the front view).

    Attributes:
        views: the four egocentric views, front, left, back, right (``VIEW_NAMES``).
        task: the instruction.
        inventory: what the gripper holds (empty or one name).
        history: every round so far, as the executor recorded it.
        feedback: the executor's answer to the last subtask ("" before the first).
        code: the last subtask's error code, if it failed.
        detections: per view, the names of the objects it shows (what a perfect detector would
            report; agents that are meant to see only images must not read it).
        round: rounds taken so far.
        rounds_left: rounds left in the budget.
    """

    views: tuple[Frames, ...] = ()
    task: str = ""
    inventory: tuple[str, ...] = ()
    history: tuple[Any, ...] = ()
    feedback: str = ""
    code: str | None = None
    detections: tuple[tuple[str, ...], ...] = ()
    round: int = 0
    rounds_left: int = 0

    def kept_images(self) -> dict[str, NDArray[np.uint8]]:
        """Return each view's RGB image by the view's name (a round is seen through four)."""
        views = zip(VIEW_NAMES, self.views, strict=True)
        return {name: view.rgb for name, view in views if view.rgb is not None}
