"""What the explorer remembers of the mission's objects, and how it picks the casualty."""

from __future__ import annotations

from dataclasses import dataclass, field

from sortie.agents.explorer.perception import Kind
from sortie.agents.explorer.sightings import Sighting


@dataclass(frozen=True, slots=True)
class Landmark:
    """An object's last known place in the map frame, and when it was last seen."""

    x: float
    y: float
    instance: int
    step: int
    score: float = 1.0


@dataclass(slots=True)
class Memory:
    """The casualty, stretcher and ambulance as last seen, and where the body started.

    ``min_colour`` is the least share of the clue's colours a lying person must show to be
    taken for the casualty (people standing are bystanders: the casualty lies down).
    """

    min_colour: float = 0.5
    casualty: Landmark | None = None
    stretcher: Landmark | None = None
    ambulance: Landmark | None = None
    home: tuple[float, float] | None = (0.0, 0.0)
    rejected: set[int] = field(default_factory=set)

    def forget_places(self) -> None:
        """Forget the stretcher, the ambulance and the start (the no-memory ablation)."""
        self.stretcher = self.ambulance = None
        self.home = None

    def note(self, sightings: list[Sighting], step: int) -> None:
        """Update the remembered objects from one frame's sightings."""
        for seen in sightings:
            mark = Landmark(seen.x, seen.y, seen.instance, step, seen.colour)
            if seen.kind is Kind.STRETCHER:
                self.stretcher = mark
            elif seen.kind is Kind.AMBULANCE:
                self.ambulance = mark
            elif seen.kind is Kind.PERSON:
                self._consider(seen, mark)

    def _consider(self, seen: Sighting, mark: Landmark) -> None:
        """Take a person for the casualty if they lie down and wear the clue's colours."""
        current = self.casualty
        if current is not None and current.instance == seen.instance:
            self.casualty = Landmark(
                mark.x, mark.y, mark.instance, mark.step, max(current.score, mark.score)
            )
            return
        if not seen.lying or seen.colour < self.min_colour or seen.instance in self.rejected:
            return
        if current is None or seen.colour > current.score:
            self.casualty = mark

    def goal(self, carrying: bool) -> Landmark | tuple[float, float] | None:
        """Return where to go now: the casualty, or the stretcher (else ambulance, else home)."""
        if not carrying:
            return self.casualty
        return self.stretcher or self.ambulance or self.home
