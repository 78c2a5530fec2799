"""Hostile suite and record files: each is refused with file:line: field, never a traceback."""

import json
from pathlib import Path

import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_suite, read_trajectory
from sortie.missions.registry import check_episode

SUITES = Path(__file__).resolve().parents[2] / "sortie" / "suites"


def _lines(name: str) -> list[str]:
    return (SUITES / f"{name}.jsonl").read_text().splitlines()[:3]


def _write(tmp_path: Path, lines: list[str], data: bytes | None = None) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_bytes(data if data is not None else ("\n".join(lines) + "\n").encode())
    return path


def _refused(path: Path, *needles: str) -> str:
    with pytest.raises(ConfigError) as info:
        read_suite(path, check=check_episode)
    text = str(info.value)
    for needle in needles:
        assert needle in text, text
    return text


def _mutated(name: str, change) -> list[str]:
    """Return the suite's first lines with the first episode changed by ``change(dict)``."""
    lines = _lines(name)
    episode = json.loads(lines[1])
    change(episode)
    return [lines[0], json.dumps(episode, allow_nan=True), *lines[2:]]


def _patrol_episode() -> list[str]:
    for line in (SUITES / "aerial-smoke-v1.jsonl").read_text().splitlines()[1:]:
        if json.loads(line)["mission"].get("patrol"):
            return [_lines("aerial-smoke-v1")[0], line]
    raise AssertionError("the aerial smoke suite has no patrol")


def test_the_committed_suites_pass_the_checks():
    """Every committed suite loads through the validated path."""
    for path in sorted(SUITES.glob("*.jsonl")):
        assert read_suite(path, check=check_episode).episodes


def _with_token(line: str, path: tuple, token: str) -> str:
    """Return ``line`` with the number at ``path`` replaced by the raw JSON text ``token``."""
    episode = json.loads(line)
    holder = episode
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = "@TOKEN@"
    return json.dumps(episode).replace('"@TOKEN@"', token)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e309"])
def test_a_non_finite_patrol_point_is_refused(tmp_path, token):
    """NaN, ±Infinity or 1e309 in a patrol point is a line error (it used to crash shapely)."""
    header, line = _patrol_episode()
    bad = _with_token(line, ("mission", "patrol", 0, 0), token)
    _refused(_write(tmp_path, [header, bad]), "suite.jsonl:2")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "1e309"])
def test_a_non_finite_start_yaw_is_refused(tmp_path, token):
    """A start yaw that is not a finite number names the line."""
    lines = _lines("aerial-smoke-v1")
    bad = _with_token(lines[1], ("start", 3), token)
    _refused(_write(tmp_path, [lines[0], bad]), "suite.jsonl:2")


def test_invalid_utf8_names_the_line_and_byte(tmp_path):
    """Bytes that are not UTF-8 are refused with their line, byte and column."""
    lines = _lines("rescue-smoke-v2")
    data = (lines[0] + "\n").encode() + lines[1].encode().replace(b"L1", b"L\xff", 1)
    _refused(_write(tmp_path, [], data), "suite.jsonl:2", "not UTF-8", "0xff")


def test_a_byte_order_mark_is_skipped(tmp_path):
    """A file saved with a UTF-8 byte-order mark reads like one without."""
    data = b"\xef\xbb\xbf" + ("\n".join(_lines("rescue-smoke-v2")) + "\n").encode()
    assert len(read_suite(_write(tmp_path, [], data), check=check_episode).episodes) == 2


def test_deep_nesting_is_refused(tmp_path):
    """A thousand nested brackets are a line error, not a RecursionError."""
    lines = _lines("rescue-smoke-v2")
    deep = lines[1].replace('"params":{}', '"params":{"a":' + "[" * 1000 + "]" * 1000 + "}", 1)
    _refused(_write(tmp_path, [lines[0], deep]), "suite.jsonl:2", "nested deeper")


def test_a_huge_integer_is_refused(tmp_path):
    """An integer of 5,000 digits is a line error, not Python's int-conversion ValueError."""
    lines = _lines("rescue-smoke-v2")
    huge = lines[1].replace('"seed":', '"seed":' + "9" * 5000 + ',"x":', 1)
    _refused(_write(tmp_path, [lines[0], huge]), "suite.jsonl:2", "integer of 5000 digits")


@pytest.mark.parametrize("pose", [None, {}, [[1, 2], 3, 4, 5], [1, 2, "x", 4], [True, 0, 0, 0]])
def test_a_start_that_is_not_four_numbers_is_refused(tmp_path, pose):
    """null, {}, nested lists or strings where a pose belongs name the field."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(start=pose))
    _refused(_write(tmp_path, lines), "suite.jsonl:2", "start")


def test_a_lone_surrogate_is_refused(tmp_path):
    """A string holding a lone UTF-16 surrogate is refused at the line."""
    lines = _lines("rescue-smoke-v2")
    bad = lines[1].replace('"level":"L1"', '"level":"L1\\ud800"', 1)
    _refused(_write(tmp_path, [lines[0], bad]), "suite.jsonl:2", "lone surrogate")


def test_a_family_label_that_does_not_fit_the_fields_is_refused(tmp_path):
    """A rescue episode labelled aerial fails the aerial check, naming the line."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(family="aerial"))
    _refused(_write(tmp_path, lines), "suite.jsonl:2", "family is 'aerial'", "a rescue mission")


def test_an_unknown_family_is_refused_with_the_known_ones(tmp_path):
    """A misspelt family suggests the right one."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(family="rescu"))
    _refused(_write(tmp_path, lines), "Did you mean 'rescue'?")


@pytest.mark.parametrize("budget", [float("inf"), 1e19, 0.0, -5.0])
def test_a_budget_outside_its_range_is_refused(tmp_path, budget):
    """An infinite or absurd mission budget is refused instead of running forever."""
    lines = _mutated("rescue-smoke-v2", lambda e: e["mission"].update(budget_s=budget))
    _refused(_write(tmp_path, lines), "suite.jsonl:2")


def test_duplicate_episode_ids_are_refused(tmp_path):
    """Two episodes with one id would be one stored row: the second line is refused."""
    lines = _lines("rescue-smoke-v2")
    _refused(
        _write(tmp_path, [lines[0], lines[1], lines[1]]), "suite.jsonl:3", "already used on line 2"
    )


@pytest.mark.parametrize(
    "episode_id", ["../../etc/x", "/abs/path", "a" * 300, "a\x00b", "[/x]", ".hidden"]
)
def test_unsafe_episode_ids_are_refused(tmp_path, episode_id):
    """Ids that could escape a folder, break a file system or a terminal are refused."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(episode_id=episode_id))
    _refused(_write(tmp_path, lines), "suite.jsonl:2", "episode_id")


@pytest.mark.parametrize("suite", ["../x", "/tmp/x", "[red]x[/red]", "x" * 101])
def test_unsafe_suite_names_are_refused(tmp_path, suite):
    """A suite name is used in paths and printed: unsafe ones are refused at line 1."""
    lines = _lines("rescue-smoke-v2")
    header = json.loads(lines[0])
    header["suite"] = suite
    _refused(_write(tmp_path, [json.dumps(header), *lines[1:]]), "suite.jsonl:1", "suite")


def test_a_nan_in_a_record_pose_is_refused_when_read_back(tmp_path):
    """A record whose step pose holds NaN is a clear error naming the line and field."""
    path = tmp_path / "r.jsonl"
    header = {
        "kind": "header",
        "schema_version": 2,
        "seed": 1,
        "code_version": "0",
        "episode": json.loads(_lines("rescue-smoke-v2")[1]),
        "agent": {"name": "random"},
        "backend": {"name": "embedded"},
    }
    step = {
        "kind": "step",
        "index": 1,
        "pose": [0, 0, 0, 0],
        "action": {"type": "move"},
        "clock_sim": 0.2,
        "clock_latency": 0.2,
    }
    footer = {"kind": "footer", "outcome": "failure", "steps": 1}
    text = "\n".join(json.dumps(x) for x in (header, step, footer)).replace(
        '"pose": [0, 0, 0, 0]', '"pose": [NaN, 0, 0, 0]'
    )
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=r"r.jsonl:2: .*NaN"):
        read_trajectory(path)


def _v1_record(tmp_path: Path, failure_reason) -> Path:
    """Write a version-1 record of no steps, ended as outcome failure with ``failure_reason``."""
    path = tmp_path / "old.jsonl"
    header = {
        "kind": "header",
        "schema_version": 1,
        "seed": 1,
        "code_version": "0",
        "episode": json.loads(_lines("rescue-smoke-v2")[1]),
        "agent": {"name": "random"},
        "backend": {"name": "embedded"},
    }
    footer = {"kind": "footer", "outcome": "failure", "failure_reason": failure_reason, "steps": 0}
    path.write_text(json.dumps(header) + "\n" + json.dumps(footer) + "\n")
    return path


def test_a_version_1_record_of_an_agent_error_reads_as_an_error(tmp_path):
    """Version 1 wrote agent errors as outcome failure; reading upgrades them to error."""
    path = _v1_record(tmp_path, "agent_error")
    record = read_trajectory(path)
    assert (record.footer.outcome, record.header.schema_version) == ("error", 2)


def test_a_float_that_overflows_is_refused_even_where_any_json_is_allowed(tmp_path):
    """1e999 in the header's free-form settings is refused like Infinity, naming the line."""
    lines = _lines("rescue-smoke-v2")
    header = lines[0].replace('"settings":{', '"settings":{"x":1e999,', 1)
    _refused(_write(tmp_path, [header, *lines[1:]]), "suite.jsonl:1", "only finite numbers")


@pytest.mark.parametrize(
    "token", ["1E+400", "-2e308", "1e0309", "9" * 400 + ".5", "9223372036854775808"]
)
def test_every_spelling_of_an_overflowing_number_is_refused(tmp_path, token):
    """A number too large for a float or an integer of 64 bits is refused, however written."""
    lines = _lines("rescue-smoke-v2")
    header = lines[0].replace('"settings":{', '"settings":{"x":' + token + ",", 1)
    _refused(_write(tmp_path, [header, *lines[1:]]), "suite.jsonl:1")


def test_lines_without_large_numbers_read_as_the_checking_decoder_reads_them():
    """The decoder that skips the number hooks gives the very values the hooked one gives."""
    from sortie.core import records_io

    for path in sorted(SUITES.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            assert records_io._numbers_plain(line)
            fast, slow = (
                d.decode(line.decode()) for d in (records_io._PLAIN_NUMBERS, records_io._DECODER)
            )
            assert json.dumps(fast) == json.dumps(slow)


def test_episode_ids_that_would_share_a_record_file_are_refused(tmp_path):
    """'a__b' inside an id part would map s/a__b and s/a/b to one file: it is refused."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(episode_id="s/a__b"))
    _refused(_write(tmp_path, lines), "suite.jsonl:2", "'__' is not allowed")


def test_a_suite_name_too_long_for_the_file_system_is_a_config_error():
    """A 5,000-character suite name is a clear error, not the file system's OSError."""
    from sortie.missions.loading import load_suite

    with pytest.raises(ConfigError, match="not a usable path"):
        load_suite("x" * 5000)


def test_a_version_1_record_with_a_list_as_failure_reason_is_a_config_error(tmp_path):
    """An odd v1 footer is a field error after the upgrade, not a TypeError."""
    path = _v1_record(tmp_path, ["agent_error"])
    with pytest.raises(ConfigError, match="failure_reason"):
        read_trajectory(path)


@pytest.mark.parametrize(
    ("version", "said"), [(0, "start at 1"), (-1, "start at 1"), (999, "newer")]
)
def test_an_episode_line_of_an_unknown_schema_version_is_refused(tmp_path, version, said):
    """Episode lines carry their own schema_version: 0, -1 or 999 name the line."""
    lines = _mutated("rescue-smoke-v2", lambda e: e.update(schema_version=version))
    _refused(_write(tmp_path, lines), "suite.jsonl:2", f"schema_version {version}", said)


def test_a_header_of_another_kind_is_refused(tmp_path):
    """A first line whose kind is not "suite" (a trajectory header, say) names the field."""
    lines = _lines("rescue-smoke-v2")
    header = json.loads(lines[0]) | {"kind": "header"}
    _refused(_write(tmp_path, [json.dumps(header), lines[1]]), "suite.jsonl:1", "kind")


def test_a_casualty_posture_the_simulator_cannot_build_is_refused(tmp_path):
    """A posture of 'sitting' names the placement and the allowed postures, at load."""

    def sitting(episode):
        episode["placements"][0]["attributes"]["posture"] = "sitting"

    lines = _mutated("rescue-smoke-v2", sitting)
    _refused(_write(tmp_path, lines), "suite.jsonl:2", "'sitting'", "allowed: standing, lying")
