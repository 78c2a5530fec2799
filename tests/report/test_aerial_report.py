import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.report.maps import cropped
from sortie.report.render import render
from sortie.report.site import write_site
from sortie.report.tables import family_columns, report_rows
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from sortie.sim.topdown import TopDownMap
from sortie.testing.episodes import aerial_hop
from tests.conftest import run_stored


@pytest.fixture(scope="module")
def aerial_store(tmp_path_factory, smoke3):
    """Oracle and random runs of three hand-made aerial missions, and one rescue run."""
    folder = tmp_path_factory.mktemp("aerial")
    suite = folder / "hops.jsonl"
    write_suite(
        suite,
        SuiteHeader(suite="hops"),
        [
            aerial_hop(episode_id="hops/0"),
            aerial_hop(("reporting", "inspection"), "hops/1", answer="7", answer_kind="number"),
            aerial_hop(("patrol",), "hops/2", patrol=[[0.0, 0.0, 20.0], [24.0, 0.0, 20.0]]),
        ],
    )
    for agent in ("oracle", "random"):
        run_stored(RunRequest((str(suite),), agent, store=folder / "s.db", run_id=agent))
    run_stored(RunRequest((str(smoke3),), "random", store=folder / "s.db", run_id="rescue"))
    return folder / "s.db"


def test_aerial_runs_get_the_missionbench_table_by_type(aerial_store):
    """--group type: a two-tag mission counts under both tags and once under all."""
    with Store(aerial_store) as store:
        rows = report_rows(store, ["oracle"], group="type")
    assert {r.group: r.n for r in rows} == {"inspection": 2, "patrol": 1, "reporting": 1, "all": 3}
    overall = rows[-1].estimates
    assert overall["sr"].mean == 100.0 and overall["gap"].mean == 0.0
    text = str(render(rows, "markdown"))
    assert text.startswith("### MissionBench table") and "| SR | OSR5 | MP | EFF | CR |" in text


def test_runs_of_two_families_are_refused_in_one_table(aerial_store):
    """Rescue and aerial metrics differ: one report of both is a clear error."""
    with Store(aerial_store) as store, pytest.raises(ConfigError, match="report them separately"):
        family_columns(store, ["oracle", "rescue"])


def test_the_html_report_of_aerial_runs_has_maps_with_heights(aerial_store, tmp_path):
    """Each episode page gets a map with the altitude strip below it."""
    from PIL import Image

    with Store(aerial_store) as store:
        index = write_site(store, ["oracle", "random"], tmp_path / "site")
    maps = sorted((index.parent / "episodes" / "maps").glob("*.png"))
    assert len(maps) == 6 and "MissionBench table" in index.read_text()
    picture = np.asarray(Image.open(maps[0]).convert("L"))
    assert picture[-80:].mean() > 200  # the height strip below the map is mostly white paper
    assert picture[:80].mean() < 200  # the map above it is not


def test_an_aerial_page_opens_with_the_instruction_the_answer_and_the_verdict(
    aerial_store, tmp_path
):
    """The oracle's reporting page shows what was asked, expected, reported and judged."""
    import html

    with Store(aerial_store) as store:
        index = write_site(store, ["oracle"], tmp_path / "site", "type")
    heading = f"<h1>{html.escape('hops/1 · oracle')}</h1>"
    text = next(
        p.read_text()
        for p in (index.parent / "episodes").glob("*.html")
        if heading in p.read_text()
    )
    mission = text[text.index("<section class='mission'>") :].split("</section>")[0]
    assert "<b>instruction:</b> Fly to the goal and inspect it." in mission
    assert "<b>expected answer:</b> 7 (number)" in mission
    assert "<b>the agent&#x27;s report:</b> 7" in mission
    assert "<b>judge exact:</b> <span class='success'>match</span>, score 1.00" in mission
    assert (
        "<th data-filter='1'>type</th>" in index.read_text()
        and "<td>S1 reach</td><td>done</td>" in text
    )


def test_aerial_maps_are_cropped_to_the_flight():
    """A 10 m flight over a 100 m world is drawn on a 40 m piece of it (15 m margins)."""
    world = TopDownMap(
        np.zeros((100, 100, 3), np.uint8), xmin=0.0, ymax=100.0, metres_per_pixel=1.0
    )
    piece = cropped(world, [(40.0, 50.0), (50.0, 60.0)])
    assert piece.image.shape[1] * piece.metres_per_pixel == pytest.approx(41.0, abs=1.0)
    # (40, 50) is the lower-left point: 15 m from the left edge, 10 + 15 m below the top edge
    metres = [m / piece.metres_per_pixel for m in (15, 25)]
    assert piece.pixel(40.0, 50.0) == pytest.approx(metres, abs=2 / piece.metres_per_pixel)


def test_failure_modes_count_how_each_run_ended(aerial_store):
    """The oracle succeeds everywhere; random ends by MissionBench's modes; rows add to 100.

    (A hover can pass the 24 m test patrol: its 20 m disc covers 57 % of the route's corridor.)
    """
    from sortie.missions.aerial.mission import AerialFailure
    from sortie.report.failures import failure_modes, failure_rows

    with Store(aerial_store) as store:
        modes = failure_modes(store, ["oracle", "random"])
    assert modes["oracle"] == {"success": 3}
    assert set(modes["random"]) <= {f.value for f in AerialFailure} | {"success"}
    header, lines = failure_rows(modes)
    assert header[:3] == ["run", "runs", "success"] and lines[0][:3] == ["oracle", "3", "100"]
    assert sum(int(cell) for cell in lines[1][2:]) in (99, 100, 101)  # rounded percentages
