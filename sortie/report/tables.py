"""``sortie report`` and ``sortie compare``: tables of means with 95% intervals from the store.

Reads only the store (and, to group by world, the header line of each trajectory record).
Episodes that ended in an error (agent or backend) are left out of every mean and counted in
the ``errors`` column. ``variants`` picks how a family's readings fill their columns (rescue's
TS and S1–S4: ``paper`` or ``rescuebench-code``; household TP and SRR: ``sortie`` or
``emmoe``); ``columns`` may be any metric the runs hold, or all of them.

A run's mission family (and so its default table) is read from its first record's header,
or guessed from its metrics when that record cannot be read. Household runs group by task
attribute (a task with several counts in each, once in ``all``) or by split as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sortie.core.errors import ConfigError, UnknownNameError, did_you_mean
from sortie.core.records import TrajectoryHeader
from sortie.metrics.aggregate import ERROR, RATIOS, is_error
from sortie.metrics.intervals import (
    EpisodeMean,
    Estimate,
    episode_means,
    group_intervals,
    paired_differences,
)
from sortie.missions.family import Reading
from sortie.missions.registry import FAMILIES
from sortie.report.human_reference import referenced_metrics
from sortie.run.store import Store, StoredEpisode

GROUPS = ("level", "world", "type", "suite", "attribute", "split")
GROUP_NOTES = {
    "attribute": "A task with several attributes counts in each of its attribute groups "
    "(and once in all).",
}
"""What a reader must know about a grouping, said under its table."""
Variants = Mapping[str, str]
"""The variant each reading is read in, by reading name (``{"tp": "emmoe"}``); the rest read
their family's default (``Family.readings``)."""
ALL_COLUMNS = "all"
"""``--columns all``: every metric the runs' episodes hold."""


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One line of a report: a run (or a B − A pair of runs) within one group."""

    run: str
    group: str
    n: int
    """Episodes scored in the group (for a comparison: episodes both runs hold)."""
    estimates: dict[str, Estimate]
    errors: int = 0
    """Runs of the group's episodes that ended in an error, left out of every mean."""
    runs: int = 0
    """Scored runs of the group's episodes, repeats counted (``n`` counts each episode once)."""


def report_rows(
    store: Store,
    runs: Sequence[str],
    group: str = "level",
    columns: Sequence[str] | None = None,
    variants: Variants | None = None,
    reference: str | None = None,
) -> list[ReportRow]:
    """Return one row per (run, group) with each column's mean and interval.

    ``columns`` default to the runs' mission family's (see ``family_columns``); errored
    episodes are left out of the means and counted in each row's ``errors``. ``reference``
    (``human:RUN_ID``) scores HS, nDTW and SDTW against that run's paths instead of the
    suite's expert paths.

    Raises:
        UnknownNameError: a run id the store does not hold (the message lists those it does).
        ConfigError: an unknown grouping, reading or variant, or a record that cannot be read
            to group by world.
    """
    sources = column_sources(columns or family_columns(store, runs), variants or {})
    read = list(dict.fromkeys(sources.values()))
    rows = []
    for run in runs:
        paths = referenced_metrics(store, run, reference) if reference else {}
        episodes = load_episode_means(store, run, group, read, paths)
        counts, errors = _counts(episodes), error_counts(store, run, group)
        repeats = _repeats(episodes)
        for name, estimates in group_intervals(episodes, read).items():
            shown = {column: estimates[source] for column, source in sources.items()}
            row = ReportRow(run, name, counts[name], shown, errors[name], repeats[name])
            rows.append(row)
    return rows


def metric_rows(
    run: str, rows: Iterable[tuple[str, str, Mapping[str, float]]], columns: Sequence[str]
) -> list[ReportRow]:
    """Return one row per group of episodes held in memory: ``(group, job key, metrics)``.

    The same means, intervals and error counts as ``report_rows`` over a store, for episodes
    scored elsewhere (``sortie rescore``); an errored episode (``error`` 1) is only counted.
    """
    rows = list(rows)
    errors = Counter(group for group, _, m in rows if m.get(ERROR, 0.0) == 1.0)
    errors["all"] = len({key for _, key, m in rows if m.get(ERROR, 0.0) == 1.0})
    episodes = episode_means((r for r in rows if r[2].get(ERROR, 0.0) != 1.0), columns)
    counts, repeats = _counts(episodes), _repeats(episodes)
    return [
        ReportRow(run, name, counts[name], estimates, errors[name], repeats[name])
        for name, estimates in group_intervals(episodes, columns).items()
    ]


def compare_rows(
    store: Store,
    a: str,
    b: str,
    group: str = "level",
    columns: Sequence[str] | None = None,
) -> list[ReportRow]:
    """Return per group the paired difference B − A of each column over common episodes.

    Errored runs are left out on both sides; ``errors`` counts them in either run.

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the two runs have no episode in common.
    """
    columns = columns or family_columns(store, [a, b])
    first = load_episode_means(store, a, group, columns)
    second = load_episode_means(store, b, group, columns)
    common = {e.episode for e in first} & {e.episode for e in second}
    if not common:
        raise ConfigError(
            f"{store.path}: runs {a!r} and {b!r} have no episodes in common, "
            "so there is nothing to pair; compare runs over the same suites"
        )
    counts = _counts([e for e in first if e.episode in common])
    errors = error_counts(store, a, group) + error_counts(store, b, group)
    differences = paired_differences(first, second, columns)
    return [
        ReportRow(f"{b} − {a}", name, counts[name], estimates, errors[name], counts[name])
        for name, estimates in differences.items()
    ]


def family_columns(store: Store, runs: Sequence[str]) -> tuple[str, ...]:
    """Return the report columns of the runs' mission family (its ``Family.columns``).

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the runs mix families, whose metrics cannot share a table.
    """
    return FAMILIES.get(runs_family(store, runs)).columns


def runs_family(store: Store, runs: Sequence[str]) -> str:
    """Return the mission family the runs share (``rescue`` for runs with no episode).

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the runs mix families, whose metrics cannot share a table.
    """
    families = {}
    for run in runs:
        check_run(store, run)
        families[run] = _run_family(store, run)
    if len(set(families.values())) > 1:
        listed = ", ".join(f"{run} ({family})" for run, family in families.items())
        raise ConfigError(
            f"{store.path}: runs of different mission families ({listed}) "
            "cannot share a table; report them separately"
        )
    if not families:
        raise ConfigError("no run to report: give one with --run RUN_ID")
    return next(iter(families.values()))


def _run_family(store: Store, run: str) -> str:
    """Return the family the store names for ``run``.

    Raises:
        ConfigError: the store does not know it (a run of a version-1 store whose records
            could not be read when the store was upgraded): never guessed.
    """
    family = store.run_family(run)
    if family is None:
        raise ConfigError(
            f"{store.path}: run {run!r} comes from a store made before runs named their "
            "family, and its records could not be read to tell; run it again"
        )
    return family


def available_columns(store: Store, runs: Sequence[str]) -> tuple[str, ...]:
    """Return every metric the runs' episodes hold: the family's table first, then the rest."""
    family = FAMILIES.get(runs_family(store, runs))
    columns, scorer = family.columns, family.load_metrics()
    held = {name for run in runs for episode in store.episodes(run) for name in episode.metrics}
    # A ratio column is held when both its parts are.
    held |= {name for name, r in RATIOS.items() if {r.numerator, r.denominator} <= held}
    names = dict.fromkeys(c for c in (*columns, *scorer) if c in held)
    for run in runs:
        for episode in store.episodes(run):
            names.update(dict.fromkeys(episode.metrics))
    names.pop(ERROR, None)
    return tuple(names)


def choose_columns(store: Store, runs: Sequence[str], wanted: str | None) -> tuple[str, ...]:
    """Return the report columns for ``--columns``: None (the family's), ``all``, or a list.

    Raises:
        ConfigError: a named metric that no episode of the runs holds (the message lists
            those they do).
    """
    if not wanted:
        return family_columns(store, runs)
    available = available_columns(store, runs)
    if wanted.strip() == ALL_COLUMNS:
        return available
    names = tuple(name.strip() for name in wanted.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise ConfigError(
            f"--columns {wanted!r}: unknown metric {', '.join(unknown) or '(none)'}"
            f"; these runs hold: {', '.join(available)}, or 'all'"
        )
    return names


def load_episode_means(
    store: Store,
    run: str,
    group: str,
    columns: Sequence[str],
    replaced: Mapping[str, Mapping[str, float]] | None = None,
) -> list[EpisodeMean]:
    """Return the run's scored episodes, repeats averaged, each tagged with its group.

    Errored episodes are left out (``error_counts`` counts them); ``replaced`` holds metrics
    (by job key) that stand in for the stored ones (another reference path's HS, nDTW, SDTW).
    """
    check_run(store, run)
    _check_group(group)
    replaced = replaced or {}
    rows = (
        (name, e.key, {**e.metrics, **replaced.get(e.key, {})})
        for e in store.episodes(run)
        if not errored(e)
        for name in groups_of(e, group)
    )
    return episode_means(rows, columns)


def error_counts(store: Store, run: str, group: str) -> Counter[str]:
    """Return, per group (and ``all``), how many of the run's episodes ended in an error."""
    _check_group(group)
    counts: Counter[str] = Counter()
    for episode in store.episodes(run):
        if errored(episode):
            counts.update(groups_of(episode, group))
            counts["all"] += 1
    return counts


def errored(episode: StoredEpisode) -> bool:
    """Return whether a stored episode ended in an error (also in stores from before the mark)."""
    return is_error(episode.outcome, episode.failure_reason) or (
        episode.metrics.get(ERROR, 0.0) == 1.0
    )


def readings() -> dict[str, Reading]:
    """Return every family's readings by name (``ts``, ``tp``, ``srr``)."""
    return {r.name: r for name in FAMILIES.names() for r in FAMILIES.get(name).readings}


READING_SETS = ("sortie", "seed")
"""``--readings``: every reading's default (sortie's), or the one its seed's code uses."""


def reading_set(family: str, which: str) -> dict[str, str]:
    """Return the variant of each of ``family``'s readings that ``--readings which`` picks.

    Raises:
        ConfigError: ``which`` is not one of ``READING_SETS``.
    """
    if which not in READING_SETS:
        raise ConfigError(f"--readings {which!r}: expected one of {', '.join(READING_SETS)}")
    chosen = FAMILIES.get(family).readings
    if which == "seed":
        return {r.name: r.seed_variant for r in chosen}
    return {r.name: r.default for r in chosen}


def parse_variants(given: Sequence[str]) -> dict[str, str]:
    """Return ``--variant NAME=VARIANT`` options as a mapping (checked by ``column_sources``).

    Raises:
        ConfigError: an option without ``=``.
    """
    chosen = {}
    for text in given:
        name, sep, variant = text.partition("=")
        if not sep:
            raise ConfigError(f"--variant {text!r}: expected NAME=VARIANT, e.g. tp=emmoe")
        chosen[name.strip()] = variant.strip()
    return chosen


def column_sources(columns: Sequence[str], variants: Variants) -> dict[str, str]:
    """Return, for each column, the column its readings' chosen variants read it from.

    Raises:
        ConfigError: a reading or a variant that no family has (with the choices), or two
            readings that fill one column in ways that do not compose.
    """
    known = readings()
    chosen: list[tuple[str, Mapping[str, str]]] = []
    for name, variant in variants.items():
        if name not in known:
            listed = ", ".join(f"{r.name} ({'|'.join(r.variants)})" for r in known.values())
            hint = did_you_mean(name, known)
            raise ConfigError(f"--variant {name}={variant}: no reading {name!r}.{hint} {listed}")
        if variant not in known[name].variants:
            choices = ", ".join(known[name].variants)
            raise ConfigError(f"--variant {name}={variant!r}: expected one of {choices}")
        chosen.append((f"{name}={variant}", known[name].variants[variant]))
    read_as = _composed(columns, chosen)
    # Readings compose (tp=emmoe and match=category read tp_emmoe_category, in either order);
    # two that fill one column otherwise would leave the winner to the options' order.
    clashes = [c for c, source in _composed(columns, chosen[::-1]).items() if read_as[c] != source]
    if clashes:
        column = clashes[0]
        touched = _chain(column, chosen)
        names = [label for label, mapping in chosen if touched & set(mapping)]
        raise ConfigError(
            f"--variant {' and '.join(names)} both fill the {column} column, each its own "
            "way; choose one of them"
        )
    return read_as


def _chain(column: str, chosen: Sequence[tuple[str, Mapping[str, str]]]) -> set[str]:
    """Return every metric ``column`` passes through, the readings applied in either order."""
    names = {column}
    for order in (chosen, chosen[::-1]):
        source = column
        for _, mapping in order:
            source = mapping.get(source, source)
            names.add(source)
    return names


def _composed(
    columns: Sequence[str], chosen: Sequence[tuple[str, Mapping[str, str]]]
) -> dict[str, str]:
    """Return the metric each column reads, each reading's map applied in turn."""
    read_as = {column: column for column in columns}
    for _, mapping in chosen:
        read_as = {column: mapping.get(source, source) for column, source in read_as.items()}
    return read_as


def chosen_variants(variants: Variants) -> str:
    """Return the variants that are not their reading's default, for a title (``TP: emmoe``)."""
    known = readings()
    return ", ".join(
        f"{name.upper()}: {variant}"
        for name, variant in variants.items()
        if name in known and variant != known[name].default
    )


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise ConfigError(f"--group {group!r}: expected one of {', '.join(GROUPS)}")


def check_run(store: Store, run: str) -> None:
    """Raise UnknownNameError naming the runs in the store if ``run`` is not one of them."""
    runs = store.runs()
    if run in runs:
        return
    hint = did_you_mean(run, runs)
    available = ", ".join(runs) if runs else "none (the store is empty)"
    raise UnknownNameError(f"{store.path}: unknown run {run!r}.{hint} Available: {available}")


def groups_of(episode: StoredEpisode, group: str) -> list[str]:
    """Return the groups the episode counts in: its level, suite, world, type tags, or task.

    An episode's types are its mission's ``types`` tags (a mission may carry two, and then
    counts in both); a rescue episode's type is its level. A household task counts in each
    of its attributes and in its split; an episode of another family is in group ``-``.
    """
    if group == "suite":
        return [episode.suite]
    if group == "level":
        return [episode.level or "-"]
    spec = _header(episode, group).episode
    if group == "world":
        return [spec.world.builder]
    keys = FAMILIES.get(spec.family).groupings.get(group)
    if keys is not None:
        return keys(spec)
    return [spec.level or "-"] if group == "type" else ["-"]  # a grouping of another family


def _header(episode: StoredEpisode, group: str) -> TrajectoryHeader:
    try:
        return _read_header(episode)
    except (OSError, ValueError) as error:
        raise ConfigError(
            f"{episode.record}:1: cannot read the record header to group by {group}: {error}"
        ) from None


def _read_header(episode: StoredEpisode) -> TrajectoryHeader:
    # The store does not keep the episode spec; the record's first line (its header) does.
    with episode.record.open() as file:
        return TrajectoryHeader.model_validate_json(file.readline())


def _counts(episodes: Sequence[EpisodeMean]) -> Counter[str]:
    counts = Counter(e.group for e in episodes)
    counts["all"] = len({e.episode for e in episodes})
    return counts


def _repeats(episodes: Sequence[EpisodeMean]) -> Counter[str]:
    """Return the scored runs per group (and ``all``, each episode once): repeats counted."""
    runs: Counter[str] = Counter()
    for e in episodes:
        runs[e.group] += e.repeats
    runs["all"] = sum({e.episode: e.repeats for e in episodes}.values())
    return runs
