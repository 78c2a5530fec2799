"""``sortie import``: a seed benchmark's episode files as a suite."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from sortie.cli.common import (
    app,
    console,
    fail,
)
from sortie.core.errors import SortieError

if TYPE_CHECKING:
    from sortie.core.records_io import SuiteHeader


@app.command("import")
def import_suite(
    source: Annotated[
        str, typer.Argument(help="Seed benchmark: rescuebench, missionbench or emmoe.")
    ],
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="rescuebench: level_<L>.jsonl files; missionbench: dataset folders; emmoe: "
            "EMMOE-100's folder (or its data, train or test folder) and, optionally, the "
            "synonym table file (default: name_dict.txt in the folder or a few above it)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Suite file to write (JSONL).")],
    suite: Annotated[
        str | None, typer.Option(help="Suite name (default: the output file's stem).")
    ] = None,
    attributes: Annotated[
        str | None,
        typer.Option(
            help="emmoe: task attributes, 'derived' (from keypaths and the expert's length; "
            "the default) or 'emmoe-100' (EMMOE-100's published lists of task ids)."
        ),
    ] = None,
) -> None:
    """Convert a seed benchmark's episode files into a sortie suite for its simulator."""
    from sortie.importers import import_suite as run_import

    options = {"attributes": attributes} if attributes is not None else {}
    try:
        header, count = run_import(source, paths, out, suite, options)
    except SortieError as error:
        raise fail(error) from None
    _say_written(source, out, header, count)


def _say_written(source: str, out: Path, header: SuiteHeader, count: int) -> None:
    """Print what was skipped, what was written, and where an imported suite can run."""
    skipped = header.settings.get("skipped", [])
    for entry in skipped:
        console.print(
            f"Skipped task {escape(str(entry['task']))} ({entry['split']}): "
            f"{escape(str(entry['reason']))}",
            soft_wrap=True,
        )
    if skipped:
        console.print(f"Skipped {len(skipped)} task(s) that cannot be placed (reasons above)")
    console.print(f"Wrote {count} episodes to {escape(str(out))}")
    backend = header.settings.get("backend", "embedded")
    if backend != "embedded":
        console.print(
            f"Its episodes name {source}'s own maps: only that simulator plays them (not the "
            f"embedded one; the oracle needs a map it cannot read there). With the simulator "
            f"running: sortie run {escape(str(out))} --agent NAME --backend {backend} "
            f"(-b host=… -b port=…; docs/simulators.md)",
            soft_wrap=True,
        )
