"""Closed forms and algorithm-against-algorithm identities, on our robots and on small URDFs."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from pinref import random_state, robot_path
from urdfs import joint, link, robot, with_floating_root

from rbd_ros.dynamics import (
    Data,
    Model,
    ModelError,
    aba,
    centroidal,
    crba,
    euler_step,
    floating,
    gravity,
    integrate,
    load_urdf,
    load_urdf_string,
    nonlinear_effects,
    rnea,
)
from rbd_ros.dynamics.algorithm.kinematics import center_of_mass, placements
from rbd_ros.dynamics.algorithm.rnea import SLIDING_SPEED, friction_slope
from rbd_ros.dynamics.contact.contacts import Contact, solve
from rbd_ros.dynamics.multibody.layout import MF_COULOMB, MF_DAMPING
from rbd_ros.robots import ARM, QUADRUPED

# the seed's 2-link planar arm: unit point masses at the ends of unit links, Y-axis joints
TWO_LINK = robot(
    link("base"), link("l1", 1.0, "1 0 0"), link("l2", 1.0, "1 0 0"),
    joint("j1", "continuous", "base", "l1"), joint("j2", "continuous", "l1", "l2", xyz="1 0 0"),
)


def two_link_closed_form(q1: float, q2: float) -> tuple[np.ndarray, np.ndarray]:
    """Mass matrix and gravity torque of the planar double pendulum (m = l = 1, g = 9.81).

    A +q rotation about y turns the link from +x towards -z, so heights are -sin."""
    g, c2 = 9.81, np.cos(q2)
    M = np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
    G = -g * np.array([2 * np.cos(q1) + np.cos(q1 + q2), np.cos(q1 + q2)])
    return M, G


@pytest.mark.parametrize("q1,q2", [(0.0, 0.0), (0.3, -0.7), (-1.2, 2.0), (np.pi / 2, 0.1)])
def test_two_link_arm_closed_form(q1: float, q2: float) -> None:
    m = load_urdf_string(TWO_LINK)
    d = Data(m)
    M, G = two_link_closed_form(q1, q2)
    q = np.array([q1, q2])
    np.testing.assert_allclose(crba(m, d, q), M, atol=1e-12)
    np.testing.assert_allclose(gravity(m, d, q), G, atol=1e-12)
    # released from rest with no torque: qdd = -M^-1 G
    np.testing.assert_allclose(aba(m, d, q, np.zeros(2), np.zeros(2)),
                               -np.linalg.solve(M, G), atol=1e-12)


# a free-floating body on an arm's link, with a link of its own: a free joint that is not the
# root (its parent moves), between one-coordinate joints
CARRIED = robot(
    link("base"), link("a", 2.0, "0.1 0 0.3", 'ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.05"'),
    link("b", 1.5, "0 0.1 0.05", 'ixx="0.02" ixy="0.003" ixz="0" iyy="0.03" iyz="0" izz="0.04"'),
    link("c", 0.7, "0.2 0 0", 'ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"'),
    joint("j1", "continuous", "base", "a", axis="0 0 1"),
    joint("float", "floating", "a", "b", xyz="0.2 0 0.5", rpy="0.3 0 0.1"),
    joint("j2", "revolute", "b", "c", xyz="0 0.3 0", axis="1 0 0",
          extra='<limit lower="-2" upper="2" effort="10" velocity="5"/>'),
)


def models() -> list[tuple[str, Model]]:
    return [("arm", load_urdf(ARM)), ("quadruped", load_urdf(QUADRUPED, floating_base=True)),
            ("two_link", load_urdf_string(TWO_LINK)), ("carried", load_urdf_string(CARRIED))]


@pytest.mark.parametrize("name,m", models())
def test_aba_inverts_rnea_and_crba_is_its_derivative(name: str, m: Model) -> None:
    d = Data(m)
    rng = np.random.default_rng(0)
    for _ in range(50):
        q, v, a, _ = random_state(m, rng)
        tau = rnea(m, d, q, v, a)
        np.testing.assert_allclose(aba(m, d, q, v, tau), a, rtol=1e-9, atol=1e-9)
        # rnea is affine in a with slope M: central differences are exact up to rounding
        h, M = 1e-3, crba(m, d, q)
        fd = np.array([(rnea(m, d, q, v, a + h * e) - rnea(m, d, q, v, a - h * e)) / (2 * h)
                       for e in np.eye(m.nv)]).T
        np.testing.assert_allclose(fd, M, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.linalg.eigvalsh(M).min() > 0
        np.testing.assert_allclose(tau, M @ a + nonlinear_effects(m, d, q, v), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name,m", models())
def test_gravity_is_the_gradient_of_the_potential_energy(name: str, m: Model) -> None:
    """g(q) = dV/dq with V = -(total mass) g . c(q): the centre of mass from the kinematics
    alone, differenced along each velocity coordinate (a free flyer's too, by integrate)."""
    d = Data(m)
    rng = np.random.default_rng(1)

    def potential(q: np.ndarray) -> float:
        return -m.total_mass * float(m.gravity @ center_of_mass(m, placements(m, d, q)))

    h = 1e-6
    for _ in range(10):
        q = random_state(m, rng)[0]
        fd = [(potential(integrate(m, q, e, h)) - potential(integrate(m, q, e, -h))) / (2 * h)
              for e in np.eye(m.nv)]
        np.testing.assert_allclose(gravity(m, d, q), fd, rtol=1e-6,
                                   atol=1e-6 * m.total_mass * 9.81)


def energy(m, d, q: np.ndarray, v: np.ndarray) -> float:
    return 0.5 * float(v @ crba(m, d, q) @ v)


@pytest.mark.parametrize("name,m", models())
def test_energy_is_conserved_without_torque_or_gravity(name: str, m: Model) -> None:
    m = m.with_gravity([0.0, 0.0, 0.0])
    d = Data(m)
    rng = np.random.default_rng(1)
    q, v, _, _ = random_state(m, rng)
    zero = np.zeros(m.nv)
    e0 = energy(m, d, q, v)

    def f(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return aba(m, d, q, v, zero)

    dt = 1e-3
    for _ in range(1000):  # RK4 on the configuration manifold, 1 s
        k1v, k1a = v, f(q, v)
        k2v = v + 0.5 * dt * k1a
        k2a = f(integrate(m, q, k1v, 0.5 * dt), k2v)
        k3v = v + 0.5 * dt * k2a
        k3a = f(integrate(m, q, k2v, 0.5 * dt), k3v)
        k4v = v + dt * k3a
        k4a = f(integrate(m, q, k3v, dt), k4v)
        q = integrate(m, q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt)
        v = v + dt * (k1a + 2 * k2a + 2 * k3a + k4a) / 6
    assert abs(energy(m, d, q, v) - e0) < 1e-6 * e0


def test_in_flight_the_centroidal_momentum_changes_by_gravity_alone() -> None:
    """Joint torques are internal: whatever they are, a robot in flight (ABA with an unactuated
    base) changes its centroidal momentum by m g and keeps its angular momentum about its centre
    of mass; and the linear momentum is m times the centre of mass's velocity, differenced
    along the motion."""
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q, v, _, tau = random_state(m, rng)
        a_base, qdd = floating.forward_dynamics(m, d, q, v, tau[6:])
        c = centroidal(m, d, q, v, np.r_[a_base, qdd])
        assert c.momentum_rate is not None
        np.testing.assert_allclose(c.momentum_rate, np.r_[m.total_mass * m.gravity, np.zeros(3)],
                                   atol=1e-9 * np.abs(tau).max())
        eps = 1e-6
        ahead, behind = (center_of_mass(m, placements(m, d, integrate(m, q, v, s)))
                         for s in (eps, -eps))
        np.testing.assert_allclose(c.momentum[:3] / m.total_mass, (ahead - behind) / (2 * eps),
                                   atol=1e-7)
    with pytest.raises(ModelError, match="v must have 18 entries"):
        centroidal(m, d, q, v[:3])
    arm = load_urdf(ARM)
    with pytest.raises(ModelError, match="no free-flyer root"):
        centroidal(arm, Data(arm), arm.neutral(), np.zeros(arm.nv))


def test_the_contacts_change_the_centroidal_momentum_with_gravity() -> None:
    """Newton and Euler for the whole robot: the momentum's rate is the contacts' total wrench
    about the centre of mass plus m g. The split's wrenches against RNEA's rate (CRBA's base
    rows moved to the centre of mass), and the split's O(n) momentum against ``A_G v``."""
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    feet = [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]
    rng = np.random.default_rng(8)
    answered = 0
    for _ in range(40):
        v, a = 0.3 * rng.standard_normal(m.nv), 0.5 * rng.standard_normal(m.nv)
        q = integrate(m, m.neutral(), 0.05 * rng.standard_normal(m.nv), 1.0)
        r = solve(m, d, q, v, a, feet, 1.0)
        c = centroidal(m, d, q, v, a)
        np.testing.assert_allclose(r.momentum, c.momentum, rtol=1e-10, atol=1e-10)
        if r.feasible:
            assert c.momentum_rate is not None
            answered += 1
            np.testing.assert_allclose(r.com_wrench + np.r_[m.total_mass * m.gravity, 0, 0, 0],
                                       c.momentum_rate, rtol=1e-9, atol=1e-9)
    assert answered >= 10


ROBOTS = [(ARM, False), (robot_path("panda"), False), (QUADRUPED, True)]


def with_joint_friction(path: str | Path, floating: bool, damping: float, coulomb: float
                        ) -> Model:
    m = load_urdf(path, floating_base=floating)
    mf = m.mf.copy()
    mf[:, MF_DAMPING], mf[:, MF_COULOMB] = damping, coulomb
    return dataclasses.replace(m, mf=mf)


@pytest.mark.parametrize(("path", "floating"), ROBOTS)
def test_friction_slope_is_the_derivative_of_rneas_friction(path: str | Path, floating: bool
                                                            ) -> None:
    """On the arm, on the Panda (its fingers one mimic coordinate) and on a free-flying
    quadruped, at random states and at rest (where Coulomb's slope is steepest)."""
    m = with_joint_friction(path, floating, 0.3, 0.5)
    d, rng, h = Data(m), np.random.default_rng(4), 1e-7

    def friction(q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        return rnea(m, d, q, v, a, friction=True) - rnea(m, d, q, v, a)

    for still in (False, True):
        q, v, a, _ = random_state(m, rng)
        v = 0.01 * v if still else v
        numeric = np.array([(friction(q, v + h * e, a) - friction(q, v - h * e, a)) / (2 * h)
                            for e in np.eye(m.nv)])  # row j: d / d v_j
        np.testing.assert_allclose(numeric, np.diag(friction_slope(m, v)), atol=1e-5 * (
            1.0 + np.abs(numeric).max()))


@pytest.mark.parametrize(("path", "floating"), ROBOTS)
def test_euler_step_takes_the_friction_at_the_new_velocity(path: str | Path, floating: bool
                                                           ) -> None:
    """``euler_step``'s new velocity solves RNEA's equation of motion with the friction
    linearised at it (an identity between RNEA, CRBA and ABA); without friction it is ABA's
    explicit step."""
    m, dt = with_joint_friction(path, floating, 0.3, 0.5), 1e-3
    d, rng = Data(m), np.random.default_rng(5)
    q, v, _, tau = random_state(m, rng)
    q1, v1 = euler_step(m, d, q, v, tau, dt)
    np.testing.assert_allclose(rnea(m, d, q, v, (v1 - v) / dt, friction=True)
                               + friction_slope(m, v) * (v1 - v), tau, atol=1e-8)
    np.testing.assert_allclose(q1, integrate(m, q, v1, dt), atol=1e-15)
    plain = with_joint_friction(path, floating, 0.0, 0.0)
    np.testing.assert_allclose(euler_step(plain, Data(plain), q, v, tau, dt)[1],
                               v + dt * aba(plain, Data(plain), q, v, tau), atol=1e-12)


def test_a_light_joint_held_still_settles() -> None:
    """The bundled arm held by its gravity torques, its wrist nudged: with Coulomb's slope at
    rest taken explicitly the wrist's velocity flips sign every step (+-0.03 rad/s at 1 kHz);
    taken at the new velocity it settles."""
    m = load_urdf(ARM)
    d = Data(m)
    q, v = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0]), np.zeros(7)
    v[6] = 0.01
    tau = gravity(m, d, q)
    explicit_q, explicit_v = q.copy(), v.copy()
    for _ in range(1000):
        q, v = euler_step(m, d, q, v, tau, 1e-3)
        explicit_v = explicit_v + 1e-3 * aba(m, d, explicit_q, explicit_v, tau, friction=True)
        explicit_q = integrate(m, explicit_q, explicit_v, 1e-3)
    assert np.abs(v).max() < 1e-5, v
    assert abs(explicit_v[6]) > 0.01, explicit_v  # what the simulator did before


def test_friction_is_viscous_plus_coulomb_and_aba_removes_it() -> None:
    m = load_urdf(ARM)
    d = Data(m)
    q, v, a, _ = random_state(m, np.random.default_rng(2))
    damping = np.array([j.damping for j in m.joints])
    coulomb = np.array([j.friction for j in m.joints])
    assert damping.min() > 0 and coulomb.min() > 0
    tau_f = rnea(m, d, q, v, a, friction=True)
    np.testing.assert_allclose(tau_f - rnea(m, d, q, v, a), damping * v + coulomb
                               * np.tanh(v / SLIDING_SPEED), atol=1e-12)
    np.testing.assert_allclose(aba(m, d, q, v, tau_f, friction=True), a, atol=1e-9)


def test_fixed_joint_keeps_the_frame_and_merges_the_mass() -> None:
    m = load_urdf(ARM)
    tool = m.frames["tool"]
    assert m.body_names[tool.body] == "link7"
    np.testing.assert_allclose(tool.translation, [0, 0, 0.08])
    # seven moving links (18.1 kg) and the tool (0.4 kg); the fixed base never moves
    assert m.nb == 7 and np.isclose(m.total_mass, 18.1 + 0.4)


PLANAR = robot(
    link("base"), link("body", 2.0, "0.1 0.05 0.02",
                       'ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.25"'),
    joint("p", "planar", "base", "body", xyz="0.3 0 0.2", axis="0 0 1"),
)
PPR = robot(
    link("base"), link("x"), link("y"),
    link("body", 2.0, "0.1 0.05 0.02", 'ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.25"'),
    joint("px", "prismatic", "base", "x", xyz="0.3 0 0.2", axis="1 0 0"),
    joint("py", "prismatic", "x", "y", axis="0 1 0"),
    joint("rz", "continuous", "y", "body", axis="0 0 1"),
)


def test_planar_joint_equals_a_prismatic_prismatic_revolute_chain() -> None:
    a_m, b_m = load_urdf_string(PLANAR), load_urdf_string(PPR)
    assert a_m.nq == 3 and a_m.joint_names == ["p"]
    da, db = Data(a_m), Data(b_m)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q, v, a, tau = (rng.normal(size=3) for _ in range(4))
        np.testing.assert_allclose(rnea(a_m, da, q, v, a), rnea(b_m, db, q, v, a), atol=1e-12)
        np.testing.assert_allclose(aba(a_m, da, q, v, tau), aba(b_m, db, q, v, tau), atol=1e-12)


def test_declared_floating_joint_is_the_free_flyer_root() -> None:
    """A URDF whose root is a floating joint from a massless "world" link (as some exports
    write it): that joint is the model's free-flyer root (the floating-base node's, the
    analysis'), with or without floating_base, never a second one; its dynamics are
    floating_base=True's, and with an <origin> on the joint, Pinocchio's."""
    pytest.importorskip("pinocchio")
    from pinref import PinRef

    text = QUADRUPED.read_text()
    declared = with_floating_root(text)
    a_m, b_m = load_urdf_string(declared), load_urdf(QUADRUPED, floating_base=True)
    c_m = load_urdf_string(declared, floating_base=True)
    assert a_m.nq == b_m.nq == c_m.nq == 19 and a_m.has_free_flyer and c_m.has_free_flyer
    assert a_m.state_joint_names == b_m.state_joint_names
    da, db, dc = Data(a_m), Data(b_m), Data(c_m)
    q, v, a, _ = random_state(b_m, np.random.default_rng(5))
    np.testing.assert_allclose(rnea(a_m, da, q, v, a), rnea(b_m, db, q, v, a), atol=1e-10)
    np.testing.assert_allclose(rnea(c_m, dc, q, v, a), rnea(b_m, db, q, v, a), atol=1e-10)
    shifted = declared.replace('<parent link="world"/>', '<origin xyz="0.1 -0.2 0.3" '
                               'rpy="0.1 0.2 0.3"/><parent link="world"/>')
    m = load_urdf_string(shifted)
    ref = PinRef(m, shifted, floating_base=False)
    assert ref.pm.names[1] == "root_joint" and ref.pm.joints[1].nq == 7
    assert not np.allclose(rnea(m, Data(m), q, v, a), rnea(b_m, db, q, v, a))  # it moved
    np.testing.assert_allclose(rnea(m, Data(m), q, v, a), ref.rnea(q, v, a), atol=1e-9)


def test_massless_subtree_gives_a_model_error_naming_the_joint() -> None:
    m = load_urdf_string(robot(link("base"), link("a", 1.0, "0 0 0.5"), link("tip"),
                               joint("j1", "revolute", "base", "a"),
                               joint("j2", "revolute", "a", "tip", xyz="0 0 1")))
    d = Data(m)
    with pytest.raises(ModelError, match="joint 'j2'"):
        aba(m, d, np.zeros(2), np.zeros(2), np.zeros(2))
    rnea(m, d, np.zeros(2), np.zeros(2), np.zeros(2))  # inverse dynamics is still defined


def test_wrong_sizes_say_expected_and_actual() -> None:
    m = load_urdf(ARM)
    d = Data(m)
    with pytest.raises(ModelError, match=r"q must have 7 entries .* got shape \(6,\)"):
        rnea(m, d, np.zeros(6), np.zeros(7), np.zeros(7))
    with pytest.raises(ModelError, match="f_ext must have shape"):
        aba(m, d, np.zeros(7), np.zeros(7), np.zeros(7), f_ext=np.zeros((3, 6)))
    with pytest.raises(ModelError, match="no free-flyer root"):
        from rbd_ros.dynamics import floating
        floating.forward_dynamics(m, d, np.zeros(7), np.zeros(7), np.zeros(1))


@pytest.mark.parametrize("algo", ["rnea", "aba", "crba"])
def test_every_input_of_a_per_call_function_is_checked_on_the_fast_path_too(algo: str) -> None:
    """The per-call functions' C entry takes C-contiguous native float64 vectors of the model's
    sizes as they are and hands anything else back to Python: a wrong size raises the same
    error as a list of that size does, any other array (strided, read-only, int, float32,
    big-endian, Fortran) gives the answer of its float64 copy."""
    m = load_urdf(ARM)
    d = Data(m)
    rng = np.random.default_rng(3)
    state = [m.neutral() + rng.uniform(-1, 1, m.nq), rng.standard_normal(m.nv),
             rng.standard_normal(m.nv)]
    names = {"rnea": ["q", "v", "a"], "aba": ["q", "v", "tau"], "crba": ["q"]}[algo]
    algos: dict[str, Callable[..., np.ndarray]] = {"rnea": rnea, "aba": aba, "crba": crba}
    fn = algos[algo]
    want = fn(m, d, *state[: len(names)])
    for k, name in enumerate(names):
        x = state[k]
        args: list[object]
        for bad in (x[:-1], np.append(x, 0.0), list(x[:-1]), x.reshape(1, -1), np.float64(1.0)):
            args = [*state[: len(names)]]
            args[k] = bad
            with pytest.raises(ModelError, match=rf"^{name} must have {x.size} entries for model "
                                                 rf"'{m.name}', got shape "):
                fn(m, d, *args)
        strided = np.empty(2 * x.size)
        strided[::2] = x
        frozen = x.copy()
        frozen.setflags(write=False)
        for same in (strided[::2], x.astype(np.longdouble), list(x),
                     x.astype(">f8"), np.asfortranarray(x), frozen):
            args = [*state[: len(names)]]
            args[k] = same
            np.testing.assert_array_equal(fn(m, d, *args), want)
        args = [*state[: len(names)]]
        args[k] = x.astype(np.float32)
        np.testing.assert_allclose(fn(m, d, *args), want, rtol=1e-5, atol=1e-5)


def test_the_c_entry_takes_the_three_kernels_by_name_only() -> None:
    """Each algorithm's module registers its kernel with the C entry by name; a name it does not
    know is refused, not stored in some slot."""
    from rbd_ros.dynamics.multibody import _entry

    with pytest.raises(ValueError, match=r"register: no kernel 'rnae' \(rnea, aba or crba\)"):
        _entry.register("rnae", 0)


def test_external_wrenches_in_any_array_form_give_the_same_answer() -> None:
    """f_ext as a list, Fortran-ordered, big-endian or float32: the answer of its float64 copy."""
    m = load_urdf(ARM)
    d = Data(m)
    rng = np.random.default_rng(8)
    q, v, x = m.neutral() + rng.uniform(-1, 1, m.nq), rng.standard_normal(m.nv), np.ones(m.nv)
    f = rng.standard_normal((m.nb, 6))
    for fn in (rnea, aba):
        want = fn(m, d, q, v, x, f_ext=f)
        assert not np.allclose(want, fn(m, d, q, v, x))  # the wrenches count
        for same in (f.tolist(), np.asfortranarray(f), f.astype(">f8")):
            np.testing.assert_array_equal(fn(m, d, q, v, x, f_ext=same), want)


def test_a_data_serves_models_of_its_shape_only() -> None:
    """A Data made for one model answers for another of the same shape (the same robot under
    other gravity) as that model's own Data does; for a model of another shape it says so
    rather than reading past its arrays."""
    m = load_urdf(ARM)
    d = Data(m)
    moon = m.with_gravity([0.0, 0.0, -1.62])
    q, z = m.neutral() + 0.3, np.zeros(m.nv)
    np.testing.assert_array_equal(gravity(moon, d, q), gravity(moon, Data(moon), q))
    np.testing.assert_array_equal(aba(moon, d, q, z, z), aba(moon, Data(moon), q, z, z))
    np.testing.assert_array_equal(gravity(m, d, q), gravity(m, Data(m), q))  # and back
    assert not np.allclose(gravity(moon, d, q), gravity(m, d, q))
    other = load_urdf(QUADRUPED)
    z = np.zeros(other.nv)
    for fn, args in ((rnea, (z, z)), (aba, (z, z)), (crba, ())):
        with pytest.raises(ModelError, match=r"this Data was made for model 'arm7', which is "
                                             r"not the shape of '.*': make one with Data\(model\)"):
            fn(other, d, other.neutral(), *args)


def test_a_data_copied_or_pickled_works_on_its_own_arrays() -> None:
    """copy.deepcopy and pickle (a Data sent to another process) give a Data whose calls
    answer as the original's and write into its own arrays, not the original's."""
    m = load_urdf(ARM)
    d = Data(m)
    rng = np.random.default_rng(4)
    q, v, a = m.neutral() + rng.uniform(-1, 1, m.nq), rng.standard_normal(m.nv), np.ones(m.nv)
    want = rnea(m, d, q, v, a)
    before = d.W.copy()
    for other in (copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert other.W is not d.W
        np.testing.assert_array_equal(rnea(other.model, other, q, v, a), want)
        np.testing.assert_array_equal(rnea(other.model, other, 2 * q, v, a),
                                      rnea(m, Data(m), 2 * q, v, a))
        np.testing.assert_array_equal(d.W, before)  # the original's arrays untouched


@pytest.mark.parametrize("name,m", models())
def test_the_models_named_views_are_what_they_say(name: str, m: Model) -> None:
    """parents, joint_types, S and inertias: read-only views that agree with the URDF."""
    from rbd_ros.dynamics.multibody.spatial import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

    assert all(p < i for i, p in enumerate(m.parents))  # topological, -1 for the world
    for i in range(m.nb):
        np.testing.assert_array_equal(m.inertias[i], m.body_inertia(i))
        joint = m.joint(m.body_joints[i]) if m.body_joints[i] in m.joint_names else None
        kind = {"revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE,
                "prismatic": JOINT_PRISMATIC, "floating": JOINT_FREE}
        if joint is not None:
            assert m.joint_types[i] == kind[joint.kind]
        if m.joint_types[i] != JOINT_FREE:  # a unit axis, angular or linear
            s = m.S[i]
            part = s[:3] if m.joint_types[i] == JOINT_REVOLUTE else s[3:]
            assert np.linalg.norm(part) == pytest.approx(1.0) and np.linalg.norm(s) == \
                pytest.approx(1.0)
    assert m.inertias[:, 3, 3].sum() == pytest.approx(m.total_mass)
    for view in (m.parents, m.joint_types, m.S, m.inertias):
        with pytest.raises(ValueError):
            view[0] = 0
