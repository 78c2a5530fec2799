"""Writing an export: a Hugging Face dataset folder that ``datasets.load_dataset`` reads.

The folder holds ``data/train-00000-of-00001.parquet`` (images inside it, as PNG bytes),
``README.md`` (a dataset card saying where the data came from and what each column is) and
``export.json`` (the counts and the command's settings). It is written under a temporary
name and renamed when whole, so an export that fails leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError

DATA_FILE = "data/train-00000-of-00001.parquet"


@dataclass
class Rows:
    """Dataset rows and how many of each kind were made."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def check_out(out: Path) -> None:
    """Refuse an output folder that exists and is not empty (nothing is overwritten).

    The rule of every output folder (``sortie.core.folders``), for a dataset written whole:
    an earlier export is not updated, so only a new or empty folder will do.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out}: exists and is not an empty folder; choose a new --out")


def write_dataset(
    out: Path, rows: list[dict[str, Any]], card: str, manifest: Mapping[str, Any]
) -> Path:
    """Write ``rows`` as a dataset folder at ``out``; return the parquet file's path.

    Raises:
        ConfigError: ``out`` is in the way, or there are no rows.
        ImportError: ``datasets`` is not installed (``pip install 'sortie[export]'``).
    """
    import datasets

    datasets.disable_progress_bars()  # the command prints its own counts
    check_out(out)
    if not rows:
        raise ConfigError("nothing to export")
    out = out.resolve() if out.is_symlink() else out  # a link to an empty folder: fill that
    _remove_stale_partials(out)
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        (partial / "data").mkdir(parents=True)
        datasets.Dataset.from_list(rows).to_parquet(str(partial / DATA_FILE))
        (partial / "README.md").write_text(card, encoding="utf-8")
        text = json.dumps(dict(manifest), indent=2, sort_keys=True)
        (partial / "export.json").write_text(text + "\n", encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty, checked above
        os.replace(partial, out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return out / DATA_FILE


def _remove_stale_partials(out: Path) -> None:
    """Remove the half-written folders that killed exports to ``out`` left behind.

    A partial folder is named for the writing process; one whose process is gone is stale.
    """
    for partial in out.parent.glob(f".{out.name}.partial-*"):
        pid = partial.name.rsplit("-", 1)[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: leave its folder alone
    return True
