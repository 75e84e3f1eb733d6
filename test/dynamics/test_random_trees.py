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
from urdfs import trees

from rbd_ros.dynamics import (
    Data,
    aba,
    crba,
    load_urdf,
    load_urdf_string,
    nonlinear_effects,
    rnea,
)


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
