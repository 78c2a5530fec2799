"""The ``sortie`` command line."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table

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


def _fail(error: SortieError, code: int = 2) -> typer.Exit:
    # The message quotes user input (names, paths), which must print as written, not as markup.
    console.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
    return typer.Exit(code=code)


def _family_settings(pairs: list[str] | None, **aliases: str | None) -> dict[str, str]:
    """Return the ``-F name=value`` settings, with the old flags (``--judge`` …) as aliases."""
    settings = _parse_params(pairs or [], "--family-setting")
    for name, value in aliases.items():
        if value is None:
            continue
        if name in settings and settings[name] != value:
            raise _fail(SortieError(f"--{name} {value!r} and -F {name}={settings[name]!r} differ"))
        settings[name] = value
    return settings


def _episode_ids(episodes: str | None) -> tuple[str, ...]:
    return tuple(i.strip() for i in (episodes or "").split(",") if i.strip())


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
    """List the mission families: their body, what they group by and their settings (-F k=v)."""
    from sortie.missions.family import describe
    from sortie.missions.registry import FAMILIES

    table = Table(title="Mission families")
    for column in ("family", "body", "grouped by", "settings (-F name=default)"):
        table.add_column(column)
    for name in FAMILIES.in_order():
        family = FAMILIES.get(name)
        settings = describe(family.settings).replace("; ", "\n")
        table.add_row(name, family.body, family.group, escape(settings))
    console.print(table)


@app.command("import")
def import_suite(
    source: Annotated[str, typer.Argument(help="Seed benchmark: rescuebench or missionbench.")],
    paths: Annotated[
        list[Path],
        typer.Argument(help="rescuebench: level_<L>.jsonl files; missionbench: dataset folders."),
    ],
    out: Annotated[Path, typer.Option(help="Suite file to write (JSONL).")],
    suite: Annotated[
        str | None, typer.Option(help="Suite name (default: the output file's stem).")
    ] = None,
) -> None:
    """Convert a seed benchmark's episode files into a sortie suite for its simulator."""
    from sortie.importers import import_command

    try:
        count = import_command(source, paths, out, suite)
    except SortieError as error:
        raise _fail(error) from None
    console.print(f"Wrote {count} episodes to {escape(str(out))}")


@app.command()
def view(
    world: Annotated[str, typer.Argument(help="World builder name (see `sortie worlds`).")],
    seed: Annotated[int, typer.Option(help="World seed.")] = 0,
    pose: Annotated[
        str | None, typer.Option(help="Walker pose 'x,y,z,yaw' (default: a valid one).")
    ] = None,
    size: Annotated[int, typer.Option(help="Image side in pixels.")] = 256,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Builder parameter k=v.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for the images.")] = Path("view"),
) -> None:
    """Render rgb.png, depth.png, semantic.png and topdown.png of a world from a walker's eye."""
    from sortie.diagnostics.gallery import save_view

    try:
        written = save_view(world, seed, _parse_params(param or [], "--param"), pose, size, out)
    except SortieError as error:
        raise _fail(error) from None
    for path in written:
        console.print(escape(str(path)))


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the store, records and report.")] = Path(
        "demo-out"
    ),
) -> None:
    """Run the smoke suites with two or three agents each; print the leaderboards, write HTML."""
    from sortie.missions.registry import FAMILIES
    from sortie.report import write_portal, write_site
    from sortie.report.render import leaderboard, render_table
    from sortie.report.tables import report_rows
    from sortie.run.batch import RunRequest
    from sortie.run.cli_run import run_with_progress
    from sortie.run.store import Store

    reports = []
    demos = [(name, FAMILIES.get(name).demo) for name in FAMILIES.in_order()]
    with Store(out / "runs" / "sortie.db") as store:
        for family, shown in demos:
            if shown is None:
                continue
            suite, agents, group = shown.suite, shown.agents, shown.by
            runs = [f"demo-{family}-{agent}" for agent in agents]
            for agent, run_id in zip(agents, runs, strict=True):
                console.print(f"Running {suite} with {agent} on 2 workers")
                run_with_progress(
                    RunRequest(
                        (suite,),
                        agent,
                        workers=2,
                        store=store.path,
                        run_id=run_id,
                        # The report's step player shows what each agent saw; a random walk's
                        # thousands of frames would show little and cost a third of the time.
                        record_frames=agent != "random",
                    ),
                    store,
                    console,
                )
            for table in leaderboard(report_rows(store, runs, group)):
                console.print(render_table(table, f"Leaderboard · {suite}"))
            reports.append(
                (f"{family}: {suite}", write_site(store, runs, out / "report" / family, group))
            )
    index = write_portal(out / "report", reports)
    console.print(f"Store: {escape(str(store.path.resolve()))}")
    console.print(f"Report: {escape(str(index.resolve()))}")


@app.command()
def run(
    suites: Annotated[
        list[str], typer.Argument(help="Suite names (e.g. rescue-smoke-v2) or files.")
    ],
    agent: Annotated[str, typer.Option(help="Agent name (oracle, random, explorer, ...).")],
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Agent argument k=v.")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each episode, each with its seed.")] = 1,
    workers: Annotated[int, typer.Option(help="Worker processes (1: in this process).")] = 1,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: agent and time).")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    out: Annotated[
        Path | None, typer.Option(help="Folder for the records (default: beside the store).")
    ] = None,
    clock: ClockOption = "sim",
    family_setting: FamilySettingOption = None,
    triggers: TriggersOption = None,
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    retry_errors: Annotated[
        bool, typer.Option(help="Re-run stored episodes that ended in an agent/backend error.")
    ] = False,
    max_retries: Annotated[int, typer.Option(help="Retries of a job whose worker died.")] = 2,
    executor: Annotated[str, typer.Option(help="local (process pool) or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to join (default: start a local one).")
    ] = None,
    record_frames: Annotated[
        bool, typer.Option(help="Store each step's ego RGB image (by content hash).")
    ] = False,
    judge: JudgeOption = None,
    setting: SettingOption = None,
    skills: SkillsOption = None,
    limit: LimitOption = None,
    episodes: EpisodesOption = None,
    max_consecutive_errors: MaxErrorsOption = 5,
    backend: BackendOption = "embedded",
    backend_arg: BackendArgOption = None,
) -> None:
    """Run suites with one agent into the results store (resumable) and print a level table.

    Exit codes: 0 done; 1 every episode ended in an error, or the run stopped after too many in
    a row; 2 bad input or an unusable store; 130 stopped by Ctrl-C.
    """
    from sortie.core.errors import RunAbortedError
    from sortie.run.batch import RunRequest
    from sortie.run.cli_run import run_and_report

    request = RunRequest(
        tuple(suites),
        agent,
        agent_args=_parse_params(agent_arg or []),
        repeats=repeats,
        workers=workers,
        run_id=run_id,
        store=store,
        out=out,
        clock=clock,
        seed=seed,
        retry_errors=retry_errors,
        max_retries=max_retries,
        executor=executor,
        ray_address=ray_address,
        record_frames=record_frames,
        family_settings=_family_settings(
            family_setting, triggers=triggers, judge=judge, setting=setting, skills=skills
        ),
        limit=limit,
        episodes=_episode_ids(episodes),
        max_consecutive_errors=max_consecutive_errors,
        backend=backend,
        backend_args=_parse_params(backend_arg or [], "--backend-arg"),
    )
    try:
        summary = run_and_report(request, console)
    except RunAbortedError as error:
        raise _fail(error, code=1) from None
    except SortieError as error:
        raise _fail(error) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
    if summary.all_errored:
        raise typer.Exit(code=1)


@app.command()
def generate(
    what: Annotated[
        str,
        typer.Argument(
            help="rescue (episodes of one level), aerial (missions), household (tasks) or suites."
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
    from sortie.generation.cli import generate_command

    try:
        same = generate_command(
            what,
            level=level,
            world=world,
            count=count,
            seed=seed,
            out=out,
            check=check,
            types=types,
            echo=console.print,
        )
    except SortieError as error:
        raise _fail(error) from None
    if not same:
        raise typer.Exit(code=1)


@app.command()
def export(
    kind: Annotated[
        str, typer.Argument(help="sft or dpo (household runs), demos (rescue, aerial).")
    ],
    run_id: Annotated[str, typer.Option("--run", help="Run id in the store.")],
    out: Annotated[Path, typer.Option(help="Folder to write (new or empty).")],
    store: StoreOption = DEFAULT_STORE,
    agent_args: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-arg", "-a", help="sft/dpo: a homiebot request argument k=v (observation=text)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="dpo: seed of the action and skill changes.")] = 0,
    failures: Annotated[
        bool, typer.Option(help="demos: also export episodes that did not succeed.")
    ] = False,
    paraphrase: Annotated[
        int, typer.Option(help="sft: rewrites of each sample by a model (0: none).")
    ] = 0,
    model_args: Annotated[
        list[str] | None,
        typer.Option("--model-arg", "-m", help="With --paraphrase: model client setting k=v."),
    ] = None,
) -> None:
    """Export a stored run as a Hugging Face dataset: SFT, DPO or demonstrations."""
    from sortie.export.cli import ExportRequest, export_command

    request = ExportRequest(
        kind,
        store,
        run_id,
        out,
        _parse_params(agent_args or []),
        seed,
        failures,
        paraphrase,
        _parse_params(model_args or [], "--model-arg"),
    )
    try:
        export_command(request, console.print)
    except SortieError as error:
        raise _fail(error) from None


@app.command()
def report(
    run_ids: Annotated[
        list[str], typer.Option("--run", help="Run id in the store (repeat for several).")
    ],
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
    html_dir: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Also write a static HTML report (plots, a page per episode) here."
        ),
    ] = None,
    ts_variant: Annotated[
        str,
        typer.Option(
            help="Rescue stage scores in TS and S1–S4: paper (default) or rescuebench-code."
        ),
    ] = "paper",
    columns: Annotated[
        str | None,
        typer.Option(
            help="Metrics to show, comma-separated (e.g. sr,eff,eff_all_steps,iou_start2d), or "
            "'all' for every metric sortie computes; default: the family's paper tables."
        ),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            help="human:RUN_ID: score HS, nDTW and SDTW against that run's paths (sortie play) "
            "instead of the suite's expert paths."
        ),
    ] = None,
) -> None:
    """Print each run's metrics per group as mean [95% bootstrap interval] over episodes.

    Episodes that ended in an agent or backend error are left out of every mean and counted
    in the ``errors`` column.
    """
    from sortie.report.codes import codes_extra
    from sortie.report.render import render
    from sortie.report.tables import choose_columns, report_rows, runs_family

    try:
        with _open_store(store) as opened:
            chosen = choose_columns(opened, run_ids, columns)
            rows = report_rows(opened, run_ids, group, chosen, ts_variant, reference)
            title = " · ".join(_run_label(opened, run_id) for run_id in run_ids)
            if ts_variant != "paper":
                title += f" · TS: {ts_variant}"
            if reference:
                title += f" · reference paths: {reference}"
            household = runs_family(opened, run_ids) == "household"
            extra = codes_extra(opened, run_ids) if household and fmt == "json" else None
            _print(render(rows, fmt, title=_title(title, fmt), extra=extra))
            _print_group_note(group, fmt)
            if household:
                _print_error_codes(opened, run_ids, fmt)
            _print_failures(opened, run_ids, fmt)
            _print_usage(opened, run_ids, fmt)
            _print_timings(opened, run_ids, fmt)
            if html_dir is not None:
                from sortie.report import write_site

                index = write_site(opened, run_ids, html_dir, group)
                # On stderr after a text format, so `--format csv > file` stays pure CSV.
                typer.echo(f"HTML report: {index}", err=fmt != "table")
    except SortieError as error:
        raise _fail(error) from None


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (A).")],
    run_b: Annotated[str, typer.Argument(help="Run id compared with it (B).")],
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
) -> None:
    """Print B − A per metric and group: paired over common episodes, with 95% intervals."""
    from sortie.report.render import render
    from sortie.report.tables import compare_rows

    try:
        with _open_store(store) as opened:
            rows = compare_rows(opened, run_a, run_b, group)
            _print(render(rows, fmt, title=_title(f"{run_b} − {run_a} (paired)", fmt)))
    except SortieError as error:
        raise _fail(error) from None


@app.command()
def sweep(
    suites: Annotated[list[str], typer.Argument(help="Suite names or files.")],
    agent: Annotated[str, typer.Option(help="Agent name.")],
    vary: Annotated[
        list[str], typer.Option(help="Agent argument and its values: name=v1,v2 (repeatable).")
    ],
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Fixed agent argument k=v.")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each episode per setting.")] = 1,
    workers: Annotated[int, typer.Option(help="Worker processes.")] = 1,
    run_id: Annotated[str | None, typer.Option(help="Prefix of the runs' ids.")] = None,
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
    clock: ClockOption = "sim",
    family_setting: FamilySettingOption = None,
    triggers: TriggersOption = None,
    judge: JudgeOption = None,
    setting: SettingOption = None,
    skills: SkillsOption = None,
    limit: LimitOption = None,
    episodes: EpisodesOption = None,
    max_consecutive_errors: MaxErrorsOption = 5,
    backend: BackendOption = "embedded",
    backend_arg: BackendArgOption = None,
) -> None:
    """Run one stored run per setting of the varied agent arguments; print their comparison."""
    from sortie.core.errors import RunAbortedError
    from sortie.report.render import render
    from sortie.report.tables import report_rows
    from sortie.run.batch import RunRequest
    from sortie.run.cli_run import run_with_progress, summarise
    from sortie.run.store import Store
    from sortie.run.sweep import parse_vary, sweep_requests

    try:
        base = RunRequest(
            tuple(suites),
            agent,
            agent_args=_parse_params(agent_arg or []),
            repeats=repeats,
            workers=workers,
            run_id=run_id,
            store=store,
            clock=clock,
            family_settings=_family_settings(
                family_setting, triggers=triggers, judge=judge, setting=setting, skills=skills
            ),
            limit=limit,
            episodes=_episode_ids(episodes),
            max_consecutive_errors=max_consecutive_errors,
            backend=backend,
            backend_args=_parse_params(backend_arg or [], "--backend-arg"),
        )
        requests = sweep_requests(base, parse_vary(vary))
        with Store(store) as opened:
            failed = []
            for request in requests:
                console.print(f"Run {escape(request.run_id or '')}")
                plan = run_with_progress(request, opened, console)
                failed += [plan.run_id] if summarise(opened, plan, console).all_errored else []
            runs = [r.run_id for r in requests if r.run_id]
            _print(render(report_rows(opened, runs, group), fmt, title="sweep"))
    except RunAbortedError as error:
        raise _fail(error, code=1) from None
    except SortieError as error:
        raise _fail(error) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
    if failed:  # a setting whose every episode errored measured nothing
        raise typer.Exit(code=1)


@app.command()
def probe(
    suite: Annotated[str, typer.Argument(help="An aerial suite (name or file).")],
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Model setting k=v.")
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="A run of the suite, to correlate with its MP.")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Perception probe: the model's target box and distance from the first frame alone."""
    from sortie.diagnostics.probe import probe_suite, summarise
    from sortie.run.batch import find_suite
    from sortie.run.jobs import AERIAL_CAMERA

    try:
        mp = _run_mp(store, run) if run else None  # a misspelt run fails before any model call
        rows = probe_suite(find_suite(suite), _parse_params(agent_arg or []), AERIAL_CAMERA)
        summary = summarise(rows, mp)
    except SortieError as error:
        raise _fail(error) from None
    table = Table(title=escape(f"Perception probe · {suite}"))
    for column in (
        "missions",
        "target unseen",
        "mean IoU",
        "distance RMSE (m)",
        "r(IoU, MP)",
        "r(|dist err|, MP)",
    ):
        table.add_column(column, justify="right")
    table.add_row(
        str(summary.missions),
        str(summary.unseen),
        *(
            f"{v:.3f}"
            for v in (
                summary.mean_iou,
                summary.distance_rmse,
                summary.r_iou_mp,
                summary.r_distance_mp,
            )
        ),
    )
    console.print(table)


def _run_mp(store: Path, run: str) -> dict[str, float]:
    """Return each episode's MP in ``run``, repeats averaged."""
    with _open_store(store) as opened:
        from sortie.report.tables import check_run

        check_run(opened, run)
        values: dict[str, list[float]] = {}
        for episode in opened.episodes(run):
            values.setdefault(episode.episode_id, []).append(episode.metrics.get("mp", math.nan))
    return {k: sum(v) / len(v) for k, v in values.items()}


def _open_store(path: Path) -> Store:
    from sortie.run.store import Store

    # Opening creates a missing file; a report of a store that is not there is a typo.
    if not path.exists():
        raise SortieError(f"{path}: no results store here; pass --store PATH")
    return Store(path)


def _print_group_note(group: str, fmt: str) -> None:
    """Print what the grouping means for the counts (a task in several groups), if anything."""
    from sortie.report.tables import GROUP_NOTES

    if fmt in ("table", "markdown") and group in GROUP_NOTES:
        _print(f"{GROUP_NOTES[group]}\n" if fmt == "table" else f"\n{GROUP_NOTES[group]}\n")


def _print_error_codes(store: Store, runs: list[str], fmt: str) -> None:
    """Print the household runs' error codes, in successful and failed runs."""
    from sortie.report.codes import code_counts, code_markdown, code_table

    if fmt in ("table", "markdown"):
        counts = code_counts(store, runs)
        _print(code_table(counts) if fmt == "table" else "\n" + code_markdown(counts))


def _print_failures(store: Store, runs: list[str], fmt: str) -> None:
    """Print how the runs' episodes ended, under a table or markdown."""
    from sortie.report.failures import failure_markdown, failure_modes, failure_table

    if fmt in ("table", "markdown"):
        modes = failure_modes(store, runs)
        _print(failure_table(modes) if fmt == "table" else "\n" + failure_markdown(modes))


def _print_usage(store: Store, runs: list[str], fmt: str) -> None:
    """Print the runs' model use (calls, tokens, errors, latency) under a table or markdown."""
    from sortie.report.usage import run_usage, usage_markdown, usage_table

    usage = run_usage(store, runs) if fmt in ("table", "markdown") else {}
    if usage:
        _print(usage_table(usage) if fmt == "table" else "\n" + usage_markdown(usage))


def _print_timings(store: Store, runs: list[str], fmt: str) -> None:
    """Print where the runs' wall time went (agent, backend, render, harness)."""
    from sortie.report.timings import run_time_shares, time_markdown, time_table

    if fmt in ("table", "markdown"):
        shares = run_time_shares(store, runs)
        _print(time_table(shares) if fmt == "table" else "\n" + time_markdown(shares))


def _run_label(store: Store, run_id: str) -> str:
    """Return a run's id, marked when its agent was shown text instead of images."""
    config = store.run_config(run_id) or {}
    args = (config.get("agent") or {}).get("args") or {}
    return f"{run_id} (text observation)" if args.get("observation") == "text" else run_id


def _title(text: str, fmt: str) -> str:
    """Return a report title: escaped for rich's table, verbatim for the text formats."""
    return escape(text) if fmt == "table" else text


def _print(rendered: RenderableType | str) -> None:
    # Text formats go out verbatim (no rich markup or wrapping) so they can be piped to files.
    if isinstance(rendered, str):
        typer.echo(rendered, nl=False)
    else:
        console.print(rendered)


def _parse_params(items: list[str], option: str = "--agent-arg") -> dict[str, str]:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _fail(SortieError(f"{option} {item!r}: expected key=value"))
        params[key] = value
    return params


@app.command("agent-server")
def agent_server(
    agent: Annotated[str, typer.Option(help="Registered agent to serve (random, explorer, ...).")],
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Agent argument k=v.")
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind (loopback; 0.0.0.0 lets others in).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0: a free one).")] = 8765,
) -> None:
    """Serve a registered agent over HTTP for `--agent remote -a url=...` (docs/remote.md).

    With SORTIE_AGENT_TOKEN set, only requests bearing that token are answered.
    """
    from sortie.remote.served import AgentEndpoint
    from sortie.remote.server import AgentServer

    try:
        server = AgentServer(AgentEndpoint(agent, _parse_params(agent_arg or [])), host, port)
    except SortieError as error:
        raise _fail(error) from None
    except OSError as error:
        raise _fail(SortieError(f"cannot listen on {host}:{port}: {error.strerror}")) from None
    guarded = "a token is required" if server.token else "no token required"
    console.print(f"Serving {escape(agent)} at {server.url} ({guarded}); Ctrl-C stops")
    sys.stdout.flush()  # the address must reach a pipe now, not when the buffer fills
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        raise typer.Exit(code=0) from None


@app.command()
def play(
    suite: Annotated[str, typer.Argument(help="Suite name (e.g. rescue-l1-v2) or file.")],
    episode: Annotated[
        list[str] | None, typer.Option(help="Episode id to play (repeatable; default: all).")
    ] = None,
    port: Annotated[
        int, typer.Option(help="Port of the page on 127.0.0.1 (0: a free one).")
    ] = 8766,
    store: StoreOption = DEFAULT_STORE,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: human and time).")
    ] = None,
) -> None:
    """Play a suite yourself in a browser, one key press per step; stored as agent `human`.

    The run counts time on the latency clock, so your decision time is mission time.
    """
    from sortie.remote.play import PlayRequest
    from sortie.remote.play import play as play_suite

    def ready(url: str) -> None:
        console.print(f"Open {url} in a browser and play (keys are on the page); Ctrl-C stops")
        sys.stdout.flush()

    request = PlayRequest(suite, tuple(episode or ()), port, store, run_id)
    try:
        play_suite(request, lambda line: console.print(escape(line)), ready)
    except SortieError as error:
        raise _fail(error) from None
    except OSError as error:
        raise _fail(
            SortieError(f"cannot serve the page on port {port}: {error.strerror}")
        ) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None


if __name__ == "__main__":
    app()
