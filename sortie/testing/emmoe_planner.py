"""A test double of an EMMOE planner: the planner side of EMMOE's executor protocol.

Written from the protocol as docs/household.md describes it ("EMMOE's planners over a
socket"), never from EMMOE's code. Each round it reads the four views' paths, reads the task
from ``info.txt`` beside them, asks its ``decide`` function for a subtask and a model (up to
``ATTEMPTS`` times; all unreadable and it gives up with a bare ``End``), sends
``"<subtask>|<model>|<inventory>"``, reads ``[feedback, "success" | "fail"]`` and
acknowledges it. It keeps its own inventory from the answers, as EMMOE's planners do, and an
episode ends when it says ``End``, gives up or has used ``max_rounds`` rounds.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ATTEMPTS = 5
"""Answers asked of ``decide`` in a round before the planner gives up."""
ACKNOWLEDGEMENT = "feedback received!"


@dataclass(frozen=True, slots=True)
class Turn:
    """What the planner knows when it chooses a round's subtask."""

    task: str
    round: int
    images: tuple[Path, ...]
    inventory: tuple[str, ...]
    feedback: str
    """The last answer's feedback (``None`` before the first round and after a success)."""
    history: tuple[str, ...]
    """Every round so far as ``(k) Pick, apple(success)``."""


Decide = Callable[[Turn], tuple[str, str] | None]
"""A planner's mind: the subtask (``Pick, apple``) and the model, or None for no answer."""


@dataclass(slots=True)
class PlayedEpisode:
    """One episode as the planner saw it: the task, the lines it sent, the answers it got."""

    task: str
    sent: list[str] = field(default_factory=list)
    answers: list[tuple[str, str]] = field(default_factory=list)
    images: list[tuple[Path, ...]] = field(default_factory=list)


class EmmoeStylePlanner:
    """A planner that plays episodes over one connection to an EMMOE-style executor."""

    def __init__(self, decide: Decide, max_rounds: int = 20) -> None:
        """Choose subtasks with ``decide``; stop an episode after ``max_rounds`` rounds."""
        self.decide, self.max_rounds = decide, max_rounds

    def play(self, sock: socket.socket, episodes: int) -> list[PlayedEpisode]:
        """Play ``episodes`` episodes over ``sock``, then close it; return what was seen."""
        try:
            return [self._episode(sock) for _ in range(episodes)]
        finally:
            sock.close()

    def _episode(self, sock: socket.socket) -> PlayedEpisode:
        inventory: list[str] = []
        feedback, history = "None", list[str]()
        played: PlayedEpisode | None = None
        for round_ in range(1, self.max_rounds + 1):
            images = tuple(Path(p) for p in json.loads(_read(sock)))
            task = (images[0].parent / "info.txt").read_text().split("Task:", 1)[1].strip()
            played = played or PlayedEpisode(task)
            played.images.append(images)
            turn = Turn(task, round_, images, tuple(inventory), feedback, tuple(history))
            choice = self._choose(turn)
            line = "End" if choice is None else f"{choice[0]}|{choice[1]}|{_held(inventory)}"
            played.sent.append(line)
            sock.sendall(line.encode("utf-8"))
            feedback, signal = json.loads(_read(sock))
            played.answers.append((feedback, signal))
            sock.sendall(ACKNOWLEDGEMENT.encode("utf-8"))
            if choice is None or choice[0].strip().lower() == "end":
                break
            _update(inventory, choice[0], feedback, signal)
            history.append(f"({round_}) {choice[0]}({signal}) ")
        assert played is not None
        return played

    def _choose(self, turn: Turn) -> tuple[str, str] | None:
        for _ in range(ATTEMPTS):
            choice = self.decide(turn)
            if choice is not None:
                return choice
        return None


def connect(port: int, host: str = "127.0.0.1", timeout: float = 30.0) -> socket.socket:
    """Return a connection to an executor listening at ``host:port``."""
    return socket.create_connection((host, port), timeout)


def _read(sock: socket.socket) -> str:
    data = sock.recv(1024)
    if not data:
        raise ConnectionError("the executor closed the connection")
    return data.decode("utf-8")


def _held(inventory: list[str]) -> str:
    return " ".join(inventory) if inventory else "None"


def _update(inventory: list[str], subtask: str, feedback: str, signal: str) -> None:
    """Follow the gripper from the answers: a pick that worked holds, a put empties it."""
    action, *names = (w.strip() for w in subtask.split(","))
    if signal == "success" and action.lower() == "pick" and names:
        inventory[:] = [names[0]]
    elif action.lower() == "put" and (signal == "success" or "object is missing" in feedback):
        inventory.clear()
