"""Balance indicators: ZMP, capture point, support polygon and margins, against closed forms,
the split's own per-foot centres of pressure, and Pinocchio's centroidal dynamics."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef, robot_path
from quadsim import LEGS, simulate, states, trot

from rbd_ros.dynamics import Data, load_urdf
from rbd_ros.dynamics.algorithm.kinematics import center_of_mass, link_placement, placements
from rbd_ros.dynamics.contact.balance import Support, _hull, _margin
from rbd_ros.dynamics.contact.contacts import Contact, solve
from rbd_ros.dynamics.multibody.model import Model
from rbd_ros.robots import QUADRUPED

G = 9.81
FEET = [Contact(f"{side}_sole_link", half_length=0.1, half_width=0.05)
        for side in ("left", "right")]


@pytest.fixture(scope="module")
def talos() -> tuple[Model, Data]:
    m = load_urdf(robot_path("talos"), floating_base=True)
    return m, Data(m)


def area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def test_standing_still_the_zmp_and_capture_point_are_under_the_centre_of_mass(
        talos: tuple[Model, Data]) -> None:
    m, d = talos
    q, z = m.neutral(), np.zeros(m.nv)
    r = solve(m, d, q, z, z, FEET, 0.7)
    b = Support(m, FEET).balance(r)
    X = placements(m, d, q)
    c = center_of_mass(m, X)
    # the soles' corners from the kinematics: the polygon is their outer four
    corners = np.array([p + R @ [sx * 0.1, sy * 0.05, 0]
                        for R, p in (link_placement(m, X, f.link) for f in FEET)
                        for sx in (1, -1) for sy in (1, -1)])
    ground = corners[:, 2].min()
    assert b.ground_height == pytest.approx(ground, abs=1e-12)
    lo, hi = corners[:, :2].min(axis=0), corners[:, :2].max(axis=0)
    assert len(b.support_polygon) == 4 and area(b.support_polygon) > 0  # counter-clockwise
    np.testing.assert_allclose(sorted(map(tuple, b.support_polygon[:, :2])),
                               sorted([(lo[0], lo[1]), (lo[0], hi[1]), (hi[0], lo[1]),
                                       (hi[0], hi[1])]), atol=1e-12)
    assert np.all(b.support_polygon[:, 2] == pytest.approx(ground))
    below = np.r_[c[:2], ground]
    assert b.zmp is not None and b.capture_point is not None
    np.testing.assert_allclose(b.zmp, below, atol=1e-9)
    np.testing.assert_allclose(b.capture_point, below, atol=1e-12)
    assert b.omega == pytest.approx(np.sqrt(G / (c[2] - ground)))
    inside = min(c[0] - lo[0], hi[0] - c[0], c[1] - lo[1], hi[1] - c[1])
    assert b.zmp_margin == pytest.approx(inside, abs=1e-9)
    assert b.capture_point_margin == pytest.approx(inside, abs=1e-12)
    np.testing.assert_allclose(b.momentum, 0, atol=1e-12)
    np.testing.assert_allclose(b.momentum_rate, 0, atol=1e-9)


def test_standing_on_one_foot_the_polygon_is_that_sole(talos: tuple[Model, Data]) -> None:
    """Talos on its left sole alone, the leg rolled (hip against ankle, the sole flat) until the
    sole is under the centre of mass: the polygon is the sole's four corners, the ZMP and the
    capture point are under the centre of mass, and the margin is its distance to the sole's
    nearest edge (all from the kinematics here)."""
    m, d = talos
    left = [FEET[0]]
    z = np.zeros(m.nv)

    def posture(roll: float) -> np.ndarray:
        q = m.neutral()
        q[m.joint("leg_left_2_joint").idx_q] = roll
        q[m.joint("leg_left_6_joint").idx_q] = -roll
        return q

    def off(roll: float) -> float:  # the sole's centre less the centre of mass, sideways
        X = placements(m, d, posture(roll))
        return float(link_placement(m, X, "left_sole_link")[1][1] - center_of_mass(m, X)[1])

    lo, hi = -0.3, 0.3
    assert off(lo) * off(hi) < 0
    for _ in range(60):  # bisection
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if off(lo) * off(mid) > 0 else (lo, mid)
    q = posture(0.5 * (lo + hi))
    r = solve(m, d, q, z, z, left, 0.7)
    assert r.feasible, r.reason
    b = Support(m, left).balance(r)
    X = placements(m, d, q)
    R, p = link_placement(m, X, "left_sole_link")
    corners = np.array([p + R @ [sx * 0.1, sy * 0.05, 0] for sx in (1, -1) for sy in (1, -1)])
    assert len(b.support_polygon) == 4 and area(b.support_polygon) > 0
    np.testing.assert_allclose(sorted(map(tuple, b.support_polygon)),
                               sorted(map(tuple, corners)), atol=1e-9)
    c = center_of_mass(m, X)
    assert b.zmp is not None and b.capture_point is not None
    np.testing.assert_allclose(b.zmp[:2], c[:2], atol=1e-9)
    np.testing.assert_allclose(b.capture_point[:2], c[:2], atol=1e-12)
    local = R.T @ (np.r_[c[:2], p[2]] - p)  # the centre of mass over the sole, sole frame
    inside = min(0.1 - abs(local[0]), 0.05 - abs(local[1]))
    assert inside > 0
    assert b.zmp_margin == pytest.approx(inside, abs=1e-9)


def test_moving_the_zmp_is_the_feet_centres_of_pressure_and_pinocchio_s_centroidal_zmp(
        talos: tuple[Model, Data]) -> None:
    """Moving on flat ground: the ZMP from the total wrench equals the normal-force-weighted
    mean of the split's per-sole centres of pressure, and the classic formula from the
    centroidal momentum's rate (Pinocchio) less gravity."""
    m, d = talos
    ref = PinRef(m, robot_path("talos"), True)
    support = Support(m, FEET)
    rng = np.random.default_rng(2)
    answered = 0
    for _ in range(30):
        q = m.neutral()
        v, a = 0.05 * rng.standard_normal(m.nv), 0.3 * rng.standard_normal(m.nv)
        v[:6] = a[:6] = 0.0  # the base still: both soles stay flat on the floor
        r = solve(m, d, q, v, a, FEET, 0.7)
        if not r.feasible:
            continue
        answered += 1
        b = support.balance(r)
        assert b.zmp is not None
        fz = np.array([r.forces[f.link][2] for f in FEET])
        cops = np.array([r.cop[f.link] for f in FEET])
        np.testing.assert_allclose(b.zmp, fz @ cops / fz.sum(), atol=1e-9)
        # from Pinocchio: the contacts' wrench about the centre of mass is dh_G/dt - m g
        qp, vp = ref.q(q), ref.G @ v
        dh = pin.computeCentroidalMomentumTimeVariation(ref.pm, ref.pd, qp, vp, ref.G @ a)
        f = dh.linear + np.array([0, 0, m.total_mass * G])
        n = dh.angular
        c = ref.pd.com[0]
        height = c[2] - b.ground_height
        zmp = [c[0] - (n[1] + height * f[0]) / f[2], c[1] + (n[0] - height * f[1]) / f[2]]
        np.testing.assert_allclose(b.zmp[:2], zmp, atol=1e-9)
        np.testing.assert_allclose(b.momentum_rate, np.r_[dh.linear, dh.angular], atol=1e-8)
        np.testing.assert_allclose(b.com_velocity, ref.pd.vcom[0], atol=1e-12)
    assert answered >= 10


def test_a_fast_centre_of_mass_puts_the_capture_point_outside() -> None:
    """The bundled quadruped on four point feet, its base moving forward: the capture point is
    c + c_dot / omega on the ground, and its margin is minus its distance to the polygon."""
    m = load_urdf(QUADRUPED, floating_base=True)
    d = Data(m)
    feet = [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]
    q, v = m.neutral(), np.zeros(m.nv)
    v[0] = 2.0  # m/s forward (base frame = world here)
    r = solve(m, d, q, v, np.zeros(m.nv), feet, 0.7)
    assert r.feasible, r.reason
    b = Support(m, feet).balance(r)
    X = placements(m, d, q)
    c = center_of_mass(m, X)
    toes = np.array([link_placement(m, X, f.link)[1] for f in feet])
    ground = toes[:, 2].min()
    omega = np.sqrt(G / (c[2] - ground))
    xi = c[:2] + np.array([2.0, 0.0]) / omega
    assert b.capture_point is not None
    np.testing.assert_allclose(b.capture_point, np.r_[xi, ground], atol=1e-12)
    front = toes[:, 0].max()
    assert xi[0] > front
    assert b.capture_point_margin == pytest.approx(-(xi[0] - front), abs=1e-12)
    assert b.zmp_margin > 0  # the weight is still on the feet: the ZMP stays inside
    # a trot's diagonal pair: a segment, no inside, so no margin above zero
    pair = [feet[0], feet[3]]
    b2 = Support(m, pair).balance(solve(m, d, q, np.zeros(m.nv), np.zeros(m.nv), pair, 0.7))
    assert len(b2.support_polygon) == 2
    assert b2.zmp_margin == pytest.approx(0.0, abs=1e-9)  # the weight's line meets the pair's
    assert b2.capture_point_margin <= 0


@pytest.mark.parametrize("robot", ["bundled", "anymal_c"])
def test_a_simulated_trot_s_zmp_is_the_centre_of_pressure_of_its_ground_forces(
        robot: str) -> None:
    """The tests' own trot, simulated with Pinocchio alone (testkit/quadsim.py), its ground
    forces known. Given only the motion and which feet are in stance, rbd_ros's split and
    balance put the ZMP where the simulated forces' centre of pressure is (their moment about
    it has no horizontal part) and the momentum's rate at their sum plus m g. ANYmal C: a robot
    nothing here was tuned on."""
    urdf, feet, nominal = LEGS[robot]
    run = simulate(urdf, feet, nominal, trot(feet), 0.6)
    m, Q, V, _ = states(robot, run)
    A = np.zeros_like(V)
    A[:, :6] = run.a[:, :6]
    A[:, [m.joint(n).idx_v for n in run.joints]] = run.a[:, 6:]
    d = Data(m)
    checked = 0
    for k in range(0, len(run.t), 10):
        touching = run.contact[k]
        contacts = [Contact(f) for f, on in zip(feet, touching, strict=True) if on]
        if not contacts:
            continue
        r = solve(m, d, Q[k], V[k], A[k], contacts, 1.0)
        assert r.feasible, r.reason
        b = Support(m, contacts).balance(r)
        f, p = run.force[k][touching], run.feet_at[k][touching]
        ground = p[:, 2].min()
        lever = p[:, 2] - ground
        zmp = [(f[:, 2] @ p[:, 0] - lever @ f[:, 0]) / f[:, 2].sum(),
               (f[:, 2] @ p[:, 1] - lever @ f[:, 1]) / f[:, 2].sum()]
        assert b.zmp is not None
        assert b.ground_height == pytest.approx(ground, abs=1e-9)
        np.testing.assert_allclose(b.zmp, [*zmp, ground], atol=1e-6)
        np.testing.assert_allclose(b.momentum_rate[:3],
                                   f.sum(axis=0) + m.total_mass * m.gravity, atol=1e-6)
        assert len(b.support_polygon) == min(len(contacts), 4)
        if len(contacts) <= 2:  # a stance pair: no inside
            assert b.zmp_margin <= 1e-9
        checked += 1
    assert checked >= 50


def test_the_hull_and_the_margin_against_brute_force() -> None:
    """Random point sets: every point is inside or on the hull, the hull is convex and
    counter-clockwise, each vertex is a point that some line separates from the others; the
    margin's sign and size from the edges' half-planes."""
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 5, 8, 16):
        for _ in range(40):
            xy = rng.standard_normal((n, 2))
            hull = np.empty(2 * n + 1, dtype=np.int64)
            k = _hull(xy, hull)
            poly = xy[hull[:k]]
            if n >= 3:
                assert k >= 3 and area(poly) > 0
                for j in range(k):
                    a, e = poly[j], poly[(j + 1) % k] - poly[j]
                    side = e[0] * (xy[:, 1] - a[1]) - e[1] * (xy[:, 0] - a[0])
                    assert np.all(side >= -1e-12)  # everything on the left of each edge
            p = rng.standard_normal(2)
            got = _margin(p, xy, hull, k)
            # brute force: the distance to each edge's segment, inside when left of all
            dist = []
            left = True
            for j in range(k):
                a, b = poly[j], poly[(j + 1) % k]
                s = np.clip((p - a) @ (b - a) / max((b - a) @ (b - a), 1e-300), 0, 1)
                dist.append(np.linalg.norm(a + s * (b - a) - p))
                e = b - a
                left &= e[0] * (p[1] - a[1]) - e[1] * (p[0] - a[0]) >= 0
            inside = k >= 3 and left
            assert got == pytest.approx(min(dist) if inside else -min(dist), abs=1e-12)


def test_a_tilted_gravity_gives_a_tilted_ground(talos: tuple[Model, Data]) -> None:
    """The same standing split with the whole world turned: gravity along the turned down, so
    the same ZMP, polygon and margins, turned (the plane's axes follow gravity)."""
    m, d = talos
    q, z = m.neutral(), np.zeros(m.nv)
    b0 = Support(m, FEET).balance(solve(m, d, q, z, z, FEET, 0.7))
    Rw = pin.rpy.rpyToMatrix(0.3, -0.2, 0.5)
    mt = m.with_gravity(list(Rw @ [0, 0, -G]))
    qt = q.copy()
    qt[:3] = Rw @ q[:3]
    qt[3:7] = pin.Quaternion(Rw @ pin.Quaternion(q[6], *q[3:6]).matrix()).coeffs()
    dt = Data(mt)
    b1 = Support(mt, FEET).balance(solve(mt, dt, qt, z, z, FEET, 0.7))
    assert b1.zmp is not None and b0.zmp is not None
    np.testing.assert_allclose(b1.zmp, Rw @ b0.zmp, atol=1e-9)
    np.testing.assert_allclose(b1.zmp_margin, b0.zmp_margin, atol=1e-9)
    assert b1.ground_height == pytest.approx(b0.ground_height, abs=1e-12)
    assert len(b1.support_polygon) == 4
    turned = {tuple(np.round(Rw @ p, 9)) for p in b0.support_polygon}
    assert {tuple(np.round(p, 9)) for p in b1.support_polygon} == turned

