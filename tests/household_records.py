"""Hand-built household records for metric and report tests: a task, rounds, the final state."""

from __future__ import annotations

from typing import Any

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.core.records import (
    Outcome,
    PluginRef,
    StepRecord,
    Timings,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.trajectory import Trajectory
from sortie.metrics.household import score_household
from sortie.missions.household.facts import HouseholdFacts, PlaceFacts
from sortie.missions.household.records import (
    ErrorCode,
    HouseholdTask,
    RoundRecord,
    RoundStatus,
    Verb,
)
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.vocabulary import HouseholdStep
from sortie.run.jobs import Job, JobResult, RunSpec, record_path
from sortie.run.store import Store
from tests.conftest import run_config

OBJECTS: dict[str, dict[str, Any]] = {
    "apple_1": {"kind": "apple", "role": "item", "names": ["red apple", "apple"]},
    "mug_1": {"kind": "mug", "role": "item", "names": ["red mug", "red cup"]},
    "fridge_1": {"kind": "fridge", "role": "container", "names": ["fridge", "refrigerator"]},
    "table_1": {"kind": "table", "role": "receptacle", "names": ["kitchen table"]},
    "sink_1": {"kind": "sink", "role": "receptacle", "names": ["sink"]},
    "cabinet_1": {"kind": "cabinet", "role": "container", "names": ["cupboard"]},
    "sponge_1": {"kind": "sponge", "role": "item", "names": []},
    "kitchen": {"kind": "room", "role": "room", "names": []},
}
"""The scene objects every test task knows, with their other names."""
APPLE_IN_FRIDGE = [
    {"action": "open", "target": "fridge_1"},
    {"action": "pick", "target": "apple_1"},
    {"action": "put", "target": "apple_1", "place": "fridge_1"},
]
"""A three-step keypath: open the fridge, pick the apple, put it in the fridge."""


def task(
    keypaths: list[list[dict[str, Any]]] | None = None,
    goals: list[dict[str, Any]] | None = None,
    expert: int = 4,
    **fields: Any,
) -> HouseholdTask:
    """Return a task over ``OBJECTS``: one keypath (APPLE_IN_FRIDGE) and an expert plan.

    The expert's plan is ``expert`` steps long, ``end`` included (go_to kitchen repeated).
    """
    plan = [{"action": "go_to", "target": "kitchen"}] * (expert - 1) + [{"action": "end"}]
    return HouseholdTask.model_validate(
        {
            "instruction": "Put the apple in the fridge.",
            "attributes": ["short"],
            "objects": OBJECTS,
            "keypaths": keypaths or [APPLE_IN_FRIDGE],
            "goals": goals or [],
            "expert": plan,
            **fields,
        }
    )


def done(
    verb: str,
    target: str = "",
    place: str | None = None,
    resolved: bool = True,
    status: RoundStatus = RoundStatus.SUCCESS,
    code: ErrorCode | None = None,
) -> RoundRecord:
    """Return a round of ``verb``; ``resolved``: the executor knew the objects by these names."""
    return RoundRecord(
        round=1,
        action=verb,
        target=target,
        place=place,
        verb=Verb(verb),
        target_object=target if resolved and target else None,
        place_object=place if resolved else None,
        status=status,
        code=code,
    )


def failed(verb: str, target: str = "", place: str | None = None, code=ErrorCode.E1) -> RoundRecord:
    """Return a failed round of ``verb`` (error ``code``)."""
    return done(verb, target, place, status=RoundStatus.FAILURE, code=code)


END = RoundRecord(round=1, action="end", verb=Verb.END, status=RoundStatus.END)
"""The planner's ``end`` round."""


def trajectory(
    the_task: HouseholdTask,
    rounds: list[RoundRecord],
    facts: HouseholdFacts | None = None,
    outcome: Outcome | None = None,
    episode_id: str = "home/0",
    failure_reason: str | None = None,
) -> Trajectory:
    """Return a household record of ``rounds`` (numbered in order) and the final ``facts``.

    ``facts`` default to ``ended`` when the last round is ``end``, and ``outcome`` to success
    then (the metrics read the outcome only to tell an error; pass failure for a run that
    ended short of its keypath).
    """
    numbered = [r.model_copy(update={"round": i}) for i, r in enumerate(rounds, start=1)]
    ended = bool(rounds) and rounds[-1].status is RoundStatus.END
    facts = facts or HouseholdFacts(ended=ended, rounds=len(rounds))
    spec = EpisodeSpec(
        episode_id=episode_id,
        family="household",
        world=WorldSpec(builder="apartment", seed=0),
        start=Pose(0.0, 0.0, 0.0),
        mission=the_task.model_dump(mode="json"),
    )
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="scripted"),
        backend=PluginRef(name="kinematic"),
        seed=0,
        code_version="test",
    )
    steps = [_step(i, r) for i, r in enumerate(numbered)]
    footer = TrajectoryFooter(
        outcome=outcome or (Outcome.SUCCESS if ended else Outcome.FAILURE),
        steps=len(steps),
        failure_reason=failure_reason,
        facts=facts.as_record(),
    )
    return Trajectory(header, steps, footer)


def placed(item: str, relation: str, place: str | None = None) -> dict[str, PlaceFacts]:
    """Return the facts' place entry of ``item``."""
    return {item: PlaceFacts(relation=relation, place=place)}


def _step(index: int, round_: RoundRecord) -> StepRecord:
    return HouseholdStep(
        index=index,
        pose=Pose(0.0, 0.0, 0.0),
        action={"type": "subtask", "action": round_.action, "target": "", "skill": ""},
        clock_sim=float(index),
        clock_latency=float(index),
        round=round_,
    )


def store_records(store: Store, run: str, records: list[Trajectory], suite: str = "home") -> None:
    """Store hand-built records as run ``run``'s episodes, scored as a run scores them."""
    store.begin_run(run, run_config("household", agent=PluginRef(name="scripted")))
    folder = store.folder / run
    folder.mkdir(parents=True, exist_ok=True)
    spec = RunSpec(PluginRef(name="scripted"), object, "household", HouseholdSettings())
    for record in records:
        episode = record.header.episode
        path = record_path(folder, episode.episode_id, 0)
        lines = [record.header, *record.steps, record.footer]
        path.write_text("\n".join(line.model_dump_json() for line in lines) + "\n")
        job = Job(suite, episode, 0, path, spec)
        result = JobResult(job, record.footer, score_household(record), Timings(), 1.0)
        store.add(run, result)
