"""``human``: a person plays through a page; the desk passes views out and key presses in.

The desk is the meeting point of two threads: the episode loop (the ``human`` agent asks it
for an action and waits) and the page server (which shows its state and hands it key presses).
It is also an episode observer, so the page can show the stages' status, which agents never
see.
"""

from __future__ import annotations

import threading
from typing import Any

from sortie.core.actions import Action
from sortie.core.errors import ConfigError, SortieError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.trajectory import StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.remote.keys import SCALES, Binding, action_for, keys_for
from sortie.remote.wire import WireError, encode_image


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
            scales=list(SCALES) if brief.family == "aerial" else [],
            max_steps=brief.limits.max_steps,
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

    def state(self) -> dict[str, Any]:
        """Return a copy of what the page shows."""
        with self._changed:
            return dict(self.view)

    def _update(self, **fields: Any) -> None:
        with self._changed:
            self.view = {**self.view, **fields, "seq": self.view["seq"] + 1}
            self._changed.notify_all()


class HumanAgent:
    """A person at the page of ``sortie play``: each key press is one action.

    The decision time measured around ``act`` is the person's, so on the latency clock a
    slow decision costs mission time.
    """

    name = "human"
    families = frozenset({"rescue", "aerial"})
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
