"""Writing an export: a Hugging Face dataset folder that ``datasets.load_dataset`` reads.

The folder holds a parquet file per split, ``data/train-00000-of-00001.parquet`` and (demos)
``data/validation-00000-of-00001.parquet`` (images inside them, as PNG bytes),
``README.md`` (a dataset card saying where the data came from and what each column is) and
``export.json`` (the counts and the command's settings). It is written under a temporary
name and renamed when whole, so an export that fails leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sortie.core.errors import ConfigError
from sortie.core.records_io import writing

if TYPE_CHECKING:
    import datasets

DATA_FILE = "data/train-00000-of-00001.parquet"
CHUNK = 100
"""Rows written at a time at most when the rows come from a generator."""
CHUNK_BYTES = 64 * 2**20
"""Bytes of arrays held at most per write (a 1920×1080 step's three images are 23 MB)."""


@dataclass
class Rows:
    """Dataset rows and how many of each kind were made."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def check_out(out: Path) -> None:
    """Refuse an output folder that exists and is not empty (nothing is overwritten).

    The rule of every output folder (``sortie.core.folders``), for a dataset written whole:
    an earlier export is not updated, so only a new or empty folder will do.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out}: exists and is not an empty folder; choose a new --out")


def write_dataset(
    out: Path, rows: list[dict[str, Any]], card: str, manifest: Mapping[str, Any]
) -> Path:
    """Write ``rows`` as a dataset folder at ``out`` (one ``train`` split); return its file.

    Raises:
        ConfigError: ``out`` is in the way, or there are no rows.
        ImportError: ``datasets`` is not installed (``pip install 'sortie[export]'``).
    """
    if not rows:
        check_out(out)
        raise ConfigError("nothing to export")
    with dataset_folder(out) as folder:
        write_split(folder, "train", rows)
        write_card(folder, card, manifest)
    return out / DATA_FILE


@contextmanager
def dataset_folder(out: Path) -> Iterator[Path]:
    """Yield a hidden folder to write the dataset in; rename it to ``out`` if all went well.

    Raises:
        ConfigError: ``out`` exists and is not an empty folder.
        StoreError: the disk is full or read-only (``records_io.writing``); nothing is left.
    """
    import datasets

    datasets.disable_progress_bars()  # the command prints its own counts
    check_out(out)
    out = out.resolve() if out.is_symlink() else out  # a link to an empty folder: fill that
    _remove_stale_partials(out)
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with writing(partial, "writing the export"):
            (partial / "data").mkdir(parents=True)
            yield partial
            if out.exists():
                out.rmdir()  # empty, checked above
            os.replace(partial, out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def split_file(split: str) -> str:
    """Return the parquet file of ``split`` inside a dataset folder."""
    return f"data/{split}-00000-of-00001.parquet"


def write_split(
    folder: Path,
    split: str,
    rows: Iterable[dict[str, Any]],
    features: datasets.Features | None = None,
) -> int:
    """Write ``rows`` as the parquet file of ``split``; return how many were written.

    Without ``features`` the rows are a list whose column types ``datasets`` infers. With
    them, the rows may be a generator: they are written ``CHUNK`` rows or ``CHUNK_BYTES`` of
    arrays at a time, whichever comes first, so an export of many images (or of large ones)
    never holds them all in memory, and compressed with zstd.
    """
    import datasets
    import pyarrow.parquet as pq

    path = str(folder / split_file(split))
    if features is None:
        whole = list(rows)
        datasets.Dataset.from_list(whole).to_parquet(path)
        return len(whole)
    written = 0
    split_floats = _float_arrays(features)
    with pq.ParquetWriter(
        path,
        features.arrow_schema,
        compression="zstd",
        use_dictionary=_dictionary_columns(features),
        use_byte_stream_split=split_floats,
    ) as writer:
        for chunk in _chunks(iter(rows)):
            table = datasets.Dataset.from_list(chunk, features=features)
            writer.write_table(table.with_format("arrow")[:])
            written += len(chunk)
    return written


def _chunks(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Yield ``rows`` in lists of at most ``CHUNK`` rows and about ``CHUNK_BYTES`` of arrays."""
    chunk: list[dict[str, Any]] = []
    held = 0
    for row in rows:
        chunk.append(row)
        held += sum(v.nbytes for v in row.values() if isinstance(v, np.ndarray))
        if len(chunk) >= CHUNK or held >= CHUNK_BYTES:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def _float_arrays(features: datasets.Features) -> list[str]:
    """Return the parquet paths of the float array columns (depth images).

    Their bytes are split by significance before compression (byte stream split), which
    compresses float images far better than dictionaries do: 17 KB a step of an outdoor
    rescue episode instead of 30 KB (docs/export.md).
    """
    import datasets

    return [
        f"{name}.list.element.list.element"  # the leaf of an Array2D's two nested lists
        for name, feature in features.items()
        if isinstance(feature, datasets.Array2D) and feature.dtype.startswith("float")
    ]


def _dictionary_columns(features: datasets.Features) -> list[str]:
    """Return the parquet paths of the columns worth a dictionary: all but images and floats.

    Images are PNG bytes, rarely repeated; ids, stages, texts and poses repeat a lot.
    """
    import datasets

    paths = {datasets.Array2D: "{}.list.element.list.element", datasets.List: "{}.list.element"}
    floats = _float_arrays(features)
    return [
        path
        for name, feature in features.items()
        if not isinstance(feature, datasets.Image)
        and (path := paths.get(type(feature), "{}").format(name)) not in floats
    ]


def write_card(folder: Path, card: str, manifest: Mapping[str, Any]) -> None:
    """Write the dataset card ``README.md`` and ``export.json`` into ``folder``."""
    (folder / "README.md").write_text(card, encoding="utf-8")
    text = json.dumps(dict(manifest), indent=2, sort_keys=True)
    (folder / "export.json").write_text(text + "\n", encoding="utf-8")


def _remove_stale_partials(out: Path) -> None:
    """Remove the half-written folders that killed exports to ``out`` left behind.

    A partial folder is named for the writing process; one whose process is gone is stale.
    """
    for partial in out.parent.glob(f".{out.name}.partial-*"):
        pid = partial.name.rsplit("-", 1)[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: leave its folder alone
    return True
