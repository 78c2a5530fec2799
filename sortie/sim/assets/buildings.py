"""Houses, shop fronts with signs, and the ground pieces (road, sidewalk, grass) of a town.

Houses and shops are closed solid boxes that cannot be entered: their doors and windows are
quads painted just proud of the walls. They are built in a local frame whose front faces
+x (width along y, depth along x) and turned by ``yaw``, so ``yaw`` is where the door faces.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sortie.sim.assets.props import GLASS, PALETTE, PROUD, facing_quad, pick, shade
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, merge, quad, slab
from sortie.sim.scene import SceneObject
from sortie.sim.textures import stripes_texture, text_texture

HOUSE_COLORS = (
    "white",
    "cream",
    "yellow",
    "light blue",
    "sage green",
    "pink",
    "beige",
    "grey",
    "dark red",
)
ROOF_COLORS = {"dark grey": (74, 72, 76), "brown": (110, 66, 44), "red": (150, 56, 40)}
DOOR_COLORS = ("red", "blue", "green", "brown", "black", "white", "yellow")
SHOP_COLORS = ("white", "cream", "grey", "beige", "dark red", "navy", "teal", "dark green", "brown")
SHOP_WORDS = (
    "Golden",
    "Corner",
    "Sunny",
    "Oak",
    "Harbor",
    "Royal",
    "City",
    "Green",
    "Blue Door",
    "Rosa's",
    "Maple",
    "Star",
)
SHOP_KINDS = (
    "Bakery",
    "Pharmacy",
    "Cafe",
    "Books",
    "Market",
    "Florist",
    "Diner",
    "Hardware",
    "Barber",
    "Pizza",
    "Laundry",
    "Pet Shop",
)
STOREY = 2.8
GROUND_COLORS: dict[str, Color] = {
    "grass": (84, 134, 62),
    "road": (62, 62, 66),
    "sidewalk": (172, 170, 162),
    "ground": (150, 140, 122),
    "water": (58, 104, 150),
}
Area = tuple[str, float, float, float, float]
"""A ground piece: semantic class and its rectangle ``(x0, y0, x1, y1)``."""


def shop_names(rng: np.random.Generator, count: int) -> list[tuple[str, str]]:
    """Return ``count`` distinct ``(name, kind)`` pairs such as ``("Golden Bakery", "bakery")``."""
    combos = [(w, k) for w in SHOP_WORDS for k in SHOP_KINDS]
    order = rng.permutation(len(combos))
    names = []
    for i in range(count):
        word, kind = combos[int(order[i % len(combos)])]
        branch = i // len(combos)  # more shops than names: number the branches
        names.append((f"{word} {kind}" + (f" {branch + 1}" if branch else ""), kind.lower()))
    return names


def _gabled_roof(
    depth: float, width: float, eave: float, rise: float, roof: Color, wall: Color
) -> Mesh:
    """Return a pitched roof with its ridge along y: two sloped quads and two gable ends."""
    dx, wy, over = depth / 2 + 0.3, width / 2 + 0.3, width / 2
    slopes = Mesh(
        np.array(
            [
                [-dx, -wy, eave],
                [dx, -wy, eave],
                [0, -wy, eave + rise],
                [-dx, wy, eave],
                [dx, wy, eave],
                [0, wy, eave + rise],
            ],
            np.float32,
        ),
        np.array([[1, 4, 5], [1, 5, 2], [0, 2, 5], [0, 5, 3]], np.int32),
        np.tile(np.asarray(roof, np.uint8), (4, 1)),
    )
    gable_rise = rise * (depth / 2) / dx  # the gable stops at the walls, under the slopes
    gables = Mesh(
        np.array(
            [
                [-depth / 2, -over, eave],
                [depth / 2, -over, eave],
                [0, -over, eave + gable_rise],
                [-depth / 2, over, eave],
                [depth / 2, over, eave],
                [0, over, eave + gable_rise],
            ],
            np.float32,
        ),
        np.array([[0, 1, 2], [3, 5, 4]], np.int32),
        np.tile(np.asarray(wall, np.uint8), (2, 1)),
    )
    return merge([slopes, gables])


def _window(
    x: float, y: float, z: float, facing: float, width: float = 1.1, height: float = 1.1
) -> list[Mesh]:
    """Return a white frame with a glass pane in front of it, centred on ``(x, y, z)``."""
    frame = facing_quad((x, y, z), facing, width + 0.16, height + 0.16, color=(240, 240, 236))
    nudge = 0.006 * np.array([np.cos(np.radians(facing)), np.sin(np.radians(facing))])
    pane = facing_quad((x + nudge[0], y + nudge[1], z), facing, width, height, color=GLASS)
    return [frame, pane]


def _house_facade(
    depth: float, width: float, storeys: int, door_offset: float, door: Color
) -> list[Mesh]:
    """Return the door and the windows of every wall, as quads just proud of the walls."""
    front = depth / 2 + PROUD
    quads = [facing_quad((front, door_offset, 1.05), 0.0, 1.0, 2.1, color=door)]
    for level in range(storeys):
        z = level * STOREY + 1.6
        for y in np.arange(-width / 2 + 1.4, width / 2 - 1.0, 2.4):
            if level > 0 or abs(y - door_offset) > 1.3:
                quads += _window(front, float(y), z, 0.0)
            quads += _window(-front, float(y), z, 180.0)
        for side in (-1, 1):
            quads += _window(0.0, side * (width / 2 + PROUD), z, side * 90.0)
    return quads


def add_house(
    kit: WorldKit,
    rng: np.random.Generator,
    center: tuple[float, float],
    yaw: float,
    width: float,
    depth: float,
    number: int,
    color: str | None = None,
    storeys: int | None = None,
    door_offset: float = 0.0,
    street: str = "",
    roof_number: bool = False,
) -> SceneObject:
    """Add a closed house with a pitched roof, painted door and windows and a house number.

    ``width`` runs along the front, ``depth`` from front to back; ``door_offset`` moves the
    door along the front from its middle (positive: to the left seen from the street).
    ``roof_number`` also paints the number large on the front slope of the roof, where a
    drone over the street can read it.
    """
    color = color or pick(rng, HOUSE_COLORS)
    storeys = storeys or int(rng.integers(1, 3))
    roof_name = pick(rng, tuple(ROOF_COLORS))
    door_name = pick(rng, DOOR_COLORS)
    wall_rgb, eave = PALETTE[color], storeys * STOREY
    walls = slab(-depth / 2, -width / 2, depth / 2, width / 2, 0.0, eave, wall_rgb)
    rise = float(rng.uniform(1.4, 2.4))
    roof = _gabled_roof(depth, width, eave, rise, ROOF_COLORS[roof_name], shade(wall_rgb, 0.95))
    facade = _house_facade(depth, width, storeys, door_offset, PALETTE[door_name])
    plate = text_texture(str(number), 64, 48, border=(30, 30, 30))
    sign = facing_quad((depth / 2 + PROUD, door_offset, 2.5), 0.0, 0.6, 0.45, plate)
    local = [merge([walls, roof, *facade]), sign]
    if roof_number:
        local.append(_roof_label(depth, width, eave, rise, plate))
    parts = [m.moved((*center, 0.0), yaw) for m in local]
    return kit.add(
        "house",
        parts,
        number=number,
        street=street,
        color=color,
        roof_color=roof_name,
        door_color=door_name,
        storeys=storeys,
    )


def _roof_label(depth: float, width: float, eave: float, rise: float, texture: np.ndarray) -> Mesh:
    """Return ``texture`` lying on the middle of the front roof slope, upright for the street."""
    run = depth / 2 + 0.3  # the slope runs from the eave (x = run) up to the ridge (x = 0)
    normal = np.array([rise, 0.0, run]) / np.hypot(rise, run)
    half = min(width * 0.3, 1.8)
    low, high = (
        np.array([run * (1 - t), 0.0, eave + rise * t]) + 0.03 * normal for t in (0.15, 0.8)
    )
    side = np.array([0.0, half, 0.0])
    corners = [high - side, high + side, low + side, low - side]  # seen from the street (+x)
    return quad([(float(c[0]), float(c[1]), float(c[2])) for c in corners], texture)


def add_shop(
    kit: WorldKit,
    rng: np.random.Generator,
    center: tuple[float, float],
    yaw: float,
    width: float,
    depth: float,
    name: str,
    kind: str,
    color: str | None = None,
) -> SceneObject:
    """Add a shop (closed, 1-3 storeys) with a shop window, awning and a sign naming it.

    The sign is its own object (semantic ``sign``, attribute ``text``) naming the shop.
    """
    color = color or pick(rng, SHOP_COLORS)
    height = STOREY * int(rng.integers(1, 4)) + 1.4  # ground floors are tall
    rgb = PALETTE[color]
    walls = slab(-depth / 2, -width / 2, depth / 2, width / 2, 0.0, height, rgb)
    front = depth / 2 + PROUD
    door = facing_quad((front, width / 2 - 1.0, 1.1), 0.0, 1.1, 2.2, color=shade(GLASS, 0.7))
    display = _window(front, -0.6, 1.5, 0.0, width - 3.6, 1.9)
    upper = [
        q
        for z in np.arange(STOREY + 2.6, height - 1.0, STOREY)
        for y in np.arange(-width / 2 + 1.2, width / 2 - 0.6, 2.0)
        for q in _window(front, float(y), float(z), 0.0, 1.0, 1.3)
    ]
    awning_colors = (PALETTE[pick(rng, ("red", "green", "blue", "orange"))], PALETTE["white"])
    awning = _awning(front, width, stripes_texture(awning_colors, 64, 16, 8).transpose(1, 0, 2))
    solid = merge([walls, door, *display, *upper])
    shop = kit.add(
        "shop",
        [m.moved((*center, 0.0), yaw) for m in (solid, awning)],
        shop_name=name,
        kind=kind,
        color=color,
    )
    _add_sign(kit, rng, center, yaw, front, width, name, shop.name)
    return shop


def _awning(front: float, width: float, texture: np.ndarray) -> Mesh:
    """Return a striped awning sloping out 0.8 m from the wall, its low edge at 2.6 m."""
    half = width / 2 - 0.2
    return quad(
        [
            (front, -half, 3.0),
            (front, half, 3.0),
            (front + 0.8, half, 2.6),
            (front + 0.8, -half, 2.6),
        ],
        texture,
    )


def _add_sign(
    kit: WorldKit,
    rng: np.random.Generator,
    center: tuple[float, float],
    yaw: float,
    front: float,
    width: float,
    name: str,
    shop: str,
) -> SceneObject:
    """Add the shop's name board above its awning."""
    paper_name = pick(rng, ("white", "cream", "yellow", "navy", "dark green", "black"))
    dark = paper_name in ("navy", "dark green", "black")
    ink = PALETTE["white"] if dark else PALETTE["black"]
    text = name.upper()
    board_w = min(width - 1.0, 6.0)
    texture = text_texture(text, 256, int(256 * 0.7 / board_w), ink=ink, paper=PALETTE[paper_name])
    board = facing_quad((front, 0.0, 3.5), 0.0, board_w, 0.7, texture).moved((*center, 0.0), yaw)
    return kit.add("sign", board, text=text, shop=shop, color=paper_name)


def add_ground(
    kit: WorldKit,
    bounds: tuple[float, float, float, float],
    areas: Sequence[Area],
    fill: str = "grass",
    thickness: float = 0.3,
) -> list[SceneObject]:
    """Tile ``bounds`` with slabs whose tops are at z = 0, one object per semantic class.

    Where areas overlap the earlier one wins; what no area covers is ``fill``. The pieces
    never overlap, so coplanar tops cannot z-fight.
    """
    xmin, ymin, xmax, ymax = bounds
    ys = sorted({ymin, ymax, *(min(max(v, ymin), ymax) for a in areas for v in (a[2], a[4]))})
    pieces: dict[str, list[Mesh]] = {}
    for y0, y1 in zip(ys, ys[1:], strict=False):
        row = [a for a in areas if a[2] < y1 and a[4] > y0]
        for kind, x0, x1 in _row_runs(row, (y0 + y1) / 2, xmin, xmax, fill):
            color = GROUND_COLORS.get(kind, GROUND_COLORS["ground"])
            pieces.setdefault(kind, []).append(slab(x0, y0, x1, y1, -thickness, 0.0, color))
    return [kit.add(kind, _snap_top(merge(meshes))) for kind, meshes in pieces.items()]


def _snap_top(mesh: Mesh) -> Mesh:
    """Return ``mesh`` with tops rounded to exactly z = 0 (box() leaves float dust there)."""
    verts = mesh.vertices.copy()
    verts[np.abs(verts[:, 2]) < 1e-4, 2] = 0.0
    return Mesh(verts, mesh.faces, mesh.colors)


def _row_runs(
    row: Sequence[Area], y: float, xmin: float, xmax: float, fill: str
) -> list[tuple[str, float, float]]:
    """Return the ``(kind, x0, x1)`` runs of one row of the ground, neighbours merged."""
    xs = sorted({xmin, xmax, *(min(max(v, xmin), xmax) for a in row for v in (a[1], a[3]))})
    runs: list[tuple[str, float, float]] = []
    for x0, x1 in zip(xs, xs[1:], strict=False):
        mid = (x0 + x1) / 2
        kind = next((a[0] for a in row if a[1] <= mid <= a[3] and a[2] <= y <= a[4]), fill)
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1], x1)
        else:
            runs.append((kind, x0, x1))
    return runs


def dashed_line(
    start: tuple[float, float],
    end: tuple[float, float],
    keep_clear: Sequence[tuple[float, float, float, float]] = (),
    dash: float = 3.0,
    gap: float = 3.0,
) -> list[Mesh]:
    """Return white 15 cm road dashes 1 cm above z = 0 from ``start`` to ``end``.

    Dashes whose middle falls in a ``keep_clear`` rectangle (a crossing) are left out.
    """
    (x0, y0), (x1, y1) = start, end
    length = float(np.hypot(x1 - x0, y1 - y0))
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    nx, ny = -dy * 0.075, dx * 0.075
    dashes = []
    for t in np.arange(gap / 2, length - dash, dash + gap):
        mx, my = x0 + dx * (t + dash / 2), y0 + dy * (t + dash / 2)
        if any(a <= mx <= c and b <= my <= d for a, b, c, d in keep_clear):
            continue
        ax, ay, bx, by = x0 + dx * t, y0 + dy * t, x0 + dx * (t + dash), y0 + dy * (t + dash)
        dashes.append(
            quad(
                [
                    (ax + nx, ay + ny, 0.01),
                    (bx + nx, by + ny, 0.01),
                    (bx - nx, by - ny, 0.01),
                    (ax - nx, ay - ny, 0.01),
                ],
                color=(236, 236, 230),
            )
        )
    return dashes
