"""``sortie generate``: the suites, regenerated from their seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sortie.cli.common import (
    app,
    console,
    fail,
)
from sortie.core.errors import SortieError


@app.command()
def generate(
    what: Annotated[
        str,
        typer.Argument(
            help="A mission family (rescue: episodes of one level; aerial: missions; household: "
            "tasks) or suites."
        ),
    ],
    level: Annotated[str | None, typer.Option(help="Rescue level, L1..L5.")] = None,
    types: Annotated[
        str | None,
        typer.Option(
            "--type",
            help="Aerial mission type (e.g. patrol, reporting+inspection) or household "
            "template (e.g. long, logical+human_style).",
        ),
    ] = None,
    world: Annotated[
        str | None,
        typer.Option(help="World builder (default: the level's, or the flight, worlds in turn)."),
    ] = None,
    count: Annotated[int, typer.Option(help="Number of episodes.")] = 10,
    seed: Annotated[int, typer.Option(help="Generation seed.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Suite file to write (JSONL).")] = None,
    check: Annotated[
        bool, typer.Option(help="suites: regenerate and compare with the committed files.")
    ] = False,
) -> None:
    """Generate rescue episodes, aerial missions or household tasks, or rebuild the suites."""
    from sortie.generation.cli import generate_command

    try:
        same = generate_command(
            what,
            level=level,
            world=world,
            count=count,
            seed=seed,
            out=out,
            check=check,
            types=types,
            echo=console.print,
        )
    except SortieError as error:
        raise fail(error) from None
    if not same:
        raise typer.Exit(code=1)
