"""What ``mllm-aerial``'s ``prompt=missionbench`` mode writes into MissionBench's step prompt.

MissionBench's step prompt (``step_by_step_V2``) tells the model its camera, its position and
yaw, the largest step, the action budget and its action history every step; the wording is the
template ``missionbench_step.txt``, the values are worked out here. docs/aerial.md lists where
the prompt differs from MissionBench's and why.

The pose is written as MissionBench's drone is told it: AirSim's NED frame (x north, y east,
z down) with yaw in degrees clockwise from +x. sortie's frame is the same x with y and z
mirrored and yaw counter-clockwise (``sortie.backends.frames``), so the reading of the pose
sensor is turned back into NED before it is written.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sortie.backends.frames import to_ned
from sortie.core.errors import ParameterError
from sortie.core.observation import Brief, Event, MissionObservation
from sortie.core.pose import Pose
from sortie.missions.aerial.vocabulary import AerialEvent


class PromptStyle(StrEnum):
    """Which step prompt ``mllm-aerial`` writes (the ``prompt`` agent argument)."""

    SORTIE = "sortie"
    """sortie's own prompt (the default): instruction, steps left, history, images."""
    MISSIONBENCH = "missionbench"
    """MissionBench's step prompt: also camera, pose and yaw, d_max and the budget."""


def as_style(raw: str) -> PromptStyle:
    """Return the ``prompt`` agent argument, or raise naming the prompts there are."""
    try:
        return PromptStyle(str(raw).strip().lower())
    except ValueError:
        allowed = ", ".join(s.value for s in PromptStyle)
        raise ParameterError(
            f"agent argument prompt: expected one of {allowed}, got {raw!r}"
        ) from None


FACING = {
    "0.0": "positive x-direction",
    "90.0": "positive y-direction",
    "180.0": "negative x-direction",
    "-90.0": "negative y-direction",
}
"""MissionBench names the heading only at these yaws (NED degrees, as the prompt writes them)."""
EXAMPLE_REASONINGS = (
    "Horizontal 15m, far away. Last actions: forward, forward. Continuing forward to close "
    "distance.",
    "Horizontal 8m, medium distance. Last actions: forward, forward, forward. Time to descend "
    "while approaching.",
    "Horizontal 3m, close to target. Need to descend to reach it.",
)
"""MissionBench's three example answers' reasoning: an answer repeating one is an echo."""
_CLAMPED_TO = re.compile(r"clamped to (\S+)$")


def ned(pose: Pose) -> tuple[float, float, float, float]:
    """Return ``pose`` as MissionBench states it: NED x, y, z and yaw in (-180, 180]."""
    north, east, down, yaw = to_ned(pose)
    return north, east, down, 180.0 if yaw == -180.0 else yaw


def position_text(pose: Pose | None) -> str:
    """Return MissionBench's position sentence (and facing, at its four yaws) for ``pose``."""
    if pose is None:
        return "The drone's position is not known."
    north, east, down, yaw = ned(pose)
    x, y, z = (_tenths(v) for v in (north, east, down))
    heading = _tenths(yaw)
    heading = "180.0" if heading == "-180.0" else heading  # the written yaw in (-180, 180]
    text = f"The drone is currently at position (x={x}, y={y}, z={z}) with yaw={heading}."
    facing = FACING.get(heading)  # as written: a yaw the prompt calls 90.0 faces +y
    return text + (f"\nYou are currently facing the {facing}." if facing else "")


def _tenths(value: float) -> str:
    """Return ``value`` to one decimal, never ``-0.0`` (a hair below zero reads as 0.0)."""
    return f"{round(value, 1) + 0.0:.1f}"


def number(value: float | None) -> str:
    """Return a limit as the prompt writes it (``unknown`` when the brief has none)."""
    return "unknown" if value is None else f"{value:g}"


def step_values(
    brief: Brief, observation: MissionObservation, history: list[str]
) -> dict[str, str]:
    """Return the values of the template's placeholders (but ``fields`` and ``examples``)."""
    camera, limits = brief.camera, brief.limits
    return {
        "width": number(camera.width if camera else None),
        "height": number(camera.height if camera else None),
        "hfov": number(camera.hfov if camera else None),
        "pitch": number(camera.pitch if camera else None),
        "position": position_text(observation.pose),
        "instruction": brief.text,
        "max_move": number(limits.max_move),
        "max_turn": number(limits.max_turn),
        "max_steps": number(limits.max_steps),
        "count": str(observation.step),
        "history": str(history),
    }


def action_text(action: str, magnitude: float) -> str:
    """Return one action as the history holds it: ``forward 6 meters``, ``turn_left 30 degrees``."""
    if action.startswith("turn_"):
        return f"{action} {magnitude:g} degrees"
    if action in ("land", "drop_payload", "collect_sample"):
        return action
    return f"{action} {magnitude:g} meters"


def with_clamp(entry: str, events: tuple[Event, ...]) -> str:
    """Return a history entry with the clamp the mission reported for it, if it was clamped."""
    for event in events:
        if event.kind == AerialEvent.CLAMPED:
            kept = _CLAMPED_TO.search(event.detail or "")
            unit = "degrees" if entry.startswith("turn_") else "meters"
            return f"{entry} (clamped to {kept.group(1)} {unit})" if kept else f"{entry} (clamped)"
    return entry


@dataclass(frozen=True, slots=True)
class AnswerShape:
    """Which fields the answer has (the ``box`` and ``reasoning`` ablations drop theirs)."""

    box: bool
    reasoning: bool

    def fields_text(self) -> str:
        """Return the Output Format section: the answer's fields, MissionBench's order."""
        lines = ["Answer with one JSON object with these fields:"]
        if self.box:
            lines.append("- box: the target's box [x1, y1, x2, y2] in 0-1000, or null if not seen")
        if self.reasoning:
            lines.append(
                "- reasoning: horizontal distance, recent actions, and why the next action"
            )
        lines += [
            "- action: one action, and magnitude: its meters (degrees for turns)",
            "- report: what the mission asks you to report, or null",
            "- done: true when the mission is complete, else false",
        ]
        return "\n".join(lines)

    def examples_text(self, max_move: float | None) -> str:
        """Return MissionBench's three examples as answers in this shape, at d_max."""
        step = max_move if max_move is not None and math.isfinite(max_move) else 5.0
        actions = ("forward", "down", "down")
        answers = []
        for reasoning, action in zip(EXAMPLE_REASONINGS, actions, strict=True):
            answer: dict[str, Any] = {"box": [412, 380, 530, 455]} if self.box else {}
            if self.reasoning:
                answer["reasoning"] = reasoning
            answer |= {"action": action, "magnitude": step, "report": None, "done": False}
            answers.append(json.dumps(answer))
        return "\n".join(answers)
