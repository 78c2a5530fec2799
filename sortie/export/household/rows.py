"""SFT conversations and DPO pairs from a household run's planner rounds, as EMMOE builds them.

SFT: one conversation per carried-out subtask (the request, then the answer acted on); failed
subtasks are skipped, and so is the ``end`` of an episode that did not succeed.

DPO: a prompt with a chosen and a rejected answer, of five kinds.

- ``replan``: a subtask failed and the next one, re-planned, worked. The failed round's
  request is the prompt, its answer the rejected one, the re-planned answer the chosen one.
- ``order``: two subtasks that worked one after the other, swapped: at the first one's
  request, the second one's answer is rejected.
- ``action``: a subtask that worked, with its action replaced by a name the executor does
  not take (a synonym or a verb outside the list): rejected.
- ``skill``: a subtask that worked, with its skill replaced by an offered one that does the
  same kind of work worse here, else one not made for the action: rejected.
- ``correction`` (a run of another planner than the expert): a lost round (its subtask failed,
  or repeated the one just carried out). Its answer is rejected; the expert's answer from the
  state the planner had reached is chosen (the oracle labels the state the learner visited,
  as DAgger does). A lost round gives no other pair: it is no example of what to do.

The replacements are drawn from a generator seeded by (seed, episode, round, kind), so the
same run and seed give the same pairs.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from sortie.export.conversations import answer_message, trl_messages
from sortie.export.files import Rows
from sortie.export.household.planner import PlannedRound, answer_json
from sortie.missions.household.executor import parse_verb
from sortie.missions.household.records import RoundStatus, Verb
from sortie.missions.household.skills import SKILLS, Profile

NON_STANDARD = {
    Verb.GO_TO: ("walk_to", "move to", "approach", "head to"),
    Verb.PICK: ("grab", "take", "lift", "grasp"),
    Verb.PUT: ("drop", "put down", "insert", "set"),
    Verb.OPEN: ("unlock", "pull", "open door"),
    Verb.CLOSE: ("shut", "push", "close door"),
}
"""Names for each action that the executor does not take (EMMOE's 'non-standard names');
the executor's own aliases (``goto``, ``navigate``, ``pick up``, ``place``) are not among them,
and ``_wrong_action`` checks each name against the executor's reading."""
OUTSIDE = ("wash", "turn_on", "toggle", "slice")
"""Actions outside every list (EMMOE's 'actions outside the available list')."""


def sft_rows(rounds: Iterable[PlannedRound], with_images: bool) -> Rows:
    """Return one conversation per carried-out subtask (and per ``end`` of a success)."""
    out = Rows()
    for planned in rounds:
        if not _usable(planned):
            out.counts["rounds left out (failed, or unreadable)"] += 1
            continue
        messages, images = trl_messages(planned.messages, with_images)
        messages.append(answer_message(planned.answer_text, with_images))
        out.rows.append(_row(planned, "sft", with_images, {"messages": messages}, images))
        out.counts["sft"] += 1
    return out


def dpo_rows(rounds: Iterable[PlannedRound], with_images: bool, seed: int) -> Rows:
    """Return the DPO pairs of the five kinds (see the module docstring)."""
    out = Rows()
    for episode in _episodes(rounds):
        for index, planned in enumerate(episode):
            later = episode[index + 1] if index + 1 < len(episode) else None
            for kind, rejected, chosen in _pairs(planned, later, seed):
                prompt, images = trl_messages(planned.messages, with_images)
                pair = {
                    "prompt": prompt,
                    "chosen": [answer_message(answer_json(chosen), with_images)],
                    "rejected": [answer_message(answer_json(rejected), with_images)],
                }
                out.rows.append(_row(planned, kind, with_images, pair, images))
                out.counts[kind] += 1
    return out


def _pairs(
    planned: PlannedRound, later: PlannedRound | None, seed: int
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Yield (kind, rejected, chosen) answers made at ``planned``'s request."""
    answer = planned.answer
    if answer is None:
        return
    correction = planned.correction
    if correction is not None and _differs(correction, answer):
        yield "correction", answer, correction
    if planned.record.status is RoundStatus.FAILURE:
        replanned = later.answer if later is not None and _carried_out(later) else None
        if replanned is not None and _differs(replanned, answer):  # not the same one retried
            yield "replan", answer, replanned
        return
    if planned.lost:
        return
    if not _carried_out(planned):
        return
    if later is not None and later.answer is not None and _usable(later):
        if _differs(later.answer, answer):
            yield "order", later.answer, answer
    rng = _generator(seed, planned, "action")
    yield "action", _with(answer, action=_wrong_action(planned, rng)), answer
    skill = _worse_skill(planned, _generator(seed, planned, "skill"))
    if skill is not None:
        yield "skill", _with(answer, skill=skill), answer


def _usable(planned: PlannedRound) -> bool:
    """Return whether a round's answer is a good example: it worked (or ended a success)."""
    if planned.answer is None or planned.lost:
        return False
    if planned.record.status is RoundStatus.END:
        return planned.episode_success
    return planned.record.status is RoundStatus.SUCCESS


def _differs(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Return whether two answers name another subtask or skill (analyses aside)."""
    return (_words(one["subtask"]), one["skill"]) != (_words(other["subtask"]), other["skill"])


def _words(subtask: dict[str, Any]) -> tuple[str, str, str]:
    """Return a subtask's action, target and place as compared (no place: empty)."""
    return (subtask["action"], subtask["target"], subtask.get("place") or "")


def _carried_out(planned: PlannedRound) -> bool:
    return planned.record.status is RoundStatus.SUCCESS


def _wrong_action(planned: PlannedRound, rng: np.random.Generator) -> str:
    verb = planned.record.verb
    names = (*NON_STANDARD.get(verb, ()), *OUTSIDE) if verb is not None else OUTSIDE
    refused = [name for name in names if parse_verb(name) is None]
    return refused[int(rng.integers(len(refused)))]


def _worse_skill(planned: PlannedRound, rng: np.random.Generator) -> str | None:
    """Return an offered skill less likely to do the round's subtask (same kind first)."""
    verb, large = planned.record.verb, planned.large
    offered = {name for name, _ in planned.skills}
    chosen = next((s for s in SKILLS if s.name == planned.record.skill), None)
    if verb is None or chosen is None:
        return None
    rate = chosen.rate(verb, large, Profile.DEFAULT)
    worse = [
        s
        for s in SKILLS
        if s.name in offered and s is not chosen and s.rate(verb, large, Profile.DEFAULT) < rate
    ]
    same = [s for s in worse if verb in s.verbs]
    pool = same or worse
    return pool[int(rng.integers(len(pool)))].name if pool else None


def _with(answer: dict[str, Any], action: str | None = None, skill: str | None = None) -> Any:
    changed = copy.deepcopy(answer)
    if action is not None:
        changed["subtask"]["action"] = action
    if skill is not None:
        changed["skill"] = skill
    return changed


def _generator(seed: int, planned: PlannedRound, kind: str) -> np.random.Generator:
    key = f"{seed}/{planned.key}/{planned.record.round}/{kind}".encode()
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))


def _episodes(rounds: Iterable[PlannedRound]) -> Iterator[list[PlannedRound]]:
    """Group rounds (given episode by episode, in order) into their episodes."""
    current: list[PlannedRound] = []
    for planned in rounds:
        if current and current[-1].key != planned.key:
            yield current
            current = []
        current.append(planned)
    if current:
        yield current


def _row(
    planned: PlannedRound,
    kind: str,
    with_images: bool,
    columns: dict[str, Any],
    images: list[Any],
) -> dict[str, Any]:
    info = {"episode_id": planned.episode_id, "key": planned.key, "round": planned.record.round}
    return columns | ({"images": images} if with_images else {}) | info | {"kind": kind}
