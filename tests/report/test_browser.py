"""The report in a real browser (headless Chromium, driven by playwright), from file://."""

import os
from pathlib import Path

import pytest

from .conftest import CLIP_FRAMES, SAYING_RUN, SCRIPT, episode_page

# Under pytest -n one process runs this module: its fixture (the browser) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

LONGEST_WAIT_MS = 180_000


def _unavailable(reason: str) -> None:
    # `make test` sets SORTIE_REQUIRE_BROWSER=1 after installing Chromium: there, a missing
    # browser is a broken setup, not a reason to skip.
    if os.environ.get("SORTIE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and SORTIE_REQUIRE_BROWSER=1 requires it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's), or a skip when it is not installed."""
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


class Visit:
    """A page opened from disk, with what went wrong while loading it."""

    def __init__(self, browser, path: Path) -> None:
        self.page = browser.new_page()
        # Every wait below is for the page's own signal (its load event, an element, a link's
        # navigation); the bound only stops a test that hangs, so it leaves room for a loaded
        # 2-core machine, where 30 s ran out once.
        self.page.set_default_timeout(LONGEST_WAIT_MS)
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def images_loaded(self) -> bool:
        return self.page.evaluate(
            # A hidden image is the player's frame at a step that kept none: it has no source.
            "Array.from(document.images).filter(i => !i.hidden)"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )


def test_the_index_loads_from_disk_with_its_plots_and_nothing_else(browser, site):
    """No console error, no failed request, every image shown, every request a local file."""
    visit = Visit(browser, site)
    assert visit.errors == []
    assert visit.images_loaded() and visit.page.locator("img").count() == 2
    assert all(url.startswith("file://") for url in visit.requests)
    # main, stages, how episodes ended, model calls, where the time went, then one per run
    assert visit.page.locator("table").count() == 9


def test_an_episode_page_loads_with_its_map_frame_and_clip(browser, site):
    """The page of the episode with frames shows its reference, frame, map and video, no errors."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    assert visit.errors == []
    assert visit.images_loaded()
    sources = visit.page.eval_on_selector_all("img", "els => els.map(e => e.src)")
    folders = [Path(s).parent.name for s in sources]
    assert folders[0] == "refs" and folders[2:] == ["maps"]
    visit.page.wait_for_function("document.querySelector('video.clip').readyState >= 2")
    assert visit.page.eval_on_selector("video.clip", "v => v.videoWidth") > 0
    assert Path(sources[1]).parent.parent.name == "frames"  # the first step's frame
    assert all(url.startswith("file://") for url in visit.requests)


def test_the_index_links_reach_the_episode_pages(browser, site):
    """Following an episode link from the index opens that episode's page."""
    visit = Visit(browser, site)
    visit.page.get_by_role("link", name="good/g/far/0").click()
    visit.page.wait_for_load_state("load")
    assert visit.page.locator("h1").inner_text() == "g/far · good"
    assert visit.errors == [] and visit.images_loaded()


def test_a_script_the_agent_said_is_shown_and_never_run(browser, site):
    """The agent's '<script>' output is visible text; the title and globals stay untouched."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    assert SCRIPT in visit.page.locator("body").inner_text()
    assert visit.page.title() == f"s/frames · {SAYING_RUN}"
    assert visit.page.evaluate("typeof window.pwned") == "undefined"
    assert visit.errors == []


def _player_state(visit: Visit) -> dict:
    """Return what the player shows now: step text, frame source, marker place, stage."""
    return visit.page.evaluate(
        """() => ({
            step: document.getElementById('player-step').textContent,
            pose: document.getElementById('player-pose').textContent,
            stage: document.getElementById('player-stage').textContent,
            frame: document.getElementById('player-frame').hidden
                ? null : document.getElementById('player-frame').src,
            marker: [document.getElementById('player-marker').style.left,
                     document.getElementById('player-marker').style.top],
        })"""
    )


def _slide(visit: Visit, position: int) -> None:
    visit.page.locator("#player-slider").fill(str(position))


def test_the_slider_moves_the_frame_the_marker_and_the_text_together(browser, site):
    """Sliding from the first step to the fifth changes the frame, the marker and the text."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    first = _player_state(visit)
    _slide(visit, 4)
    fifth = _player_state(visit)
    assert first["step"].startswith("step 1 of") and fifth["step"].startswith("step 5 of")
    assert first["frame"] and fifth["frame"] and first["frame"] != fifth["frame"]
    assert first["marker"] != fifth["marker"] and first["pose"] != fifth["pose"]
    assert visit.images_loaded() and visit.errors == []


def test_a_step_without_a_frame_says_so(browser, site):
    """Past the recorded frames the frame is hidden and the page says none was kept."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    _slide(visit, CLIP_FRAMES + 1)
    assert _player_state(visit)["frame"] is None
    assert visit.page.locator("#player-noframe").is_visible()


def test_the_arrow_keys_step_through_the_episode(browser, site):
    """Right arrow goes a step on, left arrow a step back."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    visit.page.keyboard.press("ArrowRight")
    visit.page.keyboard.press("ArrowRight")
    assert _player_state(visit)["step"].startswith("step 3 of")
    visit.page.keyboard.press("ArrowLeft")
    assert _player_state(visit)["step"].startswith("step 2 of")


def test_the_stage_bar_marks_each_stage_and_jumps_to_its_start(browser, site):
    """The oracle's bar names its stages in order; a click on the last moves the slider there."""
    visit = Visit(browser, episode_page(site, "g/near", "good"))
    parts = visit.page.locator("#player-stages .stage")
    # S1 and S3 are done as soon as they begin: casualty and stretcher are in sight.
    assert parts.all_inner_texts() == ["S2 rescue", "S4 hand-off"]
    parts.last.click()
    assert _player_state(visit)["stage"] == "stage: S4 hand-off"


def test_play_runs_the_steps_until_paused(browser, site):
    """Play moves the slider on by itself; pause stops it."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    visit.page.locator("#player-play").click()
    visit.page.wait_for_timeout(500)  # (wait_for_function evaluates a string: the policy refuses)
    visit.page.locator("#player-play").click()
    stopped = visit.page.locator("#player-slider").input_value()
    visit.page.wait_for_timeout(400)
    assert visit.page.locator("#player-slider").input_value() == stopped != "0"


GOOD = "//h2[text()='Episodes of good']/following-sibling::div[1]"
"""The box of the good run's episode table (its filters, then the table)."""


def _shown_rows(visit: Visit) -> list[list[str]]:
    """Return the cells of the good run's rows that are shown."""
    return visit.page.locator(f"xpath={GOOD}//table").evaluate(
        """t => Array.from(t.tBodies[0].rows).filter(r => !r.hidden)
            .map(r => Array.from(r.cells, c => c.textContent))"""
    )


def test_an_outcome_filter_keeps_only_the_rows_of_that_outcome(browser, site):
    """Choosing 'success' in the good run's outcome filter leaves its one success."""
    visit = Visit(browser, site)
    select = visit.page.locator(f"xpath={GOOD}//select[@aria-label='filter by outcome']")
    assert sorted(r[3] for r in _shown_rows(visit)) == ["failure", "failure", "success"]
    select.select_option("success")
    assert [r[0] for r in _shown_rows(visit)] == ["good/g/near/0"]
    select.select_option("")
    assert len(_shown_rows(visit)) == 3 and visit.errors == []


def test_a_click_on_a_column_head_sorts_the_rows(browser, site):
    """Steps sort up on the first click and down on the second."""
    visit = Visit(browser, site)
    head = visit.page.locator(f"xpath={GOOD}//th[text()='steps']")
    head.click()
    steps = [int(r[5]) for r in _shown_rows(visit)]
    assert steps == sorted(steps)
    head.click()
    assert [int(r[5]) for r in _shown_rows(visit)] == sorted(steps, reverse=True)


def test_the_side_by_side_page_loads_and_links_to_both_episodes(browser, site):
    """The comparison opens from the index, shows its maps, and reaches an episode page."""
    visit = Visit(browser, site)
    with visit.page.expect_navigation(wait_until="load"):
        visit.page.get_by_role("link", name=f"failing and {SAYING_RUN}, side by side").click()
    assert visit.images_loaded() and visit.page.locator("img").count() == 4
    with visit.page.expect_navigation(wait_until="load"):
        visit.page.get_by_role("link", name="failing").first.click()
    assert visit.page.locator("h1").inner_text() == "s/frames · failing"
    assert visit.errors == []


OVERFLOWING = (
    "Array.from(document.querySelectorAll('.scroll'))"
    ".filter(box => box.scrollWidth > box.clientWidth + 1).length"
)
"""How many table boxes of a page are wider than the screen (their tables would be cut)."""


@pytest.mark.parametrize("which", ["portal", "site"])
def test_the_front_page_and_the_index_fit_a_1280_pixel_screen(browser, which, request, tmp_path):
    """At 1280 px no table box scrolls sideways and no image spills over; a screenshot is taken.

    The screenshot (in the test's folder) is what docs/reports.md shows, made this way.
    """
    path = request.getfixturevalue(which)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(LONGEST_WAIT_MS)
    page.goto(path.resolve().as_uri(), wait_until="load")
    assert page.evaluate(OVERFLOWING) == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    wide = "Array.from(document.images).filter(i => i.getBoundingClientRect().right > 1280)"
    assert page.evaluate(f"{wide}.length") == 0
    page.screenshot(path=str(tmp_path / f"{which}.png"), full_page=True)
    assert (tmp_path / f"{which}.png").stat().st_size > 10_000
    page.close()
