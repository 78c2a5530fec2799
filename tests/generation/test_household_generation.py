"""Household task generation: the committed suites, the templates' rules, expert plans."""

from __future__ import annotations

import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import write_suite
from sortie.generation.household import LONG, HouseholdValidator, generate_task
from sortie.generation.household_suites import (
    HOUSEHOLD_SUITES,
    MIX,
    TRAIN,
    generate_household_suite,
)
from sortie.generation.request import GenerateRequest
from sortie.generation.suites import build_suite, committed_bytes
from sortie.missions.household.records import TaskAttribute, Verb
from sortie.missions.household.spec import household_task
from sortie.missions.loading import load_suite

# Under pytest -n one process runs this module: its fixture (the smoke suite) is made once.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def smoke():
    """The household smoke suite, regenerated."""
    return build_suite("household-smoke-v1")


@pytest.fixture(scope="module")
def tasks():
    """Every task of household-v1, as committed."""
    return [household_task(spec) for spec in load_suite("household-v1").episodes]


def test_smoke_suite_regenerates_byte_for_byte(smoke, tmp_path):
    """Regenerating household-smoke-v1 reproduces the committed file exactly."""
    path = tmp_path / "smoke.jsonl"
    write_suite(path, *smoke)
    assert path.read_bytes() == committed_bytes("household-smoke-v1")


def test_smoke_covers_every_attribute(smoke):
    """The smoke suite's tasks carry all five attributes between them."""
    attributes = {a for spec in smoke[1] for a in household_task(spec).attributes}
    assert attributes == set(TaskAttribute)


def test_a_test_split_task_regenerates_alone_as_committed():
    """Task 95 regenerated on its own equals the committed one (same id in both suites)."""
    plan = HOUSEHOLD_SUITES["household-v1"]
    kind, number, episode_id = plan.jobs()[94]
    fresh = plan.episode(kind, number, episode_id)
    committed = load_suite("household-v1").episodes[94]
    assert fresh == committed
    assert committed in load_suite("household-test-v1").episodes


def test_household_v1_has_the_splits_and_the_mix(tasks):
    """100 tasks: 1-90 train, 91-100 test; the templates in their planned numbers."""
    episodes = load_suite("household-v1").episodes
    assert [e.episode_id for e in episodes] == [f"household-v1/{n:04d}" for n in range(1, 101)]
    assert [t.split.value for t in tasks] == ["train"] * TRAIN + ["test"] * (100 - TRAIN)
    kinds = [e.level for e in episodes]
    assert {k: kinds.count(k) for k in MIX} == MIX


def test_long_tasks_need_ten_subtasks_and_fit_the_rounds(tasks):
    """A long task's expert plan has 10+ subtasks besides end, and every plan fits 20 rounds."""
    for task in tasks:
        subtasks = len(task.expert) - 1
        assert subtasks < task.max_rounds
        if TaskAttribute.LONG in task.attributes:
            assert subtasks >= LONG


def test_open_ended_tasks_have_alternatives(tasks):
    """Every open-ended task has two or more keypaths; others have one."""
    for task in tasks:
        several = len(task.keypaths) > 1
        assert several == (TaskAttribute.OPEN_ENDED in task.attributes)


def test_the_expert_plan_ends_with_end_and_names_a_skill_per_subtask(tasks):
    """Experts end with end; every other step has a sensor-only skill."""
    for task in tasks:
        assert task.expert[-1].action is Verb.END
        assert all(
            s.skill in {"image_nav", "object_nav", "grasp", "articulate"} for s in task.expert[:-1]
        )


def test_an_unknown_template_is_refused_with_the_choices():
    """Asking for a template that does not exist names the ones that do."""
    with pytest.raises(Exception, match="short"):
        generate_task("tidy", 0, 1, "x/0001", validator=HouseholdValidator.create())


def test_generate_household_writes_loadable_tasks_of_one_template(tmp_path):
    """`sortie generate household --type short --count 2` writes two short tasks that load."""
    path = tmp_path / "mine.jsonl"
    generate_household_suite(GenerateRequest(types="short", count=2, seed=5, out=path), print)
    suite = load_suite(path)
    assert [e.episode_id for e in suite.episodes] == ["mine/0001", "mine/0002"]
    assert all(household_task(e).attributes == [TaskAttribute.SHORT] for e in suite.episodes)


def test_generate_household_names_the_templates_on_a_bad_type(tmp_path):
    """An unknown template is a ConfigError that lists the templates."""
    with pytest.raises(ConfigError, match="logical\\+human_style"):
        generate_household_suite(GenerateRequest(types="tidy", out=tmp_path / "x.jsonl"), print)
