"""RNEA, ABA, CRBA, gravity and the centroidal quantities against Pinocchio on real robots
nobody here wrote."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from pinref import REAL, PinRef, random_state, rel_err, robot_path

from rbd_ros.dynamics import (
    Data,
    Model,
    aba,
    aba_batch,
    centroidal,
    crba,
    crba_batch,
    floating,
    gravity,
    integrate,
    load_urdf,
    rnea,
    rnea_batch,
)
from rbd_ros.dynamics.contact.contacts import Contact, solve

N_STATES = 200
TOL = 1e-9
Robot = tuple[str, Model, Data, PinRef]


@pytest.fixture(scope="module", params=list(REAL))
def robot(request: pytest.FixtureRequest) -> Robot:
    _path, ff = REAL[request.param]
    model = load_urdf(robot_path(request.param), floating_base=ff)
    return request.param, model, Data(model), PinRef(model, robot_path(request.param), ff)


@pytest.fixture
def free_flyer(robot: Robot) -> Robot:
    """The robot, if its root is a free flyer (the others skip)."""
    if not robot[1].has_free_flyer:
        pytest.skip("fixed-base robot")
    return robot


def test_models_have_the_expected_structure(robot: Robot) -> None:
    name, m, _, ref = robot
    # every Pinocchio joint is one of ours (mimic joints included), coordinates match
    assert m.nv_full == ref.pm.nv
    if name in ("panda", "baxter", "talos"):
        assert m.mimic_joint_names, "these robots carry mimic joints"
        assert m.nv < m.nv_full
    if name == "kinova":  # continuous joints: one coordinate each, not (cos, sin)
        assert m.nq == m.nv < ref.pm.nq
    assert m.has_free_flyer == (name in ("solo12", "anymal_c", "talos"))
    assert np.isclose(m.total_mass, pin.computeTotalMass(ref.pm), rtol=1e-12)


@pytest.mark.parametrize("algo", ["rnea", "aba", "crba", "gravity"])
def test_matches_pinocchio_on_random_states(robot: Robot, algo: str) -> None:
    name, m, d, ref = robot
    rng = np.random.default_rng(abs(hash((name, algo))) % 2**32)
    worst = 0.0
    for _ in range(N_STATES):
        q, v, a, tau = random_state(m, rng)
        if algo == "rnea":
            err = rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a))
        elif algo == "aba":
            err = rel_err(aba(m, d, q, v, tau), ref.aba(q, v, tau))
        elif algo == "crba":
            err = rel_err(crba(m, d, q), ref.crba(q))
        else:
            err = rel_err(gravity(m, d, q), ref.gravity(q))
        worst = max(worst, err)
    assert worst < TOL, f"{name} {algo}: worst relative error {worst:.2e}"


def test_external_forces_match_pinocchio(robot: Robot) -> None:
    _name, m, d, ref = robot
    rng = np.random.default_rng(7)
    q, v, a, _ = random_state(m, rng)
    f = rng.normal(size=(m.nb, 6))
    fp = pin.StdVec_Force()
    for _ in range(ref.pm.njoints):
        fp.append(pin.Force.Zero())
    for b, joint in enumerate(m.body_joints):
        if m.body_names[b].endswith(("/planar_x", "/planar_y")):
            continue
        fp[ref.pm.getJointId(joint)] = pin.Force(f[b])
    assert rel_err(rnea(m, d, q, v, a, f_ext=f), ref.rnea(q, v, a, fp)) < TOL
    # and ABA undoes RNEA under the same external forces
    tau = rnea(m, d, q, v, a, f_ext=f)
    assert np.allclose(aba(m, d, q, v, tau, f_ext=f), a, rtol=1e-8, atol=1e-8)


def test_batches_equal_single_calls(robot: Robot) -> None:
    _name, m, d, ref = robot
    rng = np.random.default_rng(3)
    Q, V, A, T = (np.array(x) for x in zip(*(random_state(m, rng) for _ in range(37)), strict=True))
    g = np.empty((len(Q), m.nv))
    np.testing.assert_allclose(rnea_batch(m, Q, V, A, gravity_out=g),
                               [rnea(m, d, *s) for s in zip(Q, V, A, strict=True)],
                               rtol=1e-12, atol=1e-10)
    assert max(rel_err(gi, ref.gravity(q)) for gi, q in zip(g, Q, strict=True)) < TOL
    np.testing.assert_allclose(aba_batch(m, Q, V, T), [aba(m, d, *s) for s in zip(Q, V, T, strict=True)],
                               rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(crba_batch(m, Q), [crba(m, d, q) for q in Q], rtol=1e-12, atol=1e-10)


def test_floating_base_against_pinocchio(free_flyer: Robot) -> None:
    _name, m, d, ref = free_flyer
    rng = np.random.default_rng(11)
    for _ in range(20):
        q, v, a, tau = random_state(m, rng)
        wrench, tau_j = floating.base_reaction(m, d, q, v, a)
        full = ref.rnea(q, v, a)
        assert rel_err(wrench, full[:6]) < TOL and rel_err(tau_j, full[6:]) < TOL
        # flight: an unactuated base
        a_b, qdd_j = floating.forward_dynamics(m, d, q, v, tau[6:])
        want = ref.aba(q, v, np.r_[np.zeros(6), tau[6:]])
        assert rel_err(np.r_[a_b, qdd_j], want) < TOL
        # inverse dynamics in flight gives back the torques and the base motion
        a_b2, tau_j2 = floating.inverse_dynamics(m, d, q, v, qdd_j)
        np.testing.assert_allclose(a_b2, a_b, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(tau_j2, tau[6:], rtol=1e-7, atol=1e-7)


def test_centroidal_quantities_against_pinocchio(free_flyer: Robot) -> None:
    """Centre of mass and its velocity (``centerOfMass``), the centroidal momentum and its
    matrix (``ccrba``) and the momentum's rate (``computeCentroidalMomentumTimeVariation``)."""
    _name, m, d, ref = free_flyer
    rng = np.random.default_rng(17)
    for _ in range(20):
        q, v, a, _ = random_state(m, rng)
        c = centroidal(m, d, q, v, a)
        qp, vp = ref.q(q), ref.G @ v
        matrix = pin.ccrba(ref.pm, ref.pd, qp, vp) @ ref.G  # mimic joints: reduced columns
        hg = ref.pd.hg
        dhg = pin.computeCentroidalMomentumTimeVariation(ref.pm, ref.pd, qp, vp, ref.G @ a)
        pin.centerOfMass(ref.pm, ref.pd, qp, vp)
        assert rel_err(c.matrix, matrix) < TOL
        assert rel_err(c.momentum, np.r_[hg.linear, hg.angular]) < TOL
        assert c.momentum_rate is not None
        assert rel_err(c.momentum_rate, np.r_[dhg.linear, dhg.angular]) < TOL
        assert rel_err(c.com, ref.pd.com[0]) < TOL
        assert rel_err(c.com_velocity, ref.pd.vcom[0]) < TOL
        # the contact split's own O(n) momentum, feasible or not
        r = solve(m, d, q, v, a, [Contact(m.body_names[-1])], 0.7)
        assert rel_err(r.momentum, np.r_[hg.linear, hg.angular]) < TOL


def test_integrate_matches_pinocchio(robot: Robot) -> None:
    _name, m, _d, ref = robot
    rng = np.random.default_rng(5)
    q, v, _, _ = random_state(m, rng)
    qn = integrate(m, q, v, 0.37)
    qp = pin.integrate(ref.pm, ref.q(q), ref.G @ v * 0.37)
    np.testing.assert_allclose(ref.q(qn), qp, rtol=1e-10, atol=1e-10)
