"""What a mission family is, in one place: the descriptor generic code asks instead of a name.

A family (``missions/<name>/family.py``) declares its rules and data: its body, its rules (the
runtime), the check of its episodes' mission data, its run settings as a typed model, its
scorer and metrics, the columns of its table and how its episodes group, and the readings of
its seed benchmark. Generic code (runs, reports, the CLI, exports, the gym envs, the agent
server) asks the descriptor and never names a family; a new family is a folder, its scorer
and one registry line (``sortie.missions.registry``; docs/families.md). How reports lay a
family out (paper tables, plots, stage names, maps, page panels) is its report descriptor, in
the report layer (``sortie.report.descriptor``). The parts that live in higher layers (the
scorer, the gym env, the generator) are named as lazy ``"module:attr"`` paths, as Gymnasium's
``EnvSpec.entry_point`` does, so this layer never imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from sortie.backends.cameras import body_camera, run_camera
from sortie.backends.catalog import Needs
from sortie.core.actions import Action
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ParameterError, did_you_mean
from sortie.core.observation import image_sensors
from sortie.core.registry import load_path


class FamilySettings(BaseModel):
    """A family's run settings (``-F name=value``): every field has a default and help.

    Settings decide results, so they are stored with the run and in every record's header.
    The model is their one home: it is validated once (``Family.parse_settings``) and the
    instance is what the runtime, the gym env and the header are given; a runtime given none
    takes the model's defaults. Fields keep their types (an enum stays one); the JSON form
    (``model_dump(mode="json")``) is what stores and headers hold.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class Reading:
    """A report column its family can read more than one way (``sortie report --variant``).

    ``variants`` maps each variant to the columns it reads instead: ``{"tp": "tp_emmoe"}``
    shows the ``tp_emmoe`` column under the heading ``tp``. The default variant reads none.

    Readings are data, not layout: they say which of the scorer's metrics is the seed
    benchmark's (its code's or its paper's) version of a column, so they change the numbers a
    report prints, and they stay beside the scorer that computes both versions.
    """

    name: str
    default: str
    variants: Mapping[str, Mapping[str, str]]
    about: str
    """One line: what the variants are (``sortie families`` and ``--help`` show it)."""
    seed: str = ""
    """The variant that reads the column as the seed benchmark's own code does
    (``sortie report --readings seed``); empty means the default already does."""

    def __post_init__(self) -> None:
        for variant in (self.default, self.seed or self.default):
            if variant not in self.variants:
                raise ValueError(
                    f"reading {self.name!r}: variant {variant!r} is not one of "
                    f"{', '.join(self.variants)}"
                )

    @property
    def seed_variant(self) -> str:
        """Return the variant ``--readings seed`` chooses."""
        return self.seed or self.default


@dataclass(frozen=True, slots=True)
class Demo:
    """What ``sortie demo`` runs for a family: a suite, its agents, the table's grouping."""

    suite: str
    agents: tuple[str, ...]
    by: str = "level"


@dataclass(frozen=True, slots=True)
class Family:
    """One mission family: its rules and data, all generic code needs to run and score it."""

    name: str
    runtime: str
    """``"module:Class"`` of its rules (a ``MissionRuntime``)."""
    check: Callable[[EpisodeSpec], Any]
    """Validates an episode's mission data (raises ConfigError naming the episode and field)."""
    settings: type[FamilySettings]
    scorer: str
    """``"module:function"`` scoring one record: ``(Trajectory) -> dict[str, float]``."""
    columns: tuple[str, ...] = ()
    """The metrics of its report table, in order (``sortie report`` without ``--columns``)."""
    metrics: str = ""
    """``"module:NAME"`` of the tuple of every metric its scorer returns besides ``error``."""
    body: str = "walker"
    """The body a backend needs: ``walker``, ``multirotor`` or ``manipulator``."""
    needs_interaction: bool = True
    """Whether its missions pick things up or open doors (the backend must offer it)."""
    camera: Mapping[str, Any] | None = None
    """The camera its missions fix (``CameraSpec`` fields), None: the backend's or agent's."""
    group: str = "level"
    """What its suites group episodes by, as tables head it: ``level``, ``type``, …"""
    level_name: str = "level"
    """What an episode's ``level`` is for it, as ``sortie run`` heads it: ``type``,
    ``attributes``."""
    groupings: Mapping[str, Callable[[EpisodeSpec], list[str]]] = field(default_factory=dict)
    """Its own ways to group episodes in reports (``--by NAME``): the group keys of one."""
    demo: Demo | None = None
    """What ``sortie demo`` runs for it (nothing: the family is not in the demo)."""
    env: str | None = None
    """``"module:Class"`` of its gymnasium env (id ``sortie/<Name>-v1``, ``gym_ids``)."""
    actions: tuple[type[Action], ...] = ()
    """The action types its missions accept (``sortie.core.actions``); the agent server's
    action schema is derived from them."""
    generator: str | None = None
    """``"module:function"`` writing a suite for ``sortie generate <family>``, if any."""
    exports: tuple[str, ...] = ()
    """The ``sortie export`` kinds its runs make (``sft``, ``dpo``, ``demos``)."""
    readings: tuple[Reading, ...] = ()
    """Columns that differ between its seed benchmark's paper, its code and sortie."""

    def own_camera(self, given: str | Mapping[str, Any], where: str = "--camera") -> dict[str, Any]:
        """Return the camera a run asks for with ``given``: what it gives over the family's.

        Raises:
            ParameterError: ``given`` names no camera, or one out of range.
        """
        return run_camera(given, body_camera(self.body, self.camera), where)

    def needs(
        self,
        sensors: Iterable[str],
        worlds: Iterable[str],
        camera: Mapping[str, Any] | None = None,
    ) -> Needs:
        """Return what its missions ask of a backend, for an agent seeing ``sensors``.

        Only the image sensors are asked of the backend; the pose is the mission's to give.
        ``camera`` is the run's own camera (None: the family's).
        """
        return Needs(
            self.name,
            self.body,
            self.needs_interaction,
            frozenset(image_sensors(sensors)),
            frozenset(worlds),
            camera,
        )

    def load_runtime(self) -> type:
        """Return the runtime class (imported on first use)."""
        return load_path(self.runtime)

    def load_scorer(self) -> Callable[..., dict[str, float]]:
        """Return the scorer (imported on first use)."""
        return load_path(self.scorer)

    def load_generator(self) -> Any:
        """Return its generator (imported on first use), or None."""
        return load_path(self.generator) if self.generator else None

    def load_metrics(self) -> tuple[str, ...]:
        """Return every metric the scorer gives (the report table's columns if it says none)."""
        return tuple(load_path(self.metrics)) if self.metrics else self.columns

    def parse_settings(self, given: Mapping[str, Any], where: str = "-F") -> FamilySettings:
        """Return ``given`` validated by the settings model (defaults for the rest).

        ``where`` names what gave them in an error (the command line's ``-F`` by default).

        Raises:
            ParameterError: see ``parse_settings``.
        """
        return parse_settings(self.settings, given, self.name, where)


S = TypeVar("S", bound=FamilySettings)


def parse_settings(model: type[S], given: Mapping[str, Any], family: str, where: str = "-F") -> S:
    """Return ``given`` validated by ``family``'s settings ``model`` (defaults for the rest).

    The one place settings are parsed: from the command line (``-F``), a gym env's keywords
    or an old record; everything after holds the model instance.

    Raises:
        ParameterError: a setting the family does not have (with a near name and the list
            of its settings), or a value its model refuses (with what is allowed).
    """
    fields = model.model_fields
    for name in given:
        if name not in fields:
            hint = did_you_mean(name, fields)
            raise ParameterError(
                f"{where} {name}: the {family} family has no setting {name!r}.{hint} "
                f"Its settings: {describe(model) or 'none'}"
            )
    try:
        return model.model_validate(dict(given))
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(map(str, first["loc"]))
        raise ParameterError(
            f"{where} {field}={given.get(field)!r}: {first['msg']} (the {family} family's "
            f"settings: {describe(model)})"
        ) from None


def describe(settings: type[FamilySettings]) -> str:
    """Return ``name=default (help)`` for each of a settings model's fields."""
    parts = []
    for name, info in settings.model_fields.items():
        default = getattr(info.default, "value", info.default)
        parts.append(f"{name}={default} ({info.description})" if info.description else name)
    return "; ".join(parts)
