import html
from pathlib import Path

import pytest

from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.report.site import write_site
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.testing.episodes import room_rescue
from sortie.testing.frames import add_frames, colour_frames
from sortie.testing.saying import SayingAgent

NEAR = (-1.0, -0.5)
"""A casualty 4.6 m from the start: inside the 7.5 m sighting radius, so S1 is done at once."""
SCRIPT = "<script>document.title='pwned';window.pwned=1</script>"
"""What the saying agent says: markup that must reach pages as text and never run."""
SAYING_RUN = "saying"
"""Run and episode ids cannot hold markup (the loader refuses them); agent output can."""
CLIP_FRAMES = 6


def episode(episode_id: str, level: str, near: bool, budget_s: float) -> EpisodeSpec:
    """Return the handmade room episode with the casualty near or far, at ``level``."""
    spec = room_rescue(episode_id, budget_s, NEAR if near else (4.0, 3.0))
    return spec.model_copy(update={"level": level})


def suite_file(folder: Path, name: str, episodes: list[EpisodeSpec]) -> str:
    path = folder / f"{name}.jsonl"
    write_suite(path, SuiteHeader(suite=name), episodes)
    return str(path)


def run(store: Path, suite: str, agent: str, run_id: str, **args: str) -> None:
    request = RunRequest((suite,), agent, agent_args=args, store=store, run_id=run_id)
    with Store(store) as opened:
        execute(plan_run(request, opened), request, opened)


@pytest.fixture(scope="session")
def store_path(tmp_path_factory) -> Path:
    """A store of three runs whose stage outcomes are known without running them.

    ``good`` (oracle): L1 near with time to finish (all four stages), L1 far with 1 s (none),
    L2 near with 1 s (S1 only). ``idle`` (random): L1 near and far with 1 s (S1; none).
    ``saying`` (the saying agent, saying a script): two episodes, one with its first frames
    recorded. ``failing``: the same, raising at step 3.
    """
    folder = tmp_path_factory.mktemp("reporting")
    path = folder / "s.db"
    good = suite_file(
        folder,
        "good",
        [
            episode("g/near", "L1", True, 120.0),
            episode("g/far", "L1", False, 1.0),
            episode("g/l2", "L2", True, 1.0),
        ],
    )
    idle = suite_file(
        folder, "idle", [episode("i/near", "L1", True, 1.0), episode("i/far", "L1", False, 1.0)]
    )
    run(path, good, "oracle", "good")
    run(path, idle, "random", "idle")
    saying = suite_file(
        folder, "say", [episode("s/frames", "L1", True, 2.0), episode("s/quiet", "L1", True, 2.0)]
    )
    from sortie.agents.base import AGENTS

    with AGENTS.override("saying", SayingAgent):
        run(path, saying, "saying", SAYING_RUN, text=SCRIPT)
        run(path, saying, "saying", "failing", text=SCRIPT, fail_at="3")
    with Store(path) as opened:
        record = next(e.record for e in opened.episodes(SAYING_RUN) if e.episode_id == "s/frames")
        add_frames(record, opened.folder, colour_frames(CLIP_FRAMES))
    return path


@pytest.fixture(scope="session")
def site(store_path, tmp_path_factory) -> Path:
    """The HTML report of every run in the store; returns its index page."""
    with Store(store_path) as opened:
        return write_site(opened, opened.runs(), tmp_path_factory.mktemp("site") / "report")


def episode_page(site: Path, episode_id: str, run: str = SAYING_RUN) -> Path:
    """Return the report's page of ``episode_id`` in ``run`` (found by its heading)."""
    heading = f"<h1>{html.escape(f'{episode_id} · {run}')}</h1>"
    found = [p for p in (site.parent / "episodes").glob("*.html") if heading in p.read_text()]
    assert len(found) == 1, heading
    return found[0]


@pytest.fixture(scope="session")
def portal(store_path, site) -> Path:
    """The front page over the report of every run in the store; returns its path."""
    from sortie.report.site import Report, write_portal

    with Store(store_path) as opened:
        report = Report("rescue: good, idle, say", site, tuple(opened.runs()))
        return write_portal(site.parent.parent, opened, [report])
