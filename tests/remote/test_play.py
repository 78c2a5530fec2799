"""Human play: a page in headless Chromium, driven key by key, makes an ordinary stored run."""

import threading
from pathlib import Path

import pytest

from sortie.core.records_io import read_trajectory
from sortie.missions.loading import load_suite
from sortie.remote.human import Desk
from sortie.remote.play import PlayRequest, play
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from tests.conftest import run_stored

from .keyplan import key_plan

# Under pytest -n one process runs this module: its fixture (the browser) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

CHROMIUM = Path("/usr/bin/chromium")
EPISODE = "rescue-smoke-v2/0000"


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's, as `make test` installs it), or a skip without one."""
    from tests.report.test_browser import ARGS, _unavailable

    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install sortie[dev])")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


class Session:
    """``sortie play`` of one episode in a thread; ``url`` once its page is served."""

    def __init__(self, store: Path, episode: str = EPISODE) -> None:
        self.served, self.url, self.results, self.error = threading.Event(), "", [], None
        self.desk = Desk()
        suite = episode.split("/")[0]
        request = PlayRequest(suite, (episode,), port=0, store=store, run_id="me")
        self.thread = threading.Thread(target=self._run, args=(request,), daemon=True)
        self.thread.start()
        assert self.served.wait(timeout=60), "the page was never served"

    def _run(self, request: PlayRequest) -> None:
        try:
            self.results = play(request, lambda line: None, self._ready, self.desk)
        except Exception as error:  # noqa: BLE001 - reported by the test
            self.error = error
            self.served.set()

    def _ready(self, url: str) -> None:
        self.url = url
        self.served.set()


def play_on_page(browser, session: Session, drive) -> str:
    """Open the page, let ``drive(page)`` play, wait for the end; return the page's text."""
    page = browser.new_page()
    try:
        page.goto(session.url, wait_until="load")
        drive(page)
        page.wait_for_function(
            "state.phase === 'ended' || state.phase === 'finished'", timeout=20_000
        )
        return page.inner_text("body")
    finally:
        page.close()
        session.thread.join(timeout=30)
        assert session.error is None and not session.thread.is_alive()


def press_all(page, keys: list[str]) -> None:
    """Press each key once the page shows a new view waiting for it."""
    seen = -1
    for key in keys:
        page.wait_for_function(
            "seen => state.phase === 'waiting' && state.seq > seen", arg=seen, timeout=20_000
        )
        seen = page.evaluate("state.seq")
        page.keyboard.press(key)


def test_an_l1_episode_played_with_keys_is_stored_as_human_and_scores_tcr_100(tmp_path, browser):
    """The rounded oracle's key presses on the page rescue the casualty: a stored TCR of 100 %."""
    keys, outcome = key_plan(
        next(e for e in load_suite("rescue-smoke-v2").episodes if e.episode_id == EPISODE)
    )
    assert outcome == "success"
    session = Session(tmp_path / "s.db")
    shown = play_on_page(browser, session, lambda page: press_all(page, keys))
    with Store(tmp_path / "s.db") as store:
        (episode,) = store.episodes("me")
        config = store.run_config("me")
    assert (episode.outcome, episode.steps, episode.metrics["tcr"]) == ("success", len(keys), 1.0)
    assert config.agent.name == "human" and config.clock == "latency"
    assert "walk forward" in shown and "success" in shown


def test_the_page_shows_the_brief_stages_time_and_keys(tmp_path, browser):
    """Before any key, the page shows the ego view, the clue, the stages, time left and keys."""
    session = Session(tmp_path / "s.db")
    page = browser.new_page()
    try:
        page.goto(session.url, wait_until="load")
        page.wait_for_function("state.phase === 'waiting'", timeout=20_000)
        page.wait_for_function("document.getElementById('view').naturalWidth > 0", timeout=5_000)
        text = page.inner_text("body")
        rows = page.eval_on_selector_all("#stages tr", "rows => rows.length")
    finally:
        page.close()
        session.desk.stop()
        session.thread.join(timeout=30)
    assert "Clue" in text and "s left" in text and "grab" in text and "open door" in text
    assert rows == 4


def test_a_session_stopped_mid_episode_stores_it_as_agent_error(tmp_path):
    """Stopping the desk while a step waits for a key stores that episode as an agent error."""
    session = Session(tmp_path / "s.db")
    session.desk.stop()
    session.thread.join(timeout=60)
    assert session.error is None
    (result,) = session.results
    assert (result.footer.outcome, result.footer.failure_reason) == ("error", "agent_error")
    assert "the player left at step 0" in (result.footer.error or "")


HOUSEHOLD = "household-smoke-v1/0001"


def oracle_rounds(tmp_path: Path) -> list:
    """Return the rounds of the oracle's run of the household task (same seed as play's)."""
    request = RunRequest(
        ("household-smoke-v1",), "oracle", store=tmp_path / "o.db", run_id="o", limit=1
    )
    run_stored(request)
    with Store(tmp_path / "o.db") as store:
        (episode,) = store.episodes("o")
    return [s.part for s in read_trajectory(episode.record).steps if s.part is not None]


def type_all(page, rounds: list, first: dict) -> None:
    """Type each round's subtask into the form once the page waits for it; note round 1's page."""
    seen = -1
    for planned in rounds:
        page.wait_for_function(
            "seen => state.phase === 'waiting' && state.seq > seen", arg=seen, timeout=20_000
        )
        seen = page.evaluate("state.seq")
        if planned.round == 1:
            first["views"] = page.eval_on_selector_all("#views img", "images => images.length")
            first["targets"] = page.evaluate("state.targets")
        for field in ("action", "target", "place", "skill"):
            page.fill(f"#{field}", getattr(planned, field) or "")
        page.click("#send")


def test_a_household_task_played_on_the_page_is_stored_as_human_and_succeeds(tmp_path, browser):
    """The oracle's subtasks typed into the page's form carry the task out: a stored SR 100."""
    rounds, first = oracle_rounds(tmp_path), {}
    session = Session(tmp_path / "s.db", HOUSEHOLD)
    shown = play_on_page(browser, session, lambda page: type_all(page, rounds, first))
    with Store(tmp_path / "s.db") as store:
        (episode,) = store.episodes("me")
    assert (episode.outcome, episode.steps, episode.metrics["sr"]) == ("success", len(rounds), 1.0)
    assert first["views"] == 4 and first["targets"] and "image_nav" in shown and "success" in shown
