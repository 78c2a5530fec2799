"""HTML building blocks of the static report: escaped text, generic tables, the page shell.

Everything shown comes from records that agents and models wrote into, so every piece of text
goes through ``esc`` on its way into a page; nothing is trusted as markup. Pages also forbid
inline scripts and remote resources by their Content-Security-Policy, a second wall behind
escaping: the only scripts that run are the report's own files (the step player, the index's
sorting), which put text into pages as text.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

STYLE_FILE = "style.css"

# Images, style sheet and scripts come from the report's own folder as files; nothing else
# loads, and no inline script or style attribute runs.
_POLICY = (
    "default-src 'none'; img-src 'self' file:; media-src 'self' file:; style-src 'self' file:; "
    "script-src 'self' file:; "
    "base-uri 'none'; form-action 'none'"
)

STYLE = """\
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; max-width: 90em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: pre; }
td { white-space: nowrap; } td:has(pre) { white-space: normal; min-width: 20em; }
.views { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.views section { max-width: 100%; }
img.clip { width: 256px; image-rendering: pixelated; }
tr:nth-child(even) td { background: #fafafa; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; white-space: pre-wrap;
      word-break: break-word; margin: 0; font-size: 0.85em; }
img { max-width: 100%; border: 1px solid #ddd; margin: 4px; vertical-align: top; }
.failure { color: #a40000; } .success { color: #176117; }
.legend { max-width: 40em; } .legend > span { display: inline-block; margin-right: 1em; }
nav { margin-bottom: 1em; } .scroll { overflow-x: auto; }
p.note { margin: -0.6em 0 1em; font-size: 0.85em; color: #555; max-width: 60em; }
.mission { background: #f4f8fc; border: 1px solid #c9d9ea; padding: 0.6em 1em; max-width: 70em; }
.mission p { margin: 0.3em 0; } .mission { display: flow-root; }
.mission img { width: 192px; float: right; margin: 0 0 0 1em; }
.controls { display: flex; gap: 1em; align-items: flex-start; margin-bottom: 0.8em; }
.track { flex: 1; max-width: 60rem; } #player-slider { width: 100%; margin: 0; }
.stagebar { display: flex; margin-top: 2px; font-size: 0.75em; }
.stagebar .stage { color: #fff; overflow: hidden; white-space: nowrap; padding: 1px 3px;
                   cursor: pointer; border-right: 1px solid #fff; box-sizing: border-box; }
img.frame { width: 256px; image-rendering: pixelated; }
.mapbox { position: relative; display: inline-block; line-height: 0; }
.mapbox img { margin: 0; }
.marker { position: absolute; width: 0; height: 0; border-top: 6px solid transparent;
          border-bottom: 6px solid transparent; border-left: 22px solid #e0007a;
          filter: drop-shadow(0 0 2px #fff); pointer-events: none; }
.said { flex: 1; min-width: 16em; max-width: 40em; }
.said h3 { font-size: 0.95em; margin: 0.6em 0 0.2em; }
.hint { color: #666; font-size: 0.85em; }
.filters { display: flex; gap: 0.8em; margin: 0.3em 0; } .filters .shown { color: #666; }
table.sortable th { cursor: pointer; } th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
.pair { display: flex; gap: 1em; flex-wrap: wrap; } .pair img { width: 420px; }
.round { border: 1px solid #ddd; padding: 0.3em 1em 0.6em; margin: 0.8em 0; max-width: 70em; }
.round h3 { font-size: 1em; margin: 0.4em 0; }
.views4 { display: flex; flex-wrap: wrap; gap: 0.5em; } .views4 figure { margin: 0; }
.views4 img { width: 160px; image-rendering: pixelated; } .views4 figcaption { font-size: 0.8em; }
.mission li.best { font-weight: bold; }
"""


def esc(value: object) -> str:
    """Return ``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True, slots=True)
class Link:
    """A table cell that links to another page or file of the report."""

    text: str
    href: str


@dataclass(frozen=True, slots=True)
class Pre:
    """A table cell of preformatted text (model output, tracebacks): line breaks kept."""

    text: str


Cell = str | Link | Pre


@dataclass(frozen=True, slots=True)
class HtmlTable:
    """A titled table of text cells, rendered the same whatever it holds."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    numeric: frozenset[str] = field(default_factory=frozenset)
    """Columns whose cells are right-aligned numbers."""
    sortable: bool = False
    """Whether the index's script lets readers sort the rows by a click on a column's head."""
    filters: frozenset[str] = field(default_factory=frozenset)
    """Columns the script offers a filter for (only on sortable tables)."""
    note: str = ""
    """One line under the table saying what a number means (as under the terminal's)."""


def render_table(table: HtmlTable) -> str:
    """Return the table as an ``<h2>`` title and a ``<table>``, every cell escaped."""
    head = "".join(
        f"<th data-filter='1'>{esc(c)}</th>" if c in table.filters else f"<th>{esc(c)}</th>"
        for c in table.columns
    )
    kind = " class='sortable'" if table.sortable else ""
    aligned = [c in table.numeric for c in table.columns]
    body = "".join(
        "<tr>"
        + "".join(_cell(cell, right) for cell, right in zip(row, aligned, strict=True))
        + "</tr>"
        for row in table.rows
    )
    title = f"<h2>{esc(table.title)}</h2>" if table.title else ""
    # Wide tables scroll sideways inside their box instead of widening the whole page.
    note = f"<p class='note'>{esc(table.note)}</p>" if table.note else ""
    return (
        f"{title}<div class='scroll'><table{kind}><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>{note}"
    )


def _cell(cell: Cell, right: bool) -> str:
    attribute = ' class="num"' if right else ""
    if isinstance(cell, Link):
        return f'<td{attribute}><a href="{esc(cell.href)}">{esc(cell.text)}</a></td>'
    if isinstance(cell, Pre):
        return f"<td{attribute}>{preformatted(cell.text)}</td>"
    return f"<td{attribute}>{esc(cell)}</td>"


def page(title: str, body: str, root: str = "", scripts: Sequence[str] = ()) -> str:
    """Return a whole HTML document; ``root`` is the relative path up to the report's folder.

    ``scripts`` are script files (paths relative to the page) loaded at the end of the body.
    """
    tags = "".join(f"<script src='{esc(src)}'></script>" for src in scripts)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{esc(title)}</title><link rel="stylesheet" href="{root}{STYLE_FILE}">'
        f"</head><body>{body}{tags}</body></html>\n"
    )


def preformatted(text: str) -> str:
    """Return ``text`` escaped in a ``<pre>`` block."""
    return f"<pre>{esc(text)}</pre>"


def slug(*parts: str) -> str:
    """Return a file-name-safe name for ``parts``, unique even where the readable part is not.

    Keys and run ids may hold slashes, dots or markup; the readable part keeps only safe
    characters, and a short hash of the exact parts tells apart names that collapse alike.
    """
    readable = re.sub(r"[^A-Za-z0-9_-]+", "_", "__".join(parts)).strip("_")[:80]
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:10]
    return f"{readable}-{digest}" if readable else digest
