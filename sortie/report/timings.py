"""Where an evaluation spends its time: wall seconds per run, and the share of each part.

Every step record times the agent (deciding), the backend (physics) and rendering; the store
sums them per episode. What is left of an episode's wall time is the harness itself: the
mission rules, writing the record, scoring it and starting the episode. Shares are of the
summed wall time of the run's episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

from sortie.run.store import Store, StoredEpisode

PARTS = ("agent", "backend", "render", "harness")
"""The parts a run's wall time is split into, in the order tables show them."""
HARNESS_NOTE = (
    "harness: the rest (mission rules, records, scoring, building worlds, starting episodes); "
    "it is nearly all of an agent's time when the agent and the simulator cost little"
)
"""What the harness share is, said under the table (an oracle run reads "harness 99 %")."""


@dataclass(frozen=True, slots=True)
class TimeShare:
    """A run's summed wall time and the seconds of each part."""

    run: str
    episodes: int
    wall: float
    agent: float
    backend: float
    render: float

    @property
    def harness(self) -> float:
        """Return the seconds not spent in the agent, the backend or rendering."""
        return max(0.0, self.wall - self.agent - self.backend - self.render)

    def share(self, part: str) -> float:
        """Return the percent of the wall time spent in ``part`` (NaN with no wall time)."""
        return 100.0 * getattr(self, part) / self.wall if self.wall > 0 else float("nan")


def time_share(run: str, episodes: Sequence[StoredEpisode]) -> TimeShare:
    """Return the run's time split, summed over ``episodes``."""
    return TimeShare(
        run,
        len(episodes),
        sum(e.wall_seconds or 0.0 for e in episodes),
        sum(e.timings.agent for e in episodes),
        sum(e.timings.backend for e in episodes),
        sum(e.timings.render for e in episodes),
    )


def run_time_shares(store: Store, runs: Sequence[str]) -> list[TimeShare]:
    """Return the time split of each run, in the order given."""
    return [time_share(run, store.episodes(run)) for run in runs]


def time_rows(shares: Sequence[TimeShare]) -> tuple[list[str], list[list[str]]]:
    """Return the header and one line per run: episodes, wall seconds, % per part."""
    header = ["run", "runs", "wall s", *(f"{part} %" for part in PARTS)]
    lines = [
        [s.run, str(s.episodes), f"{s.wall:.1f}", *(_percent(s.share(p)) for p in PARTS)]
        for s in shares
    ]
    return header, lines


def time_table(shares: Sequence[TimeShare]) -> Table:
    """Return the time split as a rich table."""
    header, lines = time_rows(shares)
    table = Table(title="Where the time went (% of wall time)", caption=HARNESS_NOTE)
    for column in header:
        table.add_column(column, justify="left" if column == "run" else "right")
    for line in lines:
        table.add_row(*line)
    return table


def time_markdown(shares: Sequence[TimeShare]) -> str:
    """Return the time split as a markdown table."""
    header, lines = time_rows(shares)
    text = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    rows = ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join([*text, *rows, "", HARNESS_NOTE]) + "\n"


def _percent(value: float) -> str:
    return "–" if value != value else f"{value:.0f}"
