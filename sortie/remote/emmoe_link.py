"""EMMOE's planner↔executor protocol, as sortie's household executor speaks it.

EMMOE runs its planner and its executor as two processes joined by one TCP connection on
loopback. Every message is UTF-8 text sent whole and read with a single read of at most
1024 bytes; nothing marks where a message ends, which works because the two sides take strict
turns. A round, executor first:

1. executor → planner: a JSON list of the paths of four first-person views it saved,
   ``subtask<k>_<direction>.png`` for round k (here front, left, back, right);
2. planner → executor: ``"<subtask>|<model>|<inventory>"``, the subtask as
   ``Action, target[, place]`` (``Put, apple, fridge``; ``End`` to finish), the model chosen
   to carry it out (NoMaD, PixNav, octo, RT-1-X; M3 when privileged), and what the planner
   believes it holds (``None``, or names); a bare ``End`` means the planner gave up;
3. executor → planner: the JSON list ``[feedback, "success" | "fail"]``, the feedback
   ``None`` after a success or an ``end``, otherwise EMMOE's executor's error message;
4. planner → executor: any acknowledgement (EMMOE's planners say ``feedback received!``).

``EmmoePlanner`` is the planner at the other end as a sortie agent: its ``act`` saves the
views, sends their paths and turns the answer into a ``Subtask``; as an episode observer it
answers each round with its feedback. The rules (rounds, retries, checks) stay the household
mission's; this module only translates. docs/household.md, "EMMOE's planners over a socket".
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from sortie.core.actions import Action, InvalidAction
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.records import StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.missions.household.emmoe import NO_FEEDBACK, SKILL_MODELS, feedback_of
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import ErrorCode, RoundRecord, RoundStatus, Verb
from sortie.missions.household.vocabulary import Subtask, round_of

MESSAGE_BYTES = 1024
"""Longest message either side may send: EMMOE reads each with one ``recv(1024)``."""
PORT = 10010
"""The port EMMOE's scripts use."""
MODEL_SKILLS = {model.lower(): skill for skill, model in SKILL_MODELS.items()}
"""sortie's skill for each of EMMOE's model names (lower case); sortie's own names pass."""
SUCCESS, FAIL = "success", "fail"


class ProtocolError(ConfigError):
    """A planner's message breaks EMMOE's protocol: it gets an error answer and is dropped.

    A ConfigError (bad input), so the episode loop lets it through instead of recording the
    episode as the agent's error: an episode the planner broke off is not played, not scored.
    """


class PlannerGoneError(ProtocolError):
    """The planner closed the connection: it is dropped unanswered."""


class PlannerSilentError(ProtocolError):
    """The planner said nothing in time: it gets an error answer, then is dropped."""


@dataclass(frozen=True, slots=True)
class PlannerLine:
    """A planner's message read: the subtask's words, the model, the inventory as written."""

    words: tuple[str, ...]
    """The action word, then the target and the place (``Put, apple, fridge``)."""
    model: str
    inventory: str


def parse_line(text: str) -> PlannerLine | None:
    """Return a planner's message read, or None for a bare ``End`` (the planner gave up).

    Raises:
        ProtocolError: not three fields split by ``|``, or a subtask that is not an action and
            up to two names split by commas, or an empty inventory.
    """
    line = text.strip()
    if line.lower() == "end":
        return None
    fields = line.split("|")
    if len(fields) != 3:
        raise ProtocolError(
            f"message {line[:80]!r}: expected '<subtask>|<model>|<inventory>' "
            f"(3 fields split by |), got {len(fields)}"
        )
    subtask, model, inventory = (f.strip() for f in fields)
    words = tuple(w.strip() for w in subtask.strip("[] ").split(","))
    if not all(words) or len(words) > 3:
        raise ProtocolError(
            f"subtask {subtask[:80]!r}: expected an action and up to two names split by "
            "commas, as 'Put, apple, fridge' or 'End'"
        )
    if not inventory:
        raise ProtocolError(f"message {line[:80]!r}: the inventory is empty (send None)")
    return PlannerLine(words, model, inventory)


def subtask_of(line: PlannerLine, held: tuple[str, ...]) -> Subtask:
    """Return the subtask a planner's words name; ``Put, place`` puts what the gripper holds.

    EMMOE's executor reads a put's last name as the place and puts whatever is grasped, so a
    two-word put names the held thing (none: the executor answers that the hand is empty).
    """
    action, *names = line.words
    skill = MODEL_SKILLS.get(line.model.lower(), line.model)
    if action.strip().lower() == "put" and len(names) == 1:
        return Subtask(action, held[0] if held else "", skill, names[0])
    place = names[1] if len(names) > 1 else None
    return Subtask(action, names[0] if names else "", skill, place)


def answer_of(round_: RoundRecord | None) -> tuple[str, str]:
    """Return EMMOE's answer to a round: ``None`` and success, or its error and fail.

    A step that was no round (the planner gave up with a bare ``End``) is answered as an
    ``end`` is, as EMMOE's executor answers it.
    """
    if round_ is None or round_.status in (RoundStatus.SUCCESS, RoundStatus.END):
        return NO_FEEDBACK, SUCCESS
    if round_.code is ErrorCode.F1 and round_.verb is not None:
        # The action was fine: the model named no offered skill (EMMOE checks no model).
        model = SKILL_MODELS.get(round_.skill, round_.skill)
        return f"{model} is not in the model list! Please choose another model", FAIL
    last = round_.place if round_.verb is Verb.PUT and round_.place else round_.target
    code = round_.code or ErrorCode.E3
    return feedback_of(code, round_.action.strip(), last), FAIL


def view_paths(folder: Path, round_: int) -> list[Path]:
    """Return where round ``round_``'s four views go: ``subtask<k>_<direction>.png``."""
    return [folder / f"subtask{round_}_{name}.png" for name in VIEW_NAMES]


def encode(value: object) -> bytes:
    """Return a message as EMMOE sends it: JSON in UTF-8, at most ``MESSAGE_BYTES``.

    Raises:
        ConfigError: the message is longer (a views folder too deep for EMMOE's reads).
    """
    data = json.dumps(value).encode("utf-8")
    if len(data) > MESSAGE_BYTES:
        raise ConfigError(
            f"a message of {len(data)} bytes is longer than the {MESSAGE_BYTES} bytes EMMOE's "
            f"planners read at once: choose a shorter --views folder ({str(value)[:80]}...)"
        )
    return data


class Connection:
    """One planner's connection: whole messages in turn, each read within ``timeout`` seconds."""

    def __init__(self, sock: socket.socket, timeout: float, peer: str = "") -> None:
        """Talk over ``sock``; a read that waits longer than ``timeout`` drops the planner."""
        self.sock, self.timeout = sock, timeout
        self.peer = peer or _peer(sock)
        self.sock.settimeout(timeout)
        self.unacknowledged = False
        """An answer was sent and its acknowledgement not yet read."""
        self.broken: str | None = None
        """Why a send failed (raised at the next read)."""

    def send(self, data: bytes) -> None:
        """Send one message; a planner that is gone is remembered, raised at the next read."""
        try:
            self.sock.sendall(data)
        except OSError as error:
            self.broken = f"the planner left ({error.strerror or error})"

    def receive(self) -> str:
        """Return the planner's next message.

        Raises:
            PlannerGoneError: it closed the connection.
            PlannerSilentError: it said nothing for ``timeout`` s.
            ProtocolError: longer than ``MESSAGE_BYTES``, or not UTF-8.
        """
        if self.broken:
            raise PlannerGoneError(self.broken)
        try:
            data = self.sock.recv(MESSAGE_BYTES + 1)
        except TimeoutError:
            raise PlannerSilentError(f"the planner said nothing for {self.timeout:g} s") from None
        except OSError as error:
            raise PlannerGoneError(f"the planner left ({error.strerror or error})") from None
        if not data:
            raise PlannerGoneError("the planner closed the connection")
        if len(data) > MESSAGE_BYTES:
            raise ProtocolError(f"a message longer than {MESSAGE_BYTES} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(f"a message that is not UTF-8 text: {data[:40]!r}") from None

    def answer(self, feedback: str, signal: str) -> None:
        """Send ``[feedback, signal]``; its acknowledgement is read by ``settle``."""
        self.send(encode([feedback, signal]))
        self.unacknowledged = True

    def settle(self) -> None:
        """Read the acknowledgement of the last answer, if one is due (its words are not read)."""
        if self.unacknowledged:
            self.unacknowledged = False
            self.receive()

    def refuse(self, message: str) -> None:
        """Answer a message that broke the protocol with ``[error, "fail"]``, then close."""
        data = json.dumps([f"error: {message}", FAIL]).encode("utf-8")
        if len(data) > MESSAGE_BYTES:  # escaped, 100 characters take at most 600 bytes
            data = json.dumps([f"error: {message[:100]}...", FAIL]).encode("utf-8")
        self.send(data)
        self._drain()
        self.close()

    def _drain(self) -> None:
        """Say no more, and read what the planner still sends (a little, briefly).

        Closing a socket with unread bytes resets the connection, which can take the error
        answer with it before the planner reads it.
        """
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(0.2)
            for _ in range(16):
                if not self.sock.recv(65536):
                    return
        except OSError:
            return

    def close(self) -> None:
        """Close the connection (again is harmless)."""
        try:
            self.sock.close()
        except OSError:
            pass


def _peer(sock: socket.socket) -> str:
    try:
        host, port, *_ = sock.getpeername()
    except OSError:
        return "a planner"
    return f"{host}:{port}"


class EmmoePlanner:
    """An EMMOE planner at the other end of a ``Connection``, as a household agent.

    Played by ``sortie serve-executor``, which gives it the connection and each episode's
    views folder; it is also an episode observer, answering each round as it is recorded.
    """

    name = "emmoe-planner"
    families = frozenset({"household"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB})

    def __init__(self, label: str = "", connection: Connection | None = None) -> None:
        """Talk over ``connection``; ``label`` names the planner in reports (its model, say)."""
        self.label, self.connection = label, connection
        self.owed = False
        """Whether the planner sent a subtask whose answer it still waits for."""
        self.folder: Path | None = None
        """Where this episode's views and ``info.txt`` go (set per episode by the server)."""

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode.

        Raises:
            ConfigError: no connection: the agent is played with ``sortie serve-executor``.
        """
        if self.connection is None or self.folder is None:
            raise ConfigError(
                "agent 'emmoe-planner' is an EMMOE planner over a socket: "
                "use `sortie serve-executor SUITE`"
            )

    def act(self, observation: MissionObservation) -> Action:
        """Send this round's views; return the subtask the planner answers."""
        assert self.connection is not None and self.folder is not None
        assert isinstance(observation, HouseholdObservation)
        self.connection.settle()
        if observation.round == 0:
            self._start_folder(observation.task)
        paths = view_paths(self.folder, observation.round + 1)
        for path, view in zip(paths, observation.views, strict=True):
            if view.rgb is None:
                raise ConfigError("agent 'emmoe-planner' needs the four RGB views; none came")
            Image.fromarray(view.rgb).save(path)
        self.connection.send(encode([str(p.resolve()) for p in paths]))
        text = self.connection.receive()
        self.owed = True
        line = parse_line(text)
        if line is None:
            return InvalidAction(text.strip(), "the planner gave up (a bare End)")
        return subtask_of(line, observation.inventory)

    def _start_folder(self, task: str) -> None:
        """Write the task; clear views left by an earlier try at this episode, if any."""
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in self.folder.glob("subtask*_*.png"):
            stale.unlink()
        (self.folder / "info.txt").write_text(f"Task: {task}\n")

    # --- as an observer: each round answered as soon as it is recorded -------------------
    def on_start(self, header: TrajectoryHeader) -> None:
        """Nothing to say before the first views."""

    def on_step(self, record: StepRecord) -> None:
        """Answer the round with EMMOE's feedback."""
        assert self.connection is not None
        self.connection.answer(*answer_of(round_of(record)))
        self.owed = False

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Answer a round the executor could not finish (it failed), so the two keep in step.

        Otherwise nothing more: the next episode's views follow the last answer's
        acknowledgement.
        """
        if self.owed and self.connection is not None and not self.connection.broken:
            reason = footer.failure_reason or "an error"
            self.connection.answer(f"error: the executor failed this round ({reason})", FAIL)
            self.owed = False
