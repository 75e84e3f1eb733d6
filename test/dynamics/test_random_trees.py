"""Property tests on random kinematic trees (hypothesis): random joint types, axes, origins
and physically valid inertias, with and without a free-flyer root; checked against Pinocchio
and against the algorithms' identities."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pinref import PinRef, random_state, rel_err, robot_path
from urdfs import inertia, joint, limit, link, robot

from rbd_ros.dynamics import (
    Data,
    aba,
    crba,
    load_urdf,
    load_urdf_string,
    nonlinear_effects,
    rnea,
)

finite = st.floats(-1.0, 1.0, allow_nan=False)
unit = st.floats(0.2, 1.0)


@st.composite
def trees(draw: st.DrawFn) -> str:
    """A URDF string: 2-8 moving links in a random tree, some fixed links, maybe a mimic joint
    anywhere (ABA's constraint correction) and maybe a gripper whose fingers mimic one joint
    (a one-coordinate group for ABA, when it is the only mimic)."""
    n = draw(st.integers(2, 8))
    links = [link("l0", 1, inertia=inertia(0.1, 0.1, 0.1))]
    joints = []
    kinds = []

    def xyz() -> str:
        return f"{draw(finite)} {draw(finite)} {draw(finite)}"

    for k in range(1, n + 1):
        parent = draw(st.integers(0, k - 1))
        kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
        kinds.append((kind, k))
        m = draw(st.floats(0.1, 5.0))
        a, b = draw(unit), draw(unit)
        c = draw(st.floats(abs(a - b) + 0.05, a + b))  # triangle inequality holds
        rpy = xyz()
        links.append(link(f"l{k}", m, com=xyz(), rpy=rpy, inertia=inertia(a, b, c)))
        axis = [draw(finite) for _ in range(3)]
        if np.linalg.norm(axis) < 0.1:
            axis = [0.0, 0.0, 1.0]
        joints.append(joint(f"j{k}", kind, f"l{parent}", f"l{k}", xyz=xyz(), rpy=xyz(),
                            axis=" ".join(map(str, axis)), extra=limit(-2, 2, 10, 5)))
    moving = [k for kind, k in kinds if kind != "fixed"]
    if len(moving) >= 2 and draw(st.booleans()):  # one joint mimics an earlier one
        k = draw(st.sampled_from(moving[1:]))
        src = draw(st.sampled_from([j for j in moving if j < k]))
        mult = draw(st.sampled_from([-1.5, -0.5, 0.7, 1.0, 2.0]))
        joints[k - 1] = joints[k - 1].replace(
            "</joint>", f'<mimic joint="j{src}" multiplier="{mult}" offset="{draw(finite)}"/>'
                        "</joint>")
    if draw(st.booleans()):  # a gripper on a random link: a finger, a mimic finger and its tip
        parent = draw(st.integers(0, n))
        kind = draw(st.sampled_from(["revolute", "prismatic"]))
        tips = [(f"g{i}", f"l{parent}" if i < 2 else "lg1") for i in range(3)]
        for i, (name, up) in enumerate(tips):
            links.append(link(f"l{name}", draw(st.floats(0.05, 1)),
                              inertia=inertia(0.01, 0.02, 0.02)))
            mimic = "" if i == 0 else f'<mimic joint="g0" multiplier="{1 - 2 * (i == 1)}"/>'
            joints.append(joint(name, kind, up, f"l{name}",
                                xyz=f"{draw(finite)} {draw(finite)} 0.1",
                                rpy=f"0 0 {draw(finite)}", extra=limit(-1, 1, 10, 5) + mimic))
    return robot(*links, *joints, name="random")


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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(urdf=trees(), floating=st.booleans(), seed=st.integers(0, 2**31))
def test_aba_groups_equal_the_constraint_correction(urdf: str, floating: bool, seed: int) -> None:
    """ABA's one-coordinate mimic groups against its general constraint correction on the same
    tree (two algorithms, one answer); both against Pinocchio's reduced solve above."""
    m = load_urdf_string(urdf, floating_base=floating)
    if not (m.mimic_group != -1).any():
        return
    general = dataclasses.replace(m, mimic_group=np.full(m.nb, -1))
    q, v, _, tau = random_state(m, np.random.default_rng(seed))
    f = np.random.default_rng(seed).normal(size=(m.nb, 6))
    for fric in (False, True):
        assert rel_err(aba(m, Data(m), q, v, tau, f, fric),
                       aba(general, Data(general), q, v, tau, f, fric)) < 1e-10


@pytest.mark.parametrize("robot, hosts", [("panda", ["panda_joint7"]),
                                          ("talos", ["arm_left_7_joint", "arm_right_7_joint"])])
def test_grippers_are_one_coordinate_groups(robot: str, hosts: list[str]) -> None:
    """Each gripper's source joint and its mimic joints hang from the arm's last body: ABA
    takes each as one joint of one coordinate (no constraint sweeps)."""
    m = load_urdf(robot_path(robot))
    code = m.mimic_group
    assert [m.body_joints[b] for b in np.flatnonzero(code == -2)] == hosts
    members = {m.body_joints[b] for b in np.flatnonzero(code >= 0)}
    assert set(m.mimic_joint_names) <= members
    assert len(members) == len(m.mimic_joint_names) + len(hosts)  # and one source each
