"""The in-context examples ``homiebot -a examples=N`` shows: expert rounds of train tasks.

EMMOE gives weaker models in-context examples. These are complete rounds (the request's
text, with the text observation, and the expert's answer) of the oracle with perfect skills
on the first tasks of household-v1's **train** split; a test split task is refused here, in
code, so the examples can never show a test task. The file is packaged beside the prompts
(``sortie/agents/mllm/prompts/household_examples.json``) and made again, byte for byte, by::

    .venv/bin/python -m sortie.export.household.examples \
        --out sortie/agents/mllm/prompts/household_examples.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
from itertools import zip_longest
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError
from sortie.export.household.planner import planned_rounds
from sortie.export.source import open_run
from sortie.missions.household import splits
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

SUITE = "household-v1"
TASKS = ("household-v1/0002", "household-v1/0005", "household-v1/0007")
"""Train tasks of three templates (short, long, logical); their rounds are the examples."""
PER_TASK = 3
"""Rounds kept of each task: its first, middle and last (the end)."""


def make_examples() -> list[dict[str, Any]]:
    """Return the examples: per task, a few rounds' request text and the expert's answer.

    Raises:
        ConfigError: a chosen task is not in the train split.
    """
    _check_train(TASKS)
    with tempfile.TemporaryDirectory() as folder:
        store_path = Path(folder) / "s.db"
        request = RunRequest(
            (SUITE,),
            "oracle",
            store=store_path,
            run_id="examples",
            episodes=TASKS,
            family_settings={"skills": "perfect"},
        )
        with Store(store_path) as store:
            execute(plan_run(request, store), request, store)
            run = open_run(store, "examples", "sft")
            rounds = [p for _, p in planned_rounds(run, {"observation": "text"})]
    kept = [_kept([r for r in rounds if r.episode_id == task]) for task in TASKS]
    # Interleaved (every task's first round, then the middle ones, then the ends), so that
    # a few examples already show several tasks.
    return [_example(p) for group in zip_longest(*kept) for p in group if p is not None]


def _check_train(episode_ids: tuple[str, ...]) -> None:
    usable = splits.train_tasks()
    for episode_id in episode_ids:
        if episode_id not in usable:
            raise ConfigError(
                f"{episode_id} is not a train task that quotes no test task: examples come "
                "from train only"
            )


def _kept(rounds: list[Any]) -> list[Any]:
    """Return the first, a middle and the last round of one task."""
    if len(rounds) <= PER_TASK:
        return rounds
    return [rounds[0], rounds[len(rounds) // 2], rounds[-1]]


def _example(planned: Any) -> dict[str, Any]:
    step = planned.messages[-1]["content"]
    text = step if isinstance(step, str) else step[0]["text"]
    return {
        "episode_id": planned.episode_id,
        "task": planned.task,
        "request": text,
        "answer": planned.answer_text,
    }


def main() -> None:
    """Write the examples file (``--out``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.write_text(json.dumps(make_examples(), indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
