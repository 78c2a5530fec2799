"""Where sortie writes: one rule for every output folder (reports, views, records, exports).

sortie writes into a folder that does not exist yet or is empty, or into one it made itself
for the same output, which it then updates (the report of the same runs again, the records
of the run it resumes, another view). Any other folder is refused, naming what is in it:
nothing of the user's is overwritten or mixed with sortie's files. A folder sortie made holds
a marker file, ``.sortie-output``, saying what it was made for. An export is a dataset
written whole, so it takes only a new or empty folder (``sortie.export.files``).
"""

from __future__ import annotations

from pathlib import Path

from sortie.core.errors import ConfigError

MARKER = ".sortie-output"
"""The file in a folder sortie made, holding what it was made for."""


def claim_output(
    folder: Path, made_for: str, option: str = "--out", formerly: str | None = None
) -> None:
    """Make ``folder`` (created if needed) sortie's output for ``made_for``.

    A folder marked ``formerly`` (what an older sortie wrote for the same output) is taken
    too, and marked ``made_for`` from then on.

    Raises:
        ConfigError: ``folder`` is a file, or a folder holding other files than sortie's
            output for ``made_for`` (the message names some of them and what to do).
    """
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{option} {folder}: a file, not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        marker = folder / MARKER
        owner = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
        if owner != made_for and (formerly is None or owner != formerly):
            raise ConfigError(f"{option} {folder}: {_holds(folder, owner)}; {_rule(made_for)}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(made_for + "\n", encoding="utf-8")


def _holds(folder: Path, owner: str | None) -> str:
    if owner is not None:
        return f"sortie wrote it for another output ({owner})"
    names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir())
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"holds files sortie did not write ({shown})"


def _rule(made_for: str) -> str:
    return (
        f"sortie writes the {made_for} into a new or empty folder, or one it wrote for the "
        "same output; choose another folder"
    )
