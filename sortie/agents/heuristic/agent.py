"""``heuristic``: a sensors-only aerial agent built from keyword rules, blobs and OCR.

From the instruction it reads what to find (a semantic class, maybe colours) and what to do
there (``instruction``). Each step it finds the objects of that class in the semantic image
through the brief's label map, measures from depth where the chosen one lies relative to the
body (``vision``), and flies the eight primitives until the object sits centred below at a
standoff that suits the question: a plate is read from 2.5 m, colours seen from 10–15 m.
There it answers: text with RapidOCR (``reading``), colours, species and statue kinds from
pixels and shape, counts from the blobs in view; or it carries out the task action. With
nothing of the class in view it climbs to a search altitude and turns in 30° steps, then
flies ahead and looks again, and gives up with a report when its search steps are spent.
Patrols follow road (or fence, pylon, water) pixels straight ahead for half the budget.
It never sees its position; d_max and the camera come from the brief (``Brief.limits``,
``Brief.camera``).
"""

from __future__ import annotations

import math

import numpy as np

from sortie.agents.base import StepOutput
from sortie.agents.heuristic.instruction import Goal, Question, parse_instruction
from sortie.agents.heuristic.reading import (
    Reading,
    TextReader,
    crop_box,
    plate_crop,
    require_ocr,
)
from sortie.agents.heuristic.vision import (
    MIN_PIXELS,
    Blob,
    colour_of,
    extent,
    find_blobs,
    guess_species,
    guess_statue,
    height_above_ground,
    top_pixels,
)
from sortie.core.actions import Action, FlightPrimitive, Fly
from sortie.core.observation import Brief, EventKind, Frames, MissionObservation, Sensor
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind

P = FlightPrimitive
VIEW_HEIGHTS = {
    "solar_panel": 10.0,
    "pylon": 8.0,
    "water_tank": 8.0,
    "statue": 10.0,
    "house": 15.0,
    "building": 15.0,
    "sign": 12.0,
    "animal": 12.0,
}
"""Standoffs (metres above the target's top) for looking at a class: its goal heights."""
TEXT_CLASSES = frozenset({"pylon", "water_tank", "crate", "sign", "landing_pad", "statue"})
"""Classes that carry text, worth one OCR call when inspected."""
PLAUSIBLE = 0.85
"""A plate reading scoring this much (confidence, +0.2 when read exactly in form) is kept."""


class HeuristicAgent:
    """Finds the instruction's target in the semantic image, flies to it and answers."""

    name = "heuristic"
    families = frozenset({"aerial"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB, Sensor.DEPTH, Sensor.SEMANTIC})
    reader = TextReader()

    def __init__(
        self,
        search_altitude: float = 25.0,
        read_height: float = 2.5,
        text_height: float = 6.0,
        view_height: float = 12.0,
        task_height: float = 4.0,
        count_height: float = 18.0,
        max_ocr_calls: int = 4,
        search_steps: int = 14,
        max_move: float = 1000.0,
        max_turn: float = 30.0,
        hfov: float = 90.0,
        pitch: float = -45.0,
    ) -> None:
        """Configure the agent (nothing heavy is loaded here: the OCR engine loads on use).

        Args:
            search_altitude: height above the ground it climbs to when nothing is in view.
            read_height: standoff above a car's roof for reading its plate, metres.
            text_height: standoff for reading numbers and words, metres.
            view_height: standoff for looking at a class not in ``VIEW_HEIGHTS``, metres.
            task_height: standoff at which it carries out a task action, metres.
            count_height: standoff over a group it counts, metres.
            max_ocr_calls: OCR reads per episode at most (each costs a few tenths of a second).
            search_steps: steps without a target before it gives up and reports so.
            max_move: metres asked per move when the brief gives no d_max.
            max_turn: degrees per turn at most.
            hfov: the camera's horizontal field of view, degrees, when the brief gives none.
            pitch: the camera's pitch, degrees (negative: down), when the brief gives none.

        Raises:
            MissingExtraError: the OCR engine (``pip install 'sortie[ocr]'``) is missing.
        """
        require_ocr()  # now, not after an episode's flight
        self.search_altitude, self.read_height = search_altitude, read_height
        self.text_height, self.view_height = text_height, view_height
        self.task_height, self.count_height = task_height, count_height
        self.max_ocr_calls, self.search_steps = max_ocr_calls, search_steps
        self.first_move, self.max_turn, self.camera = max_move, max_turn, (hfov, pitch)
        self.reset(Brief("aerial", "", ""), 0)

    # --- episode ----------------------------------------------------------------------
    def reset(self, brief: Brief, seed: int) -> None:
        """Read the instruction and forget the last episode (the agent uses no randomness)."""
        self.goal: Goal = parse_instruction(brief.text) if brief.text else Goal(None)
        self.labels = brief.semantic_classes
        self.budget = round(brief.budget_s / brief.control_period) if brief.budget_s else 20
        self.max_move = brief.limits.max_move or self.first_move
        camera = brief.camera
        self.hfov, self.pitch = (camera.hfov, camera.pitch) if camera else self.camera
        self.locked: int | None = None
        self.searching = self.turns = self.climbs = self.ocr_calls = self.forwards = 0
        self.best: Reading | None = None
        self.guess: str | None = None
        self.queue: list[Fly] = []
        self.task_done, self.orbits = False, 0
        self.seen: set[int] = set()
        self._notes: list[str] = []
        self._wanted = self._instances(self.goal.target)

    def step_output(self) -> StepOutput:
        """Return what the agent saw and decided in its last step (for the record)."""
        return StepOutput(text="; ".join(self._notes) or None)

    def act(self, observation: MissionObservation) -> Action:
        """Return the next primitive, task action or done; never raises."""
        self._notes = []
        try:
            return self._decide(observation)
        except Exception as error:  # noqa: BLE001 - an odd frame must not end the run
            self._note(f"error {type(error).__name__}: {error}; hovering")
            return Fly(P.TURN_RIGHT, 0.0, self.guess)

    # --- decisions --------------------------------------------------------------------
    def _decide(self, obs: MissionObservation) -> Action:
        frames = obs.frames
        if frames.semantic is None or frames.depth is None or not self.labels:
            return self._finish("I have no labelled semantic image, so I cannot find anything.")
        if self.goal.target is None:
            return self._finish("I could not tell what the instruction asks me to find.")
        if self.queue:
            return self._send(self.queue.pop(0))
        if any(e.kind is EventKind.CONTACT for e in obs.events):
            self._note("contact: climbing")
            return self._send(Fly(P.UP, min(self.max_move, 5.0)))
        if self.goal.patrol:
            return self._patrol(obs)
        blob = self._choose(frames)
        if self.budget - obs.step <= 1:
            return self._finish(self._answer(frames, blob, final=True))
        if blob is None:
            return self._search(frames)
        self.searching = 0
        return self._approach(blob) or self._objective(frames, blob)

    def _choose(self, frames: Frames) -> Blob | None:
        """Return the locked target if still in view, else the best match (and lock it)."""
        assert frames.semantic is not None and frames.depth is not None
        blobs = find_blobs(
            frames.semantic,
            frames.depth,
            frames.rgb,
            self._wanted,
            self.goal.colours,
            self.hfov,
            self.pitch,
        )
        self.seen.update(b.instance for b in blobs)
        locked = next((b for b in blobs if b.instance == self.locked), None)
        if locked is None and blobs and (self.goal.colours == () or blobs[0].match > 0):
            locked = blobs[0]
        if locked is not None:
            self.locked = locked.instance
            self._note(
                f"{self.goal.target} #{locked.instance}: {locked.forward:.1f} m ahead, "
                f"{locked.left:.1f} m left, top {locked.up:.1f} m up, "
                f"{locked.pixels} px, colour match {locked.match:.2f} "
                f"({len(blobs)} in view)"
            )
            self.guess = self._answer(frames, locked, final=False)
        return locked

    def _search(self, frames: Frames) -> Action:
        """Climb to the search altitude, turn to look around, then move on; give up at last."""
        self.searching += 1
        self.locked = None
        if self.searching > self.search_steps:
            return self._finish(f"I searched but found no {self._noun()}.")
        assert frames.depth is not None
        height = height_above_ground(frames.depth, self.hfov, self.pitch)
        if height is not None and height < self.search_altitude - 2.0 and self.climbs < 3:
            self.climbs += 1
            self._note(f"searching: {height:.1f} m above ground, climbing")
            return self._send(Fly(P.UP, min(self.search_altitude - height, self.max_move)))
        if self.turns < 11:
            self.turns += 1
            self._note(f"searching: turning ({self.turns} of 11)")
            return self._send(Fly(P.TURN_RIGHT, self.max_turn))
        self.turns = 0
        self._note("searching: nothing around, moving on")
        return self._send(Fly(P.FORWARD, self.max_move))

    def _approach(self, blob: Blob) -> Action | None:
        """Return the move that brings ``blob`` centred below at the standoff, or None there."""
        standoff = self._standoff()
        tolerance = max(0.6, 0.15 * standoff)
        bearing = math.degrees(math.atan2(blob.left, blob.forward))
        if abs(bearing) > 12.0 and (blob.forward > 2 * standoff or abs(blob.left) > 3.0):
            primitive = P.TURN_LEFT if bearing > 0 else P.TURN_RIGHT
            return self._send(Fly(primitive, min(abs(bearing), self.max_turn)))
        if abs(blob.left) > tolerance:
            primitive = P.LEFT if blob.left > 0 else P.RIGHT
            return self._send(Fly(primitive, min(abs(blob.left), self.max_move)))
        ahead, rise = blob.forward - standoff, blob.up + standoff
        if max(abs(ahead), abs(rise)) <= tolerance:
            return None
        if abs(ahead) >= abs(rise):
            return self._send(
                Fly(P.FORWARD if ahead > 0 else P.BACKWARD, min(abs(ahead), self.max_move))
            )
        return self._send(Fly(P.UP if rise > 0 else P.DOWN, min(abs(rise), self.max_move)))

    def _standoff(self) -> float:
        goal = self.goal
        if goal.task is not None:
            return self.task_height
        if goal.question is Question.PLATE:
            return self.read_height
        if goal.question in (Question.NUMBER, Question.TEXT):
            return self.text_height
        if goal.question is Question.COUNT:
            return self.count_height
        return VIEW_HEIGHTS.get(goal.target or "", self.view_height)

    # --- at the target ----------------------------------------------------------------
    def _objective(self, frames: Frames, blob: Blob) -> Action:
        """Carry out the task action, or read, then answer and say done."""
        if self.goal.task is not None and not self.task_done:
            self.task_done = True
            self._note(f"in position: {self.goal.task.value}")
            return TaskAction(self.goal.task)
        if self.goal.question is Question.PLATE:
            orbit = self._plate_view(frames, blob)
            if orbit is not None:
                return orbit
        return self._finish(self._answer(frames, blob, final=True))

    def _plate_view(self, frames: Frames, blob: Blob) -> Action | None:
        """Read the plate; when it runs along the view, circle a quarter turn to see it across."""
        assert frames.semantic is not None
        if frames.rgb is None:
            return None
        crop = plate_crop(frames.rgb, frames.semantic, blob.instance)
        if crop is not None and crop.shape[0] <= 1.3 * crop.shape[1]:  # tall: along the view
            self._read(crop, "plate")
        if (self.best and self.best.score >= PLAUSIBLE) or self.orbits >= 3:
            return None
        self.orbits += 1
        side = 2 * blob.forward * math.sin(math.radians(15.0))  # the chord of a 30° arc
        self._note(f"plate not legible from here: circling 30° ({self.orbits} of 3)")
        self.queue.append(Fly(P.TURN_LEFT, 30.0, self.guess))
        return self._send(Fly(P.RIGHT, min(side, self.max_move)))

    def _answer(self, frames: Frames, blob: Blob | None, final: bool) -> str | None:
        """Return the report for the question from what is in view (OCR only when final)."""
        question, noun = self.goal.question, self._noun()
        if self.goal.task is not None:
            return f"{self.goal.task.value.replace('_', ' ')} done at the {noun}"
        if question in (Question.PLATE, Question.NUMBER, Question.TEXT):
            if final and blob is not None and question is not Question.PLATE:
                self._read_blob(frames, blob, question.value)
            return (
                self.best.answer
                if self.best
                else (None if not final else f"I could not read the {noun}'s {question.value}.")
            )
        if blob is None:
            return None if not final else f"I found no {noun}."
        return self._describe(frames, blob, question, noun, final)

    def _describe(
        self, frames: Frames, blob: Blob, question: Question, noun: str, final: bool
    ) -> str:
        assert frames.semantic is not None and frames.depth is not None
        width, height = extent(frames.depth, frames.semantic, blob.instance, self.hfov, self.pitch)
        if question is Question.COUNT:
            count = len(
                find_blobs(
                    frames.semantic, frames.depth, None, self._wanted, (), self.hfov, self.pitch
                )
            )
            return f"I count {count} {noun}s."
        if question is Question.SPECIES:
            return f"It is a {guess_species(self._pixels(frames, blob, False), width)}."
        if question is Question.KIND:
            return f"It is a {guess_statue(width, height)}."
        roof = self.goal.roof or self.goal.target == "car"  # a car's cabin is dark glass
        colour = colour_of(self._pixels(frames, blob, roof)) or "unknown"
        if question is Question.COLOUR:
            return f"The {'roof' if self.goal.roof else noun} is {colour}."
        if final and self.goal.target in TEXT_CLASSES:
            self._read_blob(frames, blob, "text")
        marked = f", marked {self.best.answer}" if self.best else ""
        return f"Inspected the {noun}: it is {colour}{marked}."

    def _pixels(self, frames: Frames, blob: Blob, roof: bool) -> np.ndarray:
        assert frames.semantic is not None and frames.depth is not None
        if frames.rgb is None:
            return np.zeros((0, 3), np.uint8)
        if roof:
            band = 0.3 if self.goal.target == "car" else 1.5
            rows, cols = top_pixels(
                frames.depth, frames.semantic, blob.instance, self.hfov, self.pitch, band
            )
        else:
            rows, cols = np.nonzero(frames.semantic == blob.instance)
        return frames.rgb[rows, cols]

    def _read_blob(self, frames: Frames, blob: Blob, want: str) -> None:
        if frames.rgb is not None:
            self._read(crop_box(frames.rgb, blob.box), want)

    def _read(self, crop: np.ndarray | None, want: str) -> None:
        """Run OCR on ``crop`` within the budget of calls; keep the best reading."""
        if crop is None or self.ocr_calls >= self.max_ocr_calls:
            return
        self.ocr_calls += 1
        reading = self.reader.read(crop, want)
        self._note(
            f"OCR {self.ocr_calls}: {crop.shape[1]}x{crop.shape[0]} px -> "
            + (
                f"{reading.raw!r} read as {reading.answer!r} ({reading.score:.2f})"
                if reading
                else "nothing"
            )
        )
        if reading is not None and (self.best is None or reading.score > self.best.score):
            self.best = reading

    # --- patrol -----------------------------------------------------------------------
    def _patrol(self, obs: MissionObservation) -> Action:
        """Hold the altitude, face along the followed line, fly ahead for half the budget."""
        frames = obs.frames
        assert frames.semantic is not None and frames.depth is not None
        self._count_along(frames)
        if self.forwards >= self.budget // 2 or self.budget - obs.step <= 1:
            return self._finish(self.guess or "Patrol flown.")
        height = height_above_ground(frames.depth, self.hfov, self.pitch)
        wanted = self.goal.altitude
        if wanted and height is not None and abs(height - wanted) > 3.0 and self.climbs < 3:
            self.climbs += 1
            return self._send(
                Fly(P.UP if height < wanted else P.DOWN, min(abs(height - wanted), self.max_move))
            )
        column, share = self._line_ahead(frames.semantic)
        if share < 0.02 and self.forwards == 0:
            if self.turns >= 11:
                return self._finish(f"I cannot see the {self._noun()} to follow.")
            self.turns += 1
            self._note(f"patrol: looking for the {self._noun()} ({self.turns} of 11)")
            return self._send(Fly(P.TURN_RIGHT, self.max_turn))
        bearing = (0.5 - column) * self.hfov if share >= 0.02 else 0.0
        if abs(bearing) > 10.0:
            primitive = P.TURN_LEFT if bearing > 0 else P.TURN_RIGHT
            return self._send(Fly(primitive, min(abs(bearing), self.max_turn)))
        self.forwards += 1
        self._note(f"patrol: ahead ({self.forwards} of {self.budget // 2}), line share {share:.2f}")
        return self._send(Fly(P.FORWARD, self.max_move))

    def _line_ahead(self, semantic: np.ndarray) -> tuple[float, float]:
        """Return the mean column (0..1) and image share of the followed class, upper half."""
        upper = semantic[: semantic.shape[0] // 2]
        mask = self._wanted[np.clip(upper, 0, len(self._wanted) - 1)] & (upper > 0)
        if not mask.any():
            return 0.5, 0.0
        cols = np.nonzero(mask)[1]
        return float(cols.mean() + 0.5) / upper.shape[1], float(mask.mean())

    def _count_along(self, frames: Frames) -> None:
        counted = self.goal.counted
        if counted is None or frames.semantic is None or frames.depth is None:
            return
        blobs = find_blobs(
            frames.semantic, frames.depth, None, self._instances(counted), (), self.hfov, self.pitch
        )
        self.seen.update(b.instance for b in blobs if b.pixels >= MIN_PIXELS)
        self.guess = f"I counted {len(self.seen)} {counted}s."

    # --- helpers ----------------------------------------------------------------------
    def _instances(self, target: str | None) -> np.ndarray:
        """Return a lookup from instance id to whether it is of class ``target``."""
        table = np.zeros(max(self.labels, default=0) + 1, bool)
        for instance, name in self.labels.items():
            table[instance] = name == target
        return table

    def _noun(self) -> str:
        return (self.goal.target or "target").replace("_", " ")

    def _send(self, action: Fly) -> Fly:
        self._note(f"{action.primitive.value} {action.magnitude:.1f}")
        return Fly(action.primitive, action.magnitude, action.report or self.guess)

    def _finish(self, report: str | None) -> TaskAction:
        self._note(f"done: {report}")
        return TaskAction(TaskActionKind.DONE, report=report)

    def _note(self, text: str) -> None:
        self._notes.append(text)
