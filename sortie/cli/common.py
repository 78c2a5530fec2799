"""What the commands share: the app, the console, the options declared once, the helpers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console, RenderableType
from rich.markup import escape

from sortie.core.errors import SortieError

if TYPE_CHECKING:
    from sortie.run.store import Store

app = typer.Typer(
    help="sortie: run and score long-horizon embodied missions on an embedded CPU simulator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Piped or logged output has no terminal width to follow; 160 columns keep tables on one line.
console = Console(width=None if sys.stdout.isatty() else 160)

# Options shared by run, report and compare, declared once.
StoreOption = Annotated[Path, typer.Option(help="Results store (SQLite).")]
GroupOption = Annotated[
    str,
    typer.Option(
        "--group",
        "--by",
        help="Rows per level, world, type (mission type tags), suite, or for household "
        "runs attribute or split.",
    ),
]
AgentArgOption = Annotated[
    list[str] | None, typer.Option("--agent-arg", "-a", help="Agent argument k=v.")
]
FormatOption = Annotated[str, typer.Option("--format", help="table, markdown, csv or json.")]
DEFAULT_STORE = Path("runs/sortie.db")


# Shared by run and sweep: which episodes to run, and when a failing run gives up.
LimitOption = Annotated[
    int | None, typer.Option(help="Run only the first N episodes of each suite.")
]
EpisodesOption = Annotated[
    str | None, typer.Option(help="Run only these episode ids, comma-separated.")
]
MaxErrorsOption = Annotated[
    int,
    typer.Option(help="Stop after N episodes in a row end in an agent/backend error (0: never)."),
]
BackendOption = Annotated[
    str, typer.Option("--backend", help="Backend name (see `sortie backends`).")
]
BackendArgOption = Annotated[
    list[str] | None, typer.Option("--backend-arg", "-b", help="Backend argument k=v.")
]
# Shared by run and sweep: the settings that decide a run's results beside the agent.
ClockOption = Annotated[str, typer.Option(help="Budget clock: sim or latency.")]
FamilySettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--family-setting", "-F", help="Mission family setting k=v (see `sortie families`)."
    ),
]
# The flags the family settings had before -F; kept as aliases of -F name=value.
TriggersOption = Annotated[str | None, typer.Option(hidden=True, help="= -F triggers=…")]
JudgeOption = Annotated[str | None, typer.Option(hidden=True, help="= -F judge=…")]
SettingOption = Annotated[str | None, typer.Option(hidden=True, help="= -F setting=…")]
SkillsOption = Annotated[str | None, typer.Option(hidden=True, help="= -F skills=…")]


def fail(error: SortieError, code: int = 2) -> typer.Exit:
    """Print ``error`` on one line and return the exit (code 2: bad input) to raise."""
    # The message quotes user input (names, paths), which must print as written, not as markup.
    console.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
    return typer.Exit(code=code)


def family_settings(pairs: list[str] | None, **aliases: str | None) -> dict[str, str]:
    """Return the ``-F name=value`` settings, with the old flags (``--judge`` …) as aliases."""
    settings = parse_params(pairs or [], "--family-setting")
    for name, value in aliases.items():
        if value is None:
            continue
        if name in settings and settings[name] != value:
            raise fail(SortieError(f"--{name} {value!r} and -F {name}={settings[name]!r} differ"))
        settings[name] = value
    return settings


def episode_ids(episodes: str | None) -> tuple[str, ...]:
    """Return the ids of ``--episodes a,b`` (none: every episode)."""
    return tuple(i.strip() for i in (episodes or "").split(",") if i.strip())


def parse_params(items: list[str], option: str = "--agent-arg") -> dict[str, str]:
    """Return ``key=value`` items as a dict; fail naming ``option`` on an item without ``=``."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise fail(SortieError(f"{option} {item!r}: expected key=value"))
        params[key] = value
    return params


def open_store(path: Path) -> Store:
    """Open the results store at ``path`` for reading; a missing file is an error, not new."""
    from sortie.run.store import Store

    # Opening creates a missing file; a report of a store that is not there is a typo.
    if not path.exists():
        raise SortieError(f"{path}: no results store here; pass --store PATH")
    return Store(path)


def echo(rendered: RenderableType | str) -> None:
    """Print a rich table, or text verbatim."""
    # Text formats go out verbatim (no rich markup or wrapping) so they can be piped to files.
    if isinstance(rendered, str):
        typer.echo(rendered, nl=False)
    else:
        console.print(rendered)


def report_title(text: str, fmt: str) -> str:
    """Return a report title: escaped for rich's table, verbatim for the text formats."""
    return escape(text) if fmt == "table" else text
