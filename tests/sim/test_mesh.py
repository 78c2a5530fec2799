"""The mesh primitives' kept frames and tables give the bits of their plain forms."""

import math

import numpy as np
import pytest

from sortie.sim.assets.props import facing_quad
from sortie.sim.linear import product
from sortie.sim.mesh import (
    Mesh,
    _sphere_by_rows,
    box,
    cylinder,
    merge,
    pose_matrix,
    quad,
    sphere,
)

SHAPES = [(0.3, 1.2, 0.7), (0.0, 2.5, 1e-3), (4.1, 0.05, 3.3)]
PLACES = [((0.0, 0.0, 0.0), 0.0), ((1.5, -2.25, -0.0), 90.0), ((-3.1, 0.7, 2.0), -0.0)]


def same_mesh(a: Mesh, b: Mesh) -> bool:
    """Return whether two meshes hold the same arrays, bit for bit, dtypes included."""
    pairs = [(a.vertices, b.vertices), (a.faces, b.faces), (a.colors, b.colors)]
    return all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in pairs)


def plain_moved(vertices, faces, color, offset, yaw=0.0) -> Mesh:
    """Return a mesh built as the primitives were: lists to arrays, one 4x4 pose, tiled colours."""
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[1.0, 0, -0.0], [0, 1, 0], [0.0, 0, 1.0]])
    matrix = np.eye(4)
    matrix[:3, :3] = product(rz, ry)
    matrix[:3, 3] = offset
    verts = np.asarray(vertices, dtype=np.float32).astype(np.float64)
    moved = product(verts, matrix[:3, :3].T) + matrix[:3, 3]
    faces = np.asarray(faces, dtype=np.int32).reshape(-1, 3)
    colors = np.tile(np.asarray(color, dtype=np.uint8), (len(faces), 1))
    return Mesh(moved.astype(np.float32), faces, colors)


@pytest.mark.parametrize("size", SHAPES)
@pytest.mark.parametrize(("center", "yaw"), PLACES)
def test_box_matches_its_corner_list_form(size, center, yaw):
    """A box from the kept corner signs is the box from a list of its corners, bit for bit."""
    hx, hy, hz = (s / 2 for s in size)
    corners = [
        [-hx, -hy, -hz],
        [hx, -hy, -hz],
        [hx, hy, -hz],
        [-hx, hy, -hz],
        [-hx, -hy, hz],
        [hx, -hy, hz],
        [hx, hy, hz],
        [-hx, hy, hz],
    ]
    faces = box((1, 1, 1)).faces
    expected = plain_moved(corners, faces, (10, 20, 30), center, yaw)
    assert same_mesh(box(size, center, (10, 20, 30), yaw), expected)


@pytest.mark.parametrize(("radius", "height", "top"), [(0.3, 2.0, None), (1.7, 0.4, 0.0)])
@pytest.mark.parametrize("segments", [6, 10])
def test_cylinder_matches_its_stacked_form(radius, height, top, segments):
    """A cylinder from the kept unit ring is the one stacked from its rings, bit for bit."""
    angles = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    top_radius = radius if top is None else top
    verts = np.vstack(
        [
            np.column_stack([ring * radius, np.zeros(segments)]),
            np.column_stack([ring * top_radius, np.full(segments, height)]),
            np.array([[0.0, 0.0, 0.0], [0.0, 0.0, height]]),
        ]
    )
    made = cylinder(radius, height, (0.5, -1.0, 0.25), (1, 2, 3), segments, top)
    expected = plain_moved(verts, made.faces, (1, 2, 3), (0.5, -1.0, 0.25))
    assert same_mesh(made, expected)


@pytest.mark.parametrize(("radius", "squash"), [(0.45, 1.0), (1.3, 0.6), (2, 1), (0.0, 0.5)])
@pytest.mark.parametrize(("rings", "segments"), [(6, 10), (4, 7)])
def test_sphere_matches_its_one_vertex_at_a_time_form(radius, squash, rings, segments):
    """A sphere from kept cos and sin tables is the one built vertex by vertex, bit for bit."""
    center = (2.0, -0.5, 1.25)
    made = sphere(radius, center, (9, 8, 7), rings, segments, squash)
    plain = _sphere_by_rows(radius, center, (9, 8, 7), rings, segments, squash)
    assert same_mesh(made, plain)


def test_sphere_of_a_float32_radius_rounds_as_float32_arithmetic_does():
    """A float32 radius takes the vertex-by-vertex form, whose products round in float32."""
    radius = np.float32(0.7)
    plain = _sphere_by_rows(radius, (0.0, 0.0, 0.0), (9, 8, 7), 6, 10, 1.0)
    assert same_mesh(sphere(radius, color=(9, 8, 7)), plain)


@pytest.mark.parametrize("yaw", [0.0, -0.0, 90.0, -45.5, 180.0, 1e-300, -1e-300])
@pytest.mark.parametrize("pitch", [0.0, -0.0, 12.5])
def test_pose_matrix_matches_its_plain_form(yaw, pitch):
    """A pose from a kept turn is the pose computed afresh, bit for bit, asked twice."""
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    expected = np.eye(4)
    expected[:3, :3] = product(rz, ry)
    expected[:3, 3] = (1.0, -0.0, 2.5)
    for _ in range(2):
        assert pose_matrix((1.0, -0.0, 2.5), yaw, pitch).tobytes() == expected.tobytes()


def test_pose_matrix_returns_a_matrix_of_its_own():
    """Writing into a returned pose leaves the next one of the same angles as it was."""
    first = pose_matrix((1.0, 2.0, 3.0), yaw=30.0)
    first[0, 0] = 99.0
    assert pose_matrix((1.0, 2.0, 3.0), yaw=30.0)[0, 0] == math.cos(math.radians(30.0))


def test_merge_matches_shifting_each_mesh_s_faces():
    """Merged faces are each mesh's faces shifted by the vertices before it, as int32."""
    parts = [box((1, 2, 3)), cylinder(0.5, 1.0, segments=6), sphere(0.3)]
    offsets = np.cumsum([0] + [len(m.vertices) for m in parts[:-1]])
    faces = np.concatenate([m.faces + o for m, o in zip(parts, offsets, strict=True)])
    merged = merge(parts)
    assert merged.faces.dtype == np.int32 and np.array_equal(merged.faces, faces)


@pytest.mark.parametrize(("facing", "width"), [(0.0, 2.0), (37.5, 1.25), (-90.0, np.float32(0.7))])
def test_facing_quad_matches_its_vector_form(facing, width):
    """A facing quad's corners from plain floats are those of the numpy vector sums."""
    center, height = (1.5, -2.0, 3.25), 0.8
    c, s = math.cos(math.radians(facing)), math.sin(math.radians(facing))
    left = np.array([s, -c, 0.0]) * width / 2
    up = np.array([0.0, 0.0, height / 2])
    mid = np.asarray(center, dtype=np.float64)
    corners = [mid + left + up, mid - left + up, mid - left - up, mid + left - up]
    expected = quad([tuple(p) for p in corners])
    assert same_mesh(facing_quad(center, facing, width, height), expected)


@pytest.mark.parametrize(("offset", "yaw"), [*PLACES, ((np.float32(0.1), 2, -0.0), 33.3)])
def test_moved_matches_transforming_by_the_pose_matrix(offset, yaw):
    """Moving a mesh is transforming it by ``pose_matrix(offset, yaw)``, bit for bit."""
    mesh = sphere(0.7, (0.2, -0.0, 1.1), rings=5, segments=7)
    assert same_mesh(mesh.moved(offset, yaw), mesh.transformed(pose_matrix(offset, yaw)))
