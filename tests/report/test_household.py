"""The episode page of a household run: the task panel, one block per round, escaped text."""

import dataclasses
import html
import re
from pathlib import Path

import pytest

from sortie.agents.base import AGENTS
from sortie.core.pose import Pose
from sortie.core.records import StepRecord
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.missions.household.family import HOUSEHOLD
from sortie.missions.household.records import ERROR_MEANINGS, ErrorCode, GoalCondition
from sortie.missions.registry import FAMILIES
from sortie.report.clips import clip_sensor
from sortie.report.episode import PageTools, write_episode_page
from sortie.report.families.household import final_state
from sortie.report.html import STYLE, STYLE_FILE
from sortie.report.maps import WorldMaps
from sortie.report.player import write_scripts
from sortie.report.reference import ReferenceViews
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.sim.worlds.base import WORLDS
from sortie.testing.household import ScriptedPlanner
from tests.missions.household.conftest import PUT_MUG
from tests.missions.household.kitchen import KITCHEN, episode

from .conftest import SCRIPT
from .test_browser import Visit, browser  # noqa: F401 (a fixture: Chromium, or a skip)

GOALS = [{"relation": "on", "object": "mug_1", "place": "table_0"}]


class HostilePlanner(ScriptedPlanner):
    """Puts with an empty hand (L2), then names a target that is markup (F2), then ends."""

    name = "hostile"

    def __init__(self) -> None:
        """Fix the script: nothing to choose."""
        super().__init__([("put", "mug_1", "grasp", "table_0"), ("go_to", SCRIPT, "object_nav")])


def _sr(trajectory) -> dict[str, float]:
    """Stand in for the household scorer (written elsewhere): SR from the outcome alone."""
    return {"sr": float(trajectory.footer.outcome == "success")}


def _run(store: Path, suite: str, agent: str, run_id: str, frames: bool) -> None:
    request = RunRequest(
        (suite,),
        agent,
        store=store,
        run_id=run_id,
        record_frames=frames,
        family_settings={"skills": "perfect"},
    )
    with Store(store) as opened:
        execute(plan_run(request, opened), request, opened)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """The pages of two kitchen runs: ``oracle`` (frames recorded) and ``hostile`` (none)."""
    folder = tmp_path_factory.mktemp("household")
    suite, store = folder / "kitchen.jsonl", folder / "s.db"
    texts = {}
    with (
        WORLDS.override("test_kitchen", KITCHEN),
        FAMILIES.override("household", dataclasses.replace(HOUSEHOLD, scorer=f"{__name__}:_sr")),
        AGENTS.override("hostile", HostilePlanner),
    ):
        write_suite(suite, SuiteHeader(suite="kitchen"), [episode([PUT_MUG], GOALS)])
        _run(store, str(suite), "oracle", "oracle", True)
        _run(store, str(suite), "hostile", "hostile", False)
        out = folder / "report" / "episodes"
        out.mkdir(parents=True)
        write_scripts(out.parent)
        (out.parent / STYLE_FILE).write_text(STYLE)
        tools = PageTools(WorldMaps(), ReferenceViews())
        with Store(store) as opened:
            for run in ("oracle", "hostile"):
                (stored,) = opened.episodes(run)
                written = write_episode_page(opened, run, stored, out, tools)
                texts[run] = (out / written.name).read_text()
                texts[f"{run} path"] = str(out / written.name)
    texts["folder"] = str(folder / "report" / "episodes")
    return texts


def _blocks(page: str) -> list[str]:
    return re.findall(
        r"<div class='round' id='round-\d+'>.*?(?=<div class='round'|</section>)", page
    )


def test_one_block_per_round(pages) -> None:
    """The oracle's six rounds (five subtasks and end) give six round blocks, in order."""
    blocks = _blocks(pages["oracle"])
    assert [re.search(r"Round (\d+)", b).group(1) for b in blocks] == ["1", "2", "3", "4", "5", "6"]


def test_recorded_rounds_show_four_views_that_exist(pages) -> None:
    """A round with frames shows its front, left, back and right images, copied into the report."""
    first = _blocks(pages["oracle"])[0]
    sources = re.findall(r"<img src='([^']+)' alt='the (\w+) view'>", first)
    assert [view for _, view in sources] == ["front", "left", "back", "right"]
    assert all((Path(pages["folder"]) / src).exists() for src, _ in sources)


def test_rounds_without_frames_say_so(pages) -> None:
    """Without --record-frames every round says its frames were not recorded."""
    blocks = _blocks(pages["hostile"])
    assert len(blocks) == 3
    assert all("frames not recorded" in b and "<img" not in b for b in blocks)


def test_a_refused_round_shows_its_code_meaning_and_feedback(pages) -> None:
    """The empty-handed put shows L2 with its meaning and the executor's feedback."""
    first = _blocks(pages["hostile"])[0]
    assert "failure L2" in first
    assert html.escape(f"L2 (logic): {ERROR_MEANINGS[ErrorCode.L2]}") in first
    assert "<td>feedback</td><td>Your hand is empty: there is nothing to put.</td>" in first
    assert "no attempt: nothing was executed" in first


def test_a_planners_script_in_a_target_is_escaped(pages) -> None:
    """The markup a planner named as its target reaches the page as text, never as a tag."""
    page = pages["hostile"]
    assert SCRIPT not in page
    assert "<script>document" not in page
    assert html.escape(SCRIPT) in _blocks(page)[1]


def test_the_planners_words_and_the_executors_resolution_both_show(pages) -> None:
    """The put round shows the place as written and the object the executor resolved."""
    put = _blocks(pages["oracle"])[4]
    assert "target &#x27;mug_1&#x27;, place &#x27;table_0&#x27;" in put
    assert "put mug_1 on table_0" in put
    assert "inventory after</td><td>empty" in put


def test_attempts_show_skill_result_seconds_and_path(pages) -> None:
    """The first go_to's attempt row names its skill, success and a path longer than zero."""
    first = _blocks(pages["oracle"])[0]
    row = re.search(
        r"<td class=\"num\">1</td><td>(\w+)</td><td>(\w+)</td>"
        r"<td class=\"num\">([\d.]+)</td><td class=\"num\">([\d.]+)</td>",
        first,
    )
    assert row is not None
    skill, result, seconds, path = row.groups()
    assert result == "success" and float(seconds) > 0 and float(path) > 0
    assert skill in first


def test_the_header_shows_the_task_its_keypath_and_goal(pages) -> None:
    """The mission panel holds the instruction, the split, the keypath matched and the goal."""
    page = pages["oracle"]
    mission = page[page.index("<section class='mission'>") : page.index("</section>")]
    assert "Tidy up." in mission and "<b>split:</b> train" in mission
    assert "pick mug_1 → put mug_1 on table_0" in mission
    assert "2/2 steps carried out in order (best)" in mission
    assert "mug_1 on table_0 <span class='hint'>(at the end: on table_0)" in mission
    assert "<span class='success'>success</span> after 6 rounds" in mission


def test_an_unfinished_episode_shows_its_failure_and_no_progress(pages) -> None:
    """The hostile planner ends with nothing done: failure, 0/2 steps, the mug still inside."""
    mission = pages["hostile"].split("</section>")[0]
    assert "ended_unfinished" in mission and "0/2 steps" in mission
    assert "(at the end: inside fridge_0)" in mission


def test_every_error_code_has_a_meaning() -> None:
    """Each executor error code has the words the page shows for it."""
    assert set(ERROR_MEANINGS) == set(ErrorCode)


def test_an_unknown_final_state_says_so() -> None:
    """Without footer facts the goal's final state is unknown, not guessed."""
    goal = GoalCondition(relation="open", object="fridge_0")
    assert final_state(goal, None) == "unknown"


def test_the_clip_and_player_show_the_front_view() -> None:
    """Of a round's four recorded views, the clip (and the step player) take the front one."""
    frames = {name: name * 8 for name in ("back", "front", "left", "right")}
    record = StepRecord(
        index=1,
        pose=Pose(0, 0, 0),
        action={"type": "move"},
        clock_sim=0,
        clock_latency=0,
        frames=frames,
    )
    assert clip_sensor([record]) == "front"


def test_the_pages_load_in_a_browser_and_run_no_planner_script(browser, pages) -> None:  # noqa: F811
    """Both pages load without errors, their images show, the planner's script stays text."""
    for run in ("oracle", "hostile"):
        visit = Visit(browser, Path(pages[f"{run} path"]))
        assert visit.errors == [] and visit.images_loaded()
        assert visit.page.evaluate("typeof window.pwned") == "undefined"
    assert SCRIPT in visit.page.locator("section.rounds").inner_text()


def test_the_map_follows_a_rounds_base_path_not_a_straight_line():
    """A household round's drawn path goes through its attempt's waypoints, then its pose."""
    from sortie.missions.household.records import AttemptRecord, RoundRecord, RoundStatus
    from sortie.missions.household.vocabulary import HouseholdStep
    from sortie.report.maps import _travelled

    path = [(0.0, 0.0, 0.0), (1.0, 2.0, 0.0), (3.0, 2.0, 0.0)]
    attempt = AttemptRecord(skill="image_nav", success=True, path=path)
    record = RoundRecord(round=1, action="go_to", status=RoundStatus.SUCCESS, attempts=[attempt])
    step = HouseholdStep(
        index=1,
        pose=[3.0, 2.0, 0.0, 0.0],
        action={"type": "move"},
        clock_sim=1.0,
        clock_latency=1.0,
        round=record,
    )
    assert _travelled(step) == [(0.0, 0.0), (1.0, 2.0), (3.0, 2.0), (3.0, 2.0)]
