"""The options of ``sortie run`` and ``sortie sweep``, each declared once, as typed records.

A field is one flag: its type, its typer option (name, help) and its default. A command takes
a record as one parameter (``options: RunOptions``), ``grouped_options`` spreads its fields
into the command's flags, and the record turns itself into the ``RunRequest`` it asks for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sortie.cli.common import (
    DEFAULT_STORE,
    AgentArgOption,
    StoreOption,
    episode_ids,
    family_settings,
    parse_params,
    pose_settings,
)

if TYPE_CHECKING:
    from sortie.run.batch import RunRequest


def _alias(name: str) -> typer.models.OptionInfo:
    """Return the hidden flag that family setting ``name`` had before ``-F name=value``."""
    return typer.Option(hidden=True, help=f"= -F {name}=…")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What both commands that run suites take: the suites, the agent, the store, the settings."""

    suites: Annotated[
        list[str], typer.Argument(help="Suite names (e.g. rescue-smoke-v2) or files.")
    ]
    agent: Annotated[str, typer.Option(help="Agent name (oracle, random, explorer, ...).")]
    agent_arg: AgentArgOption = None
    repeats: Annotated[int, typer.Option(help="Runs of each episode, each with its seed.")] = 1
    workers: Annotated[int, typer.Option(help="Worker processes (1: in this process).")] = 1
    store: StoreOption = DEFAULT_STORE
    clock: Annotated[str, typer.Option(help="Budget clock: sim or latency.")] = "sim"
    family_setting: Annotated[
        list[str] | None,
        typer.Option(
            "--family-setting", "-F", help="Mission family setting k=v (see `sortie families`)."
        ),
    ] = None
    limit: Annotated[
        int | None, typer.Option(help="Run only the first N episodes of each suite.")
    ] = None
    episodes: Annotated[
        str | None, typer.Option(help="Run only these episode ids, comma-separated.")
    ] = None
    max_consecutive_errors: Annotated[
        int,
        typer.Option(
            help="Stop after N episodes in a row end in an agent/backend error (0: never)."
        ),
    ] = 5
    backend: Annotated[
        str, typer.Option("--backend", help="Backend name (see `sortie backends`).")
    ] = "embedded"
    backend_arg: Annotated[
        list[str] | None, typer.Option("--backend-arg", "-b", help="Backend argument k=v.")
    ] = None
    camera: Annotated[
        str | None,
        typer.Option(
            help="The agent's camera: a preset (rescuebench, missionbench, ...) or "
            "WxH@HFOV/PITCH, the last two optional, e.g. 640x640@110 (default: the family's)."
        ),
    ] = None
    pose_frame: Annotated[
        str | None,
        typer.Option(help="Pose sensor frame, for agents that read it: world or start."),
    ] = None
    pose_noise: Annotated[
        str | None,
        typer.Option(help="Pose sensor noise, standard deviations: METRES[,DEGREES]."),
    ] = None
    # The flags the family settings had before -F, kept as aliases of -F name=value.
    triggers: Annotated[str | None, _alias("triggers")] = None
    judge: Annotated[str | None, _alias("judge")] = None
    setting: Annotated[str | None, _alias("setting")] = None
    skills: Annotated[str | None, _alias("skills")] = None

    def request(self, run_id: str | None) -> RunRequest:
        """Return the run these options ask for, as run ``run_id`` (None: a new id).

        The ``k=v`` lists become dicts, the old family flags join ``-F``, the episode list a
        tuple; a malformed one exits with code 2.
        """
        from sortie.run.batch import RunRequest

        aliases = {
            "triggers": self.triggers,
            "judge": self.judge,
            "setting": self.setting,
            "skills": self.skills,
        }
        return RunRequest(
            tuple(self.suites),
            self.agent,
            agent_args=parse_params(self.agent_arg or []),
            repeats=self.repeats,
            workers=self.workers,
            run_id=run_id,
            store=self.store,
            clock=self.clock,
            family_settings=family_settings(self.family_setting, **aliases),
            limit=self.limit,
            episodes=episode_ids(self.episodes),
            max_consecutive_errors=self.max_consecutive_errors,
            backend=self.backend,
            backend_args=parse_params(self.backend_arg or [], "--backend-arg"),
            camera=self.camera,
            pose=pose_settings(self.pose_frame, self.pose_noise),
        )


@dataclass(frozen=True, slots=True)
class SingleRunOptions(RunOptions):
    """What ``sortie run`` takes beside ``RunOptions``: one run's seed, records and executor."""

    out: Annotated[
        Path | None, typer.Option(help="Folder for the records (default: beside the store).")
    ] = None
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0
    retry_errors: Annotated[
        bool, typer.Option(help="Re-run stored episodes that ended in an agent/backend error.")
    ] = False
    max_retries: Annotated[int, typer.Option(help="Retries of a job whose worker died.")] = 2
    executor: Annotated[str, typer.Option(help="local (process pool) or ray.")] = "local"
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to join (default: start a local one).")
    ] = None
    record_frames: Annotated[
        bool, typer.Option(help="Store each step's ego RGB image (by content hash).")
    ] = False
    wide: Annotated[
        bool,
        typer.Option(help="Print the results a row a level however narrow the terminal."),
    ] = False

    def request(self, run_id: str | None) -> RunRequest:
        """Return the run these options ask for, as run ``run_id`` (None: a new id)."""
        # Not super(): a slotted dataclass is a new class, which zero-argument super() misses.
        return replace(
            RunOptions.request(self, run_id),
            out=self.out,
            seed=self.seed,
            retry_errors=self.retry_errors,
            max_retries=self.max_retries,
            executor=self.executor,
            ray_address=self.ray_address,
            record_frames=self.record_frames,
        )
