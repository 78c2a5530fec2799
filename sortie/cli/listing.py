"""Listings: ``sortie suites``, ``agents``, ``runs``, ``worlds``, ``backends``, ``families``.

The first three take ``--format json`` for scripts (the lists as JSON, one object a row).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

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
)
from sortie.core.errors import ConfigError, SortieError

ListFormat = Annotated[str, typer.Option("--format", help="table or json.")]


@app.command()
def suites(fmt: ListFormat = "table") -> None:
    """List the packaged suites: family, episodes, and the levels or types they hold."""
    from sortie.missions.loading import suite_table

    rows = suite_table()
    _show("Packaged suites (sortie run SUITE; or a suite file's path)", rows, fmt)


@app.command()
def agents(fmt: ListFormat = "table") -> None:
    """List the agents: what each is, the families it plays, what it sees, its -a arguments."""
    from sortie.agents.base import agent_table

    _show("Agents (sortie run SUITE --agent NAME -a name=value)", agent_table(), fmt)


@app.command()
def runs(store: StoreOption = DEFAULT_STORE, fmt: ListFormat = "table") -> None:
    """List the runs of a results store: suites, agent, backend, episodes stored and errored."""
    from sortie.report.runs import run_table

    try:
        with open_store(store) as opened:
            rows = run_table(opened)
    except SortieError as error:
        raise fail(error) from None
    _show(f"Runs in {store} (sortie report --run ID)", rows, fmt)


def _show(title: str, rows: Sequence[dict[str, Any]], fmt: str) -> None:
    """Print ``rows`` as a rich table (lists one item a line) or as JSON."""
    if fmt == "json":
        typer.echo(json.dumps(list(rows), indent=2))
        return
    if fmt != "table":
        raise fail(ConfigError(f"--format {fmt!r}: expected table or json"))
    table = Table(title=title)
    for column in rows[0] if rows else ("(none)",):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(escape(_cell(value)) for value in row.values()))
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "–"
    return "–" if value is None else str(value)


@app.command()
def worlds() -> None:
    """List the world builders and their parameters."""
    from sortie.sim.worlds import WORLDS

    table = Table(title="World builders")
    for column in ("builder", "what it builds", "parameters"):
        table.add_column(column)
    for name in WORLDS.names():
        builder = WORLDS.get(name)
        params = "\n".join(f"{p.name}: {p.describe()}" for p in builder.params)
        table.add_row(name, builder.summary, params)
    console.print(table)


@app.command()
def backends() -> None:
    """List the backends, their arguments (-b k=v) and what each supports."""
    from sortie.backends.catalog import backend_table

    table = Table(title="Backends")
    rows = backend_table()
    for column in rows[0]:
        table.add_column(column)
    for row in rows:
        table.add_row(*(escape(v) for v in row.values()))
    console.print(table)


@app.command()
def families() -> None:
    """List the mission families: body, grouping, settings (-F k=v) and readings (--variant)."""
    from sortie.missions.family import describe
    from sortie.missions.registry import FAMILIES

    table = Table(title="Mission families")
    headings = (
        "family",
        "body",
        "grouped by",
        "settings (-F name=default)",
        "report --variant / --readings",
    )
    for column in headings:
        table.add_column(column, overflow="fold")  # a reading's variants are one long word
    for name in FAMILIES.in_order():
        family = FAMILIES.get(name)
        settings = describe(family.settings).replace("; ", "\n")
        readings = "\n".join(
            f"{r.name}={'|'.join(r.variants)} (default {r.default}, seed {r.seed_variant})"
            for r in family.readings
        )
        table.add_row(name, family.body, family.group, escape(settings), escape(readings) or "–")
    console.print(table)
