"""Regenerate the pictures of docs/worlds.md: ``.venv/bin/python docs/pictures.py``.

``--flight`` (or ``--ground``) makes only the flight (or ground) worlds' pictures.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from sortie.diagnostics.gallery import save_view
from sortie.sim.camera import CameraSpec
from sortie.sim.render import Renderer
from sortie.sim.scene import Scene
from sortie.sim.topdown import render_topdown
from sortie.sim.worlds import FLIGHT_WORLDS, WORLDS, build_world
from sortie.sim.worlds.aerial import viewing_pose

IMAGES = Path(__file__).parent / "images" / "worlds"
FLIGHT_IMAGES = Path(__file__).parent / "images"
DRONE = CameraSpec(256, 256, 90.0, -45.0)
TARGETS = {
    "neighborhood": "car",
    "city": "car",
    "forest": "animal",
    "savanna": "animal",
    "airsim_nh": "car",
}
"""What each flight world's drone view looks at (its first object of that class)."""


def ground_pictures() -> None:
    """Render every ground world at seed 0 and keep its egocentric and top-down pictures."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in WORLDS.names():
            if FLIGHT_WORLDS.get(name) == {}:  # a flight-only builder (forest is both)
                continue
            save_view(name, 0, {}, None, 256, Path(tmp) / name)
            for kind in ("rgb", "topdown"):
                shutil.copy(Path(tmp) / name / f"{kind}.png", IMAGES / f"{name}_{kind}.png")
            print(name)


def route_map(scene: Scene, renderer: Renderer, size: int = 512) -> Image.Image:
    """Return the whole world from above with its patrol routes drawn in orange."""
    xmin, _, xmax, _ = scene.bounds
    topdown = render_topdown(renderer, (xmax - xmin) / size, max_pixels=size)
    picture = Image.fromarray(topdown.image)
    draw = ImageDraw.Draw(picture)
    for points in scene.routes.values():
        draw.line([topdown.pixel(x, y) for x, y in points], fill=(255, 140, 0), width=2)
    return picture


def flight_picture(name: str, seed: int = 0) -> Image.Image:
    """Return a world's route map beside two drone views (30 m and 8 m) of its target."""
    scene = build_world(name, seed, FLIGHT_WORLDS[name])
    renderer = Renderer(scene)
    # The one nearest the middle, so the view is of the world, not past its edge.
    target = min(scene.of_class(TARGETS[name]), key=lambda o: float(np.hypot(*o.center()[:2])))
    views = []
    for height in (30.0, 8.0):
        pose = viewing_pose(target, height, 60.0)
        frames = renderer.render(DRONE, pose.position(), pose.yaw)
        assert frames.rgb is not None
        views.append(Image.fromarray(frames.rgb))
    picture = Image.new("RGB", (512 + 256, 512), (255, 255, 255))
    picture.paste(route_map(scene, renderer), (0, 0))
    picture.paste(views[0], (512, 0))
    picture.paste(views[1], (512, 256))
    return picture


def flight_pictures() -> None:
    """Render each flight world at seed 0: its map with routes and two drone views."""
    for name in FLIGHT_WORLDS:
        if name not in WORLDS:
            continue
        flight_picture(name).save(FLIGHT_IMAGES / f"flight-{name}.png")
        print(name)


def main() -> None:
    """Render the pictures asked for on the command line (default: all)."""
    if "--flight" not in sys.argv:
        ground_pictures()
    if "--ground" not in sys.argv:
        flight_pictures()


if __name__ == "__main__":
    main()
