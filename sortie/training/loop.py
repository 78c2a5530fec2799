"""EMMOE's training loop, closed: expert data → fine-tune → serve → score on held-out tasks.

1. The oracle plays household-v1's train tasks; its rounds are exported as SFT and DPO rows
   with homiebot's text prompt (``sortie.training.data``, which checks the test split is out).
2. The base model is saved as it is (the zero-shot model), then fine-tuned with TRL
   (``sortie.training.finetune``) and saved again.
3. Each model is served by ``transformers serve`` on loopback, and ``homiebot`` plays
   household-test-v1 against it with the same prompt settings, greedy, ``repeats`` times.

Everything lands under one folder: the sets, both models, the server logs, the results store
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

from sortie.core.errors import ParameterError
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from sortie.training.bases import GEMMA, MAX_NEW_TOKENS, load_base, save
from sortie.training.data import TEST_SUITE, load_rows, make_sets
from sortie.training.finetune import TrainSettings, describe, describe_steps, fine_tune
from sortie.training.folders import check_settings_file
from sortie.training.pace import Waits, episode_line, machine_load, scaled_waits
from sortie.training.server import served

BASE_URL_ENV = "SORTIE_MODEL_BASE_URL"
TIMEOUT_ENV = "SORTIE_MODEL_TIMEOUT"
MODEL_SETTINGS = ("base", "train", "train_tasks", "window")
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
    repeats: int = 3
    window: int = 0
    """Earlier rounds homiebot shows in full; 0 keeps requests short for a CPU."""
    timeout: float | None = None
    """Seconds homiebot waits for one answer; None: 300 s times the machine's load per core
    (``sortie.training.pace``). Not part of the runs' settings: it does not decide results."""
    start_timeout: float | None = None
    """Seconds a server may take to load its model and pass its health check; None: 300 s
    times the machine's load per core."""

    def __post_init__(self) -> None:
        for name in ("timeout", "start_timeout"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ParameterError(f"training loop: {name} must be > 0 seconds, got {value}")


@dataclass(frozen=True, slots=True)
class LoopResult:
    """Where the scored runs are: the store and the two run ids (zero-shot, fine-tuned)."""

    store: Path
    runs: tuple[str, str]


def prompt_args(settings: LoopSettings) -> dict[str, str]:
    """Return homiebot's prompt arguments, shared by the training rows and the evaluation."""
    return {"observation": "text", "window": str(settings.window)}


def run_loop(settings: LoopSettings, out: Path, echo: Callable[[str], None]) -> LoopResult:
    """Run the whole pipeline under ``out``; return where its two runs are stored.

    Raises:
        ConfigError: ``out`` holds a pipeline made with other settings, the training rows
            touch the test split, the base is unknown, or a server does not start.
    """
    out.mkdir(parents=True, exist_ok=True)
    _check_settings(settings, out)
    load = machine_load()
    waits = scaled_waits(settings.timeout, settings.start_timeout, load)
    echo(waits.describe(load))
    models = _models(settings, out, echo)
    runs = [_score(settings, model, out, waits, echo) for model in models.items()]
    return LoopResult(out / "results.db", (runs[0], runs[1]))


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
    log = out / f"serve-{label}.log"
    echo(f"phase 3/3: scoring {label} on {TEST_SUITE} ({settings.repeats} repeats)")
    echo(f"starting transformers serve for {label} (log {log}) …")
    started = time.monotonic()
    with served(folder, log, waits.start) as server:
        echo(f"server ready in {time.monotonic() - started:.0f} s")
        with _environment({BASE_URL_ENV: server.base_url, TIMEOUT_ENV: str(waits.answer)}):
            args = {**prompt_args(settings), "model": server.model}
            args |= {"max_tokens": str(MAX_NEW_TOKENS)}
            evaluate(
                settings, out / "results.db", run_id, args, lambda line: echo(f"{label}: {line}")
            )
    return run_id


def _models(settings: LoopSettings, out: Path, echo: Callable[[str], None]) -> dict[str, Path]:
    """Return the zero-shot and fine-tuned model folders, training them if not saved yet."""
    folders = {"zero-shot": out / "models" / "base", "fine-tuned": out / "models" / "tuned"}
    if all((folder / "config.json").exists() for folder in folders.values()):
        echo(f"models already trained in {out / 'models'}")
        return folders
    echo("phase 1/3: the oracle plays the train tasks; their rounds become training rows")
    sets = make_sets(out / "data", prompt_args(settings), settings.train_tasks, echo)
    echo(f"training rows: {dict(sets.rows)} from {len(sets.tasks)} train tasks")
    sft, dpo = load_rows(sets.sft), load_rows(sets.dpo)
    base = load_base(settings.base, _texts(sft), settings.train.seed)
    save(base.model, base.tokenizer, folders["zero-shot"])
    echo(f"phase 2/3: fine-tuning {settings.base} ({describe_steps(settings.train)})")
    started, cpu = time.monotonic(), time.process_time()
    model, stages = fine_tune(base, (sft, dpo), settings.train, out / "checkpoints", echo)
    seconds = {"cpu_seconds": time.process_time() - cpu, "wall_seconds": time.monotonic() - started}
    for stage in stages:
        echo(describe(stage))
    save(model, base.tokenizer, folders["fine-tuned"])
    record = {"tasks": list(sets.tasks), "rows": dict(sets.rows), **seconds}
    record["stages"] = [asdict(stage) for stage in stages]
    (out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
    return folders


def evaluate(
    settings: LoopSettings,
    store: Path,
    run_id: str,
    args: dict[str, str],
    echo: Callable[[str], None],
) -> None:
    """Run (or resume) homiebot on the test split against a served model, a line an episode.

    A resumed run plays again the episodes that ended in an error (a server that timed out
    or stopped): they were not scored attempts.
    """
    request = RunRequest(
        (TEST_SUITE,),
        "homiebot",
        agent_args=args,
        store=store,
        run_id=run_id,
        repeats=settings.repeats,
        limit=settings.test_tasks,
        retry_errors=True,
    )
    with Store(store) as opened:
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
