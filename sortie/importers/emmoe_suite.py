"""EMMOE's tasks as a household suite: names checked, each task placed on a seeded apartment.

EMMOE's scenes are Habitat's (ReplicaCAD), which sortie cannot load, so each task is put on
one of sortie's own seeded ``apartment`` worlds instead. Every canonical name a task uses
becomes a sortie kind (``013_apple`` -> apple, ``kitchen_counter`` -> counter, ``living_room``
-> the room), with the role its use asks for (picked: an item; a put's place: a receptacle or
container; opened or closed: a container; only gone to: what the kind is). Apartment seeds
are tried in a fixed order drawn from the task's number until one holds every named kind in
its role; each name gets its own scene thing, and the task (keypaths, expert, goals, the
synonym table as the objects' names) is replayed by the oracle with perfect skills, as
generated tasks are. A task with a name sortie has no kind for, a kind no apartment has
(stairs), or no fitting and playable apartment among the seeds tried is skipped with its
reason; the suite header lists the skipped tasks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec, WorldSpec, check_name
from sortie.core.errors import ConfigError, did_you_mean
from sortie.core.pose import Pose
from sortie.core.records_io import SuiteHeader
from sortie.generation.household import LONG, MAX_ROUNDS, WORLD, HouseholdValidator
from sortie.generation.rejected import Rejected
from sortie.importers.emmoe import (
    EmmoeStep,
    EmmoeTask,
    NameTable,
    read_tasks,
)
from sortie.importers.problems import Problems
from sortie.missions.household.house import House
from sortie.missions.household.names import KIND_SYNONYMS
from sortie.missions.household.records import (
    GoalCondition,
    HouseholdTask,
    KeyStep,
    ObjectRole,
    Relation,
    TaskAttribute,
    TaskObject,
    Verb,
    normalise,
)
from sortie.missions.household.skills import Setting, best_skill, offered
from sortie.sim.assets.household import CONTAINERS, FURNITURE, ITEMS
from sortie.sim.household import HouseLayout, house_layout
from sortie.sim.worlds import build_world
from sortie.sim.worlds.apartment import FURNISHING

ATTRIBUTE_MODES = ("derived", "emmoe-100")
BASE_SEED = 100
"""Fixed base of the apartment seeds: task n tries ``default_rng([BASE_SEED, n, attempt])``."""
ATTEMPTS = 256
"""Apartments tried per task before it is skipped (about 0.1 s each). The expert's plan must
play as written on the apartment (the world check), so rare mixes of kinds and places need
more than the first few dozen: EMMOE-100's task 5 fits the 150th or so."""
KIND_ROLES: dict[str, ObjectRole] = {
    **{kind: ObjectRole.ITEM for kind in ITEMS},
    **{k: ObjectRole.CONTAINER if k in CONTAINERS else ObjectRole.RECEPTACLE for k in FURNITURE},
    **{room: ObjectRole.ROOM for room in FURNISHING},
}
"""Every kind an apartment may hold, and its role."""
KIND_ALIASES = {
    "kitchen_counter": "counter",
    "tvstand": "tv_stand",
    "refrigerator": "fridge",
    "remote-control": "remote",
    "cups": "cup",
    "skillet": "pan",
    "cloth": "towel",
}
"""Habitat's names, once stripped, that are neither a sortie kind nor one of its synonyms."""
NOT_IN_APARTMENTS = {
    "stairs": "sortie's apartments have one floor and no stairs",
    "second_floor": "sortie's apartments have one floor",
    "door": "sortie's doors belong to their containers; a doorway is not a thing to go to",
}
"""Habitat's names for things the apartment family never has, and why."""
EMMOE_100: dict[TaskAttribute, frozenset[int]] = {
    # EMMOE-100's task ids per attribute, as EMMOE's metric notebook lists them
    # (scripts/metrics/plw_sr.ipynb, task_list: typical, long-horizon, open-ended, logical,
    # human style); "typical" is sortie's short.
    TaskAttribute.SHORT: frozenset({2, 7, 9, 19, 24, 27, 28, 31, 46, 47, 49, 60, 61, 70, 91, 92}),
    TaskAttribute.LONG: frozenset(range(1, 101))
    - frozenset({2, 7, 9, 19, 24, 27, 28, 31, 46, 47, 49, 60, 61, 70, 91, 92}),
    TaskAttribute.OPEN_ENDED: frozenset({20, 22, 44, 69, 76, 77, 96, 97, 98}),
    TaskAttribute.LOGICAL: frozenset(
        {1, 2, 3, 4, 12, 14, 15, 17, 18, 19, 20, 23, 26, 27, 34, 37, 38, 40, 42, 43, 44, 45}
        | {52, 55, 56, 57, 59, 62, 64, 68, 69, 71, 72, 73, 75, 76, 77, 80, 81, 83, 84, 85}
        | {86, 87, 88, 94, 96, 98, 100}
    ),
    TaskAttribute.HUMAN_STYLE: frozenset(
        {1, 2, 3, 4, 5, 6, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 26, 27, 29, 33}
        | {34, 36, 37, 38, 40, 41, 42, 43, 44, 45, 49, 51, 52, 53, 54, 55, 56, 57, 59, 61, 62}
        | {63, 64, 66, 68, 69, 71, 72, 73, 75, 76, 77, 79, 80, 82, 83, 84, 85, 86, 87, 88, 91}
        | {94, 96, 97, 98, 100}
    ),
}
"""EMMOE-100's attribute lists (``--attributes emmoe-100``); the long list is every id not
typical, which is what the notebook's long-horizon list holds."""


class Refused(Exception):
    """A well-formed task that cannot be put on an apartment; the message says why."""


@dataclass(frozen=True, slots=True)
class Named:
    """A canonical name of a task and the sortie kind and role it is placed as."""

    canonical: str
    kind: str
    role: ObjectRole


# --- importing -------------------------------------------------------------------------------
def import_emmoe(
    paths: Sequence[Path], suite: str, attributes: str = "derived"
) -> tuple[SuiteHeader, list[EpisodeSpec]]:
    """Return the suite header and the tasks of EMMOE task folders, placed on apartments.

    Args:
        paths: folders (EMMOE-100's root, its ``data`` folder, a split folder or one task) and
            at most one file, the synonym table (default: ``name_dict.txt`` in a given folder
            or a few above it).
        suite: the suite's name (episode ids are ``<suite>/<task number in 4 digits>``).
        attributes: ``derived`` (from the keypaths and the expert's length) or ``emmoe-100``
            (EMMOE-100's published lists of task ids per attribute).

    Raises:
        ConfigError: every problem of every file, as ``file:line: field: problem``; a task
            that fits no apartment is not a problem: it is skipped and listed in the header's
            ``settings.skipped`` with its reason.
    """
    if attributes not in ATTRIBUTE_MODES:
        raise ConfigError(
            f"import emmoe: attributes {attributes!r} is not one of: derived, emmoe-100"
        )
    problems = Problems("emmoe")
    check_name(suite, "suite name")
    table_path, table, tasks = read_tasks(paths, problems)
    problems.raise_if_any()
    placed, skipped = place_tasks(tasks, table, suite, attributes)
    header = SuiteHeader(
        suite=suite,
        generator="sortie.importers.emmoe",
        generator_version="1",
        settings={
            "backend": "embedded",
            "source": "emmoe",
            "world": WORLD,
            "name_dict": table_path.name,
            "attributes": attributes,
            "tasks": {spec.episode_id: task.split.value for spec, task in placed},
            "skipped": [{"task": t.id, "split": t.split.value, "reason": r} for t, r in skipped],
        },
    )
    return header, [spec for spec, _ in placed]


# --- kinds and roles -------------------------------------------------------------------------
def sortie_kind(canonical: str) -> str:
    """Return the sortie kind of a Habitat canonical name (``013_apple`` -> ``apple``).

    Raises:
        Refused: the name has no sortie kind, or one the apartment family never has.
    """
    # Habitat's YCB names carry a number (013_, 063-a_), ReplicaCAD's a prefix and a variant.
    stripped = re.sub(r"^\d{3}(-[a-z])?_", "", canonical.lower()).removeprefix("frl_apartment_")
    stripped = re.sub(r"_\d+$", "", stripped)  # a variant (_01) or a scene number (_0)
    if stripped in NOT_IN_APARTMENTS:
        raise Refused(f"{canonical}: {NOT_IN_APARTMENTS[stripped]}")
    spaced = stripped.replace("_", " ").replace("-", " ")
    kind = KIND_ALIASES.get(stripped) or KIND_SYNONYMS.get(spaced) or stripped
    last = re.split(r"[_-]", stripped)[-1]  # master_chef_can is a can, wall_cabinet a cabinet
    kind = kind if kind in KIND_ROLES else last
    if kind not in KIND_ROLES:
        hint = did_you_mean(stripped, KIND_ROLES)
        raise Refused(f"{canonical}: no sortie kind for {stripped!r}.{hint}")
    return kind


_USES = {
    "picked": frozenset({ObjectRole.ITEM}),
    "a put's place": frozenset({ObjectRole.RECEPTACLE, ObjectRole.CONTAINER}),
    "opened or closed": frozenset({ObjectRole.CONTAINER}),
}


def _use(step: EmmoeStep) -> list[tuple[str, str]]:
    """Return each name of a (canonical) step with what the step does to it."""
    if step.action in (Verb.PICK, Verb.PUT):
        return [(step.target or "", "picked")] + [(step.place or "", "a put's place")] * bool(
            step.place
        )
    if step.action in (Verb.OPEN, Verb.CLOSE):
        return [(step.target or "", "opened or closed")]
    return []


def named_things(task: EmmoeTask) -> dict[str, Named]:
    """Return each canonical name of a (canonical) task with its kind and role, in use order.

    Raises:
        Refused: a name has no kind in the apartments, or is used against its kind's role.
    """
    steps = [s for keypath in task.keypaths for s in keypath] + list(task.expert)
    named: dict[str, Named] = {}
    for name in dict.fromkeys(n for s in steps for n in s.names()):
        kind = sortie_kind(name)
        named[name] = Named(name, kind, KIND_ROLES[kind])
    for step in steps:
        for name, use in _use(step):
            role = named[name].role
            if role not in _USES[use]:
                words = ", ".join((step.action.value, *step.names()))
                raise Refused(f"{name} ({named[name].kind}, a {role.value}) is {use}: [{words}]")
    return named


class UnknownName(Refused, ValueError):
    """A task names a thing the synonym table (``name_dict.txt``) does not list."""


def canonical_task(task: EmmoeTask, table: NameTable) -> EmmoeTask:
    """Return ``task`` with every name replaced by its canonical name.

    Raises:
        UnknownName: a name the table lacks (listed with the task, not a traceback).
    """

    def name(word: str | None) -> str | None:
        if word is None or not word:
            return None
        if word not in table:
            raise UnknownName(
                f"{word!r} is not in the synonym table (name_dict.txt); EMMOE keeps it at "
                "hab-mobile-manipulation/name_dict.txt, beside EMMOE-100"
            )
        return table[word]

    def step(s: EmmoeStep) -> EmmoeStep:
        return EmmoeStep(s.action, name(s.target), name(s.place))

    keypaths = tuple(tuple(map(step, keypath)) for keypath in task.keypaths)
    return replace(task, keypaths=keypaths, expert=tuple(map(step, task.expert)))


# --- placing ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Job:
    """One task being placed: its steps in canonical names, its things, and the options."""

    task: EmmoeTask
    named: dict[str, Named]
    table: NameTable
    suite: str
    attributes: str


def place_tasks(
    tasks: Sequence[EmmoeTask], table: NameTable, suite: str, attributes: str
) -> tuple[list[tuple[EpisodeSpec, EmmoeTask]], list[tuple[EmmoeTask, str]]]:
    """Return each task placed on an apartment, and each task refused with its reason."""
    validator = HouseholdValidator.create()
    placed, refused = [], []
    for task in tasks:
        try:
            placed.append((place_task(task, table, (suite, attributes), validator), task))
        except Refused as why:
            refused.append((task, str(why)))
    return placed, refused


def place_task(
    task: EmmoeTask, table: NameTable, options: tuple[str, str], validator: HouseholdValidator
) -> EpisodeSpec:
    """Return ``task`` on the first of its apartments that holds its things and plays.

    Args:
        task: the task as read (EMMOE's words).
        table: the synonym table.
        options: the suite's name and the attribute mode (``derived``, ``emmoe-100``).
        validator: reads apartments and replays the oracle on them.

    Raises:
        Refused: a name cannot be placed, or no apartment tried fits and plays; says why.
    """
    _check_sizes(task)
    canonical = canonical_task(task, table)
    job = _Job(canonical, named_things(canonical), table, *options)
    reasons: Counter[str] = Counter()
    missing_kinds: Counter[str] = Counter()
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng([BASE_SEED, int(task.id), attempt])
        world = WorldSpec(builder=WORLD, seed=int(rng.integers(2**31)))
        try:
            layout = house_layout(build_world(world.builder, world.seed))
        except ValueError as error:  # a rare seed the apartment builder cannot lay out
            missing_kinds[f"the apartment does not build ({error})"] += 1
            continue
        missing = _missing(layout, list(job.named.values()))
        if missing:
            missing_kinds[f"no {', '.join(missing)}"] += 1
            continue
        try:
            spec = _episode(job, world, _start(layout, rng), rng, validator)
            validator.replay(spec)
        except (Rejected, ConfigError, ValidationError) as rejected:
            reasons[_reason(rejected)] += 1
            continue
        return spec
    # Apartments that had every kind come first: why they failed is the task's own problem.
    common = reasons.most_common(3) + missing_kinds.most_common(3)
    listed = "; ".join(f"{reason} ({n}x)" for reason, n in common[:3])
    raise Refused(f"none of the {ATTEMPTS} apartments tried fits: {listed}")


def _check_sizes(task: EmmoeTask) -> None:
    """Refuse a task larger than sortie's task model takes, whatever the apartment.

    Raises:
        Refused: the instruction, the expert's plan or the keypaths are too long (says which).
    """
    sizes = {
        "instruction": (len(task.instruction), "characters"),
        "expert": (len(task.expert), "subtasks"),
        "keypaths": (len(task.keypaths), "keypaths"),
    }
    for field, (size, unit) in sizes.items():
        limit = _max_length(field)
        if size > limit:
            raise Refused(f"its {field} has {size} {unit}; sortie's tasks take at most {limit}")
    longest = max(map(len, task.keypaths), default=0)
    if longest > KEYPATH_STEPS:
        raise Refused(f"a keypath has {longest} steps; sortie's take at most {KEYPATH_STEPS}")


def _max_length(field: str) -> int:
    """Return the most characters or entries ``HouseholdTask`` takes in ``field``."""
    info = HouseholdTask.model_fields[field]
    return min(m.max_length for m in info.metadata if hasattr(m, "max_length"))


KEYPATH_STEPS = 100
"""Most steps in one keypath (``HouseholdTask.keypaths``' inner limit)."""


def _reason(rejected: Exception) -> str:
    """Return why an apartment was refused, in a few words (no episode id, no thing list)."""
    if isinstance(rejected, ValidationError) and rejected.errors():
        first = rejected.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"[:200]
    text = str(rejected).splitlines()[0] if str(rejected) else type(rejected).__name__
    text = re.sub(r"^episode \S+: ", "", text).split("; its household things:")[0]
    return text[:200]


def _missing(layout: HouseLayout, named: list[Named]) -> list[str]:
    """Return the kinds the apartment lacks (or has too few of) for the named things."""
    there = Counter(r.room_type for r in layout.rooms)
    there.update([f.kind for f in layout.furniture] + [i.kind for i in layout.items])
    wanted = Counter(n.kind for n in named)
    return [kind if n == 1 else f"{n}x {kind}" for kind, n in wanted.items() if there[kind] < n]


def _start(layout: HouseLayout, rng: np.random.Generator) -> Pose:
    """Return a start at the standing point of a random room, facing a random way."""
    room = layout.rooms[int(rng.integers(len(layout.rooms)))]
    x, y, _ = room.approach
    return Pose(round(x, 3), round(y, 3), 0.0, float(rng.choice([0.0, 90.0, 180.0, -90.0])))


def _episode(
    job: _Job,
    world: WorldSpec,
    start: Pose,
    rng: np.random.Generator,
    validator: HouseholdValidator,
) -> EpisodeSpec:
    """Return the task on ``world``: each canonical name a distinct scene thing of its kind."""
    episode_id = f"{job.suite}/{int(job.task.id):04d}"
    bare = EpisodeSpec(episode_id=episode_id, family="household", world=world, start=start)
    house = validator.house(bare)
    task = _household_task(job, house, _assign(house, job, rng))
    level = "+".join(a.value for a in task.attributes)
    mission = task.model_dump(mode="json", exclude_none=True)
    spec = bare.model_copy(update={"level": level, "mission": mission})
    return EpisodeSpec.model_validate(spec.model_dump(mode="json"))


def _assign(house: House, job: _Job, rng: np.random.Generator) -> dict[str, str]:
    """Return a distinct scene thing for each canonical name (rooms and furniture first).

    Among an item's candidates the assignment prefers one the task can reach (not shut in a
    container the keypaths never open), not already where it is to go, and resting where the
    expert goes just before picking it, so the expert's plan reads true.
    """
    chosen: dict[str, str] = {}
    for named in sorted(job.named.values(), key=lambda n: n.role is ObjectRole.ITEM):
        pool = [
            t.name
            for t in house.things.values()
            if t.kind == named.kind and t.role is named.role and t.name not in chosen.values()
        ]
        pool = [pool[int(k)] for k in rng.permutation(len(pool))]
        if named.role is ObjectRole.ITEM:
            pool.sort(key=lambda item: _item_cost(item, named.canonical, house, (chosen, job.task)))
        chosen[named.canonical] = pool[0]
    return chosen


def _item_cost(
    item: str, name: str, house: House, context: tuple[dict[str, str], EmmoeTask]
) -> tuple[bool, bool, bool]:
    """Return what speaks against using scene item ``item`` for canonical ``name`` (False: none)."""
    chosen, task = context
    steps = [s for keypath in task.keypaths for s in keypath]
    host = house.places[item].place
    opened = {chosen.get(s.target or "") for s in steps if s.action is Verb.OPEN}
    shut = house.enclosed(item) is not None and host not in opened
    puts = {chosen.get(s.place or "") for s in steps if s.action is Verb.PUT and s.target == name}
    source = _source(task, name)
    return shut, host in puts, source is not None and host != chosen.get(source)


def _source(task: EmmoeTask, name: str) -> str | None:
    """Return where the expert goes just before it first picks ``name`` (not ``name`` itself)."""
    went = None
    for step in task.expert:
        if step.action is Verb.GO_TO:
            went = step.target
        elif step.action is Verb.PICK and step.target == name:
            return went if went != name else None
    return None


def _household_task(job: _Job, house: House, scene: dict[str, str]) -> HouseholdTask:
    """Return the household task of ``job`` in the scene names ``scene`` gives each name."""
    roles = {scene[c]: n.role for c, n in job.named.items()}
    skills = offered(Setting.SENSOR_ONLY)

    def key(step: EmmoeStep, with_skill: bool = False) -> KeyStep:
        target = scene[step.target] if step.target else ""
        skill = None
        if with_skill and step.action is not Verb.END:
            large = roles[target] is not ObjectRole.ITEM or step.action is Verb.PUT
            skill = best_skill(step.action, large, skills).name  # as the generator's expert
        place = scene[step.place] if step.place else None
        return KeyStep(action=step.action, target=target, place=place, skill=skill)

    keypaths = [[key(s) for s in keypath] for keypath in job.task.keypaths]
    names = _object_names(job.table, list(job.named))
    objects = {
        scene[c]: TaskObject(kind=n.kind, role=n.role, names=names[c]) for c, n in job.named.items()
    }
    return HouseholdTask(
        instruction=job.task.instruction,
        attributes=task_attributes(job.task, job.attributes),
        split=job.task.split,
        objects=objects,
        keypaths=keypaths,
        goals=final_goals(keypaths, roles),
        expert=[key(s, with_skill=True) for s in job.task.expert],
        max_rounds=MAX_ROUNDS,
    )


def _object_names(table: NameTable, canonicals: Sequence[str]) -> dict[str, list[str]]:
    """Return the synonym table's words for each canonical name (one per normalised name).

    A word two of the task's objects would share (``tv stand`` under one, ``tv_stand`` under
    another) is left out of both: a task's name must pick out one thing.
    """
    words: dict[str, dict[str, str]] = {c: {} for c in canonicals}
    for word, meant in table.items():
        if meant in words:
            words[meant].setdefault(normalise(word), word)
    shared = Counter(key for by_key in words.values() for key in by_key)
    return {
        c: sorted(w for key, w in by_key.items() if shared[key] == 1)[:50]
        for c, by_key in words.items()
    }


def task_attributes(task: EmmoeTask, mode: str) -> list[TaskAttribute]:
    """Return a task's attributes: ``derived`` or from EMMOE-100's lists (``emmoe-100``).

    Derived: long when the expert needs ``LONG`` or more subtasks besides End, else short;
    open-ended too when there are several keypaths. An id EMMOE-100 does not list is derived.
    """
    if mode == "emmoe-100":
        listed = [a for a, ids in EMMOE_100.items() if int(task.id) in ids]
        if listed:
            return listed
    size = TaskAttribute.LONG if len(task.expert) - 1 >= LONG else TaskAttribute.SHORT
    return [size] + [TaskAttribute.OPEN_ENDED] * (len(task.keypaths) > 1)


def final_goals(keypaths: list[list[KeyStep]], roles: dict[str, ObjectRole]) -> list[GoalCondition]:
    """Return the conditions every keypath leaves true: items' last places, containers' states."""
    finals = []
    for keypath in keypaths:
        places: dict[str, tuple[Relation, str]] = {}
        states: dict[str, Relation] = {}
        for step in keypath:
            if step.action is Verb.PICK:
                places.pop(step.target, None)
            elif step.action is Verb.PUT and step.place:
                inside = roles[step.place] is ObjectRole.CONTAINER
                places[step.target] = (Relation.INSIDE if inside else Relation.ON, step.place)
            elif step.action in (Verb.OPEN, Verb.CLOSE):
                opened = step.action is Verb.OPEN
                states[step.target] = Relation.OPEN if opened else Relation.CLOSED
        goals = [GoalCondition(relation=r, object=i, place=p) for i, (r, p) in places.items()]
        finals.append(goals + [GoalCondition(relation=r, object=c) for c, r in states.items()])
    return [goal for goal in finals[0] if all(goal in other for other in finals[1:])]
