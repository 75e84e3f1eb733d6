"""Property tests on random kinematic trees (hypothesis): random joint types, axes, origins
and physically valid inertias, with and without a free-flyer root; checked against Pinocchio
and against the algorithms' identities."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pinref import PinRef, random_state, rel_err

from rbd_ros.dynamics import Data, aba, crba, load_urdf_string, nonlinear_effects, rnea

finite = st.floats(-1.0, 1.0, allow_nan=False)
unit = st.floats(0.2, 1.0)


@st.composite
def trees(draw):  # type: ignore[no-untyped-def]
    """A URDF string: 2-8 moving links in a random tree, some fixed links, maybe a mimic."""
    n = draw(st.integers(2, 8))
    links = ['<link name="l0"><inertial><mass value="1"/>'
             '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>']
    joints = []
    kinds = []
    for k in range(1, n + 1):
        parent = draw(st.integers(0, k - 1))
        kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
        kinds.append((kind, k))
        m = draw(st.floats(0.1, 5.0))
        a, b = draw(unit), draw(unit)
        c = draw(st.floats(abs(a - b) + 0.05, a + b))  # triangle inequality holds
        r, p, y = (draw(finite) for _ in range(3))
        links.append(
            f'<link name="l{k}"><inertial><origin xyz="{draw(finite)} {draw(finite)} '
            f'{draw(finite)}" rpy="{r} {p} {y}"/><mass value="{m}"/><inertia ixx="{a}" ixy="0" '
            f'ixz="0" iyy="{b}" iyz="0" izz="{c}"/></inertial></link>')
        axis = [draw(finite) for _ in range(3)]
        if np.linalg.norm(axis) < 0.1:
            axis = [0.0, 0.0, 1.0]
        limit = '<limit lower="-2" upper="2" effort="10" velocity="5"/>'
        joints.append(
            f'<joint name="j{k}" type="{kind}"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="{draw(finite)} {draw(finite)} {draw(finite)}" '
            f'rpy="{draw(finite)} {draw(finite)} {draw(finite)}"/>'
            f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>{limit}</joint>')
    return '<robot name="random">' + "".join(links + joints) + "</robot>"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(urdf=trees(), floating=st.booleans(), seed=st.integers(0, 2**31))
def test_random_trees_match_pinocchio(urdf: str, floating: bool, seed: int) -> None:
    m = load_urdf_string(urdf, floating_base=floating)
    if m.nv == 0:
        return
    d = Data(m)
    ref = PinRef(m, urdf, floating)
    q, v, a, tau = random_state(m, np.random.default_rng(seed))
    assert rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a)) < 1e-9
    assert rel_err(crba(m, d, q), ref.crba(q)) < 1e-9
    assert rel_err(aba(m, d, q, v, tau), ref.aba(q, v, tau)) < 1e-8
    M = crba(m, d, q)
    np.testing.assert_allclose(rnea(m, d, q, v, a), M @ a + nonlinear_effects(m, d, q, v),
                               rtol=1e-9, atol=1e-9)
