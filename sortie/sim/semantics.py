"""Semantic classes: one fixed, append-only table, so class ids mean the same in every world."""

from __future__ import annotations

from sortie.core.errors import ConfigError

SEMANTIC_CLASSES: tuple[str, ...] = (
    "nothing",  # 0: sky, or no hit
    "ground",
    "floor",
    "ceiling",
    "wall",
    "roof",
    "road",
    "sidewalk",
    "grass",
    "water",
    "door",
    "gate",
    "window",
    "stairs",
    "ramp",
    "platform",
    "railing",
    "pillar",
    "fence",
    "house",
    "shop",
    "sign",
    "building",
    "person",
    "stretcher",
    "ambulance",
    "car",
    "truck",
    "bus",
    "bicycle",
    "tree",
    "bush",
    "rock",
    "flower_bed",
    "log",
    "lamp_post",
    "bench",
    "crate",
    "barrel",
    "trash_bin",
    "bollard",
    "vending_machine",
    "table",
    "chair",
    "shelf",
    "counter",
    "train",
    "track",
    "animal",
    "statue",
    "solar_panel",
    "pylon",
    "water_tank",
    "landing_pad",
    "fridge",
    "cabinet",
    "drawer",
    "microwave",
    "sofa",
    "bed",
    "item",
)
"""Semantic class names; a class's id is its index. Append only: ids are stored in records."""

CLASS_IDS: dict[str, int] = {name: i for i, name in enumerate(SEMANTIC_CLASSES)}


def class_id(name: str) -> int:
    """Return the id of semantic class ``name``, or raise naming the known classes."""
    try:
        return CLASS_IDS[name]
    except KeyError:
        raise ConfigError(
            f"Unknown semantic class {name!r}. Known: {', '.join(SEMANTIC_CLASSES[1:])}"
        ) from None
