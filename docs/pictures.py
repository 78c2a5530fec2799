"""Regenerate the pictures of docs/worlds.md: ``.venv/bin/python docs/pictures.py``.

``--flight`` (or ``--ground``) makes only the flight (or ground) worlds' pictures;
``--world NAME`` only that ground world's.
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


def ground_pictures(only: str | None = None) -> None:
    """Render every ground world (or ``only``) at seed 0; keep its egocentric and top-down views."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in WORLDS.names():
            if FLIGHT_WORLDS.get(name) == {}:  # a flight-only builder (forest is both)
                continue
            if only is not None and name != only:
                continue
            save_view(name, 0, {}, None, 256, Path(tmp) / name)
            for kind in ("rgb", "topdown"):
                shutil.copy(Path(tmp) / name / f"{kind}.png", IMAGES / f"{name}_{kind}.png")
            if name == "apartment":
                apartment_pictures()
            print(name)


def apartment_pictures(seeds: range = range(8), size: int = 192) -> None:
    """Keep two more apartment pictures: plans of several seeds, and views of its furniture.

    The views stand at seed 0's first pieces' approach points with their doors opened.
    """
    plans = Image.new("RGB", (size * 4, size * ((len(seeds) + 3) // 4)), (255, 255, 255))
    for i, seed in enumerate(seeds):
        renderer = Renderer(build_world("apartment", seed))
        plan = Image.fromarray(render_topdown(renderer, 0.05).image)
        plan.thumbnail((size, size))
        plans.paste(plan, ((i % 4) * size, (i // 4) * size))
    plans.save(IMAGES / "apartment_plans.png")
    scene = build_world("apartment", 0)
    renderer, views = Renderer(scene), Image.new("RGB", (size * 4, size))
    pieces = [o for o in scene.objects if o.attributes.get("role") in ("receptacle", "container")]
    for i, piece in enumerate(pieces[:4]):
        if "door" in piece.attributes:
            scene.set_open(str(piece.attributes["door"]), True)
        a = piece.attributes
        eye = (float(a["approach_x"]), float(a["approach_y"]), 1.5)
        frames = renderer.render(CameraSpec(size, size, 90.0, -30.0), eye, float(a["approach_yaw"]))
        assert frames.rgb is not None
        views.paste(Image.fromarray(frames.rgb), (i * size, 0))
    views.save(IMAGES / "apartment_views.png")


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
    if "--world" in sys.argv:
        ground_pictures(sys.argv[sys.argv.index("--world") + 1])
        return
    if "--flight" not in sys.argv:
        ground_pictures()
    if "--ground" not in sys.argv:
        flight_pictures()


if __name__ == "__main__":
    main()
