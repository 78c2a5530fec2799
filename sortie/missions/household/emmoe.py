r"""EMMOE's words for the household family's things: its log lines, feedback strings and verbs.

EMMOE's HomieBot keeps each run as ``conversation.json``, a list of ``"USER:\\n<prompt>
ASSISTANT:\\n<answer>\\n"`` strings; the prompt's ``Historical Execution:`` line lists the
rounds so far as ``(k) Pick, apple(success) `` and its ``Feedback:`` line carries the executor's
last message, from which the error code is read. ``sortie export emmoe`` writes these and
``sortie rescore emmoe`` reads them, both through this module, so the two agree by
construction; EMMOE's own metric notebooks read the same lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sortie.missions.household.records import ErrorCode, RoundStatus, Verb

VERB_WORDS = {
    Verb.GO_TO: "Go to",
    Verb.PICK: "Pick",
    Verb.PUT: "Put",
    Verb.OPEN: "Open",
    Verb.CLOSE: "Close",
    Verb.END: "End",
}
"""EMMOE's action words."""
SKILL_MODELS = {
    "image_nav": "NoMaD",
    "object_nav": "PixNav",
    "grasp": "RT-1-X",
    "articulate": "octo",
    "all_in_one": "M3",
}
"""EMMOE's model for each of sortie's skills (the same roles)."""
FEEDBACK = {
    ErrorCode.F1: "{action} is not in the action list! You should only choose actions in the list.",
    ErrorCode.F2: "{target} does not exist! Please choose another object",
    ErrorCode.L1: "Unable to {action}, the hand is full",
    ErrorCode.L2: "Unable to {action}, the hand is empty",
    ErrorCode.L3: "Unable to {action}, the {target} is closed, you should open it first",
    ErrorCode.L4: "Can not {action} {target}! Please choose another object",
    ErrorCode.D1: "Unable to {action}, the target is far away",
    ErrorCode.D2: "Unable to {action}, the target is too close",
    ErrorCode.E1: "Unable to {action}, the subtask is too difficult to perform",
    ErrorCode.E2: "Unable to {action}, and the object is missing",
    ErrorCode.E3: "Unable to {action}, time out",
}
"""EMMOE's executor's message for each error code (``eval_M3.py``)."""
_CODE_MARKS = (
    ("not in the action list", ErrorCode.F1),
    ("does not exist! Please choose another object", ErrorCode.F2),
    ("hand is full", ErrorCode.L1),
    ("hand is empty", ErrorCode.L2),
    ("is closed, you should open it first", ErrorCode.L3),
    ("Please choose another object", ErrorCode.L4),
    ("far away", ErrorCode.D1),
    ("too close", ErrorCode.D2),
    ("too difficult to perform", ErrorCode.E1),
    ("the object is missing", ErrorCode.E2),
    ("time out", ErrorCode.E3),
)
"""The words that tell a feedback's code, most specific first (F2's also end as L4's do)."""
NO_FEEDBACK = "None"
"""EMMOE's feedback after a round that succeeded (and before the first)."""
_ENTRY = re.compile(r"\((success|fail)\)\s")
_NUMBER = re.compile(r"^\((\d+)\)\s*")


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One round of a ``Historical Execution:`` line: its number, words and whether it worked."""

    number: int
    words: tuple[str, ...]
    """The action word, then the target and the place as written (lower-cased by EMMOE)."""
    succeeded: bool


def code_of(feedback: str) -> ErrorCode | None:
    """Return the error code a feedback string carries (None for ``None``: no error).

    Raises:
        ValueError: a feedback that carries none of EMMOE's error messages.
    """
    text = feedback.strip()
    if text in ("", NO_FEEDBACK):
        return None
    for mark, code in _CODE_MARKS:
        if mark in text:
            return code
    raise ValueError(f"feedback {text[:80]!r} carries none of EMMOE's error messages")


def feedback_of(code: ErrorCode | None, action: str, target: str) -> str:
    """Return EMMOE's message for ``code`` about ``action`` on ``target`` (``None``: none)."""
    if code is None:
        return NO_FEEDBACK
    return FEEDBACK[code].format(action=action.lower(), target=target)


def history_entry(number: int, words: tuple[str, ...], status: RoundStatus) -> str:
    """Return one round as HomieBot appends it to the history: ``(3) Pick, apple(success) ``."""
    outcome = "success" if status is RoundStatus.SUCCESS else "fail"
    return f"({number}) {', '.join(words)}({outcome}) "


def parse_history(line: str) -> list[HistoryEntry]:
    """Return the rounds of a ``Historical Execution:`` line, as EMMOE's notebooks split it.

    Raises:
        ValueError: the line does not parse (what was expected is said).
    """
    text = line.removeprefix("Historical Execution:").strip()
    if text in ("", NO_FEEDBACK):
        return []
    parts = _ENTRY.split(text + " ")
    if parts[-1].strip():
        raise ValueError(f"{parts[-1].strip()[:60]!r} does not end in (success) or (fail)")
    return [_entry(body, outcome) for body, outcome in zip(parts[::2], parts[1::2], strict=False)]


def _entry(body: str, outcome: str) -> HistoryEntry:
    number = _NUMBER.match(body.strip())
    if number is None:
        raise ValueError(f"{body.strip()[:60]!r} does not start with its round, as (3)")
    words = body.strip()[number.end() :].strip().strip("[]")
    parts = tuple(part.strip() for part in words.split(","))
    if not parts[0] or len(parts) > 3:
        raise ValueError(f"{words[:60]!r}: expected an action and up to two names")
    return HistoryEntry(int(number.group(1)), parts, outcome == "success")


def safe_words(text: str) -> str:
    """Return a planner's words fit for a history line (commas, brackets, parentheses out)."""
    return " ".join(re.sub(r"[,()\[\]]", " ", text).split())
