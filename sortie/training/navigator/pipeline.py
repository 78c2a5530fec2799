"""``sortie train navigator``: episodes → expert run → demos → BC → DAgger → checkpoint → score.

1. ``episodes``: training suites from ``sortie generate rescue``'s generator, one per level,
   with seeds and worlds disjoint from the committed suites (``episodes``, checked in code).
2. ``expert``: the oracle plays them into the folder's results store, at the run camera.
3. ``demos``: ``sortie export demos`` of that run (split 9:1 by episode).
4. ``bc``: behaviour cloning on the train split, the validation split's loss every epoch.
5. ``dagger-N``: the navigator plays the train split's episodes, the oracle labels every
   state it visits (``dagger``), and the network goes on training on the demos and every
   round's rollouts so far.
6. ``evaluate``: ``sortie run SUITE --agent navigator`` with the last checkpoint, stored beside
   the expert run (optional).

Everything lands under one folder. Each phase leaves a file behind (the suites, the run, the
demos folder, ``bc.pt``, ``rollouts-N.npz`` and ``dagger-N.pt``, ``navigator.pt``) and is skipped
when it is there, so a pipeline stopped anywhere resumes at the phase it was in (a run resumes
at its first unfinished episode). A folder made with other settings is refused.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sortie import suites
from sortie.agents.navigator import policy
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, ParameterError
from sortie.export.demos import split_of
from sortie.export.request import ExportRequest, export_run
from sortie.missions.registry import FAMILIES
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import Store
from sortie.training.folders import check_settings_file
from sortie.training.navigator import data, episodes
from sortie.training.navigator.dagger import RolloutSettings, dagger_round
from sortie.training.navigator.learning import FitSettings, fit
from sortie.training.navigator.phases import Echo, Phases

EXPERT_RUN = "expert"


@dataclass(frozen=True, slots=True)
class NavigatorSettings:
    """What to train on, how, and where to score it."""

    levels: tuple[str, ...] = ("L1",)
    episodes: int = 40
    """Training episodes generated per level."""
    seed: int = 70000
    """Generation seed (each level adds its number) and the training seed."""
    camera: str = "64x64@90"
    """The camera the expert's demos and the rollouts are rendered with (``--camera``)."""
    shape: policy.NetShape = field(default_factory=policy.NetShape)
    fit: FitSettings = field(default_factory=FitSettings)
    dagger_rounds: int = 1
    dagger_epochs: int = 10
    beta: float = 0.5
    """Chance a DAgger step carries out the oracle's action in round 1 (halved each round)."""
    rollout_steps: int = 400
    """Longest rollout, steps."""
    eval_suite: str | None = "rescue-l1-v2"
    eval_limit: int | None = None

    def __post_init__(self) -> None:
        """Refuse settings no pipeline can follow, every bad one at once.

        Raises:
            ParameterError: a count below its least, a share outside [0, 1], no level, a
                camera that is not one.
        """
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
        }
        bad = [
            f"{flag} {value}: at least {low}" for flag, (value, low) in least.items() if value < low
        ]
        if not self.levels:
            bad.append("--levels: no level given (e.g. L1 or L1,L2)")
        if not 0.0 <= self.beta <= 1.0:
            bad.append(f"--beta {self.beta}: a chance in [0, 1]")
        if self.eval_limit is not None and self.eval_limit < 1:
            bad.append(f"--eval-limit {self.eval_limit}: at least 1")
        if not self.fit.learning_rate > 0:
            bad.append(f"--learning-rate {self.fit.learning_rate}: above 0")
        try:
            FAMILIES.get("rescue").own_camera(self.camera)
        except ParameterError as error:
            bad.append(str(error))
        if bad:
            raise ParameterError("train navigator: " + "; ".join(bad))

    def decisive(self) -> dict[str, Any]:
        """Return the settings that decide the checkpoint (kept in ``settings.json``)."""
        kept = asdict(self)
        kept.pop("eval_suite"), kept.pop("eval_limit")
        return json.loads(json.dumps(kept))


@dataclass(frozen=True, slots=True)
class NavigatorResult:
    """The trained checkpoint, the results store and the scored run (None: not scored)."""

    checkpoint: Path
    store: Path
    run: str | None


def train_navigator(settings: NavigatorSettings, out: Path, echo: Echo) -> NavigatorResult:
    """Run the whole pipeline under ``out``; return the checkpoint and where it was scored.

    Raises:
        ConfigError: ``out`` made with other settings, a training seed or episode of a
            committed suite, or a phase that cannot go on (the message says which).
    """
    out.mkdir(parents=True, exist_ok=True)
    _check_settings(settings, out)
    phases, store = Phases(out, echo), out / "results.db"
    paths = _episodes(settings, out, phases)
    _expert(settings, paths, store, phases)
    _demos(store, out / "demos", phases)
    checkpoint = _bc(settings, out, store, phases)
    for round_index in range(1, settings.dagger_rounds + 1):
        checkpoint = _dagger(settings, out, paths, checkpoint, round_index, phases)
    final = out / "navigator.pt"
    shutil.copyfile(checkpoint, final)
    echo(f"checkpoint: {final} (from {checkpoint.name})")
    run = _evaluate(settings, final, store, phases) if settings.eval_suite else None
    return NavigatorResult(final, store, run)


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


def _expert(settings: NavigatorSettings, paths: list[Path], store: Path, phases: Phases) -> None:
    request = RunRequest(
        tuple(str(p) for p in paths),
        "oracle",
        store=store,
        run_id=EXPERT_RUN,
        camera=settings.camera,
        max_consecutive_errors=0,
    )
    with Store(store) as opened, phases.phase("expert") as facts:
        plan = plan_run(request, opened)
        if not plan.todo:
            phases.echo(f"  all {len(plan.jobs)} expert episodes already played")
        execute(plan, request, opened, _ticker("expert", len(plan.todo), phases.echo))
        facts["episodes"] = len(plan.jobs)


def _demos(store: Path, folder: Path, phases: Phases) -> None:
    if (folder / "export.json").exists():
        phases.skip("demos", f"{folder} is written")
        return
    with phases.phase("demos"):
        export_run(ExportRequest("demos", store, EXPERT_RUN, folder, {}), phases.say)


def _bc(settings: NavigatorSettings, out: Path, store: Path, phases: Phases) -> Path:
    path = out / "bc.pt"
    if path.exists():
        phases.skip("bc", f"{path} is saved")
        return path
    with phases.phase("bc") as facts:
        train, validation = demo_sets(settings, out, store, phases.echo)
        with policy.deterministic(settings.fit.seed):
            net = policy.NavigatorNet(settings.shape)
            history = fit(net, train, validation, settings.fit, phases.echo)
        facts["epochs"] = [asdict(h) for h in history]
        policy.save_checkpoint(path, net, {"phase": "bc", "epochs": facts["epochs"]})
    return path


def demo_sets(
    settings: NavigatorSettings, out: Path, store: Path, echo: Echo
) -> tuple[list[data.Sequence], list[data.Sequence]]:
    """Return the demos' train and validation sequences, checked against the committed suites.

    Raises:
        ConfigError: an episode of the demos is in a committed suite, or the train split is
            empty.
    """
    size = settings.shape.size
    goals, specs = data.episode_goals(store, EXPERT_RUN, size)
    episodes.check_disjoint(specs, episodes.held_out(), f"{out / 'demos'}")
    cache = out / "cache"
    train = data.demo_sequences(out / "demos", "train", goals, size, cache)
    validation = data.demo_sequences(out / "demos", "validation", goals, size, cache)
    if not train:
        raise ConfigError(f"{out / 'demos'}: no train split; generate more --episodes")
    steps = sum(len(s) for s in train)
    echo(
        f"  demos: {len(train)} train episodes ({steps} steps), {len(validation)} validation; "
        f"expert actions {data.label_counts(train)}"
    )
    return train, validation


def _dagger(
    settings: NavigatorSettings,
    out: Path,
    paths: list[Path],
    previous: Path,
    round_index: int,
    phases: Phases,
) -> Path:
    path, name = out / f"dagger-{round_index}.pt", f"dagger-{round_index}"
    if path.exists():
        phases.skip(name, f"{path} is saved")
        return path
    with phases.phase(name) as facts:
        rollouts = out / f"rollouts-{round_index}.npz"
        if not rollouts.exists():
            _roll_out(settings, paths, previous, round_index, rollouts, phases.echo, facts)
        train, validation = demo_sets(settings, out, out / "results.db", phases.echo)
        for earlier in range(1, round_index + 1):
            train += data.load_sequences(out / f"rollouts-{earlier}.npz")
        net, _ = policy.load_checkpoint(previous)
        fitting = FitSettings(
            settings.dagger_epochs,
            settings.fit.batch,
            settings.fit.learning_rate,
            settings.fit.seed + round_index,
        )
        with policy.deterministic(fitting.seed):
            history = fit(net, train, validation, fitting, phases.echo)
        facts["epochs"] = [asdict(h) for h in history]
        policy.save_checkpoint(path, net, {"phase": name, "epochs": facts["epochs"]})
    return path


def _roll_out(
    settings: NavigatorSettings,
    paths: list[Path],
    checkpoint: Path,
    round_index: int,
    target: Path,
    echo: Echo,
    facts: dict[str, Any],
) -> None:
    """Play the train split's episodes with ``checkpoint``, label them, save the steps."""
    played = _train_episodes(paths)
    beta = settings.beta / 2 ** (round_index - 1)
    rollout = RolloutSettings(settings.camera, beta, settings.rollout_steps, settings.fit.seed)
    found = dagger_round(checkpoint, played, rollout, round_index, echo)
    if not found.sequences:
        raise ConfigError(f"DAgger round {round_index}: the rollouts visited no state")
    data.save_sequences(target, found.sequences)
    steps = sum(len(s) for s in found.sequences)
    echo(
        f"  round {round_index}: {steps} labelled steps, beta {beta:g}, "
        f"{found.successes}/{len(played)} episodes completed, "
        f"navigator agreed with the oracle on {found.agreement:.1%} of steps"
    )
    facts.update(steps=steps, beta=beta, successes=found.successes, agreement=found.agreement)


def _train_episodes(paths: list[Path]) -> list[EpisodeSpec]:
    """Return the training suites' episodes of the train split (validation ones stay out)."""
    every = [e for path in paths for e in suites.read(path).episodes]
    episodes.check_disjoint(every, episodes.held_out(), ", ".join(map(str, paths)))
    return [e for e in every if split_of(e.episode_id) == "train"]


def _evaluate(settings: NavigatorSettings, checkpoint: Path, store: Path, phases: Phases) -> str:
    assert settings.eval_suite is not None
    run_id = f"navigator-{Path(settings.eval_suite).stem}"
    request = RunRequest(
        (settings.eval_suite,),
        "navigator",
        agent_args={"checkpoint": str(checkpoint)},
        store=store,
        run_id=run_id,
        camera=settings.camera,
        limit=settings.eval_limit,
    )
    with Store(store) as opened, phases.phase("evaluate") as facts:
        plan = plan_run(request, opened)
        execute(plan, request, opened, _ticker("evaluate", len(plan.todo), phases.echo))
        facts["episodes"] = len(plan.jobs)
    return run_id


def _ticker(name: str, total: int, echo: Echo) -> Callable[[JobResult], None]:
    """Return an ``on_result`` that prints a line per finished episode."""
    done = [0]

    def tick(result: JobResult) -> None:
        done[0] += 1
        outcome = result.footer.outcome.value if result.footer.outcome else "?"
        echo(f"  {name}: {done[0]}/{total} episodes ({result.job.episode.episode_id}: {outcome})")

    return tick


def _check_settings(settings: NavigatorSettings, out: Path) -> None:
    """Write the settings that decide the checkpoint, or check them against those written."""
    check_settings_file(out, settings.decisive())
