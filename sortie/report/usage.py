"""Model use from trajectory records: calls, tokens, errors, time, cost, per run or any grouping.

Reads only records (``StepRecord.model_calls``), never live clients, so it works on any
finished or replayed run. A *decision* is a step whose action needed model calls; its
answer counts as a format error when the last call of the step is marked ``format`` (the
answer stayed unusable after the retry, or was malformed: JSON that is not a chat
completion; either way it became an invalid action).

A call's recorded ``latency`` is all its time; the waits before retries and the attempts that
failed are recorded apart (``ModelCallRecord.waited`` and ``failed_time``), so the latency
columns say how long the server took to answer, and the time lost to retries has its own.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.table import Table

from sortie.core.errors import ConfigError
from sortie.core.records import ModelCallRecord
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.models.retry import ErrorKind
from sortie.run.store import Store


@dataclass(frozen=True, slots=True)
class CallStats:
    """Model use summed over some episodes."""

    episodes: int = 0
    decisions: int = 0
    """Steps whose action needed at least one model call."""
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    """HTTP attempts beyond the first, over all calls."""
    cached: int = 0
    """Calls answered from the response cache."""
    errors: dict[str, int] = field(default_factory=dict)
    """Calls that failed, by kind (``format``, ``rejected``...)."""
    latency_mean: float = math.nan
    """Seconds the server took to answer, per answered call: its answering attempt alone (the
    waits before retries and the failed attempts are in ``waited`` and ``failed_time``); a
    refused or failed call (a fast 4xx, a time-out) is not an answer, and is counted in
    ``errors`` instead."""
    latency_p95: float = math.nan
    format_errors: int = 0
    """Decisions whose answer stayed unusable after the retry, or was malformed (echoes too)."""
    echoes: int = 0
    """Decisions whose answer copied the prompt's placeholders or field descriptions."""
    waited: float = 0.0
    """Seconds spent waiting before retries (backoff, Retry-After, health checks), all calls."""
    failed_time: float = 0.0
    """Seconds spent in attempts that failed (time-outs, errors), all calls."""
    cost: float | None = None
    """What the calls billed cost at the prices given: those the response cache answered
    cost nothing (None: no call had prices)."""
    cut: int = 0
    """Calls whose answer the server cut at the token limit (``finish_reason`` length)."""
    chat_templates: tuple[str, ...] = ()
    """The chat templates that served the calls (stated by the user or told by the server)."""

    @property
    def format_error_rate(self) -> float:
        """Return the share of decisions that ended in a format error (NaN without any)."""
        return self.format_errors / self.decisions if self.decisions else math.nan

    @property
    def echo_rate(self) -> float:
        """Return the share of decisions whose answer was an echo of the prompt."""
        return self.echoes / self.decisions if self.decisions else math.nan


def call_stats(trajectories: Iterable[Trajectory]) -> CallStats:
    """Return the model use of ``trajectories`` summed together."""
    episodes, decisions, format_errors, echoes = 0, 0, 0, 0
    latencies: list[float] = []
    answered: list[ModelCallRecord] = []  # every call, for what the calls say (cuts, templates)
    totals: Counter[str] = Counter()
    spent = _Spent()
    errors: Counter[str] = Counter()
    for trajectory in trajectories:
        episodes += 1
        for made in decision_calls(trajectory):
            if not made:
                continue
            decisions += 1
            format_errors += made[-1].error in (ErrorKind.FORMAT, ErrorKind.ECHO)
            echoes += made[-1].error == ErrorKind.ECHO
            for call in made:
                if call.error in (None, "", ErrorKind.FORMAT, ErrorKind.ECHO):  # it answered
                    latencies.append(max(0.0, call.latency - call.waited - call.failed_time))
                spent.add(call)
                answered.append(call)
                totals.update(
                    calls=1,
                    tokens_in=call.tokens_in,
                    tokens_out=call.tokens_out,
                    retries=call.attempts - 1,
                    cached=int(call.cached),
                )
                if call.error:
                    errors[call.error] += 1
    stats = CallStats(
        episodes,
        decisions,
        totals["calls"],
        totals["tokens_in"],
        totals["tokens_out"],
        totals["retries"],
        totals["cached"],
        dict(errors),
        *_latency(latencies),
        format_errors,
        echoes,
        spent.waited,
        spent.failed_time,
        spent.cost,
    )
    return _with_calls_said(stats, answered)


def _with_calls_said(stats: CallStats, calls: list[ModelCallRecord]) -> CallStats:
    """Return ``stats`` with the cut answers counted and the chat templates named."""
    cut = sum(call.finish_reason == "length" for call in calls)
    templates = tuple(sorted({call.chat_template for call in calls if call.chat_template}))
    return dataclasses.replace(stats, cut=cut, chat_templates=templates)


@dataclass(slots=True)
class _Spent:
    """Time lost to retries and money, summed over calls."""

    waited: float = 0.0
    failed_time: float = 0.0
    cost: float | None = None

    def add(self, call: ModelCallRecord) -> None:
        self.waited += call.waited
        self.failed_time += call.failed_time
        if call.cost is not None:  # a call the cache answered was not billed again
            self.cost = (self.cost or 0.0) + (0.0 if call.cached else call.cost)


def decision_calls(trajectory: Trajectory) -> list[list[ModelCallRecord]]:
    """Return the model calls of each decision: every step's, then the one that failed."""
    failed = trajectory.footer.failed_decision
    return [step.model_calls for step in trajectory.steps] + (
        [failed.model_calls] if failed else []
    )


def _latency(latencies: list[float]) -> tuple[float, float]:
    if not latencies:
        return math.nan, math.nan
    return float(np.mean(latencies)), float(np.percentile(latencies, 95))


def agent_label(trajectory: Trajectory) -> str:
    """Return ``agent (model, ...)``: the agent's name and the models its steps called."""
    models = sorted({call.model for step in trajectory.steps for call in step.model_calls})
    return (
        f"{trajectory.header.agent.name} ({', '.join(models)})"
        if models
        else (trajectory.header.agent.name)
    )


def usage_by(
    trajectories: Iterable[Trajectory], key: Callable[[Trajectory], str] = agent_label
) -> dict[str, CallStats]:
    """Return the model use of ``trajectories`` grouped by ``key`` (default: agent and model)."""
    groups: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        groups.setdefault(key(trajectory), []).append(trajectory)
    return {name: call_stats(group) for name, group in groups.items()}


def read_usage(
    paths: Iterable[Path], key: Callable[[Trajectory], str] = agent_label
) -> dict[str, CallStats]:
    """Return the model use recorded in the trajectory files ``paths``, grouped by ``key``."""
    return usage_by((read_trajectory(path) for path in paths), key)


COLUMNS = (
    "group",
    "episodes",
    "decisions",
    "calls",
    "tokens in",
    "tokens out",
    "retries",
    "waited (s)",
    "failed attempts (s)",
    "cached",
    "errors",
    "latency mean (s)",
    "latency p95 (s)",
    "format errors",
    "echoes",
    "cost",
    "cut answers",
    "chat template",
)


def usage_rows(stats: Mapping[str, CallStats]) -> list[tuple[str, ...]]:
    """Return one row of display strings per group, in ``COLUMNS`` order."""
    return [
        (
            name,
            str(s.episodes),
            str(s.decisions),
            str(s.calls),
            str(s.tokens_in),
            str(s.tokens_out),
            str(s.retries),
            f"{s.waited:.1f}",
            f"{s.failed_time:.1f}",
            str(s.cached),
            _errors(s.errors),
            _seconds(s.latency_mean),
            _seconds(s.latency_p95),
            _share(s.format_error_rate),
            _share(s.echo_rate),
            "-" if s.cost is None else f"{s.cost:.4g}",
            str(s.cut),
            ", ".join(s.chat_templates) or "not said",
        )
        for name, s in stats.items()
    ]


def usage_table(stats: Mapping[str, CallStats], title: str = "Model calls") -> Table:
    """Return the model use as a rich table."""
    table = Table(title=title)
    for column in COLUMNS:
        left = column in ("group", "errors", "chat template")
        # A group names a model, often a long path: fold it over lines rather than cut it.
        table.add_column(column, justify="left" if left else "right", overflow="fold")
    for row in usage_rows(stats):
        table.add_row(*row)
    return table


def usage_markdown(stats: Mapping[str, CallStats]) -> str:
    """Return the model use as a markdown table."""
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|"
        + "|".join("---" if c in ("group", "errors", "chat template") else "---:" for c in COLUMNS)
        + "|",
    ]
    lines += [
        "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
        for row in usage_rows(stats)
    ]
    return "\n".join(lines) + "\n"


def _errors(errors: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in sorted(errors.items())) or "-"


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _share(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


def run_usage(store: Store, runs: Sequence[str]) -> dict[str, CallStats]:
    """Return the model use of each run that made model calls, by run id."""
    usage = {}
    for run in runs:
        stats = call_stats(t for t in (_readable(e.record) for e in store.episodes(run)) if t)
        if stats.calls:
            usage[run] = stats
    return usage


def _readable(path: Path) -> Trajectory | None:
    # A missing or damaged record loses its own calls, not the report (its page says why).
    try:
        return read_trajectory(path)
    except (ConfigError, OSError):
        return None
