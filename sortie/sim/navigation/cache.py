"""Built navigation graphs kept by scene digest: in this process, and on disk between runs.

A graph depends only on the scene's non-portable geometry, the walker planned for, the cell
size and the code that builds it; the key hashes all four (the code as the bytes of the
navigation modules and the ray caster, so any change to them makes new keys). On disk a graph
is an uncompressed ``.npz`` of what the ray casts found (node heights, columns, classes,
blocked moves, door blocks); the edges are linked again on loading, which is a tenth of a
build. Files are written to a temporary name and renamed, so parallel workers never read a
half-written one. Each file holds its key (what it was derived from: the scene digest, shape,
cell and code) and the SHA-256 of its arrays; a file that does not load (damaged, truncated,
not a regular file), holds another key (a file copied or swapped in under this name) or arrays
of another hash is rebuilt and replaced, never used.

The folder is ``$SORTIE_CACHE/graphs``, else ``$XDG_CACHE_HOME/sortie/graphs``, else
``~/.cache/sortie/graphs``; ``SORTIE_GRAPH_CACHE=0`` turns the disk cache off. The oldest
files go once more than ``DISK_KEPT`` are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from dataclasses import astuple, dataclass
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ConfigError
from sortie.core.files import read_npz, read_regular
from sortie.sim.scene import Dynamics, Scene
from sortie.sim.shapes import WalkerShape

FORMAT = 2
"""Bumped when the file layout changes (2: the key and the arrays' hash inside)."""
DISK_KEPT = 400
"""Graph files kept on disk (about 1 MB each for a 100 m world at 0.25 m cells)."""
MEMORY_KEPT = 4
"""Graphs kept in this process (a repeated world costs nothing the second time)."""
SWITCH = "SORTIE_GRAPH_CACHE"
MAX_FILE_BYTES = 2**30
"""A larger cache file is not read (a 100 m world's is about 1 MB): it is built again."""


@dataclass(frozen=True, slots=True)
class GraphParts:
    """What a graph build finds with rays; the edges follow from it without casting.

    Attributes:
        z: (N,) node heights; x and y are their columns' centres.
        columns: (N,) grid column of each node.
        semantic: (N,) class id of what each node stands on.
        blocked_moves: (N, 8) whether the probe toward each neighbour hit before it.
        doors: names of the openables.
        door_nodes: per door, the nodes its closed geometry blocks.
    """

    z: NDArray[np.float64]
    columns: NDArray[np.int64]
    semantic: NDArray[np.int32]
    blocked_moves: NDArray[np.bool_]
    doors: tuple[str, ...]
    door_nodes: tuple[NDArray[np.int64], ...]


_memory: OrderedDict[str, object] = OrderedDict()


def graph_key(scene: Scene, shape: WalkerShape, cell: float) -> str:
    """Return the key of the graph of ``scene`` for ``shape`` at ``cell`` metres."""
    # Lighting, the top-down cut and routes do not change a graph: left out of the key.
    planned = Scene([o for o in scene.objects if o.dynamics is not Dynamics.PORTABLE], scene.bounds)
    h = hashlib.sha256(planned.digest().encode())
    h.update(json.dumps([FORMAT, astuple(shape), cell, _code_digest()]).encode())
    return h.hexdigest()


def remembered(key: str) -> object | None:
    """Return the graph kept in this process under ``key``, or None."""
    graph = _memory.get(key)
    if graph is not None:
        _memory.move_to_end(key)
    return graph


def remember(key: str, graph: object) -> None:
    """Keep ``graph`` in this process under ``key``, dropping the least recently used."""
    _memory[key] = graph
    _memory.move_to_end(key)
    while len(_memory) > MEMORY_KEPT:
        _memory.popitem(last=False)


def folder() -> Path | None:
    """Return the disk cache's folder, or None when the disk cache is off."""
    if os.environ.get(SWITCH, "1") == "0":
        return None
    root = os.environ.get("SORTIE_CACHE")
    if root:
        return Path(root) / "graphs"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "sortie" / "graphs"


def load(key: str) -> GraphParts | None:
    """Return the parts stored under ``key``, or None if absent, off or unreadable."""
    where = folder()
    path = where / f"{key}.npz" if where else None
    if path is None or not path.is_file():
        return None
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except (OSError, ConfigError):
        return None
    arrays = read_npz(data, len(data))  # np.savez stores: nothing unpacks larger than the file
    if arrays is None or not _vouched(arrays, key):
        return None  # another world's graph, or edited: the caller builds again and replaces it
    try:
        return _parts_of(arrays)
    except (ValueError, KeyError, TypeError, IndexError):
        return None  # a damaged file: the caller builds again and replaces it


def store(key: str, parts: GraphParts) -> None:
    """Write ``parts`` under ``key`` (atomically); a cache that cannot be written is skipped."""
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        arrays = _arrays_of(parts)
        stamp = {"key": np.array(key), "digest": np.array(_digest(arrays))}
        with tempfile.NamedTemporaryFile(dir=where, suffix=".tmp", delete=False) as out:
            np.savez(out, **arrays, **stamp)  # type: ignore[arg-type]
        os.replace(out.name, where / f"{key}.npz")
        _trim(where)
    except OSError:
        return


def _arrays_of(parts: GraphParts) -> dict[str, NDArray]:
    sizes = np.array([len(nodes) for nodes in parts.door_nodes], np.int64)
    nodes = np.concatenate(parts.door_nodes) if parts.door_nodes else np.zeros(0, np.int64)
    return {
        "z": parts.z,
        "columns": parts.columns.astype(np.int32),
        "semantic": parts.semantic,
        "blocked_moves": np.packbits(parts.blocked_moves, axis=1),
        "doors": np.array(parts.doors, dtype=str),
        "door_sizes": sizes,
        "door_nodes": nodes.astype(np.int64),
    }


def _vouched(arrays: dict[str, NDArray], key: str) -> bool:
    """Return whether ``arrays`` were stored under ``key`` and are the ones hashed then."""
    stamp = {name: arrays.pop(name, None) for name in ("key", "digest")}
    if any(
        value is None or value.shape != () or value.dtype.kind != "U" for value in stamp.values()
    ):
        return False
    return str(stamp["key"]) == key and str(stamp["digest"]) == _digest(arrays)


def _digest(arrays: dict[str, NDArray]) -> str:
    """Return the SHA-256 of ``arrays``: names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, array.dtype.str, array.shape]).encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _parts_of(data: dict[str, NDArray]) -> GraphParts:
    columns = data["columns"].astype(np.int64)
    blocked = np.unpackbits(data["blocked_moves"], axis=1, count=8).astype(bool)
    if blocked.shape != (len(columns), 8) or len(data["z"]) != len(columns):
        raise ValueError("graph cache: arrays of different lengths")
    cuts = np.cumsum(data["door_sizes"])[:-1]
    door_nodes = tuple(np.split(data["door_nodes"].astype(np.int64), cuts))
    doors = tuple(str(name) for name in data["doors"])
    if len(door_nodes) != len(doors):
        door_nodes = door_nodes[: len(doors)]  # no doors: split gives one empty piece
    return GraphParts(
        data["z"].astype(np.float64),
        columns,
        data["semantic"].astype(np.int32),
        blocked,
        doors,
        door_nodes,
    )


def _trim(where: Path) -> None:
    files = sorted(where.glob("*.npz"), key=lambda p: p.stat().st_mtime)
    for old in files[: max(0, len(files) - DISK_KEPT)]:
        old.unlink(missing_ok=True)


@cache
def _code_digest() -> str:
    """Return a hash of the code a graph comes from, and of the ray engine's versions.

    The files are ``code_files()``; numpy's and embreex's versions stand for the libraries.
    """
    import embreex

    files = code_files()
    h = hashlib.sha256(f"{np.__version__} {getattr(embreex, '__version__', '?')}".encode())
    for path in files:
        if path.is_file():
            h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()


def code_files() -> list[Path]:
    """Return the sources a graph depends on, whose bytes are part of its key.

    The navigation package (its C too), the scene, meshes, semantic classes and ray casting:
    both engines' sources and the exact decision of a hit they share.
    """
    here = Path(__file__).resolve().parent
    sim = here.parent
    shared = ("raycast.py", "exact.py", "scene.py", "mesh.py", "semantics.py", "packets.py")
    return [
        *sorted(here.glob("*.py")),
        *sorted(here.glob("*.c")),
        *(sim / name for name in (*shared, "_packets.c", "_exact.h")),
    ]
