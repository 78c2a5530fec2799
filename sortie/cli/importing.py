"""``sortie import``: a seed benchmark's episode files as a suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from sortie.cli.common import (
    app,
    console,
    fail,
)
from sortie.core.errors import SortieError


@app.command("import")
def import_suite(
    source: Annotated[str, typer.Argument(help="Seed benchmark: rescuebench or missionbench.")],
    paths: Annotated[
        list[Path],
        typer.Argument(help="rescuebench: level_<L>.jsonl files; missionbench: dataset folders."),
    ],
    out: Annotated[Path, typer.Option(help="Suite file to write (JSONL).")],
    suite: Annotated[
        str | None, typer.Option(help="Suite name (default: the output file's stem).")
    ] = None,
) -> None:
    """Convert a seed benchmark's episode files into a sortie suite for its simulator."""
    from sortie.importers import import_command

    try:
        count = import_command(source, paths, out, suite)
    except SortieError as error:
        raise fail(error) from None
    console.print(f"Wrote {count} episodes to {escape(str(out))}")
