"""The rasteriser's chunks: each triangle with area once, near one another, inside the bounds."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from sortie.sim.chunks import CHUNK, Chunks, in_order, near_one_another
from sortie.sim.raycast import RayCaster
from sortie.sim.worlds import build_world
from tests.diagnostics.test_same_numbers import _numpy_levels


def _grid(cells: int) -> np.ndarray:
    """Return a flat ground of ``cells`` x ``cells`` unit squares, two triangles each, by rows."""
    triangles = []
    for i in range(cells):
        for j in range(cells):
            a, b, c, d = (j, i, 0), (j + 1, i, 0), (j + 1, i + 1, 0), (j, i + 1, 0)
            triangles += [[a, b, c], [a, c, d]]
    return np.asarray(triangles, np.float32)


def _members(chunks: Chunks) -> np.ndarray:
    return chunks.members[chunks.members >= 0]


def test_seventeen_triangles_make_two_chunks_the_second_padded():
    """Hand-made: 17 triangles make two chunks, the second padded.

    The 17th triangle is alone in the second chunk, then CHUNK - 1 times -1; its box is
    centred on (2.5, 2.5, 0) with half sides 0.5, 0.5 and 0, its sphere's radius half the
    box's diagonal (each plus the rounding room).
    """
    corners = _grid(3)[:17]
    chunks = in_order(corners)
    assert len(chunks) == 2 and chunks.members.shape == (2 * CHUNK,)
    assert list(chunks.members[CHUNK:]) == [16] + [-1] * (CHUNK - 1)
    # triangle 16: the first of cell (row 2, column 2): (2, 2), (3, 2), (3, 3)
    centre, radius, half = chunks.bounds[1, :3], chunks.bounds[1, 3], chunks.bounds[1, 4:]
    assert np.allclose(centre, [2.5, 2.5, 0.0])
    assert np.isclose(radius, np.sqrt(2) / 2 * (1 + 1e-9) + 1e-6, rtol=0, atol=1e-12)
    assert np.allclose(half, [0.5 * (1 + 1e-9) + 1e-6] * 2 + [1e-6], rtol=0, atol=1e-12)


def test_triangles_without_area_are_left_out():
    """A triangle whose corners lie on a line, or coincide, no ray can hit: no chunk holds it."""
    corners = _grid(2)
    flat = np.asarray([[[0, 0, 0], [1, 1, 1], [2, 2, 2]], [[5, 5, 5]] * 3], np.float32)
    corners = np.concatenate([corners[:3], flat, corners[3:]])
    for chunks in (in_order(corners), near_one_another(corners)):
        assert sorted(_members(chunks)) == [0, 1, 2, 5, 6, 7, 8, 9]


def test_rows_after_a_prefix_keep_their_indices():
    """``in_order`` from ``first``: the rows after it, indexed as in the whole table."""
    chunks = in_order(_grid(3), first=5)
    assert list(_members(chunks)) == list(range(5, 18))


def test_every_triangle_of_a_world_is_in_one_chunk_whose_bounds_hold_it():
    """The forest's static table: each triangle with area in one chunk, inside its bounds."""
    table = RayCaster(build_world("forest", 0)).static
    chunks = near_one_another(table.corners)
    members = chunks.members.reshape(-1, CHUNK)
    held = members[members >= 0]
    assert sorted(held.tolist()) == sorted(_members(in_order(table.corners)).tolist())
    assert len(held) == len(set(held.tolist()))  # once each
    # only the last chunk is short, its -1s after its triangles
    assert (members[:-1] >= 0).all()
    assert (np.diff((members[-1] < 0).astype(int)) >= 0).all()
    chunk = np.repeat(np.arange(len(members)), CHUNK)[chunks.members >= 0]
    corners = table.corners[held].astype(np.float64)
    bounds = chunks.bounds[chunk]
    off = corners - bounds[:, None, :3]
    assert (np.linalg.norm(off, axis=2).max(axis=1) <= bounds[:, 3]).all()
    assert (np.abs(off).max(axis=1) <= bounds[:, 4:]).all()
    reach = np.zeros((len(chunks), 3))  # each chunk's farthest corner on each axis
    np.maximum.at(reach, chunk, np.abs(off).max(axis=1))
    assert (reach >= chunks.bounds[:, 4:] * (1 - 1e-9) - 2e-6).all()  # the box is no looser


def test_chunks_by_place_are_tighter_than_rows_in_order():
    """A ground of 32 x 32 cells: in row order a chunk is a strip, by place a block.

    In order a chunk is a strip eight cells long (radius over 4 m); by place a block of 4 x 2
    cells (radius about 2.2 m).
    """
    corners = _grid(32)
    strips, blocks = in_order(corners).bounds[:, 3], near_one_another(corners).bounds[:, 3]
    assert np.allclose(strips, np.sqrt(8**2 + 1) / 2, atol=1e-5)
    assert blocks.max() <= np.sqrt(4**2 + 2**2) / 2 + 1e-5


def _digest(chunks: Chunks) -> str:
    return hashlib.sha256(chunks.members.tobytes() + chunks.bounds.tobytes()).hexdigest()


DIGEST = (
    "import hashlib, sys; from sortie.sim.chunks import near_one_another; "
    "from sortie.sim.raycast import RayCaster; from sortie.sim.worlds import build_world; "
    "c = near_one_another(RayCaster(build_world('suburb', 2)).static.corners); "
    "print(hashlib.sha256(c.members.tobytes() + c.bounds.tobytes()).hexdigest())"
)


def test_chunks_by_place_are_the_same_without_numpys_vector_paths():
    """With none of numpy's vector paths (it picks them by the CPU), the same chunks' bits.

    (The sorts are stable and the values elementwise: another CPU makes the same chunks.)
    """
    levels = _numpy_levels()
    if not levels:
        pytest.skip("numpy runs no vector path of its own on this CPU")
    here = _digest(near_one_another(RayCaster(build_world("suburb", 2)).static.corners))
    plain = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(levels)}
    run = subprocess.run([sys.executable, "-c", DIGEST], env=plain, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == here
