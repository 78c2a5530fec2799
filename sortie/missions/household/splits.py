"""household-v1's train and test splits, and the rule that keeps the test split unseen.

Tasks 1–90 are for training (in-context examples, fine-tuning), 91–100 for scoring; the test
split is also its own suite, household-test-v1. The split field alone is not enough: the
generator drew the same instruction for two apartments twice, so a train task can read word
for word as a test task, or wrap it in a human-style greeting. Such a train task is held out
too; ``test_task_quoted`` finds it.
"""

from __future__ import annotations

from functools import cache

from sortie.missions.household.records import Split
from sortie.missions.household.spec import household_task
from sortie.missions.loading import load_suite

SUITE = "household-v1"
"""The 100 tasks, with their split."""
TEST_SUITE = "household-test-v1"
"""The test split (tasks 91–100) as a suite of its own."""


@cache
def test_instructions() -> dict[str, str]:
    """Return each test task's instruction, by episode id."""
    return {e.episode_id: household_task(e).instruction for e in load_suite(TEST_SUITE).episodes}


def test_task_quoted(text: str) -> str | None:
    """Return the id of a test task whose instruction ``text`` holds or is held in, or None."""
    for episode_id, instruction in test_instructions().items():
        if instruction in text or text in instruction:
            return episode_id
    return None


@cache
def train_tasks() -> tuple[str, ...]:
    """Return household-v1's train tasks that quote no test task, in suite order."""
    return tuple(
        e.episode_id
        for e in load_suite(SUITE).episodes
        if household_task(e).split is Split.TRAIN
        and test_task_quoted(household_task(e).instruction) is None
    )
