"""People standing or lying, dressed in named colours that clues can quote.

A person is built standing in a local frame (feet at z = 0, facing +x) from boxes and two
spheres (head and hair). Lying turns that body onto its back, face up, centred on the given
position. People are portable: a rescuer can pick one up and carry them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sortie.core.episode import POSTURES
from sortie.sim.assets.props import PALETTE, pick, shade
from sortie.sim.kit import WorldKit
from sortie.sim.linear import product
from sortie.sim.mesh import Color, Mesh, box, merge, pose_matrix, sphere
from sortie.sim.scene import AttributeValue, Dynamics, SceneObject

TOPS = ("jacket", "hoodie", "t-shirt", "coat", "sweater")
BOTTOMS = ("trousers", "jeans", "shorts", "skirt")
TOP_COLORS = (
    "red",
    "blue",
    "green",
    "yellow",
    "orange",
    "purple",
    "black",
    "white",
    "grey",
    "pink",
    "teal",
)
BOTTOM_COLORS = {
    "trousers": ("black", "grey", "brown", "beige", "navy"),
    "jeans": ("blue", "navy", "black"),
    "shorts": ("beige", "navy", "grey", "green"),
    "skirt": ("black", "red", "navy", "grey"),
}
HAIR = {
    "black": (30, 24, 20),
    "brown": (96, 60, 32),
    "blond": (214, 180, 104),
    "grey": (168, 166, 160),
    "red": (150, 62, 30),
}
SKIN = ((242, 204, 172), (222, 176, 136), (184, 130, 90), (140, 94, 62), (96, 64, 44))
LYING_LIFT = 0.14  # half the body's front-to-back depth: a lying body rests on its back


@dataclass(frozen=True, slots=True)
class Outfit:
    """What a person wears and looks like, by name."""

    top: str
    top_color: str
    bottom: str
    bottom_color: str
    hair: str
    skin: Color

    def describe(self) -> str:
        """Return e.g. ``red jacket, blue jeans``."""
        return f"{self.top_color} {self.top}, {self.bottom_color} {self.bottom}"


def random_outfit(rng: np.random.Generator) -> Outfit:
    """Return a random outfit drawn from the named clothes and colours."""
    top, bottom = pick(rng, TOPS), pick(rng, BOTTOMS)
    return Outfit(
        top,
        pick(rng, TOP_COLORS),
        bottom,
        pick(rng, BOTTOM_COLORS[bottom]),
        pick(rng, tuple(HAIR)),
        SKIN[int(rng.integers(len(SKIN)))],
    )


def add_person(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float, float],
    yaw: float = 0.0,
    posture: str = "standing",
    outfit: Outfit | None = None,
    name: str | None = None,
    **extra: AttributeValue,
) -> SceneObject:
    """Add a portable person at ``position`` (ground point), facing or lying along ``yaw``.

    Lying, the head points along ``yaw`` and ``position`` is the middle of the body. ``extra``
    attributes (e.g. where they are) follow the outfit's.
    """
    if posture not in POSTURES:
        raise ValueError(f"person posture {posture!r}; allowed: {', '.join(POSTURES)}")
    look = outfit or random_outfit(rng)
    body = person_mesh(look)
    if posture == "lying":
        # Pitch 90 turns the body's front (+x) up and its head to -x; the turn of 180
        # brings the head round to +x, then it slides back so the middle sits on position.
        flat = product(pose_matrix((-0.87, 0.0, LYING_LIFT), 180.0), pose_matrix(pitch=90.0))
        body = body.transformed(product(pose_matrix(position, yaw), flat))
    else:
        body = body.moved(position, yaw)
    return kit.add(
        "person",
        body,
        name=name,
        dynamics=Dynamics.PORTABLE,
        posture=posture,
        top=look.top,
        top_color=look.top_color,
        bottom=look.bottom,
        bottom_color=look.bottom_color,
        hair=look.hair,
        outfit=look.describe(),
        **extra,  # type: ignore[arg-type]  # extras are attributes
    )


def person_mesh(look: Outfit) -> Mesh:
    """Return a 1.75 m standing body in the local frame (feet at z = 0, facing +x)."""
    top, bottom = PALETTE[look.top_color], PALETTE[look.bottom_color]
    parts = [*_legs(look, bottom), *_torso(look, top)]
    parts.append(sphere(0.11, (0.0, 0.0, 1.6), look.skin, rings=5, segments=8, squash=1.15))
    parts.append(
        sphere(0.12, (-0.025, 0.0, 1.635), HAIR[look.hair], rings=5, segments=8, squash=0.9)
    )
    return merge(parts)


def _legs(look: Outfit, color: Color) -> list[Mesh]:
    """Return shoes and legs; shorts and skirts show skin below the knee."""
    shoes = [box((0.26, 0.11, 0.08), (0.03, side * 0.1, 0.04), (34, 30, 28)) for side in (-1, 1)]
    knee = 0.5 if look.bottom in ("shorts", "skirt") else 0.08
    legs = [
        box((0.14, 0.14, 0.88 - knee), (0, side * 0.1, (0.88 + knee) / 2), color)
        for side in (-1, 1)
    ]
    if knee > 0.08:
        legs += [
            box((0.12, 0.12, knee - 0.08), (0, side * 0.1, (knee + 0.08) / 2), look.skin)
            for side in (-1, 1)
        ]
    if look.bottom == "skirt":
        legs.append(box((0.3, 0.42, 0.4), (0, 0, 0.7), color))
    return shoes + legs


def _torso(look: Outfit, color: Color) -> list[Mesh]:
    """Return the torso, arms and hands; a coat hangs lower, a t-shirt shows bare forearms."""
    hem = 0.6 if look.top == "coat" else 0.88
    torso = box((0.26, 0.42, 1.48 - hem), (0, 0, (1.48 + hem) / 2), color)
    cuff = 1.15 if look.top == "t-shirt" else 0.85
    arms = [
        box((0.11, 0.11, 1.45 - cuff), (0, side * 0.27, (1.45 + cuff) / 2), color)
        for side in (-1, 1)
    ]
    skin_from = 0.72
    hands = [
        box((0.1, 0.1, cuff - skin_from), (0, side * 0.27, (cuff + skin_from) / 2), look.skin)
        for side in (-1, 1)
    ]
    collar = box((0.1, 0.12, 0.06), (0.0, 0.0, 1.5), shade(look.skin, 0.95))
    return [torso, *arms, *hands, collar]
