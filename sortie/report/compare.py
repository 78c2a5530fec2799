"""Two runs side by side: for each episode both ran, their outcomes and their maps in one row.

This is ``sortie compare`` in pictures: the numbers say which run did better on average, the
maps show where on each episode the two agents went different ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from sortie.report.episode import EPISODES_FOLDER, EpisodePage
from sortie.report.html import esc, page, slug

COMPARE_FOLDER = "compare"


def write_comparisons(
    out: Path, runs: Sequence[str], pages: Sequence[Sequence[EpisodePage]]
) -> list[tuple[str, str]]:
    """Write a side-by-side page of every two runs that share episodes; return (title, path).

    Each pair and the list come in run id order, whatever order ``runs`` has.
    """
    written = []
    # By run id, not by the order the runs came in (the store lists them by creation time).
    by_name = sorted(zip(runs, pages, strict=True), key=lambda pair: pair[0])
    for (first, left), (second, right) in combinations(by_name, 2):
        shared = _shared(left, right)
        if not shared:
            continue
        title = f"{first} and {second}, side by side"
        name = f"{COMPARE_FOLDER}/{slug(first, second)}.html"
        body = f"<nav><a href='../index.html'>← report index</a></nav><h1>{esc(title)}</h1>"
        body += "".join(_pair(first, second, a, b) for a, b in shared)
        (out / COMPARE_FOLDER).mkdir(exist_ok=True)
        (out / name).write_text(page(title, body, root="../"), encoding="utf-8")
        written.append((title, name))
    return written


def _shared(
    left: Sequence[EpisodePage], right: Sequence[EpisodePage]
) -> list[tuple[EpisodePage, EpisodePage]]:
    """Return the pages of the episode keys both runs hold, in the first run's order."""
    by_key = {p.episode.key: p for p in right}
    return [(p, by_key[p.episode.key]) for p in left if p.episode.key in by_key]


def _pair(first: str, second: str, a: EpisodePage, b: EpisodePage) -> str:
    return (
        f"<section><h2>{esc(a.episode.key)}</h2><div class='pair'>"
        f"{_side(first, a)}{_side(second, b)}</div></section>"
    )


def _side(run: str, episode_page: EpisodePage) -> str:
    """Return one run's half of a pair: its outcome, steps and map, linked to its page."""
    episode, href = episode_page.episode, f"../{EPISODES_FOLDER}/{episode_page.name}"
    reason = f" ({episode.failure_reason})" if episode.failure_reason else ""
    picture = (
        f"<img src='../{EPISODES_FOLDER}/{esc(episode_page.map)}' alt='map of {esc(run)}'>"
        if episode_page.map
        else "<p>No map.</p>"
    )
    return (
        f"<div><p><a href='{esc(href)}'>{esc(run)}</a>: <span class='{esc(episode.outcome)}'>"
        f"{esc(episode.outcome)}</span>{esc(reason)}, {episode.steps} steps</p>"
        f"<a href='{esc(href)}'>{picture}</a></div>"
    )
