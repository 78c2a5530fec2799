"""``human``: a person plays through a page; the desk passes views out and key presses in.

The desk is the meeting point of two threads: the episode loop (the ``human`` agent asks it
for an action and waits) and the page server (which shows its state and hands it key presses).
It is also an episode observer, so the page can show the stages' status, which agents never
see.
"""

from __future__ import annotations

import threading
from typing import Any

from sortie.core.actions import Action, Fly
from sortie.core.errors import ConfigError, SortieError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.records import StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import RoundRecord, history_line
from sortie.missions.household.vocabulary import Subtask
from sortie.remote.keys import SCALES, Binding, accepts, action_for, keys_for
from sortie.remote.wire import WireError, encode_image

WORDS_LIMIT = 200
"""Longest action, target, place or skill a household page may send."""


class PlayerLeftError(SortieError):
    """The session stopped while an episode waited for a key."""


class Desk:
    """What the page shows and the key press the episode waits for."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._bindings: dict[str, Binding] = {}
        self._action: Action | None = None
        self._stopped = False
        self.view: dict[str, Any] = {"seq": 0, "phase": "starting", "message": "starting…"}

    # --- the episode side -----------------------------------------------------------------
    def begin(self, brief: Brief) -> None:
        """Show a new episode's brief and keys."""
        self._bindings = keys_for(brief.family, brief.limits)
        self._update(
            phase="starting",
            family=brief.family,
            level=brief.level,
            text=brief.text,
            stages=[
                {"name": name, "instruction": text, "status": "pending"}
                for name, text in brief.stages
            ],
            keys=[{"key": b.key, "label": b.label} for b in self._bindings.values()],
            scales=list(SCALES) if accepts(brief.family, Fly) else [],
            form=accepts(brief.family, Subtask),
            max_steps=brief.limits.max_steps,
            actions=list(brief.actions),
            skills=[{"name": name, "role": role} for name, role in brief.skills],
            # The brief's images (a casualty's reference, the goal of each stage), shown as
            # the agents get them, so a person's play is a comparable baseline.
            goals={name: encode_image(image).data for name, image in brief.images.items()},
        )

    def ask(self, observation: MissionObservation) -> Action:
        """Show ``observation`` and wait for the person's key press; return its action.

        Raises:
            PlayerLeftError: the session was stopped while waiting.
        """
        rgb = observation.frames.rgb
        with self._changed:
            self._action = None
            self._update(
                phase="waiting",
                frame=None if rgb is None else encode_image(rgb).data,
                step=observation.step,
                time_left=round(observation.time_left, 2),
                events=[
                    f"{e.kind.value} {e.target or ''} {e.detail}".strip()
                    for e in observation.events
                ],
                **household_view(observation),
            )
            while self._action is None and not self._stopped:
                self._changed.wait()
            if self._action is None:
                raise PlayerLeftError(f"the player left at step {observation.step}")
            return self._action

    def on_start(self, header: TrajectoryHeader) -> None:
        """Name the episode on the page."""
        self._update(episode=header.episode.episode_id, outcome=None)

    def on_step(self, record: StepRecord) -> None:
        """Show the stages' status after a step."""
        stages = [
            {**stage, "status": str(record.stages.get(stage["name"], stage["status"]))}
            for stage in self.view.get("stages", [])
        ]
        self._update(stages=stages)

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Show how the episode ended."""
        self._update(
            phase="ended",
            outcome=str(footer.outcome),
            failure=footer.failure_reason,
            step=footer.steps,
        )

    def stop(self) -> None:
        """End the session: a step waiting for a key ends its episode as ``agent_error``."""
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    def finish(self, message: str) -> None:
        """Say the session is over (every episode played)."""
        self._update(phase="finished", message=message)

    # --- the page side ------------------------------------------------------------------
    def press(self, key: str, seq: int, scale: float = 1.0, report: str | None = None) -> None:
        """Hand over a key press made while the page showed view ``seq``.

        Raises:
            WireError: (409) no step is waiting for a key, or the page showed an older view;
                (422) a key that does nothing here, or a bad scale.
        """
        with self._changed:
            if self.view["phase"] != "waiting" or seq != self.view["seq"]:
                raise WireError(409, "busy", f"view {seq} is not the one waiting for a key")
            self._action = action_for(self._bindings, key, scale, report)
            self._update(phase="stepping")

    def choose(self, seq: int, action: str, target: str, skill: str, place: str | None) -> None:
        """Hand over a household subtask chosen while the page showed view ``seq``.

        The words go to the executor as given, as a planner's do (an unknown name is its F2).

        Raises:
            WireError: (409) no round is waiting, or the page showed an older view; (422) no
                action, or a word longer than ``WORDS_LIMIT``.
        """
        words = (action, target, skill, place or "")
        if not action.strip() or any(len(word) > WORDS_LIMIT for word in words):
            raise WireError(
                422, "invalid", f"subtask: an action, and words of at most {WORDS_LIMIT} letters"
            )
        with self._changed:
            if self.view["phase"] != "waiting" or seq != self.view["seq"]:
                raise WireError(409, "busy", f"view {seq} is not the one waiting for a subtask")
            if not self.view.get("form"):
                raise WireError(
                    422, "invalid", f"{self.view.get('family')} missions take no subtasks"
                )
            self._action = Subtask(action.strip(), target.strip(), skill.strip(), place or None)
            self._update(phase="stepping")

    def state(self) -> dict[str, Any]:
        """Return a copy of what the page shows."""
        with self._changed:
            return dict(self.view)

    def _update(self, **fields: Any) -> None:
        with self._changed:
            self.view = {**self.view, **fields, "seq": self.view["seq"] + 1}
            self._changed.notify_all()


def household_view(observation: MissionObservation) -> dict[str, Any]:
    """Return what the page shows of a household round (nothing for the other families).

    ``targets`` are the names a person can pick from: what the four views show and what the
    gripper holds (any other name can be typed).
    """
    if not isinstance(observation, HouseholdObservation):
        return {}
    views = zip(VIEW_NAMES, observation.views, strict=False)
    seen = {name for names in observation.detections for name in names}
    return {
        "views": {name: encode_image(v.rgb).data for name, v in views if v.rgb is not None},
        "task": observation.task,
        "inventory": list(observation.inventory),
        "history": [history_line(r) for r in observation.history if isinstance(r, RoundRecord)],
        "feedback": observation.feedback,
        "code": observation.code,
        "round": observation.round,
        "rounds_left": observation.rounds_left,
        "targets": sorted(seen | set(observation.inventory)),
    }


class HumanAgent:
    """A person at the page of ``sortie play``: each key press is one action.

    The decision time measured around ``act`` is the person's, so on the latency clock a
    slow decision costs mission time.
    """

    name = "human"  # no ``families``: a person plays any family the page can show
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB})

    def __init__(self, desk: Desk | None = None) -> None:
        """Play at ``desk`` (``sortie play`` makes it)."""
        self.desk = desk

    def reset(self, brief: Brief, seed: int) -> None:
        """Show the brief.

        Raises:
            ConfigError: no desk: the human agent is played with ``sortie play``.
        """
        if self.desk is None:
            raise ConfigError("agent 'human' is played in a browser: use `sortie play SUITE`")
        self.desk.begin(brief)

    def act(self, observation: MissionObservation) -> Action:
        """Wait for the person's key press."""
        assert self.desk is not None
        return self.desk.ask(observation)
