import math

from sortie.metrics.aggregate import errored_metrics, group_means, is_error


def test_group_means_leave_errored_episodes_out_and_count_them():
    """TS 40 and 60 scored, an errored one at 12.9: the mean is 50, n 3, errors 1."""
    rows = [
        ("L1", {"ts": 40.0, "error": 0.0}),
        ("L1", {"ts": 60.0, "error": 0.0}),
        ("L1", {"ts": 12.9, "error": 1.0}),
    ]
    means = group_means(rows, ["ts"])
    assert means["L1"] == {"n": 3.0, "errors": 1.0, "ts": 50.0} == means["all"]


def test_an_error_is_the_error_outcome_or_a_harness_failure_reason():
    """agent_error, backend_error or the error outcome; a timeout is a scored failure."""
    assert is_error("failure", "agent_error") and is_error("failure", "backend_error")
    assert is_error("error", None) and not is_error("failure", "timeout_s1")


def test_errored_metrics_mark_the_episode_and_blank_every_other_metric():
    """'error' is 1 and the named metrics are NaN."""
    metrics = errored_metrics(["ts", "hs", "error"])
    assert metrics["error"] == 1.0 and math.isnan(metrics["ts"]) and math.isnan(metrics["hs"])
