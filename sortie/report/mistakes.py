"""What went wrong in a run, said where the numbers are shown (``sortie run`` and ``report``).

Episodes that ended in an agent or backend error are left out of every mean, so a table of
them looks like a short run; invalid actions (an answer the mission could not read, a remote
agent's malformed action) do not error at all: such an episode only runs out of time. Both
are counted here with the first one's reason, so the cause is seen without opening a record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sortie.core.errors import SortieError
from sortie.core.observation import EventKind
from sortie.core.records import ERROR_REASONS
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.run.batch import error_headline
from sortie.run.store import StoredEpisode

REASON_LENGTH = 300
"""Characters of a reason shown at most."""


@dataclass(frozen=True, slots=True)
class Mistakes:
    """A run's errored episodes and invalid actions, each with the first one's reason."""

    episodes: int
    errors: Counter[str]
    """Errored episodes by failure reason (``agent_error``, ``backend_error``)."""
    first_error: str
    errors_alike: bool
    """Whether every errored episode failed with the same reason."""
    invalid: int
    """Invalid actions, over all episodes."""
    invalid_episodes: int
    first_invalid: str
    """The first invalid action's reason, episode and step."""


def mistakes_of(episodes: Sequence[StoredEpisode]) -> Mistakes:
    """Return what went wrong in ``episodes`` (their records read for invalid actions)."""
    errored = [e for e in episodes if e.failure_reason in ERROR_REASONS]
    reasons = [reason(e.error) for e in errored]
    invalid, hit, first = 0, 0, ""
    for episode in episodes:
        try:
            trajectory = read_trajectory(episode.record)
        except (SortieError, OSError):
            continue  # a record that does not read is said elsewhere (the report's loader)
        found = trajectory.columns.events(EventKind.INVALID_ACTION.value)
        if found and not first:
            first = _first_invalid(trajectory, episode.episode_id)
        invalid, hit = invalid + found, hit + bool(found)
    return Mistakes(
        len(episodes),
        Counter(e.failure_reason or "" for e in errored),
        reasons[0] if reasons else "",
        len(set(reasons)) == 1 and len(reasons) > 1,
        invalid,
        hit,
        first,
    )


def reason(error: str | None) -> str:
    """Return an error's telling line (a traceback's exception line), cut short."""
    text = error_headline(error or "")
    return text if len(text) <= REASON_LENGTH else text[: REASON_LENGTH - 1] + "…"


def mistake_lines(run: str, mistakes: Mistakes) -> list[str]:
    """Return a run's mistakes as plain lines (none when nothing went wrong)."""
    lines = []
    m = mistakes
    if m.errors:
        listed = ", ".join(f"{kind} {count}" for kind, count in sorted(m.errors.items()))
        said = "every one" if m.errors_alike else "the first"
        lines.append(
            f"{run}: {m.errors.total()} of {m.episodes} episodes ended in an error ({listed}); "
            f"{said}: {m.first_error}"
        )
    if m.invalid:
        lines.append(
            f"{run}: {m.invalid} invalid action(s) in {m.invalid_episodes} of {m.episodes} "
            f"episodes; the first: {m.first_invalid}"
        )
    return lines


def _first_invalid(trajectory: Trajectory, episode_id: str) -> str:
    """Return where and why the first invalid action of ``trajectory`` was refused."""
    for step in trajectory.steps:
        for event in step.events:
            if event.kind == EventKind.INVALID_ACTION.value:
                return f"{reason(event.detail)} ({episode_id}, step {step.index})"
    return f"({episode_id})"
