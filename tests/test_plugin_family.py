"""A family from another package plugs in by entry points alone (tests/plugins/sortie_beacon).

The ``beacon`` family brings its own action type, event kind, observation part and per-step
record part, its report descriptor and its random play. Put on a fresh interpreter's path with
the ``dist-info`` folder ``pip install`` would write, it is generated, run (by its own agent and
by ``random``), reported (JSON and HTML), made as a gymnasium env and served to a remote run,
with no file of sortie's edited.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Under pytest -n one process runs this module: its fixture (the plug-in installed) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

PLUGINS = Path(__file__).parent / "plugins"
ENTRY_POINTS = """\
[sortie.families]
beacon = sortie_beacon.family:BEACON

[sortie.agents]
ping-walker = sortie_beacon.family:PingWalker

[sortie.randoms]
beacon = sortie_beacon.shown:RandomPing

[sortie.reports]
beacon = sortie_beacon.shown:REPORT
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Return an environment whose Python finds the package and its entry points."""
    site = tmp_path_factory.mktemp("site")
    info = site / "sortie_beacon-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sortie-beacon\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    path = os.pathsep.join([str(site), str(PLUGINS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture(scope="module")
def ran(installed, tmp_path_factory):
    """Generate a suite of four episodes and run it with the package's agent; return the folder."""
    folder = tmp_path_factory.mktemp("beacon")
    suite, store = folder / "beacon.jsonl", folder / "s.db"
    sortie(installed, "generate", "beacon", "--count", "4", "--seed", "3", "--out", str(suite))
    run = ["run", str(suite), "--agent", "ping-walker", "--store", str(store), "--run-id", "b"]
    sortie(installed, *run, "-F", "reach=2")
    at_random = ["run", str(suite), "--agent", "random", "--store", str(store), "--run-id", "x"]
    sortie(installed, *at_random)
    return folder


def sortie(env: dict[str, str], *words: str) -> str:
    """Run the sortie command line in a fresh interpreter; return its output (fail on an error)."""
    done = subprocess.run(
        [sys.executable, "-m", "sortie.cli", *words], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_its_records_hold_its_own_words(ran):
    """A step line spells the ping, the heard event and the ping's record as the family does."""
    records = (ran / "b").rglob("*.jsonl")
    lines = [json.loads(line) for path in records for line in path.read_text().splitlines()]
    steps = [line for line in lines if line["kind"] == "step"]
    pings = [s for s in steps if s["action"]["type"] == "ping"]
    heard = [s for s in pings if any(e["kind"] == "heard" for e in s["events"])]
    assert pings and all(set(s["round"]) == {"signal", "heard"} for s in pings)
    assert heard and all(s["round"]["heard"] for s in heard)
    assert all(s["round"] is None for s in steps if s["action"]["type"] == "move")


def test_it_is_reported_in_json_and_html(installed, ran):
    """The report reads its records (its metrics, per level) and writes its episode pages."""
    store, html = str(ran / "s.db"), ran / "html"
    out = sortie(installed, "report", "--run", "b", "--store", store, "--format", "json")
    rows = json.loads(out[out.index("{") :])
    assert rows["b"]["all"]["episodes"] == 4 and rows["b"]["all"]["sr"]["mean"] == 100.0
    assert rows["b"]["all"]["pings"]["mean"] >= 1
    sortie(installed, "report", "--run", "b", "--store", store, "--html", str(html))
    pages = [p.read_text() for p in html.rglob("*.html")]
    assert len(pages) >= 5 and any("heard" in page for page in pages)
    assert any("ping the beacon" in page for page in pages)  # its own report descriptor


def test_the_random_agent_plays_it_with_its_own_play(installed, ran):
    """``random`` finds the family's play by its entry point and pings as well as moves."""
    records = (ran / "x").rglob("*.jsonl")
    steps = [json.loads(line) for path in records for line in path.read_text().splitlines()[1:-1]]
    assert {s["action"]["type"] for s in steps} == {"move", "ping"}


def test_it_is_a_gymnasium_env_and_is_served_to_a_remote_run(installed, ran):
    """Its env shows the signal; a remote run of its agent takes the same steps as a local one."""
    script = textwrap.dedent(
        f"""
        import json, gymnasium, sortie
        from pathlib import Path
        from sortie.core.records_io import read_suite
        from sortie.remote.served import AgentEndpoint
        from sortie.remote.server import AgentServer
        from typer.testing import CliRunner
        from sortie.cli import app

        suite = read_suite(Path({str(ran / "beacon.jsonl")!r}))
        env = gymnasium.make("sortie/Beacon-v1", episodes=suite.episodes, reach=2.0)
        observation, _ = env.reset(seed=0)
        signals = [env.step({{"move": [0.0, 0.0], "ping": 1}})[0]["signal"][0] for _ in range(2)]
        env.close()
        server = AgentServer(AgentEndpoint("ping-walker", {{}}), "127.0.0.1", 0).start()
        try:
            words = ["run", {str(ran / "beacon.jsonl")!r}, "--agent", "remote", "-a",
                     "url=" + server.url, "--store", {str(ran / "s.db")!r}, "--run-id", "r",
                     "-F", "reach=2"]
            result = CliRunner().invoke(app, words)
        finally:
            server.stop()
        print(json.dumps({{"signals": [float(s) for s in signals], "code": result.exit_code,
                           "output": result.output, "space": sorted(env.observation_space)}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=installed, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["code"] == 0, answer["output"]
    assert "signal" in answer["space"] and 0 < answer["signals"][0] == answer["signals"][1] < 1
    local = _steps(ran, "b")
    assert local == _steps(ran, "r") and len(local) == 4


def _steps(folder: Path, run: str) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(folder / "s.db") as db:
        rows = db.execute("SELECT episode_id, steps FROM episodes WHERE run_id = ?", (run,))
        return dict(rows.fetchall())
