"""Run ``homiebot`` against the test server's scripted policy, for docs/results.md.

The "model" is ``sortie.testing.model_server.ModelServer`` answering from a script written
from the task sentence alone; it never reads the views. It takes each "the X on/in the Y" of
the instruction and plans go to X, pick X, go to Y, open Y (for "in"), put X on/in Y, then end,
whatever happens (it counts the rounds of the history, not their outcomes). Odd rounds answer
in JSON, even ones in EMMOE's plain form (``Analysis: ... Subtask: [Pick, kettle] Model:
grasp``). It shows the whole planner path (prompt, both answer forms, name resolution, the
executor's checks and codes) and where a planner that reads but never looks lands; it is not a
model's score.

Run: ``.venv/bin/python docs/scripted_homiebot.py --suite household-test-v1 --store S.db``
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.testing.model_server import ModelServer

_PAIR = re.compile(
    r"the ([a-z][a-z ]*?) (?:and leave it )?(on|in) the ([a-z]+(?: (?!in\b|on\b|and\b)[a-z]+)?)"
)
_HISTORY = re.compile(r"^\(\d+\) ", re.M)


def plan(task: str) -> list[tuple[str, str, str, str | None]]:
    """Return the script for ``task``: (action, target, skill, place) per round."""
    steps: list[tuple[str, str, str, str | None]] = []
    for item, relation, place in _PAIR.findall(task.lower()):
        steps += [("go_to", item, "object_nav", None), ("pick", item, "grasp", None)]
        steps.append(("go_to", place, "image_nav", None))
        if relation == "in":
            steps.append(("open", place, "articulate", None))
        steps.append(("put", item, "grasp", place))
    return steps


def scripted(messages: list[dict]) -> str:
    """Answer the round the request's history is at, from the task line of the request."""
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    task = text.split("\n", 1)[0].removeprefix("Task: ")
    steps, done = plan(task), len(_HISTORY.findall(text))
    if done >= len(steps):
        return json.dumps({"analysis": "scripted", "subtask": {"action": "end"}, "skill": ""})
    action, target, skill, place = steps[done]
    if done % 2:
        words = ", ".join(w for w in (action, target, place) if w)
        return f"Analysis: scripted. Subtask: [{words}] Model: {skill}"
    subtask = {"action": action, "target": target, "place": place}
    return json.dumps({"analysis": "scripted", "subtask": subtask, "skill": skill})


def main() -> None:
    """Run the suite with homiebot (text observation) on the scripted server into the store."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", default="household-test-v1")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--run-id", default="homiebot-scripted")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("SORTIE_MODEL_API_KEY", "not-a-secret")
    with ModelServer(scripted) as server:
        request = RunRequest(
            (args.suite,),
            "homiebot",
            agent_args={
                "model": "scripted-test-policy",
                "base_url": server.base_url,
                "observation": "text",
            },
            store=args.store,
            run_id=args.run_id,
            repeats=args.repeats,
        )
        with Store(request.store) as store:
            execute(plan_run(request, store), request, store)


if __name__ == "__main__":
    main()
