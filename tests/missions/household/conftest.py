"""Fixtures of the household tests: the test kitchen and a runner of scripted episodes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.episode import EpisodeSpec
from sortie.core.records import PluginRef, StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.core.trajectory import Trajectory
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.vocabulary import Subtask
from sortie.run.episode import run_episode
from sortie.sim.worlds.base import WORLDS
from sortie.testing.household import ScriptedPlanner
from tests.missions.household.kitchen import KITCHEN, episode

PUT_MUG = [
    {"action": "pick", "target": "mug_1"},
    {"action": "put", "target": "mug_1", "place": "table_0"},
]


@pytest.fixture(scope="module")
def kitchen() -> Iterator[None]:
    """Register the test kitchen world while the module's tests run."""
    with WORLDS.override("test_kitchen", KITCHEN):
        yield


class Recorder:
    """Keeps an episode's step records and footer."""

    def __init__(self) -> None:
        self.steps: list[StepRecord] = []
        self.footer: TrajectoryFooter | None = None

    def on_start(self, header: TrajectoryHeader) -> None:
        """Nothing to do at the start."""

    def on_step(self, record: StepRecord) -> None:
        """Keep the step."""
        self.steps.append(record)

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Keep the footer."""
        self.footer = footer


Play = Callable[..., Recorder]


def header_of(spec: EpisodeSpec, seed: int = 0) -> TrajectoryHeader:
    """Return the record header of a test episode."""
    return TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="test"),
        backend=PluginRef(name="embedded"),
        seed=seed,
        code_version="test",
    )


def as_trajectory(recorder: Recorder, spec: EpisodeSpec) -> Trajectory:
    """Return a played episode as the record its scorer reads."""
    assert recorder.footer is not None
    return Trajectory(header_of(spec), recorder.steps, recorder.footer)


@pytest.fixture
def play(kitchen: None) -> Play:
    """Return ``play(agent_or_script, spec=None, seed=0, **mission settings)`` -> its Recorder."""

    def run(
        agent: object | Sequence[Sequence[str]],
        spec: EpisodeSpec | None = None,
        seed: int = 0,
        sensors: Sequence[str] = (),
        **settings: str,
    ) -> Recorder:
        if isinstance(agent, list | tuple):
            agent = ScriptedPlanner(agent)
        backend = EmbeddedBackend(body="manipulator", sensors=sensors)
        mission = HouseholdMission(backend, settings=HouseholdSettings(**settings))
        if hasattr(agent, "attach"):
            agent.attach(backend.oracle_view())  # type: ignore[attr-defined]
        recorder = Recorder()
        run_episode(mission, agent, header_of(spec or episode([PUT_MUG]), seed), [recorder])  # type: ignore[arg-type]
        return recorder

    return run


def go(target: str) -> tuple[str, str, str]:
    """Return a go_to subtask with the privileged all-in-one skill."""
    return ("go_to", target, "all_in_one")


__all__ = ["PUT_MUG", "Play", "Recorder", "Subtask", "go"]
