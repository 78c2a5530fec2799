"""The report in a real browser (headless Chromium, driven by playwright), from file://."""

import os
from pathlib import Path

import pytest

from .conftest import SAYING_RUN, SCRIPT, episode_page

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
    # main, stages, how episodes ended, model calls, then one per run
    assert visit.page.locator("table").count() == 8


def test_an_episode_page_loads_with_its_map_frame_and_clip(browser, site):
    """The page of the episode with frames shows its reference, frame, map and GIF, no errors."""
    visit = Visit(browser, episode_page(site, "s/frames"))
    assert visit.errors == []
    assert visit.images_loaded()
    sources = visit.page.eval_on_selector_all("img", "els => els.map(e => e.src)")
    folders = [Path(s).parent.name for s in sources]
    assert folders[0] == "refs" and folders[2:] == ["maps", "clips"]
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
