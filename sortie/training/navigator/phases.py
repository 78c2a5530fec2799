"""The pipeline's phases: timed, kept in ``training.json``, and never silent for long.

A phase prints when it starts and ends (with its time), and a line every ``HEARTBEAT``
seconds while it runs, from a thread, so a phase that prints nothing of its own (an export,
a long epoch) still shows it is alive. A phase resumed after a stop adds its time to what it
had cost.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Echo = Callable[[str], object]
HEARTBEAT = 25.0
"""Seconds between two progress lines of a phase that prints nothing of its own."""


class Phases:
    """Times each phase, says when one is skipped, and keeps the times in ``training.json``.

    A phase resumed after a stop adds its time to the time it had: the figure is what the
    phase cost in all.
    """

    def __init__(self, out: Path, echo: Echo) -> None:
        """Read the times of an earlier, stopped pipeline in ``out``, if any."""
        self.path, self.echo = out / "training.json", echo
        self.record: dict[str, Any] = (
            json.loads(self.path.read_text()) if self.path.exists() else {"phases": {}}
        )

    def say(self, line: str) -> None:
        """Print ``line`` (for callers that want a function returning None)."""
        self.echo(line)

    @contextmanager
    def phase(self, name: str) -> Iterator[dict[str, Any]]:
        """Time phase ``name``; what the block puts in the yielded dict is kept with its time."""
        self.echo(f"[{name}] …")
        started, facts = time.monotonic(), dict[str, Any]()
        with _heartbeat(name, started, self.echo):
            yield facts
        seconds = time.monotonic() - started
        before = self.record["phases"].get(name, {})
        total = round(before.get("seconds", 0.0) + seconds, 1)  # a resumed phase adds on
        self.record["phases"][name] = {**before, **facts, "seconds": total}
        self.path.write_text(json.dumps(self.record, indent=1) + "\n")
        self.echo(
            f"[{name}] done in {seconds:.1f} s" + (f" ({total:.1f} s in all)" if before else "")
        )

    def skip(self, name: str, why: str) -> None:
        """Say that phase ``name`` is already done, and when it was timed."""
        seconds = self.record["phases"].get(name, {}).get("seconds")
        timed = f" (took {seconds:.1f} s)" if seconds is not None else ""
        self.echo(f"[{name}] skipped: {why}{timed}")


@contextmanager
def _heartbeat(name: str, started: float, echo: Echo) -> Iterator[None]:
    """Print a line every ``HEARTBEAT`` seconds while the block runs (quiet phases included)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT):
            echo(f"  [{name}] still running, {time.monotonic() - started:.0f} s")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
