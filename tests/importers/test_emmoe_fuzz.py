"""Seeded fuzzing of EMMOE folders: odd names, depth, links, sizes, empty and damaged files.

300 task trees (read as `sortie import emmoe` reads them, before placing) and 150 run-log
trees (as `sortie rescore emmoe` reads them), each built from the sample with a few hostile
changes. Each reads, or fails with a ConfigError listing its problems: no other exception, no
hang, and no file outside the tree given is opened (but the synonym table found above it).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
from pathlib import Path

import pytest

from sortie.core.errors import ConfigError
from sortie.core.files import read_regular
from sortie.importers.emmoe import read_tasks
from sortie.importers.emmoe_runs import rescore_runs
from sortie.importers.problems import Problems

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
SAMPLE = EXAMPLES / "EMMOE-100" / "data"
NAMES = [
    "²",
    "①",
    "٣",
    "𝟕",
    "７",
    "7\u200b",
    "\u202e7",
    "7\n",
    "\x1b[31m7",
    "[bold]7[\\bold]",
    "😀",
    " 7",
    "07",
    "0",
    "-1",
    "1e3",
    "9" * 200,
    "é" * 120,
    "train",
    "test",
    "..7",
]
"""Folder names a task or split folder might be given instead of its number."""
SECRET = "Task: read from outside the tree\nSubtask 1: [Go to, fridge]\nSubtask 2: [End]\n"
CASES, RUN_CASES = 300, 150


def _task_tree(root: Path, outside: Path, rng: random.Random) -> Path:
    """Build a task tree under ``root`` from the sample with a few hostile changes."""
    data = root / "data"
    for task in rng.sample(["2", "7", "20"], rng.randint(1, 3)):
        shutil.copytree(SAMPLE / "train" / task, data / "train" / task)
    shutil.copy(EXAMPLES / "name_dict.txt", root)
    for _ in range(rng.randint(1, 4)):
        rng.choice(CHANGES)(data, outside, rng)
    return data


def _folders(data: Path) -> list[Path]:
    return [p for p in data.rglob("*") if p.is_dir() and not p.is_symlink()] or [data]


def _files(data: Path) -> list[Path]:
    return [p for p in data.rglob("*") if p.is_file() and not p.is_symlink()]


def _rename(data: Path, outside: Path, rng: random.Random) -> None:
    folder = rng.choice(_folders(data))
    if folder != data:
        try:
            folder.rename(folder.with_name(rng.choice(NAMES)))
        except OSError:  # a name the file system refuses (too long, taken)
            pass


def _deepen(data: Path, outside: Path, rng: random.Random) -> None:
    folder = rng.choice(_folders(data))
    levels = rng.choice([3, 15, 17, 40])
    deep = data.joinpath(f"deep{rng.randrange(10**6)}", *[f"d{k}" for k in range(levels)])
    if folder == data or deep.is_relative_to(folder):
        return
    deep.mkdir(parents=True, exist_ok=True)
    shutil.move(folder, deep / folder.name)


def _link(data: Path, outside: Path, rng: random.Random) -> None:
    here = rng.choice(_folders(data)) / f"{rng.randint(1, 99)}"
    target = rng.choice(
        [outside, outside / "info.txt", data, here, data / "missing", Path("/dev/zero")]
    )
    if not here.exists() and not here.is_symlink():
        here.symlink_to(target)
    files = _files(data)
    if files and rng.random() < 0.5:  # a task file linking elsewhere
        chosen = rng.choice(files)
        chosen.unlink()
        chosen.symlink_to(rng.choice([outside / "info.txt", chosen, Path("/dev/zero")]))


def _empty(data: Path, outside: Path, rng: random.Random) -> None:
    files = _files(data)
    if rng.random() < 0.5 and files:
        rng.choice(files).write_bytes(b"")
    else:
        folder = rng.choice(_folders(data))
        for child in list(folder.iterdir()):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()


def _resize(data: Path, outside: Path, rng: random.Random) -> None:
    files = _files(data)
    if not files:
        return
    chosen = rng.choice(files)
    text = chosen.read_bytes()
    times = rng.choice([2, 100, 2_000])
    chosen.write_bytes(text * times if rng.random() < 0.5 else b"[" * 100_000 + text)


def _damage(data: Path, outside: Path, rng: random.Random) -> None:
    files = _files(data)
    if not files:
        return
    chosen = rng.choice(files)
    raw = bytearray(chosen.read_bytes() or b"x")
    for _ in range(rng.randint(1, 8)):
        raw[rng.randrange(len(raw))] = rng.choice(
            b'[],:"\\\x00\xff\n\r' + bytes([rng.randrange(256)])
        )
    chosen.write_bytes(bytes(raw))


def _fifo(data: Path, outside: Path, rng: random.Random) -> None:
    files = _files(data)
    if files:
        chosen = rng.choice(files)
        chosen.unlink()
        os.mkfifo(chosen)


CHANGES = [_rename, _deepen, _link, _empty, _resize, _damage, _fifo]


def _outside(root: Path) -> Path:
    """Return a folder beside the tree that holds what must never be read."""
    outside = root / "outside"
    outside.mkdir(parents=True)
    (outside / "info.txt").write_text(SECRET)
    return outside


def _alarm(signum, frame):
    raise TimeoutError("reading EMMOE folders hung on a fuzzed case")


@pytest.fixture
def hang_guard():
    """Fail with a TimeoutError if the test runs past 240 s (a hang, not a speed target)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 240.0)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def opened(monkeypatch) -> list[Path]:
    """Return the list of every file the importers open for reading, as resolved paths."""
    paths: list[Path] = []

    def recording(path: Path, limit: int) -> bytes:
        paths.append(Path(os.path.realpath(path)))  # a link loop too
        return read_regular(path, limit)

    monkeypatch.setattr("sortie.importers.problems.read_regular", recording)
    return paths


def _within(paths: list[Path], *trees: Path) -> list[Path]:
    """Return the paths that lie in none of ``trees`` (a tree may be one file)."""
    tops = [tree.resolve() for tree in trees]
    return [p for p in paths if not any(p.is_relative_to(top) for top in tops)]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and POSIX timers")
def test_fuzzed_task_folders_read_or_list_their_problems(tmp_path, hang_guard, opened):
    """Every fuzzed task tree reads, or lists problems; never a traceback, never the outside."""
    rng = random.Random(20261205)
    outcomes = {"read": 0, "refused": 0}
    for number in range(CASES):
        case = tmp_path / str(number)
        data = _task_tree(case / "tree", _outside(case), rng)
        problems = Problems("emmoe")
        read_tasks([data], problems)
        assert _within(opened, data, case / "tree" / "name_dict.txt") == [], number
        opened.clear()
        outcomes["refused" if problems.found else "read"] += 1
        shutil.rmtree(case)
    assert outcomes["read"] > 0 and outcomes["refused"] > CASES // 2, outcomes


def _run_tree(root: Path, outside: Path, rng: random.Random) -> Path:
    """Build a run-log tree under ``root`` from the sample's logs with hostile changes."""
    exp = root / "exp"
    shutil.copytree(EXAMPLES / "exp", exp)
    for _ in range(rng.randint(1, 4)):
        rng.choice(CHANGES)(exp, outside, rng)
    return exp


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and POSIX timers")
def test_fuzzed_run_logs_rescore_or_list_their_problems(tmp_path, hang_guard, opened):
    """Every fuzzed log tree is scored, or refused with a ConfigError; never a traceback."""
    rng = random.Random(20261206)
    outcomes = {"scored": 0, "refused": 0}
    for number in range(RUN_CASES):
        case = tmp_path / str(number)
        exp = _run_tree(case / "tree", _outside(case), rng)
        try:
            rescore_runs(exp, [SAMPLE])
        except ConfigError:
            outcomes["refused"] += 1
        else:
            outcomes["scored"] += 1
        assert _within(opened, exp, SAMPLE, EXAMPLES / "name_dict.txt") == [], number
        opened.clear()
        shutil.rmtree(case)
    assert outcomes["refused"] > 0 and outcomes["scored"] > 0, outcomes
