"""``sortie generate``: a family's episodes on demand (its ``Family.generator``), the suites.

A family's generator reads what it needs of the options (rescue: the level; aerial and
household: the type). ``suites`` rebuilds every committed suite, or with ``--check``
regenerates them elsewhere and exits with code 1 if one differs byte for byte.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from sortie.cli.common import (
    app,
    console,
    fail,
)
from sortie.core.errors import ConfigError, SortieError

SUITES_TARGET = "suites"


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
    from sortie.generation.request import GenerateRequest

    try:
        if what == SUITES_TARGET:
            if not _suites(check):
                raise typer.Exit(code=1)
            return
        generator = _generator(what)
        generator(GenerateRequest(level, types, world, count, seed, out), console.print)
    except SortieError as error:
        raise fail(error) from None


def _generator(family: str) -> Any:
    """Return the family's suite generator; refuse a name that is no family or has none."""
    from sortie.missions.registry import FAMILIES

    if family not in FAMILIES:
        targets = ", ".join([*FAMILIES.in_order(), SUITES_TARGET])
        raise ConfigError(f"generate: unknown target {family!r}; allowed: {targets}")
    generator = FAMILIES.get(family).load_generator()
    if generator is None:
        raise ConfigError(f"generate: the {family} family has no generator")
    return generator


def _suites(check: bool) -> bool:
    """Rebuild the committed suites, or check that they regenerate; False if one differs."""
    import tempfile

    from sortie.generation.suites import SUITE_DIR, SUITES, check_suites, write_suites

    started = time.perf_counter()
    if not check:
        for path in write_suites(SUITE_DIR):
            console.print(f"wrote {path}")
        console.print(f"{len(SUITES)} suites in {time.perf_counter() - started:.1f} s")
        return True
    with tempfile.TemporaryDirectory() as folder:
        differ = check_suites(Path(folder))
    elapsed = time.perf_counter() - started
    if differ:
        console.print(f"differ from the committed files: {', '.join(differ)} ({elapsed:.1f} s)")
        return False
    console.print(f"all {len(SUITES)} suites regenerate byte for byte ({elapsed:.1f} s)")
    return True
