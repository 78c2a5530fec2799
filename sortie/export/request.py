"""An export of a stored run: what is asked (``ExportRequest``) and how it is made.

``export_run`` reads the run, builds the kind's rows and writes the dataset; ``emmoe`` writes
no dataset but EMMOE's own folders (``sortie.export.household.emmoe``). ``sortie export`` and the
training sets (``sortie.training.data``) both call it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sortie.core.errors import ConfigError
from sortie.core.version import VERSION
from sortie.export.files import (
    Rows,
    check_out,
    dataset_folder,
    split_file,
    write_card,
    write_dataset,
    write_split,
)
from sortie.export.source import StoredRun, open_run
from sortie.run.store import Store

if TYPE_CHECKING:
    from sortie.export.demos import DemoSplits

KINDS = ("sft", "dpo", "demos", "emmoe")
_COLUMNS = {
    "sft": "messages (TRL conversational form), images (with images=true), episode_id, key, "
    "round, kind",
    "dpo": "prompt, chosen, rejected (TRL conversational form), images (with images=true), "
    "episode_id, key, round, kind (replan, order, action or skill)",
    "emmoe": "EMMOE's layout: exp/<agent>/<task>/<run>/conversation.json and the task folders",
    "demos": "observation.image (RGB), observation.depth (float32 metres), "
    "observation.semantic (int32 instance ids; semantic_classes names them), "
    "observation.state and next.observation.state (x, y, z, yaw before and after the step), "
    "action (see export.json), action.json, timestamp, stage, stage_index, task, "
    "semantic_classes, episode_index, frame_index, next.done, next.success, episode_id, key",
}


class NothingToExport(ConfigError):
    """The run has no round an export of that kind can use (e.g. no answer was readable)."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What to export: the kind, the run, where to, and the kind's options."""

    kind: str
    store: Path
    run_id: str
    out: Path
    overrides: Mapping[str, str]
    seed: int = 0
    failures: bool = False
    paraphrase: int = 0
    model_args: Mapping[str, str] | None = None
    validation: float = 0.1
    """demos: the share of episodes in the validation split."""


def export_run(request: ExportRequest, echo: Callable[[str], None]) -> Path:
    """Write the export ``request`` asks for; return the parquet file's path.

    Raises:
        ConfigError: an unknown kind, a run of the wrong family, nothing to export, an output
            folder in the way, or a record that does not replay; nothing is written then.
        ParameterError: a bad ``-a`` argument or paraphrase count.
    """
    if request.kind not in KINDS:
        raise ConfigError(f"export {request.kind!r}: expected one of {', '.join(KINDS)}")
    check_out(request.out)
    if not request.store.exists():  # opening would create it: a missing store is a typo
        raise ConfigError(f"{request.store}: no results store here; pass --store PATH")
    if request.kind == "emmoe":
        return _emmoe(request, echo)
    _check_installed()
    if request.kind == "demos":
        return _demos(request, echo)
    store = Store(request.store)
    try:
        run = open_run(store, request.run_id, request.kind)
        rows, settings = _rows(request, run)
    finally:
        store.close()
    if not rows.rows:
        raise NothingToExport(f"run {request.run_id!r} has no usable rounds: nothing to export")
    for kind, count in sorted(rows.counts.items()):
        echo(f"{kind}: {count}")
    total = len(rows.rows)
    manifest = _manifest(request, run, total, rows.counts, settings)
    card = _card(request, run, total, rows.counts, ["train"])
    path = write_dataset(request.out, rows.rows, card, manifest)
    echo(f"wrote {len(rows.rows)} rows to {path}")
    return path


def _demos(request: ExportRequest, echo: Callable[[str], None]) -> Path:
    """Write a demos export, one split after the other, streaming the replayed steps."""
    from sortie.export.demos import SPLITS, demo_features, demo_splits, peeked, rows_of

    if request.overrides:
        raise ConfigError("sortie export demos takes no -a arguments")
    with Store(request.store) as store:
        run = open_run(store, request.run_id, request.kind)
    splits = demo_splits(run, request.failures, request.validation)
    if not splits.episodes:
        raise ConfigError(f"run {request.run_id!r} has no successful episodes: nothing to export")
    written: dict[str, int] = {}
    with dataset_folder(request.out) as folder:
        for name in sorted(splits.episodes, key=SPLITS.index):
            first, rows = peeked(rows_of(run, splits, name))
            if first is not None:
                written[name] = write_split(folder, name, rows, demo_features(first))
        if not written:
            raise ConfigError(f"run {request.run_id!r} has no steps: nothing to export")
        total, counts = sum(written.values()), splits.counts
        manifest = _manifest(request, run, total, counts, _demo_settings(request, run, splits))
        write_card(folder, _card(request, run, total, counts, list(written)), manifest)
    for kind, count in sorted(splits.counts.items()):
        echo(f"{kind}: {count}")
    echo(f"wrote {sum(written.values())} rows to {request.out} ({', '.join(written)})")
    return request.out / split_file(next(iter(written)))


def _demo_settings(request: ExportRequest, run: StoredRun, splits: DemoSplits) -> dict[str, Any]:
    from sortie.export.demos import SENSORS, action_names

    return {
        "action": list(action_names(run.family)),
        "sensors": list(SENSORS),
        "validation": request.validation,
        "episodes": {
            name: [episode.episode_id for _, episode in chosen]
            for name, chosen in splits.episodes.items()
        },
    }


def _emmoe(request: ExportRequest, echo: Callable[[str], None]) -> Path:
    from sortie.export.household.emmoe import write_emmoe

    if request.overrides:
        raise ConfigError("sortie export emmoe takes no -a arguments")
    with Store(request.store) as store:
        run = open_run(store, request.run_id, request.kind)
    return write_emmoe(run, request.out, echo)


def _rows(request: ExportRequest, run: StoredRun) -> tuple[Rows, dict[str, Any]]:
    from sortie.export.household.paraphrase import paraphrased
    from sortie.export.household.planner import planned_rounds
    from sortie.export.household.rows import dpo_rows, sft_rows

    if request.paraphrase < 0 or (request.paraphrase and request.kind != "sft"):
        raise ConfigError("--paraphrase: a count of 0 or more, for sft only")
    pairs = list(planned_rounds(run, request.overrides))
    shown = pairs[0][0].shows_images if pairs else True
    rounds = [planned for _, planned in pairs]
    if request.kind == "dpo":
        return dpo_rows(rounds, shown, request.seed), {"images": shown, "seed": request.seed}
    counts = Rows()
    more = paraphrased(rounds, request.paraphrase, request.model_args or {}, counts)
    rows = sft_rows(more, shown)
    rows.counts.update(counts.counts)
    return rows, {"images": shown, "paraphrase": request.paraphrase}


def _check_installed() -> None:
    try:
        import datasets  # noqa: F401
    except ImportError:
        raise ConfigError(
            "sortie export needs Hugging Face datasets: pip install 'sortie[export]'"
        ) from None


def _manifest(
    request: ExportRequest,
    run: StoredRun,
    total: int,
    counts: Mapping[str, int],
    settings: dict[str, Any],
) -> dict[str, Any]:
    return {
        "kind": request.kind,
        "store": str(request.store),
        "run": run.run_id,
        "family": run.family,
        "agent": run.config.agent.model_dump(),
        "arguments": dict(request.overrides),
        "rows": total,
        "counts": dict(counts),
        "settings": settings,
        "sortie_version": VERSION,
    }


def _card(
    request: ExportRequest,
    run: StoredRun,
    total: int,
    counts: Mapping[str, int],
    splits: list[str],
) -> str:
    agent = run.config.agent.name
    counted = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    files = "".join(f"  - split: {name}\n    path: {split_file(name)}\n" for name in splits)
    return f"""---
configs:
- config_name: default
  data_files:
{files}---
# sortie export: {request.kind} from run {run.run_id}

Made by `sortie export {request.kind}` (sortie {VERSION}) from run `{run.run_id}`
({run.family}, agent `{agent}`, {len(run.episodes)} episodes) of the store `{request.store}`.
The run's records were replayed on sortie's embedded simulator to rebuild every observation.

- Rows: {total} ({counted})
- Columns: {_COLUMNS[request.kind]}
- Settings and counts: `export.json`

Splits: {", ".join(splits)}. Load it with `datasets.load_dataset("{request.out}")`.
"""
