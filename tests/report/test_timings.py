"""Where the time went: the split of a run's wall time, with what its harness share means."""

from rich.console import Console

from sortie.report.timings import TimeShare, time_markdown, time_table


def test_the_time_split_says_what_the_harness_share_is():
    """An oracle-like run, 99 % harness, is printed with the line saying what that share holds."""
    share = TimeShare("oracle", episodes=2, wall=10.0, agent=0.05, backend=0.02, render=0.0)
    assert round(share.share("harness")) == 99
    console = Console(width=200, record=True)
    console.print(time_table([share]))
    for shown in (console.export_text(), time_markdown([share])):
        assert " 99 " in shown
        assert "harness: the rest (mission rules, records, scoring" in shown
