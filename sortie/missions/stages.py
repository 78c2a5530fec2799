"""Stage machinery: a mission is data plus named stages that latch when first done.

Each stage has a completion predicate (over the backend's named queries, bound by the
family) and a target whose distance measures progress. Stages run in order: one is active
at a time, and when its predicate first holds it latches done and the next one starts (in
the same step, if that one is already satisfied too). The tracker keeps, per stage, the
distance to its target when it began (d_init), the best and the last (d_best, d_final), and
the steps, clock time and collisions spent in it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sortie.core.records import StageRecord, StageStatus


@dataclass(frozen=True, slots=True)
class Stage:
    """One named step of a mission.

    Attributes:
        name: short id, e.g. ``S1``.
        title: what it is, e.g. ``explore``.
        brief: the instruction text for this stage, shown in the brief (surface and verify
            come from the same list).
        target: the object whose distance measures progress, or None.
        done: predicate that is true once the stage is achieved.
    """

    name: str
    title: str
    brief: str
    target: str | None
    done: Callable[[], bool]


@dataclass(slots=True)
class _Progress:
    status: StageStatus = StageStatus.PENDING
    d_init: float | None = None
    d_best: float | None = None
    d_final: float | None = None
    steps: int = 0
    clock_sim: float = 0.0
    clock_latency: float = 0.0
    collisions: int = 0
    started_step: int | None = None
    done_step: int | None = None


_FIELDS = tuple(f.name for f in dataclasses.fields(_Progress))
"""What a stage's record keeps of its progress (plain values: read, not deep-copied)."""


@dataclass
class StageTracker:
    """Follows a mission's stages through an episode."""

    stages: Sequence[Stage]
    distance: Callable[[str], float]
    """Horizontal distance from the agent to a named object."""
    _progress: list[_Progress] = field(default_factory=list)
    _active: int = 0
    _statuses: dict[str, StageStatus] = field(default_factory=dict)
    """Each stage's status by name, made again only when one changes (a step's record asks
    for them every step)."""
    _index: dict[int, int] = field(default_factory=dict)
    """Each stage's place in ``stages``, by the stage's ``id``."""

    def start(self) -> None:
        """Activate the first stage (and latch any already satisfied at the start)."""
        self._progress = [_Progress() for _ in self.stages]
        self._index = {id(stage): i for i, stage in enumerate(self.stages)}
        self._active = 0
        self._begin(0, step=0)
        self._latch(step=0)

    @property
    def active(self) -> Stage | None:
        """Return the stage in progress, or None when all are done."""
        return self.stages[self._active] if self._active < len(self.stages) else None

    @property
    def all_done(self) -> bool:
        """Return whether every stage is done."""
        return self._active >= len(self.stages)

    def record_step(self, step: int, dt_sim: float, dt_latency: float, collisions: int) -> None:
        """Charge one step to the active stage, update its distances, then latch."""
        if self.all_done:
            return
        progress = self._progress[self._active]
        progress.steps += 1
        progress.clock_sim += dt_sim
        progress.clock_latency += dt_latency
        progress.collisions += collisions
        self._measure(self._active)
        self._latch(step)

    def distance_of(self, stage: Stage | None) -> float | None:
        """Return the distance to ``stage``'s target measured after the last step (None: none).

        The tracker measures the active stage's distance every step, even on the step that
        finishes it, so a step's record reads it here instead of measuring it again.
        """
        if stage is None or stage.target is None:
            return None
        return self._progress[self._index[id(stage)]].d_final

    def target_distance(self) -> float | None:
        """Return the active stage's current distance to its target.

        A stage's ``done`` may read it: the tracker measures the active stage's distance in
        the state its predicate is then asked in (every step, and as a stage begins).
        """
        return None if self.all_done else self._progress[self._active].d_final

    def statuses(self) -> dict[str, StageStatus]:
        """Return each stage's status by name."""
        return dict(self._statuses)

    def records(self) -> list[StageRecord]:
        """Return one StageRecord per stage."""
        return [
            StageRecord(name=s.name, target=s.target, **{f: getattr(p, f) for f in _FIELDS})
            for s, p in zip(self.stages, self._progress, strict=True)
        ]

    def _begin(self, index: int, step: int) -> None:
        progress = self._progress[index]
        progress.status, progress.started_step = StageStatus.ACTIVE, step
        self._measure(index)
        progress.d_init = progress.d_final
        self._restate()

    def _restate(self) -> None:
        self._statuses = {
            s.name: p.status for s, p in zip(self.stages, self._progress, strict=True)
        }

    def _measure(self, index: int) -> None:
        stage, progress = self.stages[index], self._progress[index]
        if stage.target is None:
            return
        d = self.distance(stage.target)
        if not math.isfinite(d):
            # A backend that reports a NaN pose fails its step (the step's line refuses it);
            # the stage keeps its last real distance for the episode's footer.
            return
        progress.d_final = d
        progress.d_best = d if progress.d_best is None else min(progress.d_best, d)

    def _latch(self, step: int) -> None:
        while not self.all_done and self.stages[self._active].done():
            progress = self._progress[self._active]
            progress.status, progress.done_step = StageStatus.DONE, step
            self._active += 1
            self._restate()
            if not self.all_done:
                self._begin(self._active, step)
