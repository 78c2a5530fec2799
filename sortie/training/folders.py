"""A training command's output folder: made with one set of settings, resumed only with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError

SETTINGS_FILE = "settings.json"


def check_settings_file(out: Path, wanted: dict[str, Any]) -> None:
    """Write the settings that decide what ``out`` holds, or check them against those written.

    Raises:
        ConfigError: ``out`` was made with other settings (the message names which).
    """
    path = out / SETTINGS_FILE
    if not path.exists():
        path.write_text(json.dumps(wanted, indent=1) + "\n")
        return
    found = json.loads(path.read_text())
    if found != wanted:
        changed = sorted(k for k in wanted.keys() | found.keys() if wanted.get(k) != found.get(k))
        raise ConfigError(
            f"{out}: made with other settings ({', '.join(changed)} differ); use another "
            "--out, or remove it to start again"
        )
