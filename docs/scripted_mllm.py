"""Run ``mllm-aerial`` against the test server's scripted policy, for docs/results.md.

The "model" is ``sortie.testing.model_server.ModelServer`` answering from a fixed script that
never looks at the images: climb 5 m, fly forward d_max-sized steps (the mission clamps
them), then say done with "unknown" as the report. It shows the whole model path (prompt,
structured answer, clamping, judge, accounting) and where a model that ignores its eyes lands;
it is not a model's score.

Run: ``.venv/bin/python docs/scripted_mllm.py --suite aerial-v1 --store /tmp/results/s.db``
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.testing.model_server import ModelServer

SCRIPT = [("up", 5.0)] + [("forward", 50.0)] * 6


def scripted(messages: list[dict]) -> str:
    """Answer by how many actions the prompt's history lists so far."""
    if len(messages) < 2:  # the run's pre-flight check: one short chat call
        return "OK"
    text = messages[1]["content"][0]["text"]
    step = sum(1 for line in text.splitlines() if line[:1].isdigit() and ". " in line)
    if step >= len(SCRIPT):
        answer = {"action": "up", "magnitude": 0, "report": "unknown", "done": True}
    else:
        action, magnitude = SCRIPT[step]
        answer = {"action": action, "magnitude": magnitude, "report": None, "done": False}
    return json.dumps({"box": None, "reasoning": "scripted", **answer})


def main() -> None:
    """Run the suite with mllm-aerial on the scripted server into the store."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", default="aerial-v1")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--run-id", default="mllm-aerial-scripted")
    args = parser.parse_args()
    os.environ.setdefault("SORTIE_MODEL_API_KEY", "not-a-secret")
    with ModelServer(scripted) as server:
        request = RunRequest(
            (args.suite,),
            "mllm-aerial",
            agent_args={"model": "scripted-test-policy", "base_url": server.base_url},
            store=args.store,
            run_id=args.run_id,
        )
        with Store(request.store) as store:
            execute(plan_run(request, store), request, store)


if __name__ == "__main__":
    main()
