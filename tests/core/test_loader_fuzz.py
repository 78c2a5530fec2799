"""Seeded fuzzing of the suite loader: no uncaught exception, no hang, no other version read.

10,000 mutated lines of rescue, aerial and household suites (household task files included),
and 600 suites whose episode-line or header version, or header kind, is not this loader's.
"""

import json
import random
import signal
from pathlib import Path

import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_suite
from sortie.missions.registry import check_episode

SUITES = Path(__file__).resolve().parents[2] / "sortie" / "suites"
CASES = 10_000
HOSTILE = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e309",
    "-1e400",
    "9" * 5000,
    "null",
    "{}",
    "[]",
    "[[1, 2], [3]]",
    "[" * 900 + "]" * 900,
    '"\\ud800"',
    '"' + "x" * 5000 + '"',
    '"../../etc/passwd"',
    '"[/x]"',
    '"a\\u0000b"',
    "true",
    "-1",
    "0",
    "1e19",
    '"\\ufeff"',
    "[1, 2, 3]",
    '{"a": {"b": {"c": []}}}',
]


def _sources() -> list[tuple[str, list[str]]]:
    """Return (header line, episode lines) of two small committed suites."""
    out = []
    for name in ("rescue-smoke-v2", "aerial-smoke-v1", "household-smoke-v1"):
        lines = (SUITES / f"{name}.jsonl").read_text().splitlines()
        out.append((lines[0], lines[1:]))
    return out


def _paths(value, prefix=()):
    """Yield the path of every value inside a JSON document."""
    yield prefix
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        yield from _paths(child, (*prefix, key))


def _replace(line: str, rng: random.Random) -> bytes:
    """Return ``line`` with one value (or key) replaced by a hostile JSON text."""
    document = json.loads(line)
    path = rng.choice(list(_paths(document))[1:])
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    token = rng.choice(HOSTILE)
    if isinstance(holder, dict) and rng.random() < 0.2:
        holder[f"@KEY@{path[-1]}"] = holder.pop(path[-1])
        return json.dumps(document).replace(f'"@KEY@{path[-1]}"', token).encode()
    holder[path[-1]] = "@TOKEN@"
    return json.dumps(document).replace('"@TOKEN@"', token).encode()


def _corrupt(line: str, rng: random.Random) -> bytes:
    """Return ``line`` with a few bytes flipped, inserted, cut or repeated."""
    data = bytearray(line.encode())
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        move = rng.randrange(4)
        if move == 0:
            data[at] = rng.randrange(256)
        elif move == 1:
            data.insert(at, rng.choice(b'{}[]",:\\0e-.\xff\xc3\x00 '))
        elif move == 2:
            del data[at : at + rng.randint(1, 40)]
        else:
            data[at:at] = data[at : at + rng.randint(1, 200)]
    return bytes(data)


VERSIONS = ["0", "-1", "2", "999", '"1"', "1.5", "null", "true", "[1]"]
"""Episode and header ``schema_version`` values other than this loader's (1)."""
KINDS = ['"episode"', '"Suite"', '""', "null", "1", '"suite "']
"""Header ``kind`` values other than ``suite``."""


def _versioned(header: str, line: str, rng: random.Random) -> tuple[bytes, bool]:
    """Return a suite with one version or kind changed, and whether it must be refused."""
    what = rng.randrange(3)
    if what == 0:  # the episode line's version
        episode = json.loads(line)
        episode["schema_version"] = "@V@"
        bad = json.dumps(episode).replace('"@V@"', rng.choice(VERSIONS))
        return (header + "\n" + bad + "\n").encode(), True
    document = json.loads(header)
    key, values = ("schema_version", VERSIONS) if what == 1 else ("kind", KINDS)
    document[key] = "@V@"
    bad = json.dumps(document).replace('"@V@"', rng.choice(values))
    return (bad + "\n" + line + "\n").encode(), True


def _case(rng: random.Random, sources) -> bytes:
    header, episodes = rng.choice(sources)
    line = rng.choice(episodes)
    target = rng.random()
    if target < 0.1:  # mutate the header instead
        bad_header = _replace(header, rng) if rng.random() < 0.5 else _corrupt(header, rng)
        return bad_header + b"\n" + line.encode() + b"\n"
    bad = _replace(line, rng) if target < 0.6 else _corrupt(line, rng)
    return header.encode() + b"\n" + bad + b"\n"


def _alarm(signum, frame):
    raise TimeoutError("the loader hung on a fuzzed case")


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX timers")
def test_fuzzed_suite_lines_load_or_fail_with_a_config_error(tmp_path):
    """Every mutated suite loads, or fails with ConfigError; what loads survives a round trip."""
    rng, sources, path = random.Random(20261201), _sources(), tmp_path / "fuzz.jsonl"
    outcomes = {"loaded": 0, "refused": 0, "households": 0}
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 240.0)  # a hang guard, not a speed target
    try:
        for number in range(CASES):
            path.write_bytes(_case(rng, sources))
            try:
                suite = read_suite(path, check=check_episode)
            except ConfigError as error:
                assert str(error).startswith(str(path)), (number, str(error)[:300])
                outcomes["refused"] += 1
                continue
            for episode in suite.episodes:
                assert type(episode).model_validate_json(episode.model_dump_json()) == episode
                outcomes["households"] += episode.family == "household"
            outcomes["loaded"] += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert outcomes["refused"] > CASES // 2 and outcomes["loaded"] > 0, outcomes
    assert outcomes["households"] > 0, outcomes  # household task lines were loaded too


def test_an_episode_line_or_header_of_another_version_or_kind_is_refused(tmp_path):
    """600 suites with one version or kind changed: each refused, naming the file."""
    rng, sources, path = random.Random(20261202), _sources(), tmp_path / "versions.jsonl"
    for number in range(600):
        header, episodes = rng.choice(sources)
        data, refused = _versioned(header, rng.choice(episodes), rng)
        path.write_bytes(data)
        with pytest.raises(ConfigError) as info:
            read_suite(path, check=check_episode)
        assert refused and str(info.value).startswith(str(path)), (number, data[:200])
