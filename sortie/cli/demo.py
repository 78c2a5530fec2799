"""``sortie demo``: the smoke suites with a few agents each, leaderboards and a report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from sortie.cli.common import (
    app,
    console,
)


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the store, records and report.")] = Path(
        "demo-out"
    ),
) -> None:
    """Run the smoke suites with two or three agents each; print the leaderboards, write HTML."""
    from sortie.cli.run_console import run_with_progress
    from sortie.missions.registry import FAMILIES
    from sortie.report.render import leaderboard, render_table
    from sortie.report.site import Report, write_portal, write_site
    from sortie.report.tables import report_rows
    from sortie.run.batch import RunRequest
    from sortie.run.store import Store

    reports = []
    demos = [(name, FAMILIES.get(name).demo) for name in FAMILIES.in_order()]
    with Store(out / "runs" / "sortie.db") as store:
        for family, shown in demos:
            if shown is None:
                continue
            suite, agents, group = shown.suite, shown.agents, shown.by
            runs = [f"demo-{family}-{agent}" for agent in agents]
            for agent, run_id in zip(agents, runs, strict=True):
                console.print(f"Running {suite} with {agent} on 2 workers")
                run_with_progress(
                    RunRequest(
                        (suite,),
                        agent,
                        workers=2,
                        store=store.path,
                        run_id=run_id,
                        # The report's step player shows what each agent saw; a random walk's
                        # thousands of frames would show little and cost a third of the time.
                        record_frames=agent != "random",
                    ),
                    store,
                    console,
                )
            for table in leaderboard(report_rows(store, runs, group)):
                console.print(render_table(table, f"Leaderboard · {suite}"))
            site = write_site(store, runs, out / "report" / family, group)
            reports.append(Report(f"{family}: {suite}", site, tuple(runs)))
        index = write_portal(out / "report", store, reports)
    console.print(f"Store: {escape(str(store.path.resolve()))}")
    console.print(f"Report: {escape(str(index.resolve()))}")
