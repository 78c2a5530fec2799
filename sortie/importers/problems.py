"""Collecting an importer's problems, so that one run reports all of them."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, ParameterError
from sortie.core.files import read_regular
from sortie.core.records_io import MAX_FILE_BYTES
from sortie.missions.registry import check_episode

SHOWN = 50
"""Problems listed in full in the error message; the rest are counted."""


class Problems:
    """What an importer could not read, each as ``where: field: problem``."""

    def __init__(
        self, source: str, unless: str = "nothing written", command: str = "import"
    ) -> None:
        self.source, self.unless, self.command = source, unless, command
        self.found: list[str] = []

    def add(self, where: str, field: str, problem: str) -> None:
        """Note that ``field`` at ``where`` (``file:line`` or a mission folder) is bad."""
        self.found.append(f"{where}: {field}: {problem}")

    def raise_if_any(self) -> None:
        """Raise ConfigError listing every problem (the first ``SHOWN``) if there are any."""
        if not self.found:
            return
        shown = self.found[:SHOWN]
        more = len(self.found) - len(shown)
        tail = f"\n... and {more} more" if more else ""
        raise ConfigError(
            f"{self.command} {self.source}: {len(self.found)} problem(s), {self.unless}:\n"
            + "\n".join(shown)
            + tail
        )

    def number(self, where: str, field: str, value: Any) -> float | None:
        """Return ``value`` if it is a finite number, else note the problem and return None."""
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.add(where, field, f"expected a finite number, got {_shown(value)}")
            return None
        return float(value)

    def checked(self, where: str, make: Callable[[], EpisodeSpec]) -> EpisodeSpec | None:
        """Return the episode ``make`` builds if it passes its family's check, else note why."""
        try:
            spec = make()
            check_episode(spec)
        except ValidationError as error:
            for e in error.errors():
                self.add(where, ".".join(map(str, e["loc"])) or "episode", e["msg"])
            return None
        except (ConfigError, ParameterError) as error:
            self.add(where, "episode", str(error))
            return None
        return spec


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def read_text(path: Path, problems: Problems, where: str, field: str) -> str | None:
    """Return a file's UTF-8 text, or None after noting why it cannot be read.

    Only a regular file of at most ``MAX_FILE_BYTES`` is read (a FIFO would wait for ever, a
    device never end); line ends are made newlines as ``Path.read_text`` makes them.
    """
    try:
        data = read_regular(path, MAX_FILE_BYTES)
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as error:
        problems.add(where, field, f"not UTF-8 text (byte {error.start + 1})")
    except ConfigError as error:
        problems.add(where, field, str(error).removeprefix(f"{path}: "))
    except OSError as error:
        problems.add(where, field, f"cannot read: {error.strerror or error}")
    return None
