"""The training sets: the oracle's rounds on household-v1's train split, as SFT and DPO rows.

The oracle plays the train tasks with the default (imperfect) skills, so its records hold
failed subtasks and their re-plans, which is what DPO's ``replan`` pairs are made of. Both
sets are exported with the prompt settings the fine-tuned model is evaluated with, so a row
is exactly a request ``homiebot`` sends. The test split is held out: train tasks that share
their instruction with a test task are not played, and every row is checked here, in code:
a row of a test task, or one that quotes a test task's instruction, stops the pipeline
before any training.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError
from sortie.export.request import ExportRequest, NothingToExport, export_run
from sortie.missions.household import splits
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

TRAIN_SUITE = splits.SUITE
"""The suite whose train split (tasks 1–90) the training rows come from."""
TEST_SUITE = splits.TEST_SUITE
"""The held-out split (tasks 91–100) the models are scored on; never trained on."""
EXPERT_RUN = "expert"
OWN_RUN = "sft-own"
"""The SFT model's run on train tasks, whose lost rounds the oracle corrects."""
PREFERENCES = ("replan", "correction")
"""The DPO pairs trained on: a failed subtask against the next, other, one that worked (the
oracle's re-plans and the SFT model's), and the SFT model's lost round against the oracle's
choice from there."""


@dataclass(frozen=True, slots=True)
class TrainingSets:
    """The exported sets and what they hold."""

    sft: Path
    dpo: Path
    tasks: tuple[str, ...]
    """The train tasks the oracle played."""
    rows: Mapping[str, int]
    """Rows per set (``sft``, ``dpo``)."""


def train_tasks(limit: int | None = None) -> tuple[str, ...]:
    """Return the train tasks to learn from (see ``splits.train_tasks``); the first ``limit``."""
    ids = splits.train_tasks()
    return ids if limit is None else ids[:limit]


def make_sets(
    folder: Path, prompt: Mapping[str, str], limit: int | None, echo: Callable[[str], None]
) -> TrainingSets:
    """Play the train tasks with the oracle and export SFT and DPO rows under ``folder``.

    ``prompt`` holds homiebot's prompt arguments (``observation=text``, ``window``): the
    rows are the requests homiebot sends with them.

    Raises:
        ConfigError: a row comes from, or quotes, a test task (see ``check_held_out``).
    """
    tasks = train_tasks(limit)
    store = folder / "expert.db"
    request = RunRequest((TRAIN_SUITE,), "oracle", store=store, run_id=EXPERT_RUN, episodes=tasks)
    with Store(store) as opened:
        execute(plan_run(request, opened), request, opened)
    sets = {}
    for kind in ("sft", "dpo"):
        out = folder / kind
        if not out.exists():
            export_run(ExportRequest(kind, store, EXPERT_RUN, out, dict(prompt)), echo)
        sets[kind] = out
    counts = {kind: check_held_out(load_rows(path)) for kind, path in sets.items()}
    return TrainingSets(sets["sft"], sets["dpo"], tasks, counts)


def own_pairs(folder: Path, store: Path, echo: Callable[[str], None]) -> Any | None:
    """Export the DPO pairs of the SFT model's run on train tasks (``OWN_RUN`` in ``store``).

    Each pair's prompt is the request its round was sent. Returns the pairs, or None when no
    round gave one (no readable answer, or nothing lost).

    Raises:
        ConfigError: a pair comes from, or quotes, a test task.
    """
    out = folder / "own-dpo"
    if not out.exists():
        try:
            export_run(ExportRequest("dpo", store, OWN_RUN, out, {}), echo)
        except NothingToExport as error:
            echo(f"no pairs of the SFT model's own rounds: {error}")
            return None
    rows = load_rows(out)
    check_held_out(rows)
    return rows


def dpo_pairs(expert: Any, own: Any | None) -> Any:
    """Return the pairs DPO trains on: ``PREFERENCES`` of both sets, as prompt and answers."""
    from datasets import concatenate_datasets

    sets = [expert] if own is None else [expert, own]
    kept = [rows.filter(lambda row: row["kind"] in PREFERENCES) for rows in sets]
    columns = ["prompt", "chosen", "rejected"]
    return concatenate_datasets([rows.select_columns(columns) for rows in kept])


def load_rows(folder: Path) -> Any:
    """Return an exported set as a ``datasets.Dataset`` (cached beside it, not in ``~``)."""
    from datasets import load_dataset

    return load_dataset(str(folder), split="train", cache_dir=str(folder / ".cache"))


def check_held_out(rows: Any) -> int:
    """Check that no row is of, or quotes, a test task; return the number of rows.

    Raises:
        ConfigError: naming the row, its episode and what it shares with the test split.
    """
    train = set(splits.train_tasks())
    for index, row in enumerate(rows):
        where = f"training row {index} (episode {row['episode_id']})"
        if row["episode_id"] not in train:
            raise ConfigError(f"{where}: not a train task; the test split is held out")
        for text in _texts(row):
            quoted = _quoted(text)
            if quoted is not None:
                raise ConfigError(f"{where}: quotes the instruction of test task {quoted}")
    return len(rows)


def _quoted(text: str) -> str | None:
    """Return the test task whose instruction ``text`` holds, or None."""
    return next((i for i, words in splits.test_instructions().items() if words in text), None)


def _texts(row: Mapping[str, Any]) -> list[str]:
    """Return every message text of an SFT or DPO row."""
    columns = ("messages", "prompt", "chosen", "rejected")
    messages = [m for column in columns for m in row.get(column) or ()]
    out = []
    for message in messages:
        content = message["content"]
        parts = [{"text": content}] if isinstance(content, str) else content
        out += [part["text"] for part in parts if part.get("text")]
    return out
