"""Contact reactions of standing robots, impossible motions, and momentum in flight."""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pytest
from pinref import random_state, robot_path

from rbd_ros.dynamics import Data, ModelError, aba, integrate, load_urdf
from rbd_ros.dynamics.algorithm.kinematics import center_of_mass, link_placement, placements
from rbd_ros.dynamics.contact.contacts import (
    UNMET_LEVER,
    Contact,
    Reaction,
    check_contacts,
    solve,
)
from rbd_ros.dynamics.multibody.model import Model
from rbd_ros.robots import QUADRUPED

G = 9.81


class Sole(TypedDict):
    half_length: float
    half_width: float


SOLE = Sole(half_length=0.1, half_width=0.05)  # Talos's sole is about 0.21 m x 0.13 m


def spatial_momentum(model: Model, v: np.ndarray, body_placements: np.ndarray) -> np.ndarray:
    """Total momentum ``[linear; angular about the world origin]`` in world axes of bodies
    moving with spatial velocities ``v`` (nb, 6; body frames, ``[omega; v]``)."""
    h = np.zeros(6)
    for i in range(model.nb):
        hb = model.body_inertia(i) @ v[i]  # [angular about the body origin; linear]
        R, p = body_placements[i, :9].reshape(3, 3), body_placements[i, 9:]
        lin = R @ hb[3:]
        h[:3] += lin
        h[3:] += R @ hb[:3] + np.cross(p, lin)
    return h


@pytest.fixture(scope="module")
def talos() -> tuple[Model, Data]:
    m = load_urdf(robot_path("talos"), floating_base=True)
    return m, Data(m)


def standing(m: Model, d: Data, q: np.ndarray, contacts: list[Contact],
             mu: float = 0.7) -> Reaction:
    z = np.zeros(m.nv)
    return solve(m, d, q, z, z, contacts, mu)


def test_both_feet_carry_the_weight_evenly_when_symmetric(talos: tuple[Model, Data]) -> None:
    m, d = talos
    feet = [Contact("left_sole_link", **SOLE), Contact("right_sole_link", **SOLE)]
    r = standing(m, d, m.neutral(), feet)
    assert r.feasible, r.reason
    fl, fr = r.wrenches["left_sole_link"], r.wrenches["right_sole_link"]
    np.testing.assert_allclose(fl[:3] + fr[:3], [0, 0, m.total_mass * G], atol=1e-6)
    assert abs(fl[2] - fr[2]) < 0.02 * m.total_mass * G  # Talos is nearly left-right symmetric
    # the joint torques are consistent: the base needs no wrench once the contacts push
    assert np.all(np.isfinite(r.tau))
    np.testing.assert_allclose(sum(r.forces.values()), r.com_wrench[:3], atol=1e-9)
    for link, cop in r.cop.items():
        R, p = link_placement(m, placements(m, d, m.neutral()), link)
        np.testing.assert_allclose(r.forces[link], R @ r.wrenches[link][:3], atol=1e-9)
        local = R.T @ (cop - p)
        assert abs(local[0]) <= 0.1 + 1e-9 and abs(local[1]) <= 0.05 + 1e-9


def test_an_unknown_link_has_no_placement(talos: tuple[Model, Data]) -> None:
    m, d = talos
    with pytest.raises(ModelError, match="'left_sole' is not a link of model"):
        link_placement(m, placements(m, d, m.neutral()), "left_sole")


def test_load_moves_to_the_foot_under_the_centre_of_mass(talos: tuple[Model, Data]) -> None:
    m, d = talos
    q = m.neutral()
    # lean both legs sideways (hip roll): the feet move, the centre of mass stays
    for name in ("leg_left_2_joint", "leg_right_2_joint"):
        q[m.joint(name).idx_q] = 0.08
    feet = [Contact("left_sole_link", **SOLE), Contact("right_sole_link", **SOLE)]
    r = standing(m, d, q, feet)
    assert r.feasible, r.reason
    X = placements(m, d, q)
    com = center_of_mass(m, X)
    y = {f.link: link_placement(m, X, f.link)[1][1] for f in feet}
    near = min(y, key=lambda k: abs(y[k] - com[1]))
    far = max(y, key=lambda k: abs(y[k] - com[1]))
    assert r.wrenches[near][2] > r.wrenches[far][2] + 10.0


def test_one_foot_takes_all_the_weight(talos: tuple[Model, Data]) -> None:
    m, d = talos
    big = Contact("left_sole_link", half_length=0.3, half_width=0.3)  # reaches under the CoM
    r = standing(m, d, m.neutral(), [big])
    assert r.feasible, r.reason
    np.testing.assert_allclose(r.wrenches["left_sole_link"][:3], [0, 0, m.total_mass * G],
                               atol=1e-6)
    # with its real sole the centre of pressure would have to leave the foot
    r = standing(m, d, m.neutral(), [Contact("left_sole_link", **SOLE)])
    assert not r.feasible
    assert r.reason.endswith("(the centre of pressure would leave the sole): "
                             "left_sole_link: centre of pressure")


def test_impossible_motions_name_the_constraint_and_the_contact(talos: tuple[Model, Data]) -> None:
    m, d = talos
    feet = [Contact("left_sole_link", **SOLE), Contact("right_sole_link", **SOLE)]
    q, v = m.neutral(), np.zeros(m.nv)

    def why(axis: int, value: float, contacts: list[Contact] = feet) -> str:
        a = np.zeros(m.nv)
        a[axis] = value
        r = solve(m, d, q, v, a, contacts, 0.7)
        assert not r.feasible
        return r.reason

    both = "left_sole_link: {0}; right_sole_link: {0}"
    # falling faster than gravity: the feet would have to pull
    assert why(2, -15.0).endswith("(the ground would have to pull): " + both.format("unilateral"))
    # forwards harder than the friction allows (mu / sqrt(2) = 0.49 per axis of a sole)
    assert why(0, 0.55 * G).endswith(
        "(outside the friction cone, mu = 0.7): " + both.format("friction"))
    # spinning about the vertical: more yaw torque than the soles' friction gives
    assert "yaw torque than the sole's friction gives" in why(5, 30.0)
    # upper bounds on the normal forces (feet that must not carry more than 400 N each)
    light = [Contact(f.link, max_force=400.0, **SOLE) for f in feet]
    assert why(2, 0.0, light).endswith(
        "(the normal force would leave its bounds): " + both.format("maximum normal force"))
    # one foot's bound moves the other's centre of pressure off its sole
    light = [Contact("left_sole_link", max_force=100.0, **SOLE), feet[1]]
    assert why(2, 0.0, light).endswith("right_sole_link: centre of pressure")
    assert "no contact is active" in solve(m, d, q, v, np.zeros(m.nv), [], 0.7).reason
    # one point contact carries no torque: only a motion with no moment about it is possible
    assert "point contacts carry no torque" in why(2, 0.0, [Contact("left_sole_link")])


def test_normal_force_bounds_shift_the_load(talos: tuple[Model, Data]) -> None:
    m, d = talos
    feet = [Contact("left_sole_link", min_force=600.0, **SOLE),
            Contact("right_sole_link", **SOLE)]
    r = standing(m, d, m.neutral(), feet)
    assert r.feasible, r.reason
    assert r.wrenches["left_sole_link"][2] == pytest.approx(600.0, abs=1e-6)
    np.testing.assert_allclose(r.wrenches["left_sole_link"][2] + r.wrenches["right_sole_link"][2],
                               m.total_mass * G, rtol=1e-9)


def test_bad_contacts_are_refused(talos: tuple[Model, Data]) -> None:
    m, _ = talos
    for bad, match in [(Contact("left_sole_link", half_length=0.1), "half_width > 0"),
                       (Contact("left_sole_link", radius=0.02, **SOLE), "no radius"),
                       (Contact("left_sole_link", normal=(0.0, 0.0, 0.0)), "normal"),
                       (Contact("left_sole_link", radius=-1.0), ">= 0"),
                       (Contact("left_sole_link", min_force=10.0, max_force=5.0), "max_force"),
                       (Contact("left_sole_link", offset=(0.0, float("nan"), 0.0)), "finite")]:
        with pytest.raises(ModelError, match=match):
            check_contacts(m, [bad], 0.7)
    with pytest.raises(ModelError, match="listed twice"):
        check_contacts(m, [Contact("left_sole_link"), Contact("left_sole_link")], 0.7)


def test_quadruped_point_feet(talos: tuple[Model, Data]) -> None:
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    q = m.neutral()
    feet = [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]
    r = standing(m, d, q, feet)
    assert r.feasible, r.reason
    fz = np.array([r.wrenches[f.link][2] for f in feet])
    np.testing.assert_allclose(fz.sum(), 21.0 * G, rtol=1e-9)
    np.testing.assert_allclose(fz, fz.mean(), rtol=1e-6)  # symmetric robot, symmetric split
    with pytest.raises(ModelError, match="contact link 'LF_toe'"):
        check_contacts(m, [Contact("LF_toe")], 0.5)


def test_a_diagonal_pair_of_point_feet_carries_a_body_balanced_over_it() -> None:
    """A trot's stance pair: the body's weight on the line through the two feet (the bundled
    quadruped is symmetric about its centre). Their forces carry no moment about that line, so
    the wrench balance has rank five; it is met, and the weight splits by the lever rule along
    the line (the centre of mass and the feet from the kinematics, not the solver)."""
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    q = m.neutral()
    feet = [Contact("LF_foot"), Contact("RH_foot")]
    r = standing(m, d, q, feet)
    assert r.feasible, r.reason
    X = placements(m, d, q)
    p1, p2 = (link_placement(m, X, f.link)[1][:2] for f in feet)  # seen from above
    c = center_of_mass(m, X)[:2]
    u = (p2 - p1) / np.linalg.norm(p2 - p1)
    off = c - p1
    assert abs(off[0] * u[1] - off[1] * u[0]) < 1e-12  # the weight's line meets the feet's
    weight = 21.0 * G
    share = (p2 - c) @ u / np.linalg.norm(p2 - p1)  # the lever rule: LF's share
    np.testing.assert_allclose([r.forces[f.link][2] for f in feet],
                               [share * weight, (1 - share) * weight], rtol=1e-9)


def test_a_stance_pair_leaves_out_a_small_moment_about_its_line_and_refuses_a_large_one(
        ) -> None:
    """Two point feet give no moment about the line through them. Standing with the weight's
    line off theirs by d asks for m g d about it: up to UNMET_LEVER the
    split leaves that moment out (``unmet``, the same size) and carries the weight; beyond it
    the motion is refused, naming the moment and the lever, both from the kinematics here."""
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    feet = [Contact("LF_foot"), Contact("RH_foot")]
    z = np.zeros(m.nv)
    for hfe, expect in ((0.6, "refused"), (None, "answered")):
        q = m.neutral()
        if hfe is not None:  # the front legs bent more: the body moves off the diagonal
            for leg in ("LF", "RF"):
                q[m.joint(f"{leg}_HFE").idx_q] = hfe
        X = placements(m, d, q)
        p1, p2 = (link_placement(m, X, f.link)[1] for f in feet)
        c = center_of_mass(m, X)
        u = (p2 - p1) / np.linalg.norm(p2 - p1)
        weight = m.total_mass * G
        # the weight's moment about the feet's line, over the weight: the lever
        off = abs(np.cross(c - p1, [0.0, 0.0, weight]) @ u) / weight
        r = solve(m, d, q, z, z, feet, 0.7)
        if expect == "answered":
            assert off < UNMET_LEVER and r.feasible, (off, r.reason)
            np.testing.assert_allclose(np.linalg.norm(r.unmet[3:]), weight * off, atol=1e-6)
            np.testing.assert_allclose(r.com_wrench[:3], [0, 0, weight], atol=1e-6)
        else:
            assert off > UNMET_LEVER and not r.feasible
            assert f"{weight * off:.3g} N m" in r.reason and f"{off * 100:.3g} cm" in r.reason, \
                (off, r.reason)


def test_momentum_is_conserved_in_flight_without_gravity() -> None:
    m = load_urdf(QUADRUPED, floating_base=True).with_gravity([0, 0, 0])
    d = Data(m)
    q, v, _, _ = random_state(m, np.random.default_rng(3))
    zero = np.zeros(m.nv)

    def momentum(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        aba(m, d, q, v, zero)  # leaves the body velocities in d
        return spatial_momentum(m, d.v.copy(), placements(m, d, q))

    h0 = momentum(q, v)
    dt = 1e-3
    for _ in range(500):  # RK4
        k1v, k1a = v, aba(m, d, q, v, zero)
        k2v = v + 0.5 * dt * k1a
        k2a = aba(m, d, integrate(m, q, k1v, 0.5 * dt), k2v, zero)
        k3v = v + 0.5 * dt * k2a
        k3a = aba(m, d, integrate(m, q, k2v, 0.5 * dt), k3v, zero)
        k4v = v + dt * k3a
        k4a = aba(m, d, integrate(m, q, k3v, dt), k4v, zero)
        q = integrate(m, q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt)
        v = v + dt * (k1a + 2 * k2a + 2 * k3a + k4a) / 6
    np.testing.assert_allclose(momentum(q, v), h0, atol=1e-7 * max(1.0, np.abs(h0).max()))
