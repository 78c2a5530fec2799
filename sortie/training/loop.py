"""EMMOE's training loop, closed: expert data → fine-tune → serve → score on held-out tasks.

1. The oracle plays household-v1's train tasks; its rounds are exported as SFT and DPO rows
   with homiebot's text prompt (``sortie.training.data``, which checks the test split is out).
2. The base model is saved as it is (the zero-shot model), then fine-tuned with TRL's SFT
   (``sortie.training.finetune``) and saved again.
3. With DPO steps, as EMMOE does: the SFT model plays some train tasks; each round it lost
   (failed, or repeated what it had just done) is paired with the oracle's choice from that
   state, beside the re-plans of both (``sortie.training.data``); DPO on those pairs gives
   the third model.
4. Each model is served by ``transformers serve`` on loopback, and ``homiebot`` plays
   household-test-v1 against it with the same prompt settings, greedy, ``repeats`` times.

Everything lands under one folder: the sets, the models, the server logs, the results store
(``results.db``) and ``training.json``. A pipeline killed half-way resumes there: saved models
are not trained again and a run resumes at its first unfinished episode. A folder made with
other settings is refused rather than mixed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError, ParameterError
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.training.bases import (
    GEMMA,
    MAX_NEW_TOKENS,
    load_base,
    load_saved,
    save,
    trains_adapters,
)
from sortie.training.data import (
    OWN_RUN,
    TEST_SUITE,
    TRAIN_SUITE,
    TrainingSets,
    dpo_pairs,
    load_rows,
    make_sets,
    own_pairs,
    train_tasks,
)
from sortie.training.finetune import (
    Trained,
    TrainSettings,
    describe,
    describe_steps,
    fine_tune,
    prefer,
)
from sortie.training.folders import check_settings_file
from sortie.training.pace import Waits, episode_line, machine_load, scaled_waits
from sortie.training.server import served

BASE_URL_ENV = "SORTIE_MODEL_BASE_URL"
TIMEOUT_ENV = "SORTIE_MODEL_TIMEOUT"
TRAINING_FILE = "training.json"
MODEL_SETTINGS = ("base", "train", "train_tasks", "window", "own_tasks")
"""The settings that decide the trained model (kept in ``settings.json``)."""


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """What to train and how to score it."""

    base: str = GEMMA
    train: TrainSettings = field(default_factory=TrainSettings)
    train_tasks: int | None = None
    """Play only the first N train tasks (None: all 90)."""
    test_tasks: int | None = None
    """Score on only the first N test tasks (None: all 10)."""
    repeats: int = 1
    window: int = 1
    """Earlier rounds homiebot shows in full (the history and feedback are always shown)."""
    own_tasks: int = 6
    """Train tasks the SFT model plays for DPO pairs of its own lost rounds (with DPO)."""
    timeout: float | None = None
    """Seconds homiebot waits for one answer; None: 300 s times the machine's load per core
    (``sortie.training.pace``). Not part of the runs' settings: it does not decide results."""
    start_timeout: float | None = None
    """Seconds a server may take to load its model and pass its health check; None: 300 s
    times the machine's load per core."""

    def __post_init__(self) -> None:
        if self.own_tasks < 1:
            raise ParameterError(
                f"training loop: --own-tasks must be 1 or more, got {self.own_tasks}"
            )
        for name in ("timeout", "start_timeout"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ParameterError(f"training loop: {name} must be > 0 seconds, got {value}")


@dataclass(frozen=True, slots=True)
class LoopResult:
    """Where the scored runs are: the store and the run ids (zero-shot, SFT, then SFT+DPO)."""

    store: Path
    runs: tuple[str, ...]


def prompt_args(settings: LoopSettings) -> dict[str, str]:
    """Return homiebot's prompt arguments, shared by the training rows and the evaluation."""
    return {"observation": "text", "window": str(settings.window)}


def run_loop(settings: LoopSettings, out: Path, echo: Callable[[str], None]) -> LoopResult:
    """Run the whole pipeline under ``out``; return where its runs are stored.

    Raises:
        ConfigError: ``out`` holds a pipeline made with other settings, the training rows
            touch the test split, the base is unknown, or a server does not start.
    """
    out.mkdir(parents=True, exist_ok=True)
    _check_settings(settings, out)
    load = machine_load()
    waits = scaled_waits(settings.timeout, settings.start_timeout, load)
    echo(waits.describe(load))
    phases = 4 if settings.train.dpo_steps else 3
    models = _models(settings, out, waits, phases, echo)
    scoring = f"scoring each model on {TEST_SUITE} ({settings.repeats} repeats)"
    echo(f"phase {phases}/{phases}: {scoring}")
    runs = [_score(settings, model, out, waits, echo) for model in models.items()]
    return LoopResult(out / "results.db", tuple(runs))


def _score(
    settings: LoopSettings,
    model: tuple[str, Path],
    out: Path,
    waits: Waits,
    echo: Callable[[str], None],
) -> str:
    """Serve one model (its label and folder) and score it; return the run id."""
    label, folder = model
    run_id = f"homiebot-{Path(settings.base).name}-{label}"
    echo(f"scoring {label}")
    request = scoring_request(settings, out / "results.db", run_id, _agent_args(folder))
    if not _left_to_play(request):  # a resumed loop starts no server for a finished run
        echo(f"{label}: every episode already played ({run_id})")
        return run_id
    with _serving(label, folder, out, waits, echo):
        evaluate(request, lambda line: echo(f"{label}: {line}"))
    return run_id


def _agent_args(folder: Path) -> dict[str, str]:
    """Return homiebot's arguments for the model served from ``folder`` (prompt aside).

    The served model's name is its folder's resolved path (``server.served``), so a run's
    arguments are known before its server starts.
    """
    return {"model": str(folder.resolve()), "max_tokens": str(MAX_NEW_TOKENS)}


def _left_to_play(request: RunRequest) -> bool:
    """Return whether the run has episodes still to play (errors included, to retry).

    A run not in the store yet is planned only once its server is up, so that a server that
    fails to start leaves no empty run behind.
    """
    # Planning checks that homiebot has a server address, not that one answers: the address
    # stays out of the run's arguments, so a placeholder plans the same jobs.
    with Store(request.store) as opened, _environment({BASE_URL_ENV: "http://127.0.0.1:9/v1"}):
        if opened.created(str(request.run_id)) is None:
            return True
        return bool(plan_run(request, opened).todo)


@contextmanager
def _serving(
    label: str, folder: Path, out: Path, waits: Waits, echo: Callable[[str], None]
) -> Iterator[None]:
    """Serve a model while the block runs, its address and time-out in the environment."""
    log = out / f"serve-{label}.log"
    echo(f"starting transformers serve for {label} (log {log}) …")
    started = time.monotonic()
    with served(folder, log, waits.start) as server:
        echo(f"server ready in {time.monotonic() - started:.0f} s")
        if server.model != _agent_args(folder)["model"]:  # the run's arguments named it so
            raise ConfigError(f"{log}: the server names its model {server.model!r}, not {folder}")
        with _environment({BASE_URL_ENV: server.base_url, TIMEOUT_ENV: str(waits.answer)}):
            yield


def scoring_request(
    settings: LoopSettings, store: Path, run_id: str, args: dict[str, str]
) -> RunRequest:
    """Return the run of homiebot on the test split against a served model."""
    return RunRequest(
        (TEST_SUITE,),
        "homiebot",
        agent_args={**prompt_args(settings), **args},
        store=store,
        run_id=run_id,
        repeats=settings.repeats,
        limit=settings.test_tasks,
        retry_errors=True,
    )


def _models(
    settings: LoopSettings, out: Path, waits: Waits, phases: int, echo: Callable[[str], None]
) -> dict[str, Path]:
    """Return each model's folder by label, training those not saved yet.

    ``phases`` is the number of phases (``phase 2/4: …``): 4 with DPO, else 3.
    """
    models = out / "models"
    folders = {"zero-shot": models / "base", "fine-tuned": models / "tuned"}
    if settings.train.dpo_steps:
        folders["fine-tuned-dpo"] = models / "dpo"
    if all((folder / "config.json").exists() for folder in folders.values()):
        echo(f"models already trained in {models}")
        return folders
    echo(f"phase 1/{phases}: the oracle plays the train tasks; their rounds become training rows")
    sets = make_sets(out / "data", prompt_args(settings), settings.train_tasks, echo)
    echo(f"training rows: {dict(sets.rows)} from {len(sets.tasks)} train tasks")
    echo(f"phase 2/{phases}: fine-tuning {settings.base} ({describe_steps(settings.train)})")
    if (folders["fine-tuned"] / "config.json").exists():
        echo(f"the SFT model is already trained: {folders['fine-tuned']}")
    else:
        _supervised(settings, sets, folders, out, echo)
    if settings.train.dpo_steps:
        echo(f"phase 3/{phases}: the SFT model plays train tasks; its lost rounds become DPO pairs")
        _preferences(settings, load_rows(sets.dpo), folders, out, waits, echo)
    return folders


def _preferences(
    settings: LoopSettings,
    expert: Any,
    folders: dict[str, Path],
    out: Path,
    waits: Waits,
    echo: Callable[[str], None],
) -> None:
    """Let the SFT model play train tasks, then train DPO on its and the expert's pairs."""
    request = _own_request(settings, out, _agent_args(folders["fine-tuned"]))
    if _left_to_play(request):
        with _serving("sft-own", folders["fine-tuned"], out, waits, echo):
            evaluate(request, lambda line: echo(f"sft-own: {line}"))
    pairs = dpo_pairs(expert, own_pairs(out / "data", request.store, echo))
    if not len(pairs):
        raise ConfigError(
            f"{out}: no DPO pairs (the oracle re-planned no failed subtask and the SFT "
            "model lost no round the oracle could correct); play more tasks "
            "(--train-tasks, --own-tasks) or train without DPO (--dpo-steps 0)"
        )
    echo(f"DPO pairs: {len(pairs)} (re-plans, and the oracle's corrections of the SFT model)")
    _preferred(settings, pairs, folders, out, echo)


def _supervised(
    settings: LoopSettings,
    sets: TrainingSets,
    folders: dict[str, Path],
    out: Path,
    echo: Callable[[str], None],
) -> None:
    """Save the base as the zero-shot model, train SFT on it and save the SFT model."""
    sft = load_rows(sets.sft)
    base = load_base(settings.base, _texts(sft), settings.train.seed)
    save(base.model, base.tokenizer, folders["zero-shot"])
    model, stage = _timed(out, lambda: fine_tune(base, sft, settings.train, _work(out), echo))
    echo(describe(stage))
    save(model, base.tokenizer, folders["fine-tuned"])
    _note(out, {"tasks": list(sets.tasks), "rows": dict(sets.rows)})


def _preferred(
    settings: LoopSettings,
    pairs: Any,
    folders: dict[str, Path],
    out: Path,
    echo: Callable[[str], None],
) -> None:
    """Train DPO on the SFT model and save the result."""
    tuned = load_saved(folders["fine-tuned"], trains_adapters(settings.base))
    model, stage = _timed(out, lambda: prefer(tuned, pairs, settings.train, _work(out), echo))
    echo(describe(stage))
    save(model, tuned.tokenizer, folders["fine-tuned-dpo"])
    _note(out, {"dpo_pairs": len(pairs)})


def _own_request(settings: LoopSettings, out: Path, args: dict[str, str]) -> RunRequest:
    """Return the SFT model's run on the first ``own_tasks`` train tasks (played as scored)."""
    tasks = train_tasks(settings.train_tasks)[: settings.own_tasks]
    return RunRequest(
        (TRAIN_SUITE,),
        "homiebot",
        agent_args={**prompt_args(settings), **args},
        store=out / "data" / "own.db",
        run_id=OWN_RUN,
        episodes=tasks,
        retry_errors=True,
    )


def _timed(out: Path, train: Callable[[], tuple[Any, Trained]]) -> tuple[Any, Trained]:
    """Train, then add the stage with its CPU and wall time to ``training.json``."""
    started, cpu = time.monotonic(), time.process_time()
    model, stage = train()
    seconds = {"cpu_seconds": time.process_time() - cpu, "wall_seconds": time.monotonic() - started}
    stages = [s for s in _training(out).get("stages", []) if s["stage"] != stage.stage]
    _note(out, {"stages": [*stages, asdict(stage) | seconds]})
    return model, stage


def _note(out: Path, values: dict[str, Any]) -> None:
    """Add ``values`` to ``training.json``."""
    record = _training(out) | values
    (out / TRAINING_FILE).write_text(json.dumps(record, indent=1) + "\n")


def _training(out: Path) -> dict[str, Any]:
    path = out / TRAINING_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def _work(out: Path) -> Path:
    return out / "checkpoints"


def evaluate(request: RunRequest, echo: Callable[[str], None]) -> None:
    """Run (or resume) homiebot against a served model, a line an episode.

    A resumed run plays again the episodes that ended in an error (a server that timed out
    or stopped): they were not scored attempts.
    """
    with Store(request.store) as opened:
        plan = plan_run(request, opened)
        total, done = len(plan.todo), count(1)
        echo(f"{total} of {len(plan.jobs)} episodes to play")
        execute(plan, request, opened, lambda r: echo(episode_line(next(done), total, r)))


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Give the client the server's address and time-out through the environment, for now.

    The port is new at every start, the time-out follows the machine's load, and agent
    arguments are compared when a run resumes; both therefore stay out of them, as they do
    not decide the results.
    """
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def _check_settings(settings: LoopSettings, out: Path) -> None:
    """Write the settings that decide the models, or check them against those written.

    The evaluation's settings (tasks, repeats) are the runs' own, checked by the store when
    a run resumes.
    """
    decisive = {name: getattr(settings, name) for name in MODEL_SETTINGS}
    check_settings_file(out, json.loads(json.dumps(decisive, default=asdict)))


def _texts(rows: Any) -> list[str]:
    """Return every message text of the SFT rows (a scratch tokenizer is trained on them)."""
    return [m["content"] for row in rows for m in row["messages"]]
