"""``sortie train navigator``: episodes → expert run → demos → models → scored runs.

1. ``episodes``: training suites from ``sortie generate rescue``'s generator, one per level,
   with seeds and worlds disjoint from the committed suites (``episodes``, checked in code).
2. ``expert``: the oracle plays them into the folder's results store, at the run camera.
3. ``demos``: ``sortie export demos`` of that run (split 9:1 by episode).
4. one model per ``--shares`` (``models``): behaviour cloning on that share of the train
   split, then DAgger rounds (the navigator plays the share's episodes, the oracle labels
   every state it visits, and the network goes on training on the demos and the rollouts).
5. ``evaluate/...``: each model, and each ``--baselines`` agent, plays the evaluation suites
   at the same camera, stored beside the expert run (run ids ``navigator-share-N`` and the
   agent's name).

Everything lands under one folder. Each phase leaves a file behind (the suites, the runs, the
demos folder, each model's checkpoints) and is skipped when it is there, so a pipeline stopped
anywhere resumes at the phase it was in (a run resumes at its first unfinished episode). A
folder made with other data settings is refused, and a model folder with other training
settings; a new share or baseline in an existing folder only adds its own phases.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sortie import suites
from sortie.agents.navigator import policy
from sortie.core.errors import ParameterError
from sortie.export.request import ExportRequest, export_run
from sortie.missions.registry import FAMILIES
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import Store
from sortie.training.folders import check_settings_file
from sortie.training.navigator import episodes
from sortie.training.navigator.learning import FitSettings, check_device
from sortie.training.navigator.models import (
    DemoData,
    ModelPlan,
    read_demos,
    share_name,
    train_model,
)
from sortie.training.navigator.phases import Echo, Phases

EXPERT_RUN = "expert"
LEVELS = ("L1", "L2", "L3", "L4", "L5")
LEVEL_SUITES = tuple(f"rescue-{level.lower()}-v2" for level in LEVELS)
"""The committed level suites the experiment scores on."""
BASELINES = ("oracle", "explorer", "explorer-nomem", "random")
"""The agents scored beside the navigator by default (RescueBench's comparison)."""


@dataclass(frozen=True, slots=True)
class NavigatorSettings:
    """What to train on, how, and where to score it."""

    levels: tuple[str, ...] = LEVELS
    episodes: int = 40
    """Training episodes generated per level."""
    seed: int = 70000
    """Generation seed (each level adds its number) and the training seed."""
    camera: str = "64x64@90"
    """The camera the expert's demos, the rollouts and the runs are rendered with."""
    shares: tuple[float, ...] = (0.1, 1.0)
    """One model per share of the train split's episodes (by episode, per level)."""
    shape: policy.NetShape = field(default_factory=policy.NetShape)
    fit: FitSettings = field(default_factory=FitSettings)
    dagger_rounds: int = 1
    dagger_epochs: int = 10
    beta: float = 0.5
    """Chance a DAgger step carries out the oracle's action in round 1 (halved each round)."""
    rollout_steps: int = 400
    """Longest rollout, steps."""
    eval_suites: tuple[str, ...] = LEVEL_SUITES
    eval_limit: int | None = None
    """Score on only the first N episodes of each suite (None: all)."""
    baselines: tuple[str, ...] = BASELINES
    workers: int = 1
    """Processes for the expert's and the evaluation runs (the numbers do not change)."""

    def __post_init__(self) -> None:
        """Refuse settings no pipeline can follow, every bad one at once.

        Raises:
            ParameterError: a count below its least, a share outside (0, 1], no level, a
                camera that is not one, a device torch does not have.
        """
        bad = [*self._low_counts(), *self._bad_choices()]
        if bad:
            raise ParameterError("train navigator: " + "; ".join(bad))

    def _low_counts(self) -> list[str]:
        least = {
            "--episodes": (self.episodes, 1),
            "--epochs": (self.fit.epochs, 1),
            "--batch": (self.fit.batch, 1),
            "--size": (self.shape.size, 8),
            "--width": (self.shape.width, 1),
            "--hidden": (self.shape.hidden, 1),
            "--dagger-rounds": (self.dagger_rounds, 0),
            "--dagger-epochs": (self.dagger_epochs, 1),
            "--rollout-steps": (self.rollout_steps, 1),
            "--workers": (self.workers, 1),
            "--eval-limit": (1 if self.eval_limit is None else self.eval_limit, 1),
        }
        return [
            f"{flag} {value}: at least {low}" for flag, (value, low) in least.items() if value < low
        ]

    def _bad_choices(self) -> list[str]:
        bad = []
        if not self.levels:
            bad.append("--levels: no level given (e.g. L1 or L1,L2)")
        if not self.shares or any(not 0.0 < share <= 1.0 for share in self.shares):
            bad.append(f"--shares {','.join(map(str, self.shares))}: shares in (0, 1], e.g. 0.1,1")
        elif len({share_name(share) for share in self.shares}) < len(self.shares):
            bad.append(f"--shares {','.join(map(str, self.shares))}: a share given twice")
        if not 0.0 <= self.beta <= 1.0:
            bad.append(f"--beta {self.beta}: a chance in [0, 1]")
        if not self.fit.learning_rate > 0:
            bad.append(f"--learning-rate {self.fit.learning_rate}: above 0")
        for check in (
            lambda: FAMILIES.get("rescue").own_camera(self.camera),
            lambda: check_device(self.fit.device),
        ):
            try:
                check()
            except ParameterError as error:
                bad.append(str(error))
        return bad

    def data_settings(self) -> dict[str, Any]:
        """Return the settings that decide the folder's data (kept in its ``settings.json``)."""
        return {
            "levels": list(self.levels),
            "episodes": self.episodes,
            "seed": self.seed,
            "camera": self.camera,
        }

    def model(self, out: Path, share: float) -> ModelPlan:
        """Return the plan of the model that learns from ``share`` of the demos."""
        return ModelPlan(
            share,
            out / share_name(share),
            self.shape,
            self.fit,
            self.dagger_rounds,
            self.dagger_epochs,
            self.beta,
            self.rollout_steps,
            self.camera,
        )


def model_settings(plan: ModelPlan) -> dict[str, Any]:
    """Return the settings that decide a model's checkpoint (kept in its folder)."""
    kept = asdict(plan)
    kept.pop("folder")
    return json.loads(json.dumps(kept))


@dataclass(frozen=True, slots=True)
class NavigatorResult:
    """Each model's checkpoint, the results store, the scored runs (baselines first), the plot."""

    checkpoints: dict[str, Path]
    store: Path
    runs: list[str]
    cascade: Path | None
    """The stage cascade of every scored run per level (None: nothing was scored)."""


def train_navigator(settings: NavigatorSettings, out: Path, echo: Echo) -> NavigatorResult:
    """Run the whole pipeline under ``out``; return the checkpoints and where they were scored.

    Raises:
        ConfigError: ``out`` (or a model's folder) made with other settings, a training seed
            or episode of a committed suite, or a phase that cannot go on (the message says
            which).
    """
    out.mkdir(parents=True, exist_ok=True)
    check_settings_file(out, settings.data_settings())
    plans = [settings.model(out, share) for share in settings.shares]
    for plan in plans:
        plan.folder.mkdir(exist_ok=True)
        check_settings_file(plan.folder, model_settings(plan))
    phases, store = Phases(out, echo), out / "results.db"
    paths = _episodes(settings, out, phases)
    _play(settings, paths, store, phases)
    _demos(store, out / "demos", phases)
    checkpoints = _train_models(settings, plans, out, paths, phases)
    runs = [
        *(_evaluate(settings, store, agent, agent, {}, phases) for agent in settings.baselines),
        *(
            _evaluate(
                settings, store, f"navigator-{name}", "navigator", {"checkpoint": str(path)}, phases
            )
            for name, path in checkpoints.items()
        ),
    ]
    scored = [run for run in runs if run]
    cascade = _cascade(store, scored, out / "stage-cascade.png") if scored else None
    return NavigatorResult(checkpoints, store, scored, cascade)


def _train_models(
    settings: NavigatorSettings,
    plans: list[ModelPlan],
    out: Path,
    paths: list[Path],
    phases: Phases,
) -> dict[str, Path]:
    """Train each model not trained yet; return every model's checkpoint by its name.

    The demos are read only when a model still needs them (reading them is a minute or two,
    and most of the command's memory, which the evaluation then gets back).
    """
    demos: DemoData | None = None
    rollout_from = [e for path in paths for e in suites.read(path).episodes]
    checkpoints = {}
    for plan in plans:
        final = plan.folder / "navigator.pt"
        if final.exists():
            phases.skip(plan.name, f"{final} is saved")
        else:
            demos = demos or read_demos(out, out / "results.db", EXPERT_RUN, settings.shape.size)
            final = train_model(plan, demos, rollout_from, phases)
        checkpoints[plan.name] = final
    return checkpoints


def _episodes(settings: NavigatorSettings, out: Path, phases: Phases) -> list[Path]:
    folder = out / "episodes"
    names = [
        f"{level} seed {episodes.level_seed(settings.seed, level)}" for level in settings.levels
    ]
    with phases.phase("episodes") as facts:
        paths = episodes.training_suites(
            folder, settings.levels, settings.episodes, settings.seed, phases.echo
        )
        facts["suites"] = names
    return paths


def _play(settings: NavigatorSettings, paths: list[Path], store: Path, phases: Phases) -> None:
    """Let the oracle play the training suites into the expert run."""
    request = RunRequest(
        tuple(str(p) for p in paths),
        "oracle",
        store=store,
        run_id=EXPERT_RUN,
        camera=settings.camera,
        workers=settings.workers,
        max_consecutive_errors=0,
    )
    _execute(request, "expert", phases)


def _demos(store: Path, folder: Path, phases: Phases) -> None:
    if (folder / "export.json").exists():
        phases.skip("demos", f"{folder} is written")
        return
    with phases.phase("demos"):
        export_run(ExportRequest("demos", store, EXPERT_RUN, folder, {}), phases.say)


def _evaluate(
    settings: NavigatorSettings,
    store: Path,
    run_id: str,
    agent: str,
    agent_args: dict[str, str],
    phases: Phases,
) -> str | None:
    """Score ``agent`` on the evaluation suites as run ``run_id`` (None: no suite to score on)."""
    if not settings.eval_suites:
        return None
    request = RunRequest(
        settings.eval_suites,
        agent,
        agent_args=agent_args,
        store=store,
        run_id=run_id,
        camera=settings.camera,
        limit=settings.eval_limit,
        workers=settings.workers,
    )
    _execute(request, f"evaluate/{run_id}", phases)
    return run_id


def _execute(request: RunRequest, name: str, phases: Phases) -> None:
    """Play ``request``'s missing episodes as phase ``name``, a line per finished episode."""
    with Store(request.store) as opened, phases.phase(name) as facts:
        plan = plan_run(request, opened)
        if not plan.todo:
            phases.echo(f"  all {len(plan.jobs)} episodes of {request.run_id} already played")
        execute(plan, request, opened, _ticker(name, len(plan.todo), phases.echo))
        facts["episodes"] = len(plan.jobs)


def _cascade(store: Path, runs: list[str], path: Path) -> Path:
    """Draw the report's stage cascade of ``runs`` (a panel per level) to ``path``."""
    from sortie.report.plots import plot_cascade, stage_cascade  # matplotlib: only here

    with Store(store) as opened:
        return plot_cascade(stage_cascade(opened, runs), path)


def _ticker(name: str, total: int, echo: Echo) -> Callable[[JobResult], None]:
    """Return an ``on_result`` that prints a line per finished episode."""
    done = [0]

    def tick(result: JobResult) -> None:
        done[0] += 1
        outcome = result.footer.outcome.value if result.footer.outcome else "?"
        echo(f"  {name}: {done[0]}/{total} episodes ({result.job.episode.episode_id}: {outcome})")

    return tick
