"""``sortie run`` and ``sortie sweep``: runs into the results store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from sortie.cli.common import (
    DEFAULT_STORE,
    AgentArgOption,
    BackendArgOption,
    BackendOption,
    ClockOption,
    EpisodesOption,
    FamilySettingOption,
    FormatOption,
    GroupOption,
    JudgeOption,
    LimitOption,
    MaxErrorsOption,
    SettingOption,
    SkillsOption,
    StoreOption,
    TriggersOption,
    app,
    console,
    echo,
    episode_ids,
    fail,
    family_settings,
    parse_params,
)
from sortie.core.errors import RunAbortedError, SortieError

if TYPE_CHECKING:
    from sortie.run.batch import RunRequest

SuitesArgument = Annotated[
    list[str], typer.Argument(help="Suite names (e.g. rescue-smoke-v2) or files.")
]
AgentOption = Annotated[str, typer.Option(help="Agent name (oracle, random, explorer, ...).")]
RepeatsOption = Annotated[int, typer.Option(help="Runs of each episode, each with its seed.")]
WorkersOption = Annotated[int, typer.Option(help="Worker processes (1: in this process).")]
OutOption = Annotated[
    Path | None, typer.Option(help="Folder for the records (default: beside the store).")
]
SeedOption = Annotated[int, typer.Option(help="Run seed.")]
RetryOption = Annotated[
    bool, typer.Option(help="Re-run stored episodes that ended in an agent/backend error.")
]
MaxRetriesOption = Annotated[int, typer.Option(help="Retries of a job whose worker died.")]
ExecutorOption = Annotated[str, typer.Option(help="local (process pool) or ray.")]
RayOption = Annotated[
    str | None, typer.Option(help="Ray cluster to join (default: start a local one).")
]
FramesOption = Annotated[
    bool, typer.Option(help="Store each step's ego RGB image (by content hash).")
]
ALIASES = ("triggers", "judge", "setting", "skills")
"""The old flags of the family settings, kept as aliases of ``-F name=value``."""


@app.command()
def run(
    suites: SuitesArgument,
    agent: AgentOption,
    agent_arg: AgentArgOption = None,
    repeats: RepeatsOption = 1,
    workers: WorkersOption = 1,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: agent and time).")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    out: OutOption = None,
    clock: ClockOption = "sim",
    family_setting: FamilySettingOption = None,
    seed: SeedOption = 0,
    retry_errors: RetryOption = False,
    max_retries: MaxRetriesOption = 2,
    executor: ExecutorOption = "local",
    ray_address: RayOption = None,
    record_frames: FramesOption = False,
    limit: LimitOption = None,
    episodes: EpisodesOption = None,
    max_consecutive_errors: MaxErrorsOption = 5,
    backend: BackendOption = "embedded",
    backend_arg: BackendArgOption = None,
    triggers: TriggersOption = None,
    judge: JudgeOption = None,
    setting: SettingOption = None,
    skills: SkillsOption = None,
) -> None:
    """Run suites with one agent into the results store (resumable) and print a level table.

    Exit codes: 0 done; 1 every episode ended in an error, or the run stopped after too many in
    a row; 2 bad input or an unusable store; 130 stopped by Ctrl-C.
    """
    options = dict(locals())  # every option by its name (first: nothing else is defined yet)
    from sortie.run.cli_run import run_and_report

    request = run_request(options)
    with exit_codes():
        summary = run_and_report(request, console)
        _warn_echoes(request.store, summary.plan.run_id)
    if summary.all_errored:
        raise typer.Exit(code=1)


ECHO_WARNING = 0.5
"""Share of a run's decisions answered by echoes above which ``sortie run`` says so."""


def _warn_echoes(store_path: Path, run_id: str) -> None:
    """Say so when most of a model's answers copied the prompt instead of answering."""
    from sortie.core.records_io import read_trajectory
    from sortie.report.usage import run_usage
    from sortie.run.store import Store

    with Store(store_path) as store:
        episodes = store.episodes(run_id)
        # Only a run whose agent asks a model has answers to count: one record tells, and an
        # oracle run of hundreds of episodes is not read again to find none.
        try:
            first = read_trajectory(episodes[0].record) if episodes else None
        except (SortieError, OSError):  # an unreadable record: the report says so, not this
            return
        if first is None or not any(step.model_calls for step in first.steps):
            return
        stats = run_usage(store, [run_id]).get(run_id)
    if stats is None or not stats.echoes or stats.echo_rate <= ECHO_WARNING:
        return
    console.print(
        f"[bold yellow]{stats.echoes} of {stats.decisions} decisions ended in answers that "
        "copied the prompt's placeholders or field descriptions instead of answering[/] "
        "(format errors of kind echo): the model did not take the task up; see "
        "docs/models.md, Weak models"
    )


@app.command()
def sweep(
    suites: SuitesArgument,
    agent: AgentOption,
    vary: Annotated[
        list[str], typer.Option(help="Agent argument and its values: name=v1,v2 (repeatable).")
    ],
    agent_arg: AgentArgOption = None,
    repeats: RepeatsOption = 1,
    workers: WorkersOption = 1,
    run_id: Annotated[str | None, typer.Option(help="Prefix of the runs' ids.")] = None,
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
    clock: ClockOption = "sim",
    family_setting: FamilySettingOption = None,
    limit: LimitOption = None,
    episodes: EpisodesOption = None,
    max_consecutive_errors: MaxErrorsOption = 5,
    backend: BackendOption = "embedded",
    backend_arg: BackendArgOption = None,
    triggers: TriggersOption = None,
    judge: JudgeOption = None,
    setting: SettingOption = None,
    skills: SkillsOption = None,
) -> None:
    """Run one stored run per setting of the varied agent arguments; print their comparison."""
    options = dict(locals())  # every option by its name (first: nothing else is defined yet)
    from sortie.report.render import render
    from sortie.report.tables import report_rows
    from sortie.run.cli_run import run_with_progress, summarise
    from sortie.run.store import Store
    from sortie.run.sweep import parse_vary, sweep_requests

    shown = {name: options.pop(name) for name in ("vary", "group", "fmt")}
    with exit_codes(), Store(store) as opened:
        requests = sweep_requests(run_request(options), parse_vary(shown["vary"]))
        failed = []
        for request in requests:
            console.print(f"Run {escape(request.run_id or '')}")
            plan = run_with_progress(request, opened, console)
            failed += [plan.run_id] if summarise(opened, plan, console).all_errored else []
        runs = [r.run_id for r in requests if r.run_id]
        echo(render(report_rows(opened, runs, shown["group"]), shown["fmt"], title="sweep"))
    if failed:  # a setting whose every episode errored measured nothing
        raise typer.Exit(code=1)


def run_request(options: dict[str, Any]) -> RunRequest:
    """Return the run a command's options ask for (named as ``RunRequest``'s fields).

    The ``k=v`` lists become dicts, the old family flags join ``-F``, the episode list a tuple.
    """
    from sortie.run.batch import RunRequest

    given = dict(options)
    aliases = {name: given.pop(name) for name in ALIASES}
    return RunRequest(
        tuple(given.pop("suites")),
        given.pop("agent"),
        agent_args=parse_params(given.pop("agent_arg") or []),
        backend_args=parse_params(given.pop("backend_arg") or [], "--backend-arg"),
        family_settings=family_settings(given.pop("family_setting"), **aliases),
        episodes=episode_ids(given.pop("episodes")),
        **given,
    )


@contextmanager
def exit_codes() -> Iterator[None]:
    """Turn errors into exit codes: 1 a run stopped by its errors, 2 bad input, 130 Ctrl-C."""
    try:
        yield
    except RunAbortedError as error:
        raise fail(error, code=1) from None
    except SortieError as error:
        raise fail(error) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
