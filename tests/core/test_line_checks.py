import pytest

from sortie.core import records_io


@pytest.mark.parametrize("depth", range(27, 37))
def test_lines_that_skip_the_value_walk_get_the_walks_verdict(depth):
    """Around the nesting limit, a line's check says what the full walk over its values says."""
    line = ('{"a":' + "[" * depth + '"x"' + "]" * depth + "}").encode()
    value, problem = records_io._decode_line(line)
    assert value is not None
    assert problem == records_io._shape_problem(value, 1)
    assert (problem is None) == (depth + 2 <= records_io.MAX_DEPTH)


def test_an_escaped_surrogate_is_walked_and_refused():
    """A backslash-u escape sends the line to the full walk, which finds the lone surrogate."""
    value, problem = records_io._decode_line(b'{"a":"ok \\ud800"}')
    assert value is not None and problem is not None and "lone surrogate" in problem


def _random_value(rng, depth, budget):
    """Return a random JSON value: containers nested up to ``depth``, texts with brackets.

    ``budget`` (a one-item list, shared by the whole value) caps its containers: unbounded,
    three keys a dict make the tree grow without end, and a few lines of megabytes took most
    of the test's time. The first child is built first, so a value still reaches its depth.
    """
    budget[0] -= 1
    pick = rng.random()
    if depth > 0 and budget[0] > 0 and pick < 0.35:
        return [_random_value(rng, depth - 1, budget) for _ in range(rng.randint(0, 3))]
    if depth > 0 and budget[0] > 0 and pick < 0.6:
        return {
            rng.choice(["a", "[", "}"]) + str(i): _random_value(rng, depth - 1, budget)
            for i in range(3)
        }
    texts = ["]]]]", "[[{{", '"', "\\", '\\"]', "x\\\\", "é]"]
    return rng.choice([rng.choice(texts), rng.random(), rng.randint(-5, 5), None, True])


def test_brackets_in_texts_never_hide_a_line_nested_too_deep():
    """Wherever brackets, quotes and backslashes sit in texts, the check agrees with the walk."""
    import json
    import random

    rng = random.Random(11)
    for _ in range(3000):
        value = {"v": _random_value(rng, rng.randint(0, 40), [400])}
        line = json.dumps(value, ensure_ascii=False).encode()
        decoded, problem = records_io._decode_line(line)
        assert decoded == value
        assert problem == records_io._shape_problem(value, 1), line
