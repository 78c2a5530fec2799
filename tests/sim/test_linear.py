import math

import numpy as np

from sortie.sim.camera import camera_rotation
from sortie.sim.linear import inverse_rigid, product
from sortie.sim.mesh import pose_matrix


def written_out(a, b):
    """Return ``a @ b`` as the sum of ``a[..., k] * b[k]`` in order: plain multiplies and adds."""
    out = a[..., 0:1] * b[0]
    for k in range(1, b.shape[0]):
        out = out + a[..., k : k + 1] * b[k]
    return out


def test_product_adds_the_terms_in_order_without_fused_multiply_adds():
    """Bit for bit the written-out sum, where OpenBLAS's FMA kernels differ in the last bits."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2000, 5)), rng.normal(size=(5, 3))
    assert np.array_equal(product(a, b), written_out(a, b))
    assert np.array_equal(product(a, b[:, 0]), written_out(a, b[:, :1])[:, 0])


def test_product_of_vectors_and_matrices_matches_the_matrix_product():
    """Rows times a matrix, a matrix times a vector: the values of ``@`` to rounding."""
    rng = np.random.default_rng(1)
    m, v = rng.normal(size=(3, 3)), rng.normal(size=3)
    assert np.allclose(product(m, v), m @ v) and np.allclose(product(v, m), v @ m)


def test_the_rigid_inverse_undoes_a_pose():
    """A pose times its inverse is the identity."""
    pose = pose_matrix((1.5, -2.0, 0.3), yaw=37.0, pitch=-12.0)
    assert np.allclose(product(pose, inverse_rigid(pose)), np.eye(4))


def test_camera_rotation_is_the_product_of_its_two_turns_bit_for_bit():
    """camera_rotation's plain-float product equals ``product`` of the yaw and pitch matrices."""
    angles = [k * 7.5 for k in range(-48, 49)] + [-0.0, 1e-300, -1e-300, 123.456, -271.0]
    for yaw in angles:
        for pitch in [*angles[36:61], 89.999, -0.0]:
            cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
            cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
            rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
            ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
            expected = product(rz, ry).astype(np.float32)
            assert camera_rotation(yaw, pitch).tobytes() == expected.tobytes(), (yaw, pitch)
