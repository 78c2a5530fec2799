"""The columns file beside a record.

A run writes it; a read loads it instead of parsing the steps, and ignores it whenever it does
not fit the record's bytes.
"""

import bz2
import hashlib
import io
import lzma
import math
import os
import random
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from sortie.core import records_io
from sortie.core.columns import StepColumns, StepRow, columns_file, load_columns
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.core.records import EventRecord, StepRecord
from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
from sortie.missions.registry import FAMILIES
from sortie.run.suite import RunSettings, run_suite
from sortie.testing.episodes import aerial_hop, room_rescue
from tests.deadline import within


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Records of a rescue and of three aerial episodes, written by a run (random agent)."""
    folder = tmp_path_factory.mktemp("records")
    rescue = Suite(SuiteHeader(suite="t"), [room_rescue(budget_s=4.0)])
    hops = Suite(SuiteHeader(suite="t"), [aerial_hop(episode_id=f"hop-{i}") for i in range(3)])
    done = run_suite(rescue, "random", {}, RunSettings(folder / "rescue"))
    done += run_suite(hops, "random", {}, RunSettings(folder / "aerial"))
    return [result.path for result in done]


def _scores(trajectory):
    scorer = FAMILIES.get(trajectory.header.episode.family).load_scorer()
    return scorer(trajectory)


def _same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name] or (math.isnan(a[name]) and math.isnan(b[name])), name


def _without_columns(path, tmp_path):
    """Return the record at ``path`` read from a copy that has no columns file."""
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    return read_trajectory(copy)


def _equal_columns(a, b):
    for name in StepColumns.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_a_run_writes_columns_that_score_as_the_step_lines_do(records, tmp_path, monkeypatch):
    parsed = []
    original = records_io._parse
    monkeypatch.setattr(
        records_io, "_parse", lambda model, *rest: parsed.append(model) or original(model, *rest)
    )
    for path in records:
        assert columns_file(path).is_file()
        fast = read_trajectory(path)
        assert StepRecord not in parsed  # the steps came from the columns file
        slow = _without_columns(path, tmp_path)
        _equal_columns(fast.columns, StepColumns.of(slow.steps))
        _same(_scores(fast), _scores(slow))
        assert fast.steps == slow.steps  # parsed on first use, with the same checks
        assert StepRecord in parsed
        parsed.clear()


def test_a_record_changed_after_its_columns_were_written_is_read_from_its_lines(records, tmp_path):
    path = tmp_path / records[0].name
    for source in (records[0], columns_file(records[0])):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    before = _scores(read_trajectory(path))
    lines = path.read_text().splitlines(keepends=True)
    assert '"collisions":0' in lines[1]
    lines[1] = lines[1].replace('"collisions":0', '"collisions":1')
    path.write_text("".join(lines))
    after = _scores(read_trajectory(path))
    assert after["collisions"] == before["collisions"] + 1


def test_columns_files_swapped_between_two_records_are_ignored(tmp_path):
    """Two records of as many steps with each other's columns file read from their own lines."""
    episodes = [room_rescue(budget_s=4.0, episode_id=f"r-{i}") for i in range(2)]
    done = run_suite(Suite(SuiteHeader(suite="t"), episodes), "random", {}, RunSettings(tmp_path))
    first, second = (result.path for result in done)
    own = {path: read_trajectory(path).columns for path in (first, second)}
    assert len(own[first]) == len(own[second])  # a swap keeps every shape
    assert not np.array_equal(own[first].position, own[second].position)
    one, other = columns_file(first).read_bytes(), columns_file(second).read_bytes()
    columns_file(first).write_bytes(other)
    columns_file(second).write_bytes(one)
    for path in (first, second):
        _equal_columns(read_trajectory(path).columns, own[path])


def _arrays(path):
    with np.load(columns_file(path)) as archive:
        return {name: archive[name] for name in archive.files}


def _spoil(arrays, how):
    """Return the columns file's arrays spoiled one way (each must make the file unusable)."""
    spoiled = dict(arrays)
    n = len(spoiled["collisions"])
    if how == "other version":
        spoiled["version"] = np.array(2)
    elif how == "other record":
        spoiled["digest"] = np.zeros(32, np.uint8)
    elif how == "a step short":
        spoiled["position"] = spoiled["position"][:-1]
    elif how == "stage code past its table":
        spoiled["stage"] = np.full(n, len(spoiled["stage_names"]), np.int32)
    elif how == "event of a step that is not there":
        spoiled["event_step"] = np.full(2, n, np.int64)
        spoiled["event_kind"] = np.zeros(2, np.int32)
        spoiled["event_names"] = np.array(["contact"])
    elif how == "positions as integers":
        spoiled["position"] = spoiled["position"].astype(np.int64)
    elif how == "a position not a number":
        spoiled["position"] = np.full_like(spoiled["position"], np.nan)
    elif how == "a column missing":
        del spoiled["timings"]
    elif how == "a column too many":
        spoiled["extra"] = np.zeros(n)
    return spoiled


@pytest.mark.parametrize(
    "how",
    [
        "other version",
        "other record",
        "a step short",
        "stage code past its table",
        "event of a step that is not there",
        "positions as integers",
        "a position not a number",
        "a column missing",
        "a column too many",
    ],
)
def test_columns_that_do_not_fit_the_record_are_ignored(records, tmp_path, how):
    path = records[1]
    good = read_trajectory(path).columns
    buffer = io.BytesIO()
    np.savez(buffer, **_spoil(_arrays(path), how))
    side = tmp_path / columns_file(path).name
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    side.write_bytes(buffer.getvalue())
    read = read_trajectory(copy)
    _equal_columns(read.columns, good)
    _same(_scores(read), _scores(read_trajectory(path)))


@pytest.mark.parametrize("content", [b"", b"not a zip file", b"PK\x03\x04" + b"\0" * 40])
def test_an_unreadable_or_oversized_columns_file_is_ignored(records, tmp_path, content):
    path = records[1]
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    columns_file(copy).write_bytes(content)
    assert len(read_trajectory(copy).steps) == len(read_trajectory(path).steps)
    oversized = columns_file(path).read_bytes() + b"\0" * (path.stat().st_size + 2**16)
    columns_file(copy).write_bytes(oversized)
    _equal_columns(read_trajectory(copy).columns, read_trajectory(path).columns)


def _step(index, stage, distance, events=(), action=None):
    return StepRecord(
        index=index,
        pose=Pose(float(index), 2.0 * index, 0.5, 0.0),
        action=action or {"type": "move", "speed": 0.5},
        events=[EventRecord(kind=kind) for kind in events],
        stage=stage,
        target_distance=distance,
        collisions=int("contact" in events),
        clock_sim=0.5 * index,
        clock_latency=0.0,
    )


def test_columns_code_stages_actions_and_events_per_step():
    steps = [
        _step(1, "S1", 4.0),
        _step(2, "S1", None, ["contact"]),
        _step(3, None, None, ["clamped", "contact"], {"type": "task", "kind": "land"}),
        _step(4, "S2", 1.5, ["clamped"]),
    ]
    columns = StepColumns.of(steps)
    assert columns.position.tolist() == [[1, 2, 0.5], [2, 4, 0.5], [3, 6, 0.5], [4, 8, 0.5]]
    assert [columns.stage_names[c] if c >= 0 else None for c in columns.stage] == [
        "S1",
        "S1",
        None,
        "S2",
    ]
    np.testing.assert_array_equal(columns.target_distance, [4.0, np.nan, np.nan, 1.5])
    assert columns.action_is("task").tolist() == [False, False, True, False]
    assert columns.with_event("contact").tolist() == [False, True, True, False]
    assert columns.events("clamped") == 2 and columns.events("invalid_action") == 0
    assert columns.collisions.tolist() == [0, 1, 1, 0]


def test_a_record_without_steps_reads_back_through_its_columns(tmp_path, monkeypatch):
    """A job that never ran (its worker kept dying) has a header and a footer: zero rows."""
    from sortie.core.records import FailureReason
    from sortie.run.jobs import Job, RunSpec, record_failure

    run = RunSpec.resolve("random", {}, family="rescue")
    job = Job("t", room_rescue(), 0, tmp_path / "lost.jsonl", run)
    result = record_failure(job, FailureReason.BACKEND_ERROR, "the worker died", 3)
    assert columns_file(job.record).is_file()

    def line_by_line(*args):
        raise AssertionError("read line by line: the columns file was not used")

    monkeypatch.setattr(records_io, "_read_lines", line_by_line)
    read = read_trajectory(job.record)
    assert len(read.columns) == 0 and read.steps == [] and read.footer.outcome == "error"
    _same(_scores(read), result.metrics)


def test_no_flipped_bit_of_a_columns_file_raises_or_changes_a_score(records, tmp_path):
    """Seeded bit flips over a real columns file never raise, and every read scores as the JSONL."""
    path = records[0]
    expected = _scores(_without_columns(path, tmp_path))
    copy = tmp_path / "flipped" / path.name
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    good, rng = columns_file(path).read_bytes(), random.Random(40)
    for _ in range(400):
        flipped = bytearray(good)
        flipped[rng.randrange(len(good))] ^= 1 << rng.randrange(8)
        columns_file(copy).write_bytes(bytes(flipped))
        _same(_scores(read_trajectory(copy)), expected)


def _repacked(data, method):
    """Return the .npz ``data`` with every member compressed by ``method``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", method) as packed:
        for member in source.infolist():
            packed.writestr(member.filename, source.read(member))
    return out.getvalue()


def _fit(path):
    """Return the digest and step count a columns file of the record at ``path`` must fit."""
    data = path.read_bytes()
    return hashlib.sha256(data).digest(), data.count(b"\n") - 2


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_or_lzma_members_are_refused_before_any_is_unpacked(records, monkeypatch, method):
    """A columns file whose members are bzip2 or lzma is unused, and nothing is decompressed."""
    packed = _repacked(columns_file(records[1]).read_bytes(), method)

    def unpacking(*_, **__):
        raise AssertionError("a member was unpacked")

    monkeypatch.setattr(bz2, "BZ2Decompressor", unpacking)
    monkeypatch.setattr(lzma, "LZMADecompressor", unpacking)
    assert load_columns(packed, *_fit(records[1]), budget=10**9) is None


def test_deflated_members_load_only_within_the_budget(records):
    """Deflated members load when their declared sizes fit the budget, and are refused beyond."""
    good = columns_file(records[1]).read_bytes()
    packed = _repacked(good, zipfile.ZIP_DEFLATED)
    _equal_columns(load_columns(packed, *_fit(records[1]), budget=len(good)), _columns(records[1]))
    assert load_columns(packed, *_fit(records[1]), budget=len(good) // 2) is None


def _columns(path):
    return load_columns(columns_file(path).read_bytes(), *_fit(path))


def test_a_columns_file_linked_to_dev_zero_is_ignored_at_once(records, tmp_path):
    """A columns file that is a link to /dev/zero is not read: the record reads from its lines."""
    copy = tmp_path / records[1].name
    copy.write_bytes(records[1].read_bytes())
    columns_file(copy).symlink_to("/dev/zero")
    with within(10):
        _equal_columns(read_trajectory(copy).columns, _columns(records[1]))


def test_a_columns_file_that_is_a_fifo_is_ignored_without_waiting(records, tmp_path):
    """A FIFO in place of a columns file is not waited on: the record reads from its lines."""
    copy = tmp_path / records[1].name
    copy.write_bytes(records[1].read_bytes())
    os.mkfifo(columns_file(copy))
    with within(10):
        _equal_columns(read_trajectory(copy).columns, _columns(records[1]))


def test_scoring_a_run_reads_the_columns_its_recorder_wrote_not_the_lines(tmp_path, monkeypatch):
    """The recorder vouches for the lines it wrote: scoring parses no step line."""
    parsed = []
    original = records_io._parse
    monkeypatch.setattr(
        records_io, "_parse", lambda model, *rest: parsed.append(model) or original(model, *rest)
    )
    suite = Suite(SuiteHeader(suite="t"), [room_rescue(budget_s=4.0)])
    (result,) = run_suite(suite, "random", {}, RunSettings(tmp_path))
    assert result.footer.steps > 10
    assert StepRecord not in parsed


def test_a_line_the_reader_would_refuse_gets_no_columns_and_loses_stale_ones(records, tmp_path):
    """An integer of 20 digits in an action: the reader refuses it, so no columns vouch for it."""
    from sortie.core.records import recorded_action
    from sortie.run.episode import line_of

    path = tmp_path / "long.jsonl"
    (tmp_path / columns_file(path).name).write_bytes(columns_file(records[0]).read_bytes())
    read = read_trajectory(records[0])
    huge = read.steps[0].model_copy(
        update={"action": recorded_action({"type": "move", "turn": 10**20, "speed": 0.0})}
    )
    steps = [huge, *read.steps[1:]]
    lines = [line_of(read.header), *(line_of(s) for s in steps), line_of(read.footer)]
    records_io.write_record(path, [line.encode() for line in lines], [StepRow.of(s) for s in steps])
    assert not columns_file(path).exists()
    with pytest.raises(ConfigError, match="at most ±2\\^63"):
        _ = read_trajectory(path).steps


def test_a_header_with_a_long_integer_gets_no_columns_though_its_steps_are_vouched_for(
    records, tmp_path
):
    """The header and footer are scanned for long integers even when the steps need not be."""
    from sortie.run.episode import line_of

    path = tmp_path / "seeded.jsonl"
    read = read_trajectory(records[0])
    header = read.header.model_copy(update={"seed": 2**62})  # 19 digits
    texts = [line_of(header), *(line_of(s) for s in read.steps), line_of(read.footer)]
    lines, rows = [text.encode() for text in texts], [StepRow.of(s) for s in read.steps]
    records_io.write_record(path, lines, rows, readable=True)
    assert not columns_file(path).exists()
    records_io.write_record(path, [line_of(read.header).encode(), *lines[1:]], rows, True)
    assert columns_file(path).exists()


@pytest.mark.parametrize(
    ("text", "long"),
    [
        (b'{"t":0.0012345678901234567}', False),  # a float's fraction: 19 digits after "."
        (b'{"t":123456789012345678}', False),  # 18 digits
        (b'{"t":1234567890123456789}', True),
        (b'{"t":-12345678901234567890}', True),
        (b'{"t":"id1234567890123456789"}', True),  # looks like one: no columns, no harm
        (b"[0.00000000000000000001,1.5]", False),
    ],
)
def test_long_integers_are_told_from_long_fractions(text, long):
    """Runs of 19 digits or more count unless they follow a decimal point."""
    assert records_io._long_integer(text) is long


def _rewritten(path, folder):
    """Return a copy of the record at ``path`` written by ``write_record``, and its answer."""
    read = read_trajectory(path)
    lines = [line.encode() for line in (path.read_text().splitlines())]
    copy = folder / path.name
    return copy, records_io.write_record(copy, lines, [StepRow.of(s) for s in read.steps], True)


def test_a_record_scored_as_written_is_not_read_from_the_disk_again(records, tmp_path):
    """The bytes and columns ``write_record`` returns are read, not the files it wrote."""
    path, written = _rewritten(records[0], tmp_path)
    assert written.data == path.read_bytes() and written.columns is not None
    path.unlink()
    columns_file(path).unlink()
    read = read_trajectory(path, written=written)
    assert read.read_with_columns
    _equal_columns(read.columns, _columns(records[0]))
    _same(_scores(read), _scores(read_trajectory(records[0])))


def test_written_columns_that_would_not_load_are_not_used(records, tmp_path):
    """Columns that ``load_columns`` would refuse (a NaN position): the file's lines are read."""
    path, written = _rewritten(records[0], tmp_path)
    columns_file(path).unlink()
    assert written.columns is not None
    position = written.columns.position.copy()
    position[0, 0] = math.nan
    bad = records_io.Written(written.data, replace(written.columns, position=position))
    read = read_trajectory(path, written=bad)
    assert not read.read_with_columns
    _equal_columns(read.columns, _columns(records[0]))


def test_a_written_record_over_the_size_limit_is_refused_as_the_file_is(
    records, tmp_path, monkeypatch
):
    """A record too large to read from the disk is not scored from memory either."""
    path, written = _rewritten(records[0], tmp_path)
    monkeypatch.setattr(records_io, "MAX_FILE_BYTES", len(written.data) - 1)
    with pytest.raises(ConfigError, match="bytes"):
        read_trajectory(path, written=written)


def test_a_record_written_without_columns_says_so(records, tmp_path):
    """A header with a 19-digit seed: ``write_record`` saves no columns and returns none."""
    from sortie.run.episode import line_of

    read = read_trajectory(records[0])
    header = read.header.model_copy(update={"seed": 2**62})
    texts = [line_of(header), *(line_of(s) for s in read.steps), line_of(read.footer)]
    rows = [StepRow.of(s) for s in read.steps]
    written = records_io.write_record(tmp_path / "r.jsonl", [t.encode() for t in texts], rows)
    assert written.columns is None


def test_scoring_a_run_loads_no_columns_file(tmp_path, monkeypatch):
    """A run scores each record from what its recorder wrote: no columns file is loaded."""

    def loaded(*args):
        raise AssertionError("a columns file was loaded")

    monkeypatch.setattr(records_io, "_columns_of", loaded)
    suite = Suite(SuiteHeader(suite="t"), [room_rescue(budget_s=4.0)])
    (result,) = run_suite(suite, "random", {}, RunSettings(tmp_path))
    assert result.footer.steps > 10 and result.metrics
