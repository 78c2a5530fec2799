"""What an aerial mission is about: a target in the scene, how to name it, what to report.

Each maker reads a built flight world and returns a ``Task``: the target object, a phrase that
names it uniquely (``the red car parked on Maple Street`` only when exactly one red car is
parked there), the instruction phrasings of its mission type, the expected answer taken from
the scene's own attributes, and how high above the target the goal should sit so that what
must be read can be read at 256² pixels (a plate from ~5 m, a roof number or a colour from
20–30 m). A maker that finds nothing it can name uniquely raises ``Rejected``; another
maker or another world is then tried.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from shapely.geometry import LineString, Point

from sortie.generation.rejected import Rejected
from sortie.missions.aerial.spec import AnswerKind
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.sim.scene import Scene, SceneObject

Vec3 = tuple[float, float, float]
COMPASS = ("east", "north-east", "north", "north-west", "west", "south-west", "south", "south-east")
PLATE_HEIGHT = 3.5
"""Metres above a car's roof for reading its plate: the camera is then ~5 m away."""
CLOSE_HEIGHT = 5.0
"""For small stencils and plates (crates, pylons) and for task actions."""
COLOUR_HEIGHT = 15.0
"""For colours, kinds and roof numbers: the camera is ~21 m away."""
GROUP_SPAN = 40.0
"""Counted objects must lie within this many metres of each other to share one view."""
WATER_NAMES = {
    "neighborhood": "the pond in the park",
    "city": "the fountain pool in the plaza",
    "forest": "the river",
    "savanna": "the waterhole",
    "airsim_nh": "the pond",
}
"""How instructions name each flight world's water (its one merged ``water`` object)."""
CRATE_SITES = {
    "neighborhood": "the depot",
    "city": "the construction site",
    "forest": "the ranger station",
    "savanna": "the ranger camp",
}
"""Where each world keeps its supply crates."""


@dataclass(frozen=True, slots=True)
class Task:
    """One mission's subject: the target, how it is named and what must be reported.

    Attributes:
        target: the scene object the goal pose looks at.
        subject: a phrase naming the target uniquely in its world.
        phrasings: instruction templates of the task's own type, with ``{s}`` for the subject.
        question: what to report, as a phrase (``its licence plate``); empty if nothing.
        answer: the expected report, from the scene's attributes.
        kind: how the judge compares the report with the answer.
        height: metres above the target's top for the goal (see ``viewing_pose``).
        task_action: what a manipulation must do at the goal.
        counted: objects that must all show in the goal view (counting questions).
        look_at: a point to centre instead of the target's top centre (water).
    """

    target: SceneObject
    subject: str
    phrasings: tuple[str, ...]
    question: str = ""
    answer: str | None = None
    kind: AnswerKind = AnswerKind.TEXT
    height: float = COLOUR_HEIGHT
    task_action: TaskActionKind | None = None
    counted: tuple[SceneObject, ...] = ()
    look_at: Vec3 | None = None


Maker = Callable[[Scene, str, np.random.Generator], Task]
"""Returns a task in a scene (of builder ``world``), or raises Rejected."""


# --- naming -------------------------------------------------------------------------------
def pick(rng: np.random.Generator, items: Sequence[SceneObject], why: str) -> SceneObject:
    """Return one of ``items`` at random, or reject with ``why`` when there are none."""
    if not items:
        raise Rejected(why)
    return items[int(rng.integers(len(items)))]


def _at(place: str) -> str:
    """Return ``place`` with the preposition a parked car takes (on a street, in a car park)."""
    street = place.split()[-1] in ("Street", "Avenue", "Drive", "Lane", "Road")
    return f"on {place}" if street else f"in the {place}" if "park" in place else f"at the {place}"


def car_subject(car: SceneObject, cars: Sequence[SceneObject], with_colour: bool) -> str:
    """Return a unique name of ``car``: by driveway, or by colour and street; reject if none."""
    place, colour = str(car.attributes["place"]), car.attributes["color"]
    if place.startswith("driveway of "):
        return f"the car in the {place}"
    here = [c for c in cars if c.attributes["place"] == place]
    if len(here) == 1:
        return f"the car parked {_at(place)}"
    same = [c for c in here if c.attributes["color"] == colour]
    if with_colour and len(same) == 1:
        return f"the {colour} car parked {_at(place)}"
    raise Rejected("no unique description of the car")


def house_subject(house: SceneObject) -> str:
    """Return the address of ``house``: ``14 Maple Street``."""
    return f"{house.attributes['number']} {house.attributes['street']}"


def unique_house(houses: Sequence[SceneObject], house: SceneObject) -> str:
    """Return a description of ``house`` on its street without its number; reject if none."""
    street = house.attributes["street"]
    mates = [h for h in houses if h.attributes["street"] == street]
    for keys in (("color",), ("roof_color",), ("color", "roof_color")):
        same = [h for h in mates if all(h.attributes[k] == house.attributes[k] for k in keys)]
        if len(same) == 1:
            looks = {k: house.attributes[k] for k in keys}
            walls = f"{looks['color']} " if "color" in looks else ""
            roof = f" with a {looks['roof_color']} roof" if "roof_color" in looks else ""
            return f"the {walls}house{roof} on {street}"
    raise Rejected("no unique description of the house")


def compass(point: Sequence[float] | np.ndarray, scene: Scene) -> str:
    """Return the compass word of ``point`` seen from the world's centre."""
    x0, y0, x1, y1 = scene.bounds
    angle = math.degrees(math.atan2(point[1] - (y0 + y1) / 2, point[0] - (x0 + x1) / 2))
    return COMPASS[round(angle / 45.0) % 8]


def span(objects: Sequence[SceneObject]) -> float:
    """Return the largest horizontal distance between any two of ``objects``' centres."""
    xy = np.array([o.center()[:2] for o in objects], np.float64)
    return float(np.max(np.linalg.norm(xy[:, None] - xy[None], axis=2))) if len(xy) > 1 else 0.0


def centre_of(objects: Sequence[SceneObject]) -> SceneObject:
    """Return the member nearest the group's middle (the target of a counting view)."""
    middle = np.mean([o.center()[:2] for o in objects], axis=0)
    return min(objects, key=lambda o: float(np.hypot(*(o.center()[:2] - middle))))


def count_task(
    scene: Scene,
    group: Sequence[SceneObject],
    subject: str,
    question: str,
    phrasings: tuple[str, ...],
) -> Task:
    """Return a counting task over ``group``, which must fit in one view."""
    if span(group) > GROUP_SPAN:
        raise Rejected(f"{subject}: spread over more than {GROUP_SPAN:g} m")
    height = max(COLOUR_HEIGHT, span(group) * 0.6)
    return Task(
        centre_of(group),
        subject,
        phrasings,
        question,
        str(len(group)),
        AnswerKind.NUMBER,
        height,
        counted=tuple(group),
    )


# --- reporting ----------------------------------------------------------------------------
def car_plate(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the licence plate of a car named by its driveway or its colour and street."""
    cars = scene.of_class("car")
    car = pick(rng, cars, "no car in the world")
    return Task(
        car,
        car_subject(car, cars, with_colour=True),
        (
            "Report the licence plate of {s}.",
            "What is the licence plate of {s}?",
            "Find {s} and read its number plate.",
        ),
        "its licence plate",
        str(car.attributes["plate"]),
        AnswerKind.PLATE,
        PLATE_HEIGHT,
    )


def car_colour(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the colour of a car named by where it is parked."""
    cars = scene.of_class("car")
    car = pick(rng, cars, "no car in the world")
    return Task(
        car,
        car_subject(car, cars, with_colour=False),
        ("What colour is {s}?", "Report the colour of {s}.", "Find {s} and tell me its colour."),
        "its colour",
        str(car.attributes["color"]),
        AnswerKind.COLOUR,
    )


def roof_colour(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the roof colour of a house named by its address."""
    # Only houses on a named street: elsewhere the address is not painted where a drone sees it.
    houses = [h for h in scene.of_class("house") if _street_route(scene, h) is not None]
    house = pick(rng, houses, "no house on a street")
    return Task(
        house,
        house_subject(house),
        (
            "What colour is the roof of {s}?",
            "Report the roof colour of {s}.",
            "Fly over {s} and tell me what colour its roof is.",
        ),
        "the colour of its roof",
        str(house.attributes["roof_color"]),
        AnswerKind.COLOUR,
    )


def house_number(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the number of a house described by its colours and street."""
    houses = [h for h in scene.of_class("house") if _street_route(scene, h) is not None]
    house = pick(rng, houses, "no house on a street")
    return Task(
        house,
        unique_house(houses, house),
        (
            "What is the house number of {s}?",
            "Report the number of {s}.",
            "Find {s} and read its house number.",
        ),
        "its house number",
        str(house.attributes["number"]),
        AnswerKind.NUMBER,
    )


def herd_count(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report how many animals a herd has, the herd named by species and compass side."""
    herds: dict[str, list[SceneObject]] = defaultdict(list)
    for animal in scene.of_class("animal"):
        herds[str(animal.attributes["herd"])].append(animal)
    if not herds:
        raise Rejected("no animal in the world")
    herd = herds[sorted(herds)[int(rng.integers(len(herds)))]]
    species = str(herd[0].attributes["species"])
    sides = Counter(
        compass(np.mean([a.center() for a in h], axis=0), scene)
        for h in herds.values()
        if h[0].attributes["species"] == species
    )
    side = compass(np.mean([a.center() for a in herd], axis=0), scene)
    if sides[side] > 1:
        raise Rejected(f"two {species} herds in the {side}")
    subject = f"the {species} herd in the {side} of the area"
    return count_task(
        scene,
        herd,
        subject,
        f"how many {plural(species)} it has",
        (
            f"How many {plural(species)} are in {{s}}?",
            "Count the animals in {s} and report the number.",
            f"Report how many {plural(species)} make up {{s}}.",
        ),
    )


def plural(species: str) -> str:
    """Return the plural of an animal's species name (deer stay deer)."""
    return species if species == "deer" else f"{species}s"


def crate_count(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report how many supply crates stand at the world's crate site."""
    crates = scene.of_class("crate")
    if not crates or world not in CRATE_SITES:
        raise Rejected("no supply crates in the world")
    site = CRATE_SITES[world]
    return count_task(
        scene,
        crates,
        f"the supply crates at {site[4:]}",
        "how many supply crates there are",
        (
            f"How many supply crates are there at {site}?",
            "Count {s} and report the number.",
            f"Report the number of supply crates stacked at {site}.",
        ),
    )


def parked_count(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report how many cars are parked at a car park or camp (not a street: too long)."""
    places = Counter(str(c.attributes["place"]) for c in scene.of_class("car"))
    lots = sorted(
        p
        for p in places
        if not p.startswith("driveway")
        and p.split()[-1] not in ("Street", "Avenue", "Drive", "Lane", "Road")
    )
    if not lots:
        raise Rejected("no car park in the world")
    place = lots[int(rng.integers(len(lots)))]
    cars = [c for c in scene.of_class("car") if c.attributes["place"] == place]
    at = _at(place)
    return count_task(
        scene,
        cars,
        f"the {place}",
        "how many cars are parked there",
        (
            f"How many cars are parked {at}?",
            f"Count the cars parked {at} and report the number.",
            f"Report how many cars stand {at}.",
        ),
    )


def crate_text(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Read the stencil of a crate named by its colour (a colour only one crate has)."""
    crates = scene.of_class("crate")
    crate = pick(rng, crates, "no crate in the world")
    colour = crate.attributes["color"]
    if sum(c.attributes["color"] == colour for c in crates) > 1:
        raise Rejected(f"two {colour} crates")
    return Task(
        crate,
        f"the {colour} supply crate",
        ("What is stencilled on {s}?", "Read the label on {s}.", "Report the word painted on {s}."),
        "the word stencilled on it",
        str(crate.attributes["text"]),
        AnswerKind.TEXT,
        CLOSE_HEIGHT,
    )


def tank_text(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Read the name painted on the world's only water tower."""
    tanks = scene.of_class("water_tank")
    if len(tanks) != 1:
        raise Rejected("not exactly one water tower")
    return Task(
        tanks[0],
        f"the {tanks[0].attributes['color']} water tower",
        ("What is written on {s}?", "Read the name painted on {s}.", "Report the text on {s}."),
        "the text painted on it",
        str(tanks[0].attributes["text"]),
        AnswerKind.TEXT,
        8.0,
    )


def sign_text(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Read the rooftop sign of a building named by its (roof) number."""
    signs = [s for s in scene.of_class("sign") if str(s.attributes["building"]) in scene]
    sign = pick(rng, signs, "no rooftop sign in the world")
    building = scene[str(sign.attributes["building"])]
    number = building.attributes["number"]
    if sum(b.attributes["number"] == number for b in scene.of_class("building")) > 1:
        raise Rejected(f"two buildings numbered {number}")
    return Task(
        sign,
        f"the sign on the roof of building number {number}",
        ("Read {s}.", "What does {s} say?", "Report the name on {s}."),
        "what it says",
        str(sign.attributes["text"]),
        AnswerKind.TEXT,
    )


def building_number(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the roof number of the building that carries a given sign."""
    signs = scene.of_class("sign")
    sign = pick(rng, signs, "no rooftop sign in the world")
    text = sign.attributes["text"]
    if sum(s.attributes["text"] == text for s in signs) > 1:
        raise Rejected(f"two {text} signs")
    building = scene[str(sign.attributes["building"])]
    return Task(
        building,
        f"the building with the {text} sign on its roof",
        (
            "What number is painted on the roof of {s}?",
            "Report the number of {s}.",
            "Find {s} and read its roof number.",
        ),
        "its roof number",
        str(building.attributes["number"]),
        AnswerKind.NUMBER,
    )


def statue_kind(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report what a statue, named by where it stands, depicts."""
    statues = scene.of_class("statue")
    statue = pick(rng, statues, "no statue in the world")
    side = compass(statue.center(), scene)
    if sum(compass(s.center(), scene) == side for s in statues) > 1:
        raise Rejected(f"two statues in the {side}")
    return Task(
        statue,
        f"the statue in the {side} of the area",
        (
            "What does {s} depict: a figure, a horse or an obelisk?",
            "Report the kind of {s} (figure, horse or obelisk).",
            "Fly to {s} and tell me whether it is a figure, a horse or an obelisk.",
        ),
        "what it depicts",
        str(statue.attributes["kind"]),
        AnswerKind.LABEL,
        10.0,
    )


def species_near(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Report the species of the animal nearest the landing pad or the water tower."""
    animals = scene.of_class("animal")
    if not animals:
        raise Rejected("no animal in the world")
    landmarks = [
        (o, n)
        for o, n in (
            (scene.of_class("landing_pad"), "the landing pad"),
            (scene.of_class("water_tank"), "the water tower"),
        )
        if o
    ]
    mark, name = landmarks[int(rng.integers(len(landmarks)))]
    where = mark[0].center()[:2]
    ranked = sorted(animals, key=lambda a: float(np.hypot(*(a.center()[:2] - where))))
    if len(ranked) > 1 and _gap(ranked[0], ranked[1], where) < 5.0:
        raise Rejected(f"two animals about as near {name}")
    return Task(
        ranked[0],
        f"the animal nearest {name}",
        (
            "What kind of animal is {s}?",
            "Report the species of {s}.",
            "Find {s} and tell me what species it is.",
        ),
        "its species",
        str(ranked[0].attributes["species"]),
        AnswerKind.LABEL,
    )


def _gap(a: SceneObject, b: SceneObject, where: np.ndarray) -> float:
    return float(np.hypot(*(b.center()[:2] - where)) - np.hypot(*(a.center()[:2] - where)))


REPORTING: dict[str, Maker] = {
    "plate": car_plate,
    "car_colour": car_colour,
    "roof_colour": roof_colour,
    "house_number": house_number,
    "herd_count": herd_count,
    "crate_count": crate_count,
    "parked_count": parked_count,
    "crate_text": crate_text,
    "tank_text": tank_text,
    "sign_text": sign_text,
    "building_number": building_number,
    "statue_kind": statue_kind,
    "species": species_near,
}


# --- inspection ---------------------------------------------------------------------------
INSPECT = (
    "Inspect {s}.",
    "Fly to {s} and hold a position where it is centred in view.",
    "Position the drone for a close look at {s}.",
)


def damaged_panels(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Inspect a damaged solar panel row, named by its site (and compass side if needed)."""
    rows = [p for p in scene.of_class("solar_panel") if p.attributes["condition"] == "damaged"]
    row = pick(rng, rows, "no damaged solar panel row")
    site = str(row.attributes["site"])
    mates = [r for r in rows if r.attributes["site"] == site]
    where = _site_name(scene, site)
    subject = f"the damaged solar panel row {where}"
    if len(mates) > 1:
        ys = sorted(float(r.center()[1]) for r in mates)
        if abs(ys[0] - ys[-1]) < 3.0:
            raise Rejected("damaged rows side by side")
        side = "northernmost" if float(row.center()[1]) == ys[-1] else "southernmost"
        if side == "southernmost" and float(row.center()[1]) != ys[0]:
            raise Rejected("a damaged row between others")
        subject = f"the {side} damaged solar panel row {where}"
    return Task(
        row,
        subject,
        INSPECT,
        "how many panels it has",
        str(row.attributes["panels"]),
        AnswerKind.NUMBER,
        10.0,
    )


def _site_name(scene: Scene, site: str) -> str:
    """Return where a solar site is, in words: ``in the solar farm``, ``on the roof of ...``."""
    if site.startswith("roof of ") and site[8:] in scene:
        return f"on the roof of building number {scene[site[8:]].attributes['number']}"
    return f"at the {site}"


def pylon(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Inspect a numbered pylon of the power line."""
    pylons = [p for p in scene.of_class("pylon") if p.attributes.get("number")]
    tower = pick(rng, pylons, "no pylon in the world")
    return Task(
        tower,
        f"pylon {tower.attributes['number']} of the {tower.attributes['line']}",
        INSPECT,
        "the number on its plate",
        str(tower.attributes["number"]),
        AnswerKind.TEXT,
        8.0,
    )


def water_tower(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Inspect the water tower (the world's only one)."""
    task = tank_text(scene, world, rng)
    return Task(
        task.target, task.subject, INSPECT, task.question, task.answer, task.kind, task.height
    )


def house_roof(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Inspect the roof of a house named by its address."""
    task = roof_colour(scene, world, rng)
    return Task(
        task.target, f"the roof of {task.subject}", INSPECT, "its colour", task.answer, task.kind
    )


def statue(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Inspect a statue named by its plaque."""
    statues = scene.of_class("statue")
    figure = pick(rng, statues, "no statue in the world")
    return Task(
        figure,
        f"the statue '{figure.attributes['text']}'",
        INSPECT,
        "its colour",
        str(figure.attributes["color"]),
        AnswerKind.COLOUR,
        10.0,
    )


INSPECTION: dict[str, Maker] = {
    "damaged_panels": damaged_panels,
    "pylon": pylon,
    "water_tower": water_tower,
    "house_roof": house_roof,
    "statue": statue,
}


# --- manipulation -------------------------------------------------------------------------
def land(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Land on the landing pad."""
    pads = scene.of_class("landing_pad")
    pad = pick(rng, pads, "no landing pad in the world")
    where = "on the hospital roof" if float(pad.bounds()[1][2]) > 3.0 else ""
    subject = (
        " ".join(("the landing pad", where)).strip()
        if len(pads) == 1
        else f"landing pad number {pad.attributes['number']}"
    )
    return Task(
        pad,
        subject,
        ("Land on {s}.", "Fly to {s} and land there.", "Bring the drone down on {s}."),
        task_action=TaskActionKind.LAND,
        height=CLOSE_HEIGHT,
    )


def drop_by_crate(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Drop the payload by the crate with a given stencil (plus its colour if needed)."""
    crates = scene.of_class("crate")
    crate = pick(rng, crates, "no crate in the world")
    text, colour = crate.attributes["text"], crate.attributes["color"]
    same = [c for c in crates if c.attributes["text"] == text]
    subject = f"the {text} crate"
    if len(same) > 1:
        if sum(c.attributes["color"] == colour for c in same) > 1:
            raise Rejected(f"two {colour} {text} crates")
        subject = f"the {colour} {text} crate"
    return Task(
        crate,
        subject,
        (
            "Drop the payload by {s}.",
            "Deliver the payload: release it next to {s}.",
            "Fly to {s} and drop the payload there.",
        ),
        task_action=TaskActionKind.DROP_PAYLOAD,
        height=CLOSE_HEIGHT,
    )


def water_sample(scene: Scene, world: str, rng: np.random.Generator) -> Task:
    """Collect a water sample over a random point of the world's water."""
    waters = scene.of_class("water")
    if not waters or world not in WATER_NAMES:
        raise Rejected("no water in the world")
    mesh = waters[0].parts[int(rng.integers(len(waters[0].parts)))]
    corners = mesh.vertices[mesh.faces[int(rng.integers(len(mesh.faces)))]]
    x, y, z = (float(v) for v in corners.mean(axis=0))
    return Task(
        waters[0],
        WATER_NAMES[world],
        (
            "Collect a water sample at {s}.",
            "Fly to {s} and take a water sample.",
            "Take a sample of the water at {s}.",
        ),
        task_action=TaskActionKind.COLLECT_SAMPLE,
        height=CLOSE_HEIGHT,
        look_at=(x, y, z),
    )


MANIPULATION: dict[str, Maker] = {
    "land": land,
    "drop_payload": drop_by_crate,
    "collect_sample": water_sample,
}
NEEDS = {
    "plate": "car",
    "car_colour": "car",
    "roof_colour": "house",
    "house_number": "house",
    "herd_count": "animal",
    "crate_count": "crate",
    "parked_count": "car",
    "crate_text": "crate",
    "tank_text": "water_tank",
    "sign_text": "sign",
    "building_number": "sign",
    "statue_kind": "statue",
    "species": "animal",
    "damaged_panels": "solar_panel",
    "pylon": "pylon",
    "water_tower": "water_tank",
    "house_roof": "house",
    "statue": "statue",
    "land": "landing_pad",
    "drop_payload": "crate",
    "collect_sample": "water",
}
"""The class of object each template is about: a world without one cannot have that task."""


# --- streets and routes ---------------------------------------------------------------------
def _street_route(scene: Scene, house: SceneObject) -> str | None:
    """Return the route along the house's street (its front faces it), if the world has one."""
    word = str(house.attributes["street"]).split()[0].lower()
    return next((name for name in scene.routes if name.startswith(f"road_{word}")), None)


def facing_street(scene: Scene, obj: SceneObject) -> float | None:
    """Return the camera heading that looks at ``obj`` from its street (house numbers face it)."""
    route = _street_route(scene, obj) if obj.semantic == "house" else None
    if route is None:
        return None
    line = LineString(scene.routes[route])
    centre = Point(*obj.center()[:2])
    near = line.interpolate(line.project(centre))
    return math.degrees(math.atan2(centre.y - near.y, centre.x - near.x))
