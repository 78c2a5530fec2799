"""``sortie train homiebot``: export → fine-tune → serve → score, and the two runs side by side."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer

from sortie.cli.common import FormatOption, app, echo, fail
from sortie.core.errors import ConfigError, SortieError

COLUMNS = "sr,tp,srr,plwsr,gc"
"""EMMOE's planner table: SR, TP, SRR, PLWSR and GC."""


def _option(help_text: str) -> typer.models.OptionInfo:
    return typer.Option(help=help_text)


@app.command()
def train(
    planner: Annotated[str, typer.Argument(help="The planner to train: homiebot.")],
    out: Annotated[Path, _option("Folder for the data, models, logs and results.")] = Path(
        "train-homiebot"
    ),
    base: Annotated[
        str, _option("gemma-3-270m, scratch, scratch-tiny, or a folder with a model.")
    ] = "gemma-3-270m",
    sft_steps: Annotated[int, _option("SFT optimiser steps.")] = 240,
    dpo_steps: Annotated[int, _option("DPO optimiser steps after SFT (0: none).")] = 0,
    batch: Annotated[int, _option("Rows per optimiser step.")] = 2,
    learning_rate: Annotated[float, _option("Peak learning rate (cosine schedule).")] = 2e-4,
    train_tasks: Annotated[int | None, _option("Only the first N train tasks.")] = None,
    test_tasks: Annotated[int | None, _option("Score on only the first N test tasks.")] = None,
    repeats: Annotated[int, _option("Runs of each test task per model.")] = 3,
    window: Annotated[int, _option("Earlier rounds homiebot shows in full.")] = 0,
    fmt: FormatOption = "table",
) -> None:
    """Fine-tune a planner on the oracle's train-split rounds and score it on the test split.

    Plays household-v1's train tasks with the oracle, exports SFT and DPO rows (text
    observation), fine-tunes the base with TRL, serves the base and the fine-tuned model with
    `transformers serve` on loopback, runs homiebot with each on household-test-v1, and
    prints both runs side by side, then fine-tuned minus zero-shot, paired. Re-running with
    the same --out resumes. docs/training.md has the figures and what they cost.
    """
    from sortie.training.finetune import TrainSettings
    from sortie.training.loop import LoopSettings, run_loop

    try:
        if planner != "homiebot":
            raise ConfigError(f"train {planner!r}: only homiebot can be trained")
        steps = TrainSettings(
            sft_steps=sft_steps, dpo_steps=dpo_steps, batch=batch, learning_rate=learning_rate
        )
        settings = LoopSettings(base, steps, train_tasks, test_tasks, repeats, window)
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
    compare(runs[0], runs[1], store=store, group="suite", fmt=fmt)
    echo(f"Store: {store} (sortie report --store {store} --run {runs[1]} --html DIR)")
