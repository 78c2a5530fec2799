import math

import pytest

from sortie.core.records import Outcome
from sortie.metrics.aggregate import group_means
from sortie.metrics.household import CODE_METRICS, METRICS, score_household
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.family import HOUSEHOLD_COLUMNS
from sortie.missions.household.records import (
    ErrorCode,
    GoalCondition,
    RoundRecord,
    RoundStatus,
    Verb,
    normalise,
)
from sortie.missions.household.rules import goal_met
from sortie.missions.registry import FAMILIES
from tests.household_records import (
    APPLE_IN_FRIDGE,
    END,
    OBJECTS,
    done,
    failed,
    placed,
    task,
    trajectory,
)

FULL = [done("open", "fridge_1"), done("pick", "apple_1"), done("put", "apple_1", "fridge_1")]
"""The three rounds that do the APPLE_IN_FRIDGE keypath, in order."""


def score(rounds, **kwargs):
    """Return the metrics of a record of ``rounds`` on the default task (or ``the_task``)."""
    the_task = kwargs.pop("the_task", None) or task()
    return score_household(trajectory(the_task, rounds, **kwargs))


def test_the_keypath_done_in_order_then_end_is_a_success():
    """Open, pick, put, end: TP 3/3 = 1, SR 1, four rounds against a four-step expert."""
    metrics = score([*FULL, END])
    assert (metrics["tp"], metrics["sr"], metrics["ended"]) == (1.0, 1.0, 1.0)
    assert (metrics["rounds"], metrics["expert_length"], metrics["plwsr"]) == (4.0, 4.0, 1.0)


def test_an_out_of_order_round_does_not_count():
    """Pick before open: the pick waits for open, which comes later; then put ≠ pick: TP 1/3."""
    rounds = [done("pick", "apple_1"), done("open", "fridge_1"), done("put", "apple_1", "fridge_1")]
    metrics = score([*rounds, END])
    assert metrics["tp"] == pytest.approx(1 / 3) and metrics["sr"] == 0.0  # open matched alone


def test_a_failed_round_that_would_have_matched_does_not_count():
    """Open, a failed pick, put: only open matches (put waits for a pick): TP 1/3."""
    rounds = [FULL[0], failed("pick", "apple_1"), FULL[2], END]
    metrics = score(rounds)
    assert metrics["tp"] == pytest.approx(1 / 3)
    assert (metrics["failed_subtasks"], metrics["successful_subtasks"]) == (1.0, 2.0)


def test_raw_words_match_through_the_synonym_table():
    """Unresolved rounds saying 'the fridge', '  The  Red   Apple ', 'Refrigerator' match: TP 1."""
    rounds = [
        done("open", "the fridge", resolved=False),
        done("pick", "  The  Red   Apple ", resolved=False),
        done("put", "RED apple", "Refrigerator", resolved=False),
        END,
    ]
    assert score(rounds)["tp"] == 1.0


def test_the_resolved_object_matches_whatever_the_words():
    """A pick of 'that round thing' that the executor resolved to apple_1 matches the step."""
    pick = RoundRecord(
        round=1,
        action="pick",
        target="that round thing",
        verb=Verb.PICK,
        target_object="apple_1",
        status=RoundStatus.SUCCESS,
    )
    assert score([FULL[0], pick, FULL[2], END])["tp"] == 1.0


def test_the_words_do_not_credit_an_object_the_executor_did_not_act_on():
    """'red apple' resolved to mug_1 (two things so named): the apple step is not done, TP 1/3."""
    pick = RoundRecord(
        round=1,
        action="pick",
        target="red apple",
        verb=Verb.PICK,
        target_object="mug_1",
        status=RoundStatus.SUCCESS,
    )
    assert score([FULL[0], pick, FULL[2], END])["tp"] == pytest.approx(1 / 3)


def test_words_that_name_another_object_do_not_match():
    """Picking 'red mug' (mug_1's synonym) is not picking apple_1: TP 1/3 (open only)."""
    rounds = [FULL[0], done("pick", "red mug", resolved=False), FULL[2], END]
    assert score(rounds)["tp"] == pytest.approx(1 / 3)


def test_normalising_lowers_trims_collapses_and_drops_a_leading_the():
    """'  The   Kitchen  TABLE ' reads as 'kitchen table'; a 'the' inside stays."""
    assert normalise("  The   Kitchen  TABLE ") == "kitchen table"
    assert normalise("under the sink") == "under the sink"


def test_an_open_ended_task_scores_its_best_keypath():
    """Open fridge, pick mug: keypath A 1/3, keypath B (pick mug, put on table) 1/2: TP 0.5."""
    mug_on_table = [
        {"action": "pick", "target": "mug_1"},
        {"action": "put", "target": "mug_1", "place": "table_1"},
    ]
    the_task = task(keypaths=[APPLE_IN_FRIDGE, mug_on_table], attributes=["open_ended"])
    metrics = score([FULL[0], done("pick", "mug_1"), END], the_task=the_task)
    assert metrics["tp"] == 0.5 and metrics["sr"] == 0.0


def test_without_end_a_done_keypath_is_no_success():
    """The whole keypath, then the rounds run out: TP 1, ended 0, so SR 0 and PLWSR 0."""
    metrics = score(FULL)
    assert (metrics["tp"], metrics["ended"], metrics["sr"], metrics["plwsr"]) == (
        1.0,
        0.0,
        0.0,
        0.0,
    )


def test_plwsr_weighs_a_success_longer_than_the_expert():
    """Five rounds (one failed) against a four-step expert: PLWSR = 4 / max(5, 4) = 0.8."""
    rounds = [FULL[0], failed("pick", "apple_1"), FULL[1], FULL[2], END]
    metrics = score(rounds)
    assert (metrics["sr"], metrics["rounds"]) == (1.0, 5.0)
    assert metrics["plwsr"] == pytest.approx(0.8)


def test_plwsr_is_one_for_a_success_shorter_than_the_expert():
    """Four rounds against a six-step expert: PLWSR = 6 / max(4, 6) = 1."""
    metrics = score([*FULL, END], the_task=task(expert=6))
    assert (metrics["expert_length"], metrics["plwsr"]) == (6.0, 1.0)


@pytest.mark.parametrize(
    ("relation", "place", "facts", "met"),
    [
        ("inside", "fridge_1", {"places": placed("apple_1", "inside", "fridge_1")}, True),
        ("inside", "fridge_1", {"places": placed("apple_1", "on", "fridge_1")}, False),
        ("on", "table_1", {"places": placed("apple_1", "on", "table_1")}, True),
        ("on", "table_1", {"places": placed("apple_1", "on", "sink_1")}, False),
        ("held", None, {"held": "apple_1"}, True),
        ("held", None, {"held": "mug_1"}, False),
    ],
)
def test_an_item_goal_holds_when_the_facts_put_it_there(relation, place, facts, met):
    """on/inside need that relation and that place; held needs that item in the gripper."""
    goal = GoalCondition(relation=relation, object="apple_1", place=place)
    assert goal_met(goal, HouseholdFacts(**facts)) is met


@pytest.mark.parametrize(
    ("relation", "state", "met"),
    [
        ("open", True, True),
        ("open", False, False),
        ("closed", False, True),
        ("closed", True, False),
    ],
)
def test_a_container_goal_reads_the_open_state(relation, state, met):
    """An open goal holds when the facts say True, a closed goal when they say False."""
    goal = GoalCondition(relation=relation, object="fridge_1")
    assert goal_met(goal, HouseholdFacts(open={"fridge_1": state})) is met


def test_a_container_whose_state_is_not_recorded_is_neither_open_nor_closed():
    """No entry for the fridge in the facts: neither its open nor its closed goal holds."""
    facts = HouseholdFacts(open={"cabinet_1": True})
    for relation in ("open", "closed"):
        assert not goal_met(GoalCondition(relation=relation, object="fridge_1"), facts)


def test_gc_is_the_share_of_goals_true_at_the_end():
    """Five goals, three true (apple inside fridge, fridge open, cabinet closed): GC 3/5."""
    goals = [
        {"relation": "inside", "object": "apple_1", "place": "fridge_1"},  # true
        {"relation": "on", "object": "mug_1", "place": "table_1"},  # false: on the sink
        {"relation": "open", "object": "fridge_1"},  # true
        {"relation": "closed", "object": "cabinet_1"},  # true
        {"relation": "held", "object": "sponge_1"},  # false: nothing held
    ]
    facts = HouseholdFacts(
        ended=True,
        places={**placed("apple_1", "inside", "fridge_1"), **placed("mug_1", "on", "sink_1")},
        open={"fridge_1": True, "cabinet_1": False},
    )
    metrics = score([*FULL, END], the_task=task(goals=goals), facts=facts)
    assert metrics["gc"] == pytest.approx(0.6) and metrics["no_goals"] == 0.0


def test_a_task_without_goals_has_no_gc_and_is_counted_apart():
    """No goal conditions: GC NaN (left out of means), no_goals 1."""
    metrics = score([*FULL, END])
    assert math.isnan(metrics["gc"]) and metrics["no_goals"] == 1.0


def test_each_error_code_is_counted_under_its_lower_case_name():
    """Codes L1, L1, D1, F2 on four failed rounds: l1 2, d1 1, f2 1, the other eight 0."""
    rounds = [
        failed("pick", "apple_1", code=ErrorCode.L1),
        failed("open", "fridge_1", code=ErrorCode.L1),
        failed("pick", "mug_1", code=ErrorCode.D1),
        failed("go_to", "kitchen", code=ErrorCode.F2),
        END,
    ]
    metrics = score(rounds)
    expected = dict.fromkeys(CODE_METRICS, 0.0) | {"l1": 2.0, "d1": 1.0, "f2": 1.0}
    assert {code: metrics[code] for code in CODE_METRICS} == expected
    assert CODE_METRICS == ("l1", "l2", "l3", "l4", "d1", "d2", "f1", "f2", "e1", "e2", "e3")


def test_failures_count_as_in_a_success_only_when_the_run_succeeds():
    """One failed round in a success: failed_in_success 1; the same without end: 0."""
    rounds = [FULL[0], failed("pick", "apple_1"), FULL[1], FULL[2]]
    assert score([*rounds, END])["failed_in_success"] == 1.0
    assert score(rounds)["failed_in_success"] == 0.0


def test_an_errored_episode_is_not_scored():
    """Outcome error: error 1 and every household metric NaN."""
    metrics = score([FULL[0]], outcome=Outcome.ERROR)
    assert metrics["error"] == 1.0 and set(metrics) == {"error", *METRICS}
    assert all(math.isnan(metrics[name]) for name in METRICS)


def test_ser_and_srr_are_ratios_of_sums_over_the_scored_runs():
    """By hand: SER = 1 success / 2 ended = 50 %; SRR = 1 / (1 + 2 + 1) failed = 25 %.

    Runs: a success with one failed round; an ended failure with two; a run without end
    with one; an errored run (left out).
    """
    runs = [
        score([FULL[0], failed("pick", "apple_1"), FULL[1], FULL[2], END]),
        score([FULL[0], failed("pick", "apple_1"), failed("pick", "apple_1"), END]),
        score([failed("open", "fridge_1"), *FULL]),
        score([failed("open", "fridge_1")], outcome=Outcome.ERROR),
    ]
    means = group_means((("short", m) for m in runs), HOUSEHOLD_COLUMNS)["all"]
    assert (means["ser"], means["srr"]) == (50.0, 25.0)
    assert (means["n"], means["errors"]) == (4.0, 1.0)
    assert means["sr"] == pytest.approx(100 / 3) and means["plwsr"] == pytest.approx(80 / 3)


def test_srr_without_any_failed_subtask_and_ser_without_any_end_are_undefined():
    """No failed round anywhere: SRR NaN (not 0 or 100); no end anywhere: SER NaN."""
    clean = group_means([("short", score([*FULL, END]))], ["ser", "srr"])["all"]
    assert clean["ser"] == 100.0 and math.isnan(clean["srr"])
    unended = group_means([("short", score(FULL))], ["ser", "srr"])["all"]
    assert math.isnan(unended["ser"]) and math.isnan(unended["srr"])


def test_the_household_scorer_is_registered():
    """The run scores a household record with score_household."""
    assert FAMILIES.get("household").load_scorer() is score_household


@pytest.mark.parametrize(
    ("rounds", "sortie_tp", "emmoe_tp"),
    [
        ([*FULL, END], 1.0, 1.0),  # 3 steps + end of 3 + 1
        # every step, never said end: the last (the put) is not in EMMOE's last prompt
        (FULL, 1.0, 2 / 4),
        ([*FULL, failed("open", "fridge_1")], 1.0, 3 / 4),  # a later round hides only itself
        ([FULL[0], END], 1 / 3, 1 / 4),  # one step then end: end cannot match before the rest
        ([END], 0.0, 0.0),
        ([FULL[0], failed("pick", "apple_1"), FULL[1]], 2 / 3, 1 / 4),
    ],
)
def test_tp_in_both_readings(rounds, sortie_tp, emmoe_tp):
    """By hand: sortie's TP is m / n; EMMOE's counts end as one more step, (m + ended) / (n + 1).

    EMMOE's notebook reads the last prompt's history: a run without end loses its last round.
    """
    metrics = score(rounds)
    assert metrics["tp"] == pytest.approx(sortie_tp)
    assert metrics["tp_emmoe"] == pytest.approx(emmoe_tp)


def test_emmoe_tp_of_an_open_ended_task_is_its_best_keypath_with_end():
    """Two keypaths of 1 and 3 steps; the 1-step one done, then end: (1 + 1) / 2 = 1."""
    pick = [{"action": "pick", "target": "apple_1"}]
    the_task = task(keypaths=[pick, APPLE_IN_FRIDGE], attributes=["open_ended"])
    metrics = score([done("pick", "apple_1"), END], the_task=the_task)
    assert (metrics["tp"], metrics["tp_emmoe"]) == (1.0, 1.0)
    metrics = score([done("pick", "apple_1"), done("go_to", "kitchen")], the_task=the_task)
    assert metrics["tp_emmoe"] == pytest.approx(1 / 2)  # the pick seen, the go_to last


@pytest.mark.parametrize(
    ("rounds", "failed", "replans"),
    [
        ([FULL[0], failed("pick", "apple_1"), FULL[1], FULL[2], END], 1, 1),
        ([FULL[0], failed("pick", "apple_1"), failed("pick", "apple_1"), END], 2, 1),
        ([failed("open", "fridge_1"), *FULL], 1, 1),
        ([*FULL, failed("open", "fridge_1")], 1, 0),  # the last round: nothing planned after
        ([FULL[0], failed("pick", "apple_1"), END], 1, 0),  # end right after: no re-plan
    ],
)
def test_emmoe_counts_a_failure_only_when_a_subtask_follows_it(rounds, failed, replans):
    """Every failed round counts in sortie; in EMMOE's notebook only those a subtask follows."""
    metrics = score(rounds)
    assert (metrics["failed_subtasks"], metrics["replans"]) == (failed, replans)


def test_srr_in_both_readings_by_hand():
    """The ratio test's runs: SRR 1/4 = 25 %; EMMOE's 1 / (1 + 1 + 1) = 33.3 %."""
    runs = [
        score([FULL[0], failed("pick", "apple_1"), FULL[1], FULL[2], END]),
        score([FULL[0], failed("pick", "apple_1"), failed("pick", "apple_1"), END]),
        score([failed("open", "fridge_1"), *FULL]),
        score([failed("open", "fridge_1")], outcome=Outcome.ERROR),
    ]
    means = group_means((("short", m) for m in runs), ["srr", "srr_emmoe"])["all"]
    assert means["srr"] == 25.0 and means["srr_emmoe"] == pytest.approx(100 / 3)


# --- match=category: a round matches a step on any thing of its kind (EMMOE's names) ---------
OTHER_APPLE = [
    FULL[0],
    done("pick", "apple_2"),
    done("put", "apple_2", "fridge_1"),
    END,
]
"""The keypath done with an apple the task does not name (apple_2), then end."""


def test_another_thing_of_the_kind_matches_only_by_category():
    """By hand: open, pick apple_2, put it, end: instance 1/3 (EMMOE's 1/4), category 1 (4/4)."""
    metrics = score(OTHER_APPLE)
    assert (metrics["tp"], metrics["tp_emmoe"], metrics["sr"]) == (pytest.approx(1 / 3), 0.25, 0)
    assert (metrics["tp_category"], metrics["tp_emmoe_category"]) == (1.0, 1.0)
    assert (metrics["sr_category"], metrics["plwsr_category"]) == (1.0, 1.0)  # 4 rounds, 4


def test_a_place_of_the_kind_matches_by_category():
    """Putting the apple in fridge_2 does the put step by category (3/3), not by instance (2/3)."""
    metrics = score([FULL[0], FULL[1], done("put", "apple_1", "fridge_2")])
    assert metrics["tp"] == pytest.approx(2 / 3) and metrics["tp_category"] == 1.0


def test_a_thing_of_another_kind_matches_in_neither_reading():
    """Picking the mug instead of an apple: 1/3 both ways."""
    metrics = score([FULL[0], done("pick", "mug_1"), done("put", "mug_1", "fridge_1")])
    assert metrics["tp"] == metrics["tp_category"] == pytest.approx(1 / 3)


def test_raw_words_for_another_object_of_the_kind_match_by_category():
    """Unresolved "green apple" (apple_2's name) does pick apple_1 by category, not by instance."""
    objects = {**OBJECTS, "apple_2": {"kind": "apple", "role": "item", "names": ["green apple"]}}
    the_task = task(objects=objects)
    rounds = [FULL[0], done("pick", "green apple", resolved=False)]
    metrics = score(rounds, the_task=the_task)
    assert metrics["tp"] == pytest.approx(1 / 3) and metrics["tp_category"] == pytest.approx(2 / 3)


def test_ser_and_srr_by_category_by_hand():
    """One run: open, a failed pick, apple_2 picked and put, end; a success only by category.

    Instance: SER 0/1, SRR 0/1, EMMOE's SRR 0/1; category: 1/1, 1/1, 1/1 (the failed pick is
    followed by a subtask, so EMMOE counts it too).
    """
    rounds = [FULL[0], failed("pick", "apple_1"), *OTHER_APPLE[1:]]
    columns = ["ser", "srr", "srr_emmoe", "ser_category", "srr_category", "srr_emmoe_category"]
    means = group_means([("short", score(rounds))], columns)["all"]
    assert [means[c] for c in columns] == [0.0, 0.0, 0.0, 100.0, 100.0, 100.0]
