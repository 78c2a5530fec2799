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
