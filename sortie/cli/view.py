"""``sortie view`` and ``sortie probe``: looking at worlds and at what a model perceives."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from sortie.cli.common import (
    DEFAULT_STORE,
    StoreOption,
    app,
    console,
    fail,
    open_store,
    parse_params,
)
from sortie.core.errors import SortieError


@app.command()
def view(
    world: Annotated[str, typer.Argument(help="World builder name (see `sortie worlds`).")],
    seed: Annotated[int, typer.Option(help="World seed.")] = 0,
    pose: Annotated[
        str | None, typer.Option(help="Walker pose 'x,y,z,yaw' (default: a valid one).")
    ] = None,
    size: Annotated[int, typer.Option(help="Image side in pixels.")] = 256,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Builder parameter k=v.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for the images.")] = Path("view"),
) -> None:
    """Render rgb.png, depth.png, semantic.png and topdown.png of a world from a walker's eye."""
    from sortie.diagnostics.gallery import save_view

    try:
        written = save_view(world, seed, parse_params(param or [], "--param"), pose, size, out)
    except SortieError as error:
        raise fail(error) from None
    for path in written:
        console.print(escape(str(path)))


@app.command()
def probe(
    suite: Annotated[str, typer.Argument(help="An aerial suite (name or file).")],
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Model setting k=v.")
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="A run of the suite, to correlate with its MP.")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Perception probe: the model's target box and distance from the first frame alone."""
    from sortie.diagnostics.probe import probe_suite, summarise
    from sortie.missions.aerial.spec import CAMERA
    from sortie.missions.loading import load_suite

    try:
        mp = _run_mp(store, run) if run else None  # a misspelt run fails before any model call
        rows = probe_suite(load_suite(suite), parse_params(agent_arg or []), CAMERA)
        summary = summarise(rows, mp)
    except SortieError as error:
        raise fail(error) from None
    table = Table(title=escape(f"Perception probe · {suite}"))
    for column in (
        "missions",
        "target unseen",
        "mean IoU",
        "distance RMSE (m)",
        "r(IoU, MP)",
        "r(|dist err|, MP)",
    ):
        table.add_column(column, justify="right")
    table.add_row(
        str(summary.missions),
        str(summary.unseen),
        *(
            f"{v:.3f}"
            for v in (
                summary.mean_iou,
                summary.distance_rmse,
                summary.r_iou_mp,
                summary.r_distance_mp,
            )
        ),
    )
    console.print(table)


def _run_mp(store: Path, run: str) -> dict[str, float]:
    """Return each episode's MP in ``run``, repeats averaged."""
    with open_store(store) as opened:
        from sortie.report.tables import check_run

        check_run(opened, run)
        values: dict[str, list[float]] = {}
        for episode in opened.episodes(run):
            values.setdefault(episode.episode_id, []).append(episode.metrics.get("mp", math.nan))
    return {k: sum(v) / len(v) for k, v in values.items()}
