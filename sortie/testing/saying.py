"""A talking agent double, for tests of what reports show of an agent's words."""

from __future__ import annotations

from sortie.agents.base import StepOutput
from sortie.core.actions import Action, Move
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.records import ModelCallRecord


class SayingAgent:
    """Walks straight ahead and says ``text`` at every step, with one made-up model call.

    Reports must show what it says as text, however much it looks like markup; ``fail_at``
    makes it raise at that step, to give a report an ``agent_error`` with a traceback.
    """

    name = "saying"
    sensors: frozenset[Sensor] = frozenset()

    def __init__(self, text: str = "hello", fail_at: int | str = 0) -> None:
        """Say ``text`` every step; raise at step ``fail_at`` (0: never)."""
        self.text, self.fail_at, self.calls = text, int(fail_at), 0

    def reset(self, brief: Brief, seed: int) -> None:
        """Start counting steps again."""
        self.calls = 0

    def act(self, observation: MissionObservation) -> Action:
        """Return a slow step straight ahead (raising at step ``fail_at``)."""
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError(f"told to fail at step {self.fail_at}: {self.text}")
        return Move(0.0, 0.5)

    def step_output(self) -> StepOutput:
        """Return the text and one cheap model call."""
        call = ModelCallRecord(model="double", latency=0.01, tokens_in=3, tokens_out=1)
        return StepOutput(text=self.text, calls=(call,))
