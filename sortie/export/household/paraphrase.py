"""EMMOE's SFT augmentation: the task and the analysis of each sample said again in other words.

A model (through sortie's model client, any OpenAI-compatible server) rewrites the pair
``{task, analysis}`` of a sample ``count`` times; each rewrite is another sample whose
requests carry the new task text and whose answer the new analysis (the subtask and skill
stay as they were). A rewrite the server fails to give, or gives in the wrong shape, is left
out and counted: the export goes on.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field

from sortie.core.errors import SortieError
from sortie.export.files import Rows
from sortie.export.household.planner import Message, PlannedRound
from sortie.models.client import ModelClient
from sortie.models.config import ModelConfig

SYSTEM = (
    "You rewrite texts for a training set. Keep the meaning, every object name and every "
    "place exactly; change the wording. Answer with one JSON object: "
    '{"task": "...", "analysis": "..."}.'
)


class Rewrite(BaseModel):
    """A rewritten task and analysis."""

    task: str = Field(min_length=1, max_length=4000)
    analysis: str = Field(default="", max_length=4000)


def paraphrased(
    rounds: Iterable[PlannedRound], count: int, model_args: Mapping[str, Any], counts: Rows
) -> Iterator[PlannedRound]:
    """Yield each round, then ``count`` rewrites of it (failures counted in ``counts``)."""
    client = ModelClient(ModelConfig.from_args(dict(model_args))) if count else None
    try:
        for planned in rounds:
            yield planned
            if client is None or planned.answer is None or not planned.task:
                continue
            for number in range(count):
                rewrite = _ask(client, planned, number)
                if rewrite is None:
                    counts.counts["paraphrases failed"] += 1
                    continue
                counts.counts["paraphrases"] += 1
                yield _rewritten(planned, rewrite)
    finally:
        if client is not None:
            client.close()


def _ask(client: ModelClient, planned: PlannedRound, number: int) -> Rewrite | None:
    assert planned.answer is not None
    given = {"task": planned.task, "analysis": planned.answer.get("analysis", "")}
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Rewrite {number + 1}: {json.dumps(given)}"},
    ]
    try:
        reply = client.ask(messages, Rewrite)
    except SortieError:
        return None
    return reply.value if isinstance(reply.value, Rewrite) else None


def _rewritten(planned: PlannedRound, rewrite: Rewrite) -> PlannedRound:
    assert planned.answer is not None
    answer = dict(planned.answer)
    if "analysis" in answer:
        answer["analysis"] = rewrite.analysis
    messages = [_swap(message, planned.task, rewrite.task) for message in planned.messages]
    return dataclasses.replace(planned, messages=messages, answer=answer, task=rewrite.task)


def _swap(message: Message, old: str, new: str) -> Message:
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": content.replace(old, new)}
    parts = [
        {**part, "text": part["text"].replace(old, new)} if part.get("type") == "text" else part
        for part in content
    ]
    return {**message, "content": parts}
