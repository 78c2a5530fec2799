"""Regenerate the pictures of docs/worlds.md: ``.venv/bin/python docs/pictures.py``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sortie.gallery import save_view
from sortie.sim.worlds import WORLDS

IMAGES = Path(__file__).parent / "images" / "worlds"


def main() -> None:
    """Render every world at seed 0 and keep its egocentric and top-down pictures."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in WORLDS.names():
            save_view(name, 0, {}, None, 256, Path(tmp) / name)
            for kind in ("rgb", "topdown"):
                shutil.copy(Path(tmp) / name / f"{kind}.png", IMAGES / f"{name}_{kind}.png")
            print(name)


if __name__ == "__main__":
    main()
