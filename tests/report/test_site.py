import html
import re

from typer.testing import CliRunner

from sortie.cli import app
from sortie.report.html import HtmlTable, Link, Pre, render_table, slug

from .conftest import SAYING_RUN, SCRIPT, episode_page


def pages(site):
    """Return every HTML file of the report, by path."""
    return {p: p.read_text() for p in site.parent.rglob("*.html")}


def saying_page(site, episode_id: str, run: str = SAYING_RUN) -> str:
    """Return the text of the page of ``episode_id`` in ``run``."""
    return episode_page(site, episode_id, run).read_text()


def test_the_report_has_an_index_and_a_page_per_episode(site):
    """Nine episodes in four runs give nine episode pages, each linked from the index."""
    episodes = sorted(p.name for p in (site.parent / "episodes").glob("*.html"))
    assert len(episodes) == 9
    links = re.findall(r'href="episodes/([^"]+)"', site.read_text())
    assert sorted(set(links)) == episodes


def test_agent_output_in_markup_appears_as_escaped_text(site):
    """The agent's '<script>' output, its arguments and the error are escaped everywhere.

    The only script tags are the report's own files, loaded by a relative ``src``.
    """
    own = re.compile(r"<script src='(\.\./)?(data/[A-Za-z0-9_-]+\.js|player\.js|index\.js)'>")
    for text in pages(site).values():
        assert text.lower().count("<script") == len(own.findall(text))
    text = saying_page(site, "s/frames")
    assert f"<pre>{html.escape(SCRIPT)}</pre>" in text
    failing = saying_page(site, "s/frames", "failing")
    assert f"RuntimeError: told to fail at step 3: {html.escape(SCRIPT)}" in failing


def test_the_episode_page_shows_the_stage_timeline_and_the_traceback(site):
    """A failed episode's page lists its stages with their steps and shows its traceback."""
    text = saying_page(site, "s/frames", "failing")
    assert "<h2>Stages</h2>" in text and "<td>S1 explore</td><td>done</td>" in text
    assert "agent_error" in text and "Traceback (most recent call last)" in text


def test_an_episode_with_frames_links_its_clip_and_one_without_says_so(site):
    """The page of the episode with frames shows its video; another says none were recorded."""
    assert re.search(r"<video class='clip' src='clips/[^']+\.webm'", saying_page(site, "s/frames"))
    assert "No frames were recorded" in saying_page(site, "s/quiet")


def test_tables_render_links_and_preformatted_cells_escaped():
    """Every kind of cell escapes its text; links escape their target too."""
    table = HtmlTable(
        "<t>", ("a", "n"), [(Link("<x>", 'p"q.html'), Pre("1 < 2\n"))], frozenset({"n"})
    )
    assert render_table(table) == (
        "<h2>&lt;t&gt;</h2><div class='scroll'><table><thead><tr><th>a</th><th>n</th></tr>"
        '</thead><tbody><tr><td><a href="p&quot;q.html">&lt;x&gt;</a></td><td class="num">'
        "<pre>1 &lt; 2\n</pre></td></tr></tbody></table></div>"
    )


def test_file_names_are_safe_and_distinct_for_ids_that_look_alike():
    """Ids differing only in unsafe characters still get different, safe file names."""
    names = {slug("run", "a/b"), slug("run", "a_b"), slug("run", "a<b")}
    assert len(names) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", name) for name in names)


def test_the_report_command_writes_the_site_and_prints_its_index(store_path, tmp_path):
    """``sortie report --html DIR`` prints the table, then the index path."""
    result = CliRunner().invoke(
        app, ["report", "--store", str(store_path), "--run", "good", "--html", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith(f"HTML report: {tmp_path / 'r' / 'index.html'}")
    assert (tmp_path / "r" / "index.html").exists()


def test_a_full_disk_while_writing_the_html_report_is_the_documented_message(
    store_path, tmp_path, monkeypatch
):
    """ENOSPC while writing the HTML report: `the disk is full`, what to do, no traceback."""
    import errno
    from pathlib import Path

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    arguments = ["report", "--store", str(store_path), "--run", "good", "--html"]
    result = CliRunner().invoke(app, [*arguments, str(tmp_path / "r")], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "the disk is full" in result.output
    assert "free disk space" in result.output and "Traceback" not in result.output


def test_the_report_counts_the_model_calls_of_runs_that_made_them(store_path):
    """Two episodes of the saying agent, one call per step: calls and tokens add up."""
    from sortie.core.records_io import read_trajectory
    from sortie.report.usage import run_usage
    from sortie.run.store import Store

    with Store(store_path) as store:
        usage = run_usage(store, [SAYING_RUN, "good"])
        steps = sum(len(read_trajectory(e.record).steps) for e in store.episodes(SAYING_RUN))
    assert list(usage) == [SAYING_RUN]  # the oracle run made no calls: no row
    assert usage[SAYING_RUN].calls == steps and usage[SAYING_RUN].tokens_in == 3 * steps
    result = CliRunner().invoke(
        app, ["report", "--run", SAYING_RUN, "--store", str(store_path), "--format", "markdown"]
    )
    assert result.exit_code == 0 and f"| {SAYING_RUN} | 2 |" in result.output


def test_runs_sharing_episodes_get_a_side_by_side_page_with_both_maps(site):
    """Only saying and failing share episodes: one page, two maps per shared episode."""
    links = re.findall(r"<a href='(compare/[^']+)'>([^<]+)</a>", site.read_text())
    assert [title for _, title in links] == [f"failing and {SAYING_RUN}, side by side"]
    text = (site.parent / links[0][0]).read_text()
    assert text.count("<h2>") == 2  # s/frames and s/quiet
    maps = re.findall(r"<img src='\.\./episodes/(maps/[^']+\.png)'", text)
    assert len(maps) == 4 and all((site.parent / "episodes" / m).exists() for m in maps)


def test_the_index_says_what_hs_and_the_harness_share_mean_under_their_tables(site):
    """The notes under the terminal's tables (HS, the harness share) stand under the HTML's."""
    notes = re.findall(r"<p class='note'>([^<]*)</p>", site.read_text())
    assert any(note.startswith("HS is the path&#x27;s closeness") for note in notes)
    assert any(note.startswith("harness: the rest") for note in notes)


def test_the_index_tables_name_the_seed_readings_when_chosen(store_path, tmp_path):
    """--readings seed --html: the paper tables' titles say they are read as RescueBench's code."""
    out = tmp_path / "r"
    args = ["report", "--store", str(store_path), "--run", "good", "--html", str(out)]
    result = CliRunner().invoke(app, [*args, "--readings", "seed"])
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text()
    assert "read as TS: rescuebench-code" in index
    assert "one line per run" in index and "(read as TS: rescuebench-code" in index  # the plot
