"""``sortie train homiebot`` (export → fine-tune → serve → score) and ``sortie train navigator``.

``train`` is a group: one command per trainable agent, each with its own options.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer

from sortie.cli.common import FormatOption, app, echo, fail
from sortie.core.errors import ParameterError, SortieError

COLUMNS = "sr,tp,srr,plwsr,gc"
"""EMMOE's planner table: SR, TP, SRR, PLWSR and GC."""


train_app = typer.Typer(
    help="Train an agent on sortie's own expert data and score it (homiebot, navigator).",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help, as the main app's (sortie.cli.common)
)
app.add_typer(train_app, name="train")


def _option(help_text: str) -> typer.models.OptionInfo:
    return typer.Option(help=help_text)


@train_app.command("homiebot")
def homiebot(
    out: Annotated[Path, _option("Folder for the data, models, logs and results.")] = Path(
        "train-homiebot"
    ),
    base: Annotated[
        str, _option("gemma-3-270m, scratch, scratch-tiny, or a folder with a model.")
    ] = "gemma-3-270m",
    sft_steps: Annotated[int, _option("SFT optimiser steps.")] = 120,
    dpo_steps: Annotated[int, _option("DPO optimiser steps after SFT (0: none).")] = 24,
    batch: Annotated[int, _option("Rows per optimiser step.")] = 2,
    learning_rate: Annotated[float, _option("Peak learning rate (cosine schedule).")] = 2e-4,
    train_tasks: Annotated[int | None, _option("Only the first N train tasks.")] = None,
    test_tasks: Annotated[int | None, _option("Score on only the first N test tasks.")] = None,
    repeats: Annotated[int, _option("Runs of each test task per model.")] = 1,
    window: Annotated[int, _option("Earlier rounds homiebot shows in full.")] = 1,
    own_tasks: Annotated[
        int, _option("Train tasks the SFT model plays for DPO pairs of its lost rounds.")
    ] = 6,
    answer_timeout: Annotated[
        float | None,
        _option("Seconds one answer may take (default: 300 times the machine's load per core)."),
    ] = None,
    start_timeout: Annotated[
        float | None,
        _option("Seconds a server may take to start (default: 300 times the load per core)."),
    ] = None,
    fmt: FormatOption = "table",
) -> None:
    """Fine-tune a planner on the oracle's train-split rounds and score it on the test split.

    Plays household-v1's train tasks with the oracle, exports SFT and DPO rows (text
    observation) and fine-tunes the base with TRL's SFT. With --dpo-steps, the SFT model
    plays --own-tasks train tasks, and DPO trains it on the oracle's re-plans and on the
    oracle's corrections of the rounds it lost. Serves each model with `transformers serve`
    on loopback, runs homiebot with each on household-test-v1, and prints the runs side by
    side, then each step's gain, paired. Re-running with the same --out resumes.
    docs/training.md has the figures and what they cost.
    """
    from sortie.training.finetune import TrainSettings
    from sortie.training.loop import LoopSettings, run_loop

    try:
        steps = TrainSettings(
            sft_steps=sft_steps, dpo_steps=dpo_steps, batch=batch, learning_rate=learning_rate
        )
        settings = LoopSettings(
            base,
            steps,
            train_tasks,
            test_tasks,
            repeats,
            window,
            own_tasks,
            timeout=answer_timeout,
            start_timeout=start_timeout,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # transformers' renamed arguments
            result = run_loop(settings, out, lambda line: echo(line + "\n"))
        _print_runs(result.store, list(result.runs), fmt)
    except SortieError as error:
        raise fail(error) from None


def _print_runs(store: Path, runs: list[str], fmt: str) -> None:
    """Print the runs as ``sortie report`` and ``sortie compare`` would."""
    from sortie.cli.reporting import compare, report

    report(runs, store=store, group="suite", fmt=fmt, columns=COLUMNS)
    for before, after in zip(runs, runs[1:], strict=False):  # each step's gain
        compare(before, after, store=store, group="suite", fmt=fmt)
    echo(f"Store: {store} (sortie report --store {store} --run {runs[-1]} --html DIR)")


@train_app.command("navigator")
def navigator(
    out: Annotated[Path, _option("Folder for the episodes, runs, demos and checkpoints.")] = Path(
        "train-navigator"
    ),
    levels: Annotated[str, _option("Rescue levels to generate training episodes of.")] = (
        "L1,L2,L3,L4,L5"
    ),
    episodes: Annotated[int, _option("Training episodes generated per level.")] = 40,
    seed: Annotated[int, _option("Generation seed (plus the level's number); trains too.")] = 70000,
    camera: Annotated[str, _option("Camera of the demos, rollouts and evaluation.")] = "64x64@90",
    size: Annotated[int, _option("Side of the images the network reads, pixels.")] = 32,
    width: Annotated[int, _option("Channels of the first convolution.")] = 16,
    hidden: Annotated[int, _option("The GRU's state size.")] = 128,
    epochs: Annotated[int, _option("Behaviour-cloning epochs.")] = 40,
    batch: Annotated[int, _option("Episodes per optimiser step.")] = 4,
    learning_rate: Annotated[float, _option("Adam's learning rate.")] = 1e-3,
    dagger_rounds: Annotated[int, _option("DAgger rounds after behaviour cloning.")] = 1,
    dagger_epochs: Annotated[int, _option("Epochs of training after each round.")] = 10,
    beta: Annotated[
        float, _option("Chance the oracle acts in a round-1 step (halved per round).")
    ] = 0.5,
    rollout_steps: Annotated[int, _option("Longest DAgger rollout, steps.")] = 400,
    shares: Annotated[
        str, _option("Shares of the train split, one model each (0.1,1: 10 % and all).")
    ] = "0.1,1",
    device: Annotated[str, _option("Where torch fits: cpu, or cuda on a GPU machine.")] = "cpu",
    eval_suites: Annotated[str, _option("Suites to score the models on ('' for none).")] = (
        ",".join(f"rescue-l{n}-v2" for n in range(1, 6))
    ),
    eval_limit: Annotated[int | None, _option("Score on only the first N of each suite.")] = None,
    baselines: Annotated[
        str, _option("Agents scored beside the navigator on the same suites ('' for none).")
    ] = "oracle,explorer,explorer-nomem,random",
    workers: Annotated[int, _option("Processes for the oracle's and the scored runs.")] = 1,
    fmt: FormatOption = "table",
) -> None:
    """Train the rescue navigator by behaviour cloning and DAgger on the oracle's demos.

    Generates training episodes of every level (seeds and worlds disjoint from the committed
    suites, checked), lets the oracle play them, exports the demos, and trains one model per
    --shares on that share of the train split: behaviour cloning, then DAgger rounds (the
    oracle labels the states the navigator visits). Saves OUT/share-N/navigator.pt, scores
    each model and the --baselines on --eval-suites and prints the table. Re-running with the
    same --out resumes. docs/training.md has the figures.
    """
    from sortie.agents.navigator.policy import NetShape
    from sortie.training.navigator.learning import FitSettings
    from sortie.training.navigator.pipeline import NavigatorSettings, train_navigator

    try:
        settings = NavigatorSettings(
            levels=tuple(level.upper() for level in _listed(levels)),
            episodes=episodes,
            seed=seed,
            camera=camera,
            shape=NetShape(size=size, width=width, hidden=hidden),
            shares=tuple(_share(word) for word in _listed(shares)),
            fit=FitSettings(epochs, batch, learning_rate, seed, device),
            dagger_rounds=dagger_rounds,
            dagger_epochs=dagger_epochs,
            beta=beta,
            rollout_steps=rollout_steps,
            eval_suites=tuple(_listed(eval_suites)),
            eval_limit=eval_limit,
            baselines=tuple(_listed(baselines)),
            workers=workers,
        )
        result = train_navigator(settings, out, lambda line: echo(line + "\n"))
    except SortieError as error:
        raise fail(error) from None
    for name, path in result.checkpoints.items():
        echo(f"Checkpoint {name}: {path} (sortie run ... --agent navigator -a checkpoint={path})\n")
    if result.runs:
        from sortie.cli.reporting import report

        report(result.runs, store=result.store, group="level", fmt=fmt)
        runs = " ".join(f"--run {run}" for run in result.runs)
        echo(f"Stage cascade: {result.cascade}\n")
        echo(f"Store: {result.store} (sortie report --store {result.store} {runs} --html DIR)\n")


def _listed(words: str) -> list[str]:
    """Return the comma-separated items of ``words``, stripped, empty ones left out."""
    return [word.strip() for word in words.split(",") if word.strip()]


def _share(word: str) -> float:
    """Return ``word`` as a share, or stop with a line naming it."""
    try:
        return float(word)
    except ValueError:
        raise fail(ParameterError(f"--shares {word!r}: a number in (0, 1], e.g. 0.1")) from None
