"""How reports show a mission family: its report descriptor, found by the family's name.

A family's rules and data are its ``Family`` (``sortie.missions.family``): the columns of its
table, its groupings, what it calls a level. How reports lay it out is its ``FamilyReport``,
here in the report layer: its paper tables, headline metrics and plot titles, the scores
beside its episodes, the names of its stages, what its maps mark, its episode-page panels and
its own tables about whole runs. Each shipped family's is ``sortie.report.families.<name>``,
registered below by one line; generic report code asks ``report_of(family)`` and never names
a family.

A family without a descriptor (a plug-in may bring none) is shown by ``default_report``, built
from its data: tables of at most eight of its columns, its first two columns as the headline,
its stages by their ids (``S1``), no map marks, the generic episode page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import UnknownNameError
from sortie.core.registry import Registry
from sortie.missions.family import Family
from sortie.missions.registry import FAMILIES
from sortie.report.html import HtmlTable
from sortie.report.panels import Panels
from sortie.run.store import Store


@dataclass(frozen=True, slots=True)
class Score:
    """One metric shown beside each episode: its label, its metric and its decimals."""

    label: str
    metric: str
    digits: int


@dataclass(frozen=True, slots=True)
class PaperTable:
    """One of a family's paper tables: its title, its metrics, how its rows are laid out."""

    title: str
    columns: tuple[str, ...]
    pivot: bool = False
    """True: one line per run with each group's metrics side by side (rescue's main table)."""
    overall_only: bool = False
    """True: a terminal leaderboard shows only the ``all`` group (rescue's stage table)."""
    note: str = ""
    """One line under the table saying what a number means where the seed's definition can
    mislead at a glance (and where the docs say more)."""


@dataclass(frozen=True, slots=True)
class MapMarks:
    """What an episode's map shows of its mission besides the path, start, end and targets."""

    goal: tuple[float, float, float] | None = None
    """A point to reach (a pentagon; its height a line on the altitude strip)."""
    route: tuple[tuple[float, float], ...] = ()
    """A reference route on the ground (dashed)."""
    crop: bool = False
    """Crop the map to the path, goal and route (worlds far wider than an episode)."""
    altitude: bool = False
    """Add a strip with the height over the steps (flights)."""


@dataclass(frozen=True, slots=True)
class RunTable:
    """A table of a family's own about whole runs, after the metric tables (household's codes).

    Each function gets the store and the runs; ``shows`` says whether the runs have anything
    for it (the other functions are called only then).
    """

    shows: Callable[[Store, Sequence[str]], bool]
    terminal: Callable[[Store, Sequence[str]], RenderableType]
    """The table for ``sortie report`` in a terminal."""
    markdown: Callable[[Store, Sequence[str]], str]
    """The table in markdown, under a heading."""
    html: Callable[[Store, Sequence[str]], HtmlTable]
    """The table on the HTML report's index page."""
    json: Callable[[Store, Sequence[str]], Mapping[str, Mapping[str, Any]]]
    """Per run, the keys its object in ``--format json`` gains."""


@dataclass(frozen=True, slots=True)
class FamilyReport:
    """How reports show one mission family: its tables, plots, episode pages and maps."""

    headline: tuple[str, ...]
    """The two metrics of its leaderboard and decay plot (rates first)."""
    tables: tuple[PaperTable, ...] = ()
    """How its paper lays its report table out (none: tables of up to 8 metrics)."""
    decay_title: str = ""
    """The title of the per-group plot on a suite's report page."""
    progress: tuple[tuple[str, str, float], ...] = ()
    """What the report's cascade plot shows instead of stages, for a family whose episodes
    have one: ``(label, metric, at least)`` steps, e.g. ``("TP≥50", "tp", 0.5)`` (TP in 0..1)."""
    run_scores: tuple[Score, ...] = ()
    """The metrics beside each episode in a run's episode list."""
    episode_scores: tuple[Score, ...] = ()
    """The metrics on an episode's own page."""
    stage_names: Mapping[str, str] = field(default_factory=dict)
    """Plain names of its stages (``S1`` …) for the episode player."""
    episode_stage_names: Callable[[EpisodeSpec], Mapping[str, str]] | None = None
    """Stage names that depend on the episode (else ``stage_names``)."""
    map_marks: Callable[[EpisodeSpec], MapMarks] | None = None
    """What an episode's map marks of its mission (None: nothing beyond the targets)."""
    panels: Panels = Panels()
    """What it adds to its episodes' pages (none: the generic page)."""
    run_tables: tuple[RunTable, ...] = ()
    """Tables of its own about whole runs, after the metric tables."""

    def stages_of(self, spec: EpisodeSpec | None) -> Mapping[str, str]:
        """Return the plain names of ``spec``'s stages (of any episode when None)."""
        if spec is not None and self.episode_stage_names is not None:
            return self.episode_stage_names(spec)
        return self.stage_names

    def marks_of(self, spec: EpisodeSpec) -> MapMarks:
        """Return what ``spec``'s map marks of its mission."""
        return self.map_marks(spec) if self.map_marks is not None else MapMarks()


REPORTS: Registry[FamilyReport] = Registry("family report")
"""Each family's report descriptor by family name, imported when first asked."""
REPORTS.add("rescue", "sortie.report.families.rescue:REPORT")
REPORTS.add("aerial", "sortie.report.families.aerial:REPORT")
REPORTS.add("household", "sortie.report.families.household:REPORT")
REPORTS.add_entry_points("sortie.reports")  # of installed packages' families (docs/plugins.md)


def report_of(family: str) -> FamilyReport:
    """Return how reports show ``family``: its descriptor, or the default made from its data.

    Raises:
        UnknownNameError: ``family`` is no registered mission family (the message names it
            and lists those there are).
    """
    if family not in FAMILIES:
        raise UnknownNameError(f"no report for family {family!r}: {FAMILIES.miss_message(family)}")
    if family in REPORTS:
        return REPORTS.get(family)
    return default_report(FAMILIES.get(family))


def default_report(family: Family) -> FamilyReport:
    """Return how reports show a family that brings no descriptor, from its data alone.

    Its headline is its first two columns (its scorer's first two metrics if it names no
    columns), each also beside every episode with two decimals; the rest is generic.
    """
    headline = (family.columns or family.load_metrics())[:2]
    scores = tuple(Score(metric.upper(), metric, 2) for metric in headline)
    title = " and ".join(metric.upper() for metric in headline)
    return FamilyReport(
        headline=headline,
        decay_title=f"{title} per {family.level_name}",
        run_scores=scores,
        episode_scores=scores,
    )
