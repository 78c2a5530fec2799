"""One navigator model of the pipeline: the share of the demos it learns from, BC, DAgger.

The experiment trains one model per share of the training data (RescueBench's zero-shot
against fine-tuned, here 10 % of the demos against all of them). A model keeps everything of
its own in ``OUT/share-N/`` (N: the share in percent): its settings, ``bc.pt``,
``rollouts-K.npz``, ``dagger-K.pt`` and ``navigator.pt``. The data it learns from is a subset
of the train split chosen by episode and per level (so a small share still sees every
level), and its DAgger rollouts replay only those episodes: a model never learns from an
episode outside its share.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from sortie.agents.navigator import policy
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.export.demos import split_of
from sortie.training.navigator import data, episodes
from sortie.training.navigator.dagger import RolloutSettings, dagger_round
from sortie.training.navigator.learning import FitSettings, fit
from sortie.training.navigator.phases import Phases


@dataclass(frozen=True, slots=True)
class ModelPlan:
    """What one model learns from: its share, its folder, the settings' training part."""

    share: float
    folder: Path
    shape: policy.NetShape
    fit: FitSettings
    dagger_rounds: int
    dagger_epochs: int
    beta: float
    rollout_steps: int
    camera: str

    @property
    def name(self) -> str:
        """Return the model's name: ``share-100``, ``share-10``."""
        return share_name(self.share)


def share_name(share: float) -> str:
    """Return the name of the model that learns from ``share`` of the demos: ``share-10``."""
    return f"share-{share * 100:g}"


def chosen_episodes(played: Iterable[EpisodeSpec], share: float, seed: int) -> set[str]:
    """Return the ids of the train-split episodes a model with ``share`` learns from.

    Per level, the train split's episodes in an order drawn from ``seed`` (a hash of the seed
    and the id), of which the first ``share`` (rounded, at least one) are kept.
    """
    by_level: dict[str, list[str]] = defaultdict(list)
    for spec in played:
        if split_of(spec.episode_id) == "train":
            by_level[spec.level].append(spec.episode_id)
    kept: set[str] = set()
    for ids in by_level.values():
        ids.sort(key=lambda i: hashlib.sha256(f"{seed}/{i}".encode()).hexdigest())
        kept.update(ids[: max(1, int(share * len(ids) + 0.5))])
    return kept


@dataclass(frozen=True, slots=True)
class DemoData:
    """The demos' sequences of every train episode and of the validation split, as read."""

    train: list[data.Sequence]
    validation: list[data.Sequence]
    played: list[EpisodeSpec]


def read_demos(out: Path, store: Path, run_id: str, size: int) -> DemoData:
    """Return the demos' sequences, checked against the committed suites.

    Raises:
        ConfigError: an episode of the demos is in a committed suite, or the train split is
            empty.
    """
    goals, played = data.episode_goals(store, run_id, size)
    episodes.check_disjoint(played, episodes.held_out(), f"{out / 'demos'}")
    cache = out / "cache"
    train = data.demo_sequences(out / "demos", "train", goals, size, cache)
    validation = data.demo_sequences(out / "demos", "validation", goals, size, cache)
    if not train:
        raise ConfigError(f"{out / 'demos'}: no train split; generate more --episodes")
    return DemoData(train, validation, played)


def train_model(
    plan: ModelPlan, demos: DemoData, rollout_from: list[EpisodeSpec], phases: Phases
) -> Path:
    """Fit ``plan``'s model (BC, then its DAgger rounds); return its ``navigator.pt``.

    ``rollout_from`` holds the training suites' episodes; DAgger replays those of the share.
    Each step's file is kept and skipped when it is there.
    """
    kept = chosen_episodes(demos.played, plan.share, plan.fit.seed)
    train = [s for s in demos.train if s.episode_id in kept]
    steps = sum(len(s) for s in train)
    phases.echo(
        f"  {plan.name}: {len(train)} of {len(demos.train)} train episodes ({steps} steps), "
        f"{len(demos.validation)} validation; expert actions {data.label_counts(train)}"
    )
    checkpoint = _bc(plan, train, demos.validation, phases)
    played = [e for e in rollout_from if e.episode_id in kept]
    for round_index in range(1, plan.dagger_rounds + 1):
        checkpoint = _dagger(
            plan, (train, demos.validation), played, checkpoint, round_index, phases
        )
    final, partial = plan.folder / "navigator.pt", plan.folder / ".navigator.pt.partial"
    shutil.copyfile(checkpoint, partial)
    partial.replace(final)  # whole or absent: its presence marks the model trained
    phases.echo(f"checkpoint: {final} (from {checkpoint.name})")
    return final


def _bc(
    plan: ModelPlan, train: list[data.Sequence], validation: list[data.Sequence], phases: Phases
) -> Path:
    path, name = plan.folder / "bc.pt", f"{plan.name}/bc"
    if path.exists():
        phases.skip(name, f"{path} is saved")
        return path
    with phases.phase(name) as facts:
        with policy.deterministic(plan.fit.seed):
            net = policy.NavigatorNet(plan.shape)
            history = fit(net, train, validation, plan.fit, phases.echo)
        facts["epochs"] = [asdict(h) for h in history]
        policy.save_checkpoint(path, net, {"phase": "bc", "epochs": facts["epochs"]})
    return path


def _dagger(
    plan: ModelPlan,
    demos: tuple[list[data.Sequence], list[data.Sequence]],
    played: list[EpisodeSpec],
    previous: Path,
    round_index: int,
    phases: Phases,
) -> Path:
    path, name = plan.folder / f"dagger-{round_index}.pt", f"{plan.name}/dagger-{round_index}"
    if path.exists():
        phases.skip(name, f"{path} is saved")
        return path
    with phases.phase(name) as facts:
        rollouts = plan.folder / f"rollouts-{round_index}.npz"
        if not rollouts.exists():
            _roll_out(plan, played, previous, round_index, phases, facts)
        train, validation = list(demos[0]), demos[1]
        for earlier in range(1, round_index + 1):
            train += data.load_sequences(plan.folder / f"rollouts-{earlier}.npz")
        net, _ = policy.load_checkpoint(previous)
        fitting = replace(plan.fit, epochs=plan.dagger_epochs, seed=plan.fit.seed + round_index)
        with policy.deterministic(fitting.seed):
            history = fit(net, train, validation, fitting, phases.echo)
        facts["epochs"] = [asdict(h) for h in history]
        policy.save_checkpoint(path, net, {"phase": name, "epochs": facts["epochs"]})
    return path


def _roll_out(
    plan: ModelPlan,
    played: list[EpisodeSpec],
    checkpoint: Path,
    round_index: int,
    phases: Phases,
    facts: dict[str, object],
) -> None:
    """Play the share's train episodes with ``checkpoint``, label them, save the steps."""
    episodes.check_disjoint(played, episodes.held_out(), f"{plan.name} rollouts")
    beta = plan.beta / 2 ** (round_index - 1)
    rollout = RolloutSettings(plan.camera, beta, plan.rollout_steps, plan.fit.seed)
    found = dagger_round(checkpoint, played, rollout, round_index, phases.echo)
    if not found.sequences:
        raise ConfigError(f"DAgger round {round_index}: the rollouts visited no state")
    data.save_sequences(plan.folder / f"rollouts-{round_index}.npz", found.sequences)
    steps = sum(len(s) for s in found.sequences)
    phases.echo(
        f"  round {round_index}: {steps} labelled steps, beta {beta:g}, "
        f"{found.successes}/{len(played)} episodes completed, "
        f"navigator agreed with the oracle on {found.agreement:.1%} of steps"
    )
    facts.update(steps=steps, beta=beta, successes=found.successes, agreement=found.agreement)
