"""Fitting the navigator to labelled sequences: cross-entropy on the expert's actions.

Each batch is a few whole episodes, padded to the longest and masked, run through the GRU from
an empty memory (as the agent starts each episode), so the memory learns over whole episodes
(no truncated windows). The order of episodes is drawn from ``seed`` and the epoch, and torch
runs deterministic kernels on one thread (``policy.deterministic``): the same data and seed
give the same weights on this machine. ``device`` moves the fitting to a GPU (``cuda``); the
checkpoint is saved from the CPU either way, and the agent plays on the CPU.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from sortie.agents.navigator.policy import NavigatorNet
from sortie.core.errors import ParameterError
from sortie.training.navigator.data import Sequence

PROGRESS_SECONDS = 20.0
"""Longest time between two progress lines while fitting."""
SORT_WINDOW = 8
"""Batches whose episodes are sorted by length together (less padding, still shuffled)."""


@dataclass(frozen=True, slots=True)
class FitSettings:
    """How long and how fast to fit."""

    epochs: int = 40
    batch: int = 4
    """Episodes per optimiser step."""
    learning_rate: float = 1e-3
    seed: int = 0
    device: str = "cpu"
    """Where torch fits: ``cpu``, ``cuda`` or ``cuda:N`` (a GPU's sums differ from the CPU's)."""


def check_device(device: str) -> None:
    """Refuse a device torch cannot fit on here.

    Raises:
        ParameterError: not a device name, or a GPU this torch or machine does not have.
    """
    try:
        chosen = torch.device(device)
    except RuntimeError:
        raise ParameterError(f"--device {device}: not a torch device (cpu, cuda, cuda:1)") from None
    if chosen.type == "cpu":
        return
    if chosen.type != "cuda":
        raise ParameterError(f"--device {device}: only cpu and cuda are supported")
    if not torch.cuda.is_available():
        raise ParameterError(
            f"--device {device}: this torch sees no CUDA GPU (torch {torch.__version__}); "
            "install a CUDA build of torch on a machine with one, or use --device cpu"
        )
    if (chosen.index or 0) >= torch.cuda.device_count():
        raise ParameterError(f"--device {device}: {torch.cuda.device_count()} GPU(s) here")


@dataclass(frozen=True, slots=True)
class Losses:
    """An epoch's mean loss and accuracy per step, on the train set and the validation set."""

    epoch: int
    train_loss: float
    train_accuracy: float
    validation_loss: float | None
    validation_accuracy: float | None


def fit(
    net: NavigatorNet,
    train: list[Sequence],
    validation: list[Sequence],
    settings: FitSettings,
    echo: Callable[[str], object],
) -> list[Losses]:
    """Train ``net`` in place on ``train``; return each epoch's losses (validation: None if empty).

    A line is printed after every epoch, and at least every ``PROGRESS_SECONDS`` within one.
    """
    device = torch.device(settings.device)
    if device.type == "cuda":  # cuBLAS is deterministic only with a fixed workspace
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    net.to(device)
    optimiser = torch.optim.Adam(net.parameters(), lr=settings.learning_rate)
    history = []
    last = time.monotonic()
    for epoch in range(1, settings.epochs + 1):
        net.train()
        sums, done = np.zeros(3), 0
        for batch in batches(train, settings.batch, settings.seed * 1000 + epoch):
            loss, right, steps = _loss(net, batch, device)
            optimiser.zero_grad()
            (loss / steps).backward()
            optimiser.step()
            sums += (float(loss.detach()), right, steps)
            done += len(batch)
            if time.monotonic() - last >= PROGRESS_SECONDS:
                echo(f"  epoch {epoch}: {done}/{len(train)} episodes")
                last = time.monotonic()
        losses = Losses(
            epoch, sums[0] / sums[2], sums[1] / sums[2], *evaluate(net, validation, device)
        )
        history.append(losses)
        echo(_describe(losses))
        last = time.monotonic()
    net.cpu().eval()
    return history


def batches(sequences: list[Sequence], size: int, seed: int) -> list[list[Sequence]]:
    """Return ``sequences`` in batches of ``size``, drawn from ``seed``, of similar lengths.

    The episodes are shuffled, sorted by length within windows of ``SORT_WINDOW`` batches (so
    a batch pads little), cut into batches, and the batches shuffled again.
    """
    shuffle = torch.Generator().manual_seed(seed)
    order = [int(i) for i in torch.randperm(len(sequences), generator=shuffle)]
    window = size * SORT_WINDOW
    for start in range(0, len(order), window):
        order[start : start + window] = sorted(
            order[start : start + window], key=lambda i: len(sequences[i])
        )
    cut = [order[start : start + size] for start in range(0, len(order), size)]
    again = torch.randperm(len(cut), generator=shuffle)
    return [[sequences[i] for i in cut[int(k)]] for k in again]


def evaluate(
    net: NavigatorNet, sequences: list[Sequence], device: torch.device | str = "cpu"
) -> tuple[float | None, float | None]:
    """Return the mean loss and accuracy per step on ``sequences`` (None, None: there are none)."""
    if not sequences:
        return None, None
    net.eval()
    sums = np.zeros(3)
    with torch.no_grad():
        for start in range(0, len(sequences), 8):
            loss, right, steps = _loss(net, sequences[start : start + 8], device)
            sums += (float(loss.detach()), right, steps)
    return sums[0] / sums[2], sums[1] / sums[2]


def _loss(
    net: NavigatorNet, batch: list[Sequence], device: torch.device | str
) -> tuple[torch.Tensor, int, int]:
    """Return the summed cross-entropy of a batch, its right guesses and its steps."""
    views, goals, carrying, labels, mask = (t.to(device) for t in _padded(batch))
    logits, _ = net(views, goals, carrying)
    losses = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
    kept = mask.flatten()
    right = (logits.flatten(0, 1).argmax(-1) == labels.flatten()) & kept
    return (losses * kept).sum(), int(right.sum()), int(kept.sum())


def _padded(
    batch: list[Sequence],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the batch as padded tensors: views, goals, carrying, labels and the step mask."""
    longest = max(len(s) for s in batch)
    size = batch[0].views.shape[-1]
    views = np.zeros((len(batch), longest, 4, size, size), np.float32)
    goals = np.stack([sequence.goals for sequence in batch])
    carrying = np.zeros((len(batch), longest), np.float32)
    labels = np.zeros((len(batch), longest), np.int64)
    mask = np.zeros((len(batch), longest), bool)
    for row, sequence in enumerate(batch):
        steps = len(sequence)
        views[row, :steps] = sequence.views
        carrying[row, :steps], labels[row, :steps] = sequence.carrying, sequence.labels
        mask[row, :steps] = True
    tensors = (views, goals, carrying, labels, mask)
    return tuple(torch.from_numpy(t) for t in tensors)


def _describe(losses: Losses) -> str:
    line = (
        f"  epoch {losses.epoch}: train loss {losses.train_loss:.3f}, "
        f"accuracy {losses.train_accuracy:.1%}"
    )
    if losses.validation_loss is not None and losses.validation_accuracy is not None:
        line += (
            f"; validation loss {losses.validation_loss:.3f}, "
            f"accuracy {losses.validation_accuracy:.1%}"
        )
    return line
