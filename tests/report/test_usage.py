import math

from rich.console import Console

from sortie.core.pose import Pose
from sortie.core.records import (
    ModelCallRecord,
    PluginRef,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.trajectory import Trajectory
from sortie.report.usage import call_stats, usage_by, usage_markdown, usage_table
from sortie.testing.episodes import room_rescue


def trajectory(calls_per_step: list[list[ModelCallRecord]]) -> Trajectory:
    header = TrajectoryHeader(
        episode=room_rescue(),
        agent=PluginRef(name="mllm-rescue"),
        backend=PluginRef(name="embedded"),
        seed=0,
        code_version="t",
    )
    steps = [
        StepRecord(
            index=i,
            pose=Pose(0, 0, 0, 0),
            action={"type": "move"},
            clock_sim=0.0,
            clock_latency=0.0,
            model_calls=calls,
        )
        for i, calls in enumerate(calls_per_step)
    ]
    return Trajectory(header, steps, TrajectoryFooter(outcome="failure", steps=len(steps)))


def call(latency: float, error: str | None = None, attempts: int = 1) -> ModelCallRecord:
    return ModelCallRecord(
        model="vlm", latency=latency, tokens_in=100, tokens_out=10, attempts=attempts, error=error
    )


def test_stats_count_calls_tokens_errors_and_latency():
    """Calls, tokens, retries, errors by kind, latency and the format-error rate add up."""
    record = trajectory(
        [[call(1.0)], [], [call(2.0, "format"), call(3.0, "format")], [call(4.0, attempts=3)]]
    )
    stats = call_stats([record])
    assert (stats.decisions, stats.calls, stats.tokens_in, stats.tokens_out) == (3, 4, 400, 40)
    assert stats.retries == 2 and stats.errors == {"format": 2}
    assert stats.latency_mean == 2.5 and math.isclose(stats.latency_p95, 3.85)
    assert stats.format_error_rate == 1 / 3


def test_usage_renders_as_table_and_markdown():
    """Grouped by agent and model, usage renders to a rich table and a markdown table."""
    stats = usage_by([trajectory([[call(1.0)]]), trajectory([[call(2.0)]])])
    assert list(stats) == ["mllm-rescue (vlm)"] and stats["mllm-rescue (vlm)"].episodes == 2
    assert usage_table(stats).row_count == 1
    assert "| mllm-rescue (vlm) | 2 | 2 | 2 |" in usage_markdown(stats)


def test_a_refused_call_counts_as_a_call_but_not_in_the_mean_latency():
    """A 0.17 s refusal beside a 97.4 s answer: two calls, one error, mean latency 97.4 s."""
    stats = call_stats([trajectory([[call(0.17, "client"), call(97.4)]])])
    assert (stats.calls, stats.errors) == (2, {"client": 1})
    assert stats.latency_mean == 97.4


def test_a_long_model_name_is_shown_whole_in_a_narrow_table():
    """A model served from a folder path keeps every character, folded over lines."""
    name = "/work/train-homiebot/models/homiebot-gemma-3-270m-fine-tuned"
    record = trajectory([[call(1.0).model_copy(update={"model": name})]])
    console = Console(width=100, record=True)
    console.print(usage_table(usage_by([record])))
    lines = [line.split("│") for line in console.export_text().splitlines() if "│" in line]
    first_column = "".join(cells[1].strip() for cells in lines if len(cells) > 2)
    assert name in first_column


def test_latency_is_the_answer_alone_and_waits_have_their_own_columns():
    """A retried call's waits and failed attempts leave its latency and are summed apart."""
    retried = call(10.0, attempts=2).model_copy(update={"waited": 6.0, "failed_time": 3.0})
    stats = call_stats([trajectory([[retried], [call(2.0)]])])
    assert stats.latency_mean == 1.5  # (10 - 6 - 3 + 2) / 2
    assert (stats.waited, stats.failed_time) == (6.0, 3.0)
    assert "| 6.0 | 3.0 |" in usage_markdown({"run": stats})


def test_cost_is_summed_when_prices_were_given():
    """Billed calls' costs are summed (cache hits cost nothing); without prices it says '-'."""
    priced = [
        call(1.0).model_copy(update={"cost": 0.25}),
        call(1.0).model_copy(update={"cost": 0.5}),
    ]
    assert call_stats([trajectory([priced])]).cost == 0.75
    cached = call(1.0).model_copy(update={"cost": 0.25, "cached": True})
    assert call_stats([trajectory([[*priced, cached]])]).cost == 0.75  # not billed again
    unpriced = call_stats([trajectory([[call(1.0)]])])
    row = usage_markdown({"run": unpriced}).rstrip().splitlines()[-1]
    assert unpriced.cost is None and row.endswith("| - | 0 | not said |")


def test_cut_answers_are_counted_and_templates_named():
    """Calls ended by the token limit are counted; the templates that served them named."""
    cut = call(1.0).model_copy(update={"finish_reason": "length", "chat_template": "gemma"})
    stats = call_stats(iter([trajectory([[cut], [call(2.0)]])]))
    assert stats.cut == 1 and stats.chat_templates == ("gemma",)
    assert usage_markdown({"run": stats}).splitlines()[-1].endswith("| 1 | gemma |")
