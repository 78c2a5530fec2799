"""Listings: ``sortie worlds``, ``sortie backends``, ``sortie families``."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from sortie.cli.common import (
    app,
    console,
)


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
    headings = ("family", "body", "grouped by", "settings (-F name=default)", "report --variant")
    for column in headings:
        table.add_column(column)
    for name in FAMILIES.in_order():
        family = FAMILIES.get(name)
        settings = describe(family.settings).replace("; ", "\n")
        readings = "\n".join(
            f"{r.name}={'|'.join(r.variants)} (default {r.default})" for r in family.readings
        )
        table.add_row(name, family.body, family.group, escape(settings), escape(readings) or "–")
    console.print(table)
