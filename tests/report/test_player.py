import json
import re

from sortie.core.observation import EventKind
from sortie.core.pose import Pose
from sortie.core.records import EventRecord, ModelCallRecord, StepRecord
from sortie.report.episode import event_runs
from sortie.report.player import calls_text, copy_frame, stage_label, stage_names
from sortie.run.frames import save_frame
from sortie.testing.episodes import aerial_hop
from sortie.testing.frames import colour_frames

from .conftest import CLIP_FRAMES, episode_page

FENCE = EventRecord(kind=EventKind.CONTACT, target="fence_1")


def step(index: int, *events: EventRecord) -> StepRecord:
    """Return a bare step at the origin with ``events``."""
    return StepRecord(
        index=index,
        pose=Pose(0, 0, 0),
        action={"type": "move"},
        events=list(events),
        clock_sim=0,
        clock_latency=0,
    )


def player_data(site, episode_id: str) -> dict:
    """Return the step player's data of the episode, as its data script sets it."""
    name = episode_page(site, episode_id).stem
    text = (site.parent / "episodes" / "data" / f"{name}.js").read_text()
    prefix = "window.sortieEpisode = "
    assert text.startswith(prefix) and text.rstrip().endswith(";")
    return json.loads(text[len(prefix) :].rstrip().rstrip(";"))


def test_a_run_of_the_same_contact_is_one_row_with_its_steps_and_count():
    """Three fence contacts in a row, a door, then the fence again: three rows."""
    door = EventRecord(kind=EventKind.DOOR_OPENED, target="door_0")
    steps = [step(1, FENCE), step(2, FENCE), step(4, FENCE), step(5, door), step(6, FENCE)]
    runs = [(first, last, count, e.kind) for first, last, count, e in event_runs(steps)]
    assert runs == [(1, 4, 3, "contact"), (5, 5, 1, "door_opened"), (6, 6, 1, "contact")]


def test_stages_are_named_by_their_family_and_patrols_by_their_route():
    """Rescue stages get their tasks' names; an aerial patrol's first stage is the patrol."""
    assert stage_label(stage_names("rescue"), "S2") == "S2 rescue"
    assert stage_label(stage_names("aerial", aerial_hop()), "S1") == "S1 reach"
    patrol = aerial_hop(("patrol",), patrol=[[0.0, 0.0, 20.0], [24.0, 0.0, 20.0]])
    assert stage_label(stage_names("aerial", patrol), "S1") == "S1 patrol"
    assert stage_label({}, "S9") == "S9" and stage_label({}, None) == "–"


def test_a_frame_used_twice_is_put_into_the_report_once(tmp_path):
    """Frames are named by hash: a second copy of the same frame finds the first."""
    digest = save_frame(tmp_path / "store", colour_frames(1)[0])
    first = copy_frame(tmp_path / "store", digest, tmp_path / "report")
    assert copy_frame(tmp_path / "store", digest, tmp_path / "report") == first
    assert list((tmp_path / "report").rglob("*.png")) == [tmp_path / "report" / first]


def test_the_player_data_holds_every_step_with_its_frame_and_place(site):
    """Each step of the episode with frames is in its data, the first ones with a frame."""
    data = player_data(site, "s/frames")
    frames = [s["frame"] for s in data["steps"]]
    assert all(frames[:CLIP_FRAMES]) and not any(frames[CLIP_FRAMES:])
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in (s["at"] for s in data["steps"]))
    assert sum(span["n"] for span in data["spans"]) == len(data["steps"])


def test_rescue_map_legends_show_only_what_the_map_holds(site):
    """A rescue page's legend has the casualty and stretcher, not the aerial goal or route."""
    legend = re.search(r"<p class='legend'>(.*?)</p>", episode_page(site, "s/frames").read_text())
    assert legend is not None
    assert "casualty" in legend[1] and "stretcher" in legend[1]
    assert "aerial goal" not in legend[1] and "patrol route" not in legend[1]


def test_rescue_pages_open_with_the_clue_and_the_reference_image(site):
    """The mission panel quotes the clue and shows the reference image, drawn beside the page."""
    text = episode_page(site, "s/frames").read_text()
    mission = text[text.index("<section class='mission'>") :].split("</section>")[0]
    assert "<b>clue:</b>" in mission
    source = re.search(r"<img src='(refs/[^']+\.png)'", mission)
    assert source is not None and (site.parent / "episodes" / source[1]).stat().st_size > 0


def test_every_cell_of_an_episode_table_links_to_its_episode(site):
    """Each row of a run's episode table links all its cells to the same page."""
    text = site.read_text()
    table = text[text.index("Episodes of good") :].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
    assert len(rows) == 3
    for row in rows:
        cells, links = row.count("<td"), set(re.findall(r'href="([^"]+)"', row))
        assert row.count("<a ") == cells and len(links) == 1


def test_a_calls_thinking_and_its_cut_are_shown_with_it():
    """A call's thinking follows its line; a cut answer and its template are said on it."""
    call = ModelCallRecord(
        model="m",
        latency=0.5,
        finish_reason="length",
        reasoning="{ I think }",
        chat_template="gemma",
    )
    assert calls_text([call]) == (
        "m: 0.50 s, 0→0 tokens, 1 attempt(s), ended by length, template gemma\n"
        "  thinking: { I think }"
    )


def test_a_plain_call_is_shown_as_before():
    """A call without the new fields reads as it always did."""
    call = ModelCallRecord(model="m", latency=0.5, tokens_in=3, tokens_out=1, error="format")
    assert calls_text([call]) == "m: 0.50 s, 3→1 tokens, 1 attempt(s), error format"
