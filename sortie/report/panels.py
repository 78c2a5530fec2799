"""What a family adds to its episodes' report pages: a mission panel and sections of its own.

A family's report descriptor holds its panels (``FamilyReport.panels``,
``sortie.report.descriptor``); an episode of a family without panels gets the generic page
(summary, map, player, clip, stages, events).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sortie.core.trajectory import Trajectory
from sortie.report.html import esc
from sortie.report.reference import ReferenceViews


@dataclass(frozen=True, slots=True)
class PanelContext:
    """What a panel may use: the record, where the page goes and the shared tools."""

    trajectory: Trajectory
    references: ReferenceViews
    folder: Path
    """The episodes folder the page is written in."""
    name: str
    """The page's name (its files are named after it)."""
    frames_root: Path
    """The store's folder, where recorded frames are."""


def _none(context: PanelContext) -> list[str]:
    return []


def _nothing(context: PanelContext) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Panels:
    """A family's additions to an episode page."""

    mission: Callable[[PanelContext], list[str]] = _none
    """The lines of the Mission section (none: no section)."""
    sections: Callable[[PanelContext], str] = _nothing
    """Sections after the clip (markup)."""


def line(label: str, text: object) -> str:
    """Return one ``label: text`` paragraph."""
    return f"<p><b>{esc(label)}:</b> {esc(text)}</p>"
