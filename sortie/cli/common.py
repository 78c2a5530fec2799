"""What the commands share: the app, the console, the options declared once, the helpers."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement

from sortie.core.errors import SortieError

if TYPE_CHECKING:
    from sortie.core.run_config import PoseSettings
    from sortie.run.store import Store

app = typer.Typer(
    help="sortie: run and score long-horizon embodied missions on an embedded CPU simulator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help and usage errors: typer's rich formatter imports rich.markdown and
    # markdown_it and lays out panels, about 0.1 CPU s of every `--help` (docs/benchmarks.md).
    rich_markup_mode=None,
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
KEYWORD = inspect.Parameter.KEYWORD_ONLY


def grouped_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``command`` with each options record it takes spread into that record's flags.

    A parameter annotated with a dataclass (``options: RunOptions``) stands for the dataclass's
    fields, each declared once there with its typer option, help and default; Typer sees those
    fields where the parameter stands, and ``command`` gets the record built from their values.
    """
    hints = get_type_hints(command, include_extras=True)
    records: dict[str, type[Any]] = {
        name: kind
        for name, kind in hints.items()
        if isinstance(kind, type) and dataclasses.is_dataclass(kind)
    }
    flags = []
    for parameter in inspect.signature(command).parameters.values():
        if parameter.name in records:
            flags += _flags(records[parameter.name])
        else:  # keyword-only: a record's flags with defaults may stand before it
            flags.append(parameter.replace(kind=KEYWORD, annotation=hints[parameter.name]))

    @functools.wraps(command)
    def spread(**given: Any) -> Any:
        for name, kind in records.items():
            given[name] = kind(**{f.name: given.pop(f.name) for f in dataclasses.fields(kind)})
        return command(**given)

    # Typer reads the flags from the signature and their types from __annotations__.
    spread.__signature__ = inspect.Signature(flags)  # type: ignore[attr-defined]
    spread.__annotations__ = {flag.name: flag.annotation for flag in flags}
    return spread


def _flags(record: type) -> list[inspect.Parameter]:
    """Return a record's fields as keyword parameters: type, typer option and default."""
    hints = get_type_hints(record, include_extras=True)
    return [
        inspect.Parameter(f.name, KEYWORD, default=_default(f), annotation=hints[f.name])
        for f in dataclasses.fields(record)
    ]


def _default(field: dataclasses.Field[Any]) -> Any:
    """Return a field's default; a field without one is a required flag."""
    return inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default


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


def pose_settings(frame: str | None, noise: str | None) -> PoseSettings | None:
    """Return the pose sensor's settings from ``--pose-frame`` and ``--pose-noise M[,DEG]``.

    None when neither is given (an agent that reads the pose gets it exact, in the world frame).
    """
    from pydantic import ValidationError

    from sortie.core.run_config import PoseSettings

    if frame is None and noise is None:
        return None
    fields: dict[str, Any] = {"frame": frame} if frame is not None else {}
    if noise is not None:
        parts = [p.strip() for p in noise.split(",")]
        if not 1 <= len(parts) <= 2 or not all(parts):
            raise fail(SortieError(f"--pose-noise {noise!r}: expected METRES[,DEGREES]"))
        fields |= dict(zip(("position_noise", "heading_noise"), parts, strict=False))
    try:
        return PoseSettings(**fields)
    except ValidationError as error:
        found = "; ".join(
            f"{'.'.join(map(str, e['loc']))} {e['input']!r}: {e['msg']}" for e in error.errors()
        )
        raise fail(SortieError(f"--pose-frame/--pose-noise: {found}")) from None


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
        print_whole(console, rendered)


def print_whole(out: Console, rendered: RenderableType) -> None:
    """Print ``rendered`` at its natural width at least, never with a number folded or cut.

    A table wider than the terminal goes past its edge, where the terminal wraps the line:
    the layout suffers, no digit is lost or split. Commands choose layouts that fit first.
    """
    needed = Measurement.get(out, out.options.update(width=10_000), rendered).maximum
    terminal = out.width
    out.width = max(terminal, needed)
    try:
        out.print(rendered)
    finally:
        out.width = terminal


def report_title(text: str, fmt: str) -> str:
    """Return a report title: control characters as escapes; markup escaped for rich's table.

    The title quotes run ids, which are user input (one may hold escape bytes).
    """
    from sortie.report.render import printable

    shown = printable(text)
    return escape(shown) if fmt == "table" else shown
