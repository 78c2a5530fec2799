"""The policy helper: the docs' example serves and plays, and it needs none of the runtime."""

import re
import subprocess
import sys
from pathlib import Path

from sortie.remote.policy import PolicyEndpoint

from .conftest import events_of, remote_run, serving

DOCS = Path(__file__).parents[2] / "docs" / "remote.md"


def docs_policy() -> tuple[str, type]:
    """Return the source and the class of the complete policy in docs/remote.md."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    source = next(block for block in blocks if "serve(" in block)
    namespace: dict = {}
    exec(compile(source, str(DOCS), "exec"), namespace)
    return source, namespace["WallAvoider"]


def test_the_docs_policy_is_complete_in_under_30_lines():
    """The example policy of docs/remote.md, serving included, is shorter than 30 lines."""
    source, _ = docs_policy()
    assert len(source.strip().splitlines()) < 30 and "serve(WallAvoider" in source


def test_the_docs_policy_served_plays_every_step_with_valid_actions(tmp_path, tiny_rescue):
    """Served by the helper, the docs' policy plays both episodes to their budget, never invalid."""
    _, policy = docs_policy()
    endpoint = PolicyEndpoint(policy, "wall-avoider", ["rescue"], ["depth"])
    with serving(endpoint) as server:
        episodes = remote_run(tmp_path, tiny_rescue, server.url)
    assert [(e.outcome, e.steps) for e in episodes] == [("failure", 10)] * 2
    assert not [e for e in events_of(episodes[0]) if e["kind"] == "invalid_action"]


def test_the_policy_helper_imports_no_agent_mission_run_or_model_code():
    """Importing sortie.remote.policy leaves the agents, missions' runtime, runs and models out."""
    code = (
        "import sys, sortie.remote.policy; "
        "print(sorted(m for m in sys.modules if m.startswith(('sortie.agents', "
        "'sortie.missions.runtime', 'sortie.run', 'sortie.models', 'sortie.backends.embedded'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
